# The native HTTP API of `eventkv serve` (serve-api.md) through plain requests.
import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import KEY, MAX_BODY, MAX_EVENT_TOKENS, REPO, Api, assert_error, unique_id

SESSION_FIELDS = {"id", "kv_budget", "policy", "events", "retained_rows", "full_rows",
                  "kv_bytes_held", "kv_bytes_full", "positions", "context", "busy"}


def chat_events(n, prefix="filler"):
    """n plain user/assistant turns, distinct so that every one is findable by content."""
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"id": f"{prefix}{i}", "role": role,
                    "content": f"{prefix} message {i}: the river runs past the old mill "
                               f"and the miller counts {i * 7 + 3} sacks of flour."})
    return out


def sse_data(response):
    """The payloads of an SSE response's `data:` lines, in order."""
    out = []
    for line in response.iter_lines(decode_unicode=True):
        if line and line.startswith("data:"):
            out.append(line[len("data:"):].strip())
    return out


# --- health, auth, routing --------------------------------------------------------------

def test_health_needs_no_key(server):
    r = Api(server.url, key=None).get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok"
    assert body["model"] == os.path.basename(os.environ["EVENTKV_MODEL"])
    assert isinstance(body["sessions"], int) and body["sessions"] >= 0


@pytest.mark.parametrize("key", [None, "wrongkey"])
def test_every_other_route_needs_the_key(server, key):
    client = Api(server.url, key=key)
    for method, path in [("GET", "/sessions"), ("GET", "/metrics"), ("GET", "/openapi.json"),
                         ("GET", "/v1/models"), ("POST", "/sessions")]:
        assert_error(client.request(method, path, json={} if method == "POST" else None),
                     401, "authentication_error")


def test_unknown_route_and_wrong_method(api):
    assert_error(api.get("/no/such/route"), 404)
    for method, path in [("PATCH", "/sessions"), ("PUT", "/health"), ("TRACE", "/sessions"),
                         ("DELETE", "/v1/models")]:
        r = api.request(method, path)
        assert r.status_code == 405, (method, path, r.status_code, r.text)
        assert r.headers.get("Allow"), (method, path)


def test_connection_survives_a_401(server):
    # A refused request's body must not be left unread on a kept-alive connection:
    # the next request on it would be parsed from that body.
    http = Api(server.url, key=None).http
    auth = {"Authorization": f"Bearer {KEY}"}
    for _ in range(3):
        r = http.post(server.url + "/sessions", json={"id": unique_id()})
        assert r.status_code == 401
        r = http.get(server.url + "/sessions", headers=auth)
        assert r.status_code == 200, r.text
        r = http.post(server.url + "/sessions", json={"id": unique_id()})
        assert r.status_code == 401
        r = http.post(server.url + "/sessions", json={"id": unique_id()}, headers=auth)
        assert r.status_code == 201, r.text


def test_openapi_document_is_the_repository_file(api):
    r = api.get("/openapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"] == "3.1.0"
    # The server embeds src/serve/openapi.json at build time.
    assert doc == json.loads((REPO / "src/serve/openapi.json").read_text())


def test_metrics(api):
    api.session()  # some traffic first
    r = api.get("/metrics")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    text = r.text
    for name in ["eventkv_sessions", "eventkv_kv_bytes_held", "eventkv_kv_bytes_full",
                 "eventkv_evictions_total", "eventkv_records_total", "eventkv_forgets_total",
                 "eventkv_prefill_tokens_total", "eventkv_decode_tokens_total",
                 "eventkv_prefill_seconds_total", "eventkv_decode_seconds_total",
                 "eventkv_prefill_tokens_per_second", "eventkv_decode_tokens_per_second",
                 "eventkv_queue_depth", "eventkv_requests_total"]:
        assert any(line.startswith(name) for line in text.splitlines()), name
    assert 'eventkv_requests_total{code="201"}' in text


# --- sessions ---------------------------------------------------------------------------

def test_session_crud(api):
    sid = unique_id("crud")
    created = api.session(id=sid, system="You answer in one word.", kv_budget=0,
                          policy="recall")
    assert SESSION_FIELDS <= created.keys()
    assert created["id"] == sid and created["policy"] == "recall" and created["kv_budget"] == 0
    assert created["busy"] is False
    assert_error(api.post("/sessions", {"id": sid}), 409, "conflict_error")
    assert sid in [s["id"] for s in api.ok("GET", "/sessions")["sessions"]]
    got = api.ok("GET", f"/sessions/{sid}")
    assert got["id"] == sid and SESSION_FIELDS <= got.keys()
    assert api.ok("DELETE", f"/sessions/{sid}") == {"id": sid, "deleted": True}
    assert_error(api.get(f"/sessions/{sid}"), 404, "not_found_error")
    assert_error(api.delete(f"/sessions/{sid}"), 404, "not_found_error")
    assert sid not in [s["id"] for s in api.ok("GET", "/sessions")["sessions"]]


def test_session_defaults_and_generated_id(api):
    s = api.ok("POST", "/sessions", {}, status=201)
    assert 1 <= len(s["id"]) <= 64
    assert s["policy"] == "none"
    assert s["kv_budget"] >= 0


def test_unknown_session_is_404(api):
    sid = unique_id("missing")
    for method, path, body in [("GET", "", None), ("GET", "/events", None),
                               ("POST", "/events", {"events": [{"role": "user",
                                                                "content": "hi"}]}),
                               ("POST", "/generate", {"max_tokens": 1}),
                               ("GET", "/contract", None),
                               ("POST", "/snapshot", {})]:
        assert_error(api.request(method, f"/sessions/{sid}{path}", json=body), 404,
                     "not_found_error")


@pytest.mark.parametrize("body", [
    {"id": "has space"}, {"id": "x" * 65}, {"id": ""}, {"kv_budget": 8}, {"kv_budget": -1},
    {"policy": "sometimes"}, {"colour": "blue"}, {"system": 5}])
def test_invalid_session_is_422(api, body):
    assert_error(api.post("/sessions", body), 422, "invalid_request_error")


def test_bad_json_is_400(api):
    r = api.request("POST", "/sessions", data=b"{not json",
                    headers={"Content-Type": "application/json"})
    assert_error(r, 400, "invalid_request_error")


def test_max_sessions_is_429_and_max_events_413(fresh_server):
    api = Api(fresh_server("--max-sessions", "2", "--max-events", "4").url)
    first = api.session()
    api.session()
    assert_error(api.post("/sessions", {"id": unique_id()}), 429, "rate_limit_error")
    api.ok("DELETE", f"/sessions/{first['id']}")
    sid = api.session()["id"]
    api.append(sid, *[{"role": "user", "content": f"message {i}"} for i in range(3)])
    r = api.post(f"/sessions/{sid}/events", {"events": [
        {"role": "user", "content": "fourth"}, {"role": "user", "content": "fifth"}]})
    assert_error(r, 413, "payload_too_large")
    assert len([e for e in api.events(sid) if e["id"] != "preamble"]) == 3


# --- events -----------------------------------------------------------------------------

@pytest.mark.parametrize("event", [
    {"role": "wizard", "content": "hello"},
    {"role": "user"},
    {"role": "user", "content": "The code is 1234.",
     "facts": [{"key": "code", "value": "9999", "type": "integer-4"}]},
    {"role": "user", "content": "The code is 1234.",
     "facts": [{"key": "code", "value": "1234", "type": "integer-42"}]},
    {"role": "user", "content": "The code is 1234.",
     "facts": [{"key": "code", "value": "1234", "type": "integer-4", "statement": "no value"}]},
    {"role": "user", "content": "hello", "mood": "happy"},
    {"role": "user", "content": "hello", "policy": "sometimes"},
    {"role": "user", "content": "hello", "id": "preamble"},
    {"role": "user", "content": "hello", "id": "has space"},
    {"role": "user", "content": "hello", "pin": "yes"},
])
def test_invalid_event_is_422_and_changes_nothing(api, event):
    sid = api.session()["id"]
    api.append(sid, {"id": "first", "role": "user", "content": "The first message."})
    before = api.events(sid)
    # The invalid event comes second: a request is all or nothing.
    r = api.post(f"/sessions/{sid}/events",
                 {"events": [{"id": "ok", "role": "user", "content": "fine"}, event]})
    assert_error(r, 422, "invalid_request_error")
    assert api.events(sid) == before


def test_duplicate_event_id_is_rejected(api):
    sid = api.session()["id"]
    api.append(sid, {"id": "dup", "role": "user", "content": "one"})
    r = api.post(f"/sessions/{sid}/events", {"events": [{"id": "dup", "role": "user",
                                                         "content": "two"}]})
    assert r.status_code in (409, 422), r.text


def test_events_wrong_shapes(api):
    sid = api.session()["id"]
    assert_error(api.post(f"/sessions/{sid}/events", {"events": []}), 422)
    assert_error(api.post(f"/sessions/{sid}/events", {"events": [], "more": 1}), 422)
    assert_error(api.post(f"/sessions/{sid}/events", {}), 422)


def test_body_over_max_body_is_413(api):
    sid = api.session()["id"]
    big = {"events": [{"role": "user", "content": "a" * (MAX_BODY + 1)}]}
    assert_error(api.post(f"/sessions/{sid}/events", big), 413, "payload_too_large")
    assert api.ok("GET", f"/sessions/{sid}")["events"] == 0


def test_event_over_max_event_tokens_is_413(api):
    sid = api.session()["id"]
    # Distinct words: well over one token each, and under --max-body.
    words = " ".join(f"w{i}" for i in range(MAX_EVENT_TOKENS * 2))
    assert len(words) < MAX_BODY
    r = api.post(f"/sessions/{sid}/events", {"events": [{"role": "user", "content": words}]})
    assert_error(r, 413, "payload_too_large")
    assert api.ok("GET", f"/sessions/{sid}")["events"] == 0


def test_more_than_256_events_in_one_request(api):
    sid = api.session()["id"]
    events = [{"role": "user", "content": "x"} for _ in range(257)]
    r = api.post(f"/sessions/{sid}/events", {"events": events})
    assert r.status_code in (413, 422), r.text
    assert api.ok("GET", f"/sessions/{sid}")["events"] == 0


def test_append_and_list_events(api):
    sid = api.session(kv_budget=0)["id"]
    sent = chat_events(4) + [{"role": "user", "content": "A message with no id."}]
    out = api.append(sid, *sent)
    assert [e["id"] for e in out["events"][:4]] == ["filler0", "filler1", "filler2", "filler3"]
    assert out["events"][4]["id"]  # the server names it
    assert all(e["tokens"] > 0 for e in out["events"])
    assert out["decisions"] == []
    assert out["session"]["events"] >= 5
    listed = [e for e in api.events(sid) if e["id"] != "preamble"]
    assert [(e["role"], e["content"]) for e in listed] == [(e["role"], e["content"])
                                                           for e in sent]
    assert [e["id"] for e in listed] == [e["id"] for e in out["events"]]
    assert all(e["state"] == "retained" and e["policy"] == "none" and e["pin"] is False
               for e in listed)
    begins = [e["begin"] for e in listed]
    assert begins == sorted(begins) and len(set(begins)) == len(begins)
    assert [e["tokens"] for e in listed] == [e["tokens"] for e in out["events"]]


def test_session_policy_is_the_events_default(api):
    sid = api.session(policy="recall")["id"]
    api.append(sid, {"id": "a", "role": "user", "content": "one"},
               {"id": "b", "role": "user", "content": "two", "policy": "none"})
    states = {e["id"]: e["policy"] for e in api.events(sid)}
    assert states["a"] == "recall" and states["b"] == "none"


def test_evict(api):
    sid = api.session(kv_budget=0)["id"]
    api.append(sid, *chat_events(4))
    before = api.ok("GET", f"/sessions/{sid}")
    out = api.ok("POST", f"/sessions/{sid}/evict", {"ids": ["filler1"]})
    assert [d["event"] for d in out["decisions"]] == ["filler1"]
    assert out["session"]["retained_rows"] < before["retained_rows"]
    assert out["session"]["full_rows"] == before["full_rows"]
    states = {e["id"]: e["state"] for e in api.events(sid)}
    assert states["filler1"] == "evicted"
    assert states["filler0"] == states["filler2"] == "retained"
    r = api.post(f"/sessions/{sid}/evict", {"ids": ["no-such-event"]})
    assert r.status_code in (404, 422), r.text


def test_budget_evicts_on_append(api):
    sid = api.session(kv_budget=96)["id"]
    out = api.append(sid, *chat_events(8))
    assert out["decisions"], "a 96-row budget must evict some of 8 turns"
    assert out["session"]["retained_rows"] <= 96
    states = [e["state"] for e in api.events(sid)]
    assert "evicted" in states


# --- generate, score ----------------------------------------------------------------------

PROMPT = {"role": "user", "content": "Name three colours of the rainbow."}


def test_generate_non_stream(api):
    sid = api.session(kv_budget=0)["id"]
    api.append(sid, PROMPT)
    out = api.ok("POST", f"/sessions/{sid}/generate",
                 {"max_tokens": 8, "temperature": 0, "id": "reply1"})
    assert out["event"]["id"] == "reply1"
    assert out["text"]
    assert out["finish_reason"] in ("stop", "length")
    usage = out["usage"]
    assert 0 < usage["completion_tokens"] <= 8
    assert usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    if out["finish_reason"] == "length":
        assert usage["completion_tokens"] == 8
    last = api.events(sid)[-1]
    assert (last["id"], last["role"], last["content"]) == ("reply1", "assistant", out["text"])


def test_generate_zero_tokens(api):
    sid = api.session()["id"]
    api.append(sid, PROMPT)
    out = api.ok("POST", f"/sessions/{sid}/generate", {"max_tokens": 0})
    assert out["usage"]["completion_tokens"] == 0 and out["finish_reason"] == "length"


def test_generate_stream_matches_non_stream(api):
    # Two sessions with the same events: greedy decoding gives the same text.
    a, b = api.session(kv_budget=0)["id"], api.session(kv_budget=0)["id"]
    api.append(a, PROMPT)
    api.append(b, PROMPT)
    plain = api.ok("POST", f"/sessions/{a}/generate", {"max_tokens": 12, "temperature": 0})
    r = api.post(f"/sessions/{b}/generate", {"max_tokens": 12, "temperature": 0,
                                             "stream": True}, stream=True)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/event-stream")
    data = sse_data(r)
    assert data[-1] == "[DONE]"
    done = json.loads(data[-2])
    assert done["done"] is True
    pieces = [json.loads(d)["text"] for d in data[:-2]]
    assert "".join(pieces) == done["text"] == plain["text"]
    assert done["usage"] == plain["usage"]
    assert done["finish_reason"] == plain["finish_reason"]
    assert api.events(b)[-1]["content"] == done["text"]


def test_busy_session_is_409(api):
    sid = api.session(kv_budget=0)["id"]
    api.append(sid, PROMPT)
    r = api.post(f"/sessions/{sid}/generate", {"max_tokens": 48, "temperature": 0,
                                               "stream": True}, stream=True)
    lines = r.iter_lines(decode_unicode=True)
    next(line for line in lines if line.startswith("data:"))  # generating now
    busy = api.post(f"/sessions/{sid}/events", {"events": [{"role": "user", "content": "hi"}]})
    assert_error(busy, 409, "conflict_error")
    assert api.ok("GET", f"/sessions/{sid}")["busy"] is True
    assert [line for line in lines if line.startswith("data:")][-1] == "data: [DONE]"
    assert api.ok("GET", f"/sessions/{sid}")["busy"] is False
    api.append(sid, {"role": "user", "content": "hi"})


def test_full_queue_is_503(fresh_server):
    url = fresh_server("--max-queue", "1").url
    body = {"messages": [PROMPT], "max_tokens": 8, "temperature": 0}
    # One at a time, a request always finds room.
    for _ in range(4):
        r = Api(url).post("/v1/chat/completions", body)
        assert r.status_code == 200, r.text

    def one(_):
        return Api(url).post("/v1/chat/completions", body)

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(one, range(8)))
    codes = sorted(r.status_code for r in responses)
    assert set(codes) <= {200, 503}, [r.text for r in responses]
    assert 200 in codes and 503 in codes, codes
    for r in responses:
        if r.status_code == 503:
            assert_error(r, 503, "overloaded_error")


def test_generate_invalid(api):
    sid = api.session()["id"]
    api.append(sid, PROMPT)
    for body in [{"max_tokens": -1}, {"max_tokens": 4097}, {"temperature": -0.5},
                 {"max_tokens": "8"}, {"tokens": 8}, {"seed": 2**63}, {"stop": [""]},
                 {"top_p": 1.5}]:
        assert_error(api.post(f"/sessions/{sid}/generate", body), 422)


def test_score(api):
    sid = api.session(kv_budget=0)["id"]
    api.append(sid, {"role": "user", "content": "My cat is called Whiskers. Remember it."},
               {"role": "assistant", "content": "I will remember your cat's name."})
    before = api.events(sid)
    out = api.ok("POST", f"/sessions/{sid}/score", {
        "question": "What is my cat called?", "answer_prefix": "Your cat is called",
        "candidates": ["Whiskers", "Rex", "Bella"]})
    probs = out["log_probs"]
    assert len(probs) == 3 and all(p <= 0 for p in probs)
    assert out["predicted"] == probs.index(max(probs))
    assert api.events(sid) == before  # scoring leaves the history alone
    assert_error(api.post(f"/sessions/{sid}/score", {"question": "q", "candidates": ["one"]}),
                 422)
    assert_error(api.post(f"/sessions/{sid}/score", {"question": "q", "candidates": ["a", "b"],
                                                     "answer_format": "no placeholder"}), 422)


# --- snapshots, persistence -------------------------------------------------------------------

def test_snapshot_body_is_an_empty_object(api):
    sid = api.session()["id"]
    api.append(sid, {"role": "user", "content": "hello"})
    assert_error(api.post(f"/sessions/{sid}/snapshot", {"colour": "blue"}), 422)
    assert_error(api.post(f"/sessions/{sid}/snapshot", [1, 2]), 400)
    api.ok("POST", f"/sessions/{sid}/snapshot", status=201)  # no body at all: fine


def snapshot_file(server, name):
    """The snapshot's file: somewhere under STATE_DIR/snapshots, named after it."""
    files = [p for p in (server.state_dir / "snapshots").rglob(f"{name}*") if p.is_file()]
    assert len(files) == 1, files
    return files[0]


def test_snapshot_and_restore(api, server):
    sid = api.session(kv_budget=0)["id"]
    api.append(sid, *chat_events(2, "kept"))
    snap = api.ok("POST", f"/sessions/{sid}/snapshot", {}, status=201)
    assert snap["snapshot"] and snap["bytes"] > 0
    assert snapshot_file(server, snap["snapshot"]).is_file()
    before = api.events(sid)
    api.append(sid, *chat_events(2, "later"))
    assert len(api.events(sid)) == len(before) + 2
    restored = api.ok("POST", f"/sessions/{sid}/restore", {"snapshot": snap["snapshot"]})
    assert restored["id"] == sid
    assert api.events(sid) == before
    assert restored == api.ok("GET", f"/sessions/{sid}")
    # The restored session keeps working.
    api.append(sid, {"role": "user", "content": "after the restore"})
    assert_error(api.post(f"/sessions/{sid}/restore", {"snapshot": "no-such-snapshot"}), 404)


def test_snapshot_of_a_longest_id_session(api):
    # A snapshot's name must be one restore accepts, whatever the session id.
    sid = api.session(id=("L" * 64 + unique_id(""))[-64:])["id"]
    api.append(sid, {"role": "user", "content": "first"})
    name = api.ok("POST", f"/sessions/{sid}/snapshot", {}, status=201)["snapshot"]
    before = api.events(sid)
    api.append(sid, {"role": "user", "content": "second"})
    api.ok("POST", f"/sessions/{sid}/restore", {"snapshot": name})
    assert api.events(sid) == before


def test_restore_corrupted_snapshot_is_422(api, server):
    sid = api.session()["id"]
    api.append(sid, *chat_events(2))
    name = api.ok("POST", f"/sessions/{sid}/snapshot", {}, status=201)["snapshot"]
    path = snapshot_file(server, name)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x55
    path.write_bytes(bytes(data))
    before = api.events(sid)
    assert_error(api.post(f"/sessions/{sid}/restore", {"snapshot": name}), 422)
    assert api.events(sid) == before


def _durable_view(api, sid):
    """What a restart must keep of a session: its events' ids, roles and contents."""
    return [(e["id"], e["role"], e["content"]) for e in api.events(sid)]


def test_restart_keeps_every_acknowledged_event(fresh_server):
    server = fresh_server()
    api = Api(server.url)
    sid = api.session(kv_budget=64, policy="recall")["id"]
    api.append(sid, {"id": "fact", "role": "user", "content": "My locker number is 4821.",
                     "facts": [{"key": "locker", "value": "4821", "type": "integer-4"}]})
    api.append(sid, *chat_events(6))
    api.ok("POST", f"/sessions/{sid}/generate", {"max_tokens": 6, "temperature": 0,
                                                 "id": "reply"})
    other = api.session(kv_budget=0)["id"]
    api.append(other, PROMPT)
    want = {s: _durable_view(api, s) for s in (sid, other)}
    session = api.ok("GET", f"/sessions/{sid}")
    assert any(e[0] == "reply" for e in want[sid])
    for _ in range(2):
        server.kill()
        server.start()
        api = Api(server.url)
        assert {s: _durable_view(api, s) for s in (sid, other)} == want
        again = api.ok("GET", f"/sessions/{sid}")
        for field in ("kv_budget", "policy", "events", "retained_rows", "full_rows"):
            assert again[field] == session[field], field
    # A restarted server keeps serving the session.
    api.append(sid, {"role": "user", "content": "Still there?"})
    api.ok("POST", f"/sessions/{sid}/generate", {"max_tokens": 2})
