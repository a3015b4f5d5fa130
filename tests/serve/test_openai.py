# The OpenAI-compatible routes through the official `openai` client.
import os

import openai
import pytest
import requests

from conftest import KEY, unique_id

MESSAGES = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def client(server):
    # No retries: a 409 or 429 the client would retry must show up here.
    return openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0, timeout=120)


def chat(client, messages, **kw):
    kw.setdefault("max_tokens", 16)
    return client.chat.completions.create(model="smollm2", messages=messages, temperature=0,
                                          **kw)


def test_models(client):
    models = client.models.list().data
    assert len(models) == 1
    assert models[0].id == os.path.basename(os.environ["EVENTKV_MODEL"])
    assert models[0].object == "model" and models[0].owned_by == "eventkv"


def test_chat(client):
    out = chat(client, MESSAGES)
    assert out.object == "chat.completion"
    choice = out.choices[0]
    assert len(out.choices) == 1 and choice.index == 0
    assert choice.message.role == "assistant" and choice.message.content
    assert choice.finish_reason in ("stop", "length")
    usage = out.usage
    assert usage.prompt_tokens > 0 and 0 < usage.completion_tokens <= 16
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # A temporary session: nothing was reused.
    assert usage.prompt_tokens_details.cached_tokens == 0


def test_chat_is_deterministic_and_leaves_no_session(client, api):
    before = len(api.ok("GET", "/sessions")["sessions"])
    a = chat(client, MESSAGES)
    b = chat(client, MESSAGES)
    assert a.choices[0].message.content == b.choices[0].message.content
    assert len(api.ok("GET", "/sessions")["sessions"]) == before


def test_stream_matches_non_stream(client):
    plain = chat(client, MESSAGES)
    chunks = list(chat(client, MESSAGES, stream=True, stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    # The usage chunk comes last and has no choices.
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices and
               c.choices[0].finish_reason]
    assert reasons == [plain.choices[0].finish_reason]
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == plain.usage.prompt_tokens


def test_stream_without_usage(client):
    chunks = list(chat(client, MESSAGES, stream=True, max_tokens=4))
    assert chunks and all(c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_multi_turn_reuses_the_session(client, api):
    sid = unique_id("chat")
    turn1 = chat(client, MESSAGES, user=sid)
    reply = turn1.choices[0].message.content
    assert turn1.usage.prompt_tokens_details.cached_tokens == 0
    messages = MESSAGES + [{"role": "assistant", "content": reply},
                           {"role": "user", "content": "And of Italy?"}]
    turn2 = chat(client, messages, user=sid)
    cached = turn2.usage.prompt_tokens_details.cached_tokens
    assert cached >= turn1.usage.prompt_tokens
    assert cached <= turn2.usage.prompt_tokens
    # Only the new user turn (and the chat format's few tokens around it) was prefilled.
    assert turn2.usage.prompt_tokens - cached <= 24
    events = [e for e in api.events(sid) if e["id"] != "preamble"]
    assert [(e["role"], e["content"]) for e in events] == (
        [(m["role"], m["content"]) for m in messages] +
        [("assistant", turn2.choices[0].message.content)])


def test_session_header(client, api):
    sid = unique_id("hdr")
    chat(client, MESSAGES, max_tokens=2, extra_headers={"X-Eventkv-Session": sid})
    assert api.ok("GET", f"/sessions/{sid}")["events"] >= 3


def test_changed_history_resets_the_session(client, api):
    sid = unique_id("reset")
    chat(client, MESSAGES, user=sid, max_tokens=2)
    other = [{"role": "user", "content": "Tell me a joke."}]
    out = chat(client, other, user=sid, max_tokens=2)
    assert out.usage.prompt_tokens_details.cached_tokens < out.usage.prompt_tokens
    contents = [e["content"] for e in api.events(sid) if e["id"] != "preamble"]
    assert contents[0] == "Tell me a joke." and len(contents) == 2


def test_wrong_key(server):
    bad = openai.OpenAI(base_url=server.url + "/v1", api_key="nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()
    with pytest.raises(openai.AuthenticationError):
        chat(bad, MESSAGES)


def test_bad_role(client):
    with pytest.raises((openai.BadRequestError, openai.UnprocessableEntityError)) as err:
        chat(client, [{"role": "wizard", "content": "hi"}])
    assert 400 <= err.value.status_code < 500


def test_n_must_be_one(client):
    with pytest.raises(openai.APIStatusError) as err:
        chat(client, MESSAGES, n=2)
    assert 400 <= err.value.status_code < 500


def test_empty_messages(client):
    with pytest.raises(openai.APIStatusError) as err:
        chat(client, [])
    assert 400 <= err.value.status_code < 500


def test_max_completion_tokens(client):
    out = client.chat.completions.create(model="x", messages=MESSAGES, temperature=0,
                                         max_completion_tokens=3)
    assert out.usage.completion_tokens <= 3


@pytest.mark.parametrize("extra", [{"stream_options": 5}, {"model": 5}, {"n": 2},
                                   {"max_tokens": 4097}, {"user": "not a session id"},
                                   {"temperature": "hot"}])
def test_invalid_fields_are_4xx(server, extra):
    # Raw requests: the openai client would not send some of these.
    body = {"model": "m", "messages": MESSAGES, "max_tokens": 1, **extra}
    r = requests.post(server.url + "/v1/chat/completions", json=body, timeout=60,
                      headers={"Authorization": f"Bearer {KEY}"})
    assert 400 <= r.status_code < 500, (extra, r.status_code, r.text[:300])
    assert r.json()["error"]["code"] == r.status_code
