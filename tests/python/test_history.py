"""eventkv.Model and eventkv.History: tokenization, rendering with event spans,
computing, hooks, eviction, verified forgetting, transplants, the GIL."""

import threading

import numpy as np
import pytest

import eventkv

EVENTS = [
    {"id": "source", "role": "user", "content": "Keep the attic window open."},
    {"id": "carrier", "role": "assistant", "content": "Noted the attic window."},
    {"id": "filler", "role": "user", "content": "Weather?"},
]
QUESTION = "Is the attic window open or shut?"
PREFIX = "The attic window is"


def history(model, events=EVENTS, **options):
    h = eventkv.History(model, **options)
    h.add(events)
    h.compute()
    return h


def score(h):
    return h.score(QUESTION, ["open", "shut"], answer_prefix=PREFIX)


def test_model_describes_itself(model):
    assert model.architecture == "llama"
    assert model.chat_format == "smollm2"
    assert model.n_layer == 30 and model.n_embd == 576 and model.n_head_kv == 3
    assert model.threads == 2
    assert len(model.fingerprint) == 16


def test_tokenize_round_trips_and_render_spans_tile_the_history(model):
    ids = model.tokenize("Keep the attic window open.")
    assert model.detokenize(ids) == "Keep the attic window open."
    assert model.tokenize("<|im_start|>", special=True) != model.tokenize("<|im_start|>")
    rendered = model.render(EVENTS)
    assert [e["id"] for e in rendered] == ["preamble", "source", "carrier", "filler"]
    assert rendered[0]["start"] == 0
    for before, after in zip(rendered, rendered[1:]):
        assert before["end"] == after["start"]
    h = history(model)
    assert [(e["id"], e["start"], e["end"], e["tokens"]) for e in h.events] == [
        (e["id"], e["start"], e["end"], e["tokens"]) for e in rendered]


def test_compute_cache_returns_hooks_without_copies(model):
    h = eventkv.History(model)
    h.add(EVENTS)
    cache = h.compute(cache=True)
    spans = cache["events"]
    rows = spans[-1]["end"]
    assert [s["id"] for s in spans] == ["preamble", "source", "carrier", "filler"]
    first = cache["blocks.0.hook_resid_post"]
    last = cache[f"blocks.{model.n_layer - 1}.hook_resid_post"]
    assert first.shape == (rows, model.n_embd) and last.shape == (rows, model.n_embd)
    # Views into one buffer [rows][layer][n_embd], not copies.
    assert not first.flags.owndata
    assert first.strides == (model.n_layer * model.n_embd * 4, 4)
    assert cache["blocks.1.hook_resid_post"].ctypes.data == first.ctypes.data + model.n_embd * 4
    assert not np.array_equal(first, last)
    k = cache["blocks.3.attn.hook_rot_k"]["carrier"]
    carrier = spans[2]
    assert k.shape == (carrier["end"] - carrier["start"], model.n_head_kv, model.head_dim)
    np.testing.assert_array_equal(k, h.rows("carrier")["blocks.3.attn.hook_rot_k"])


def test_eviction_frees_rows_and_moves_the_answer(model):
    h = history(model)
    visible = score(h)
    full = h.bytes_full
    decisions = h.evict(["source"])
    assert decisions[0]["event"] == "source" and decisions[0]["keeping"] == "lost"
    assert h.bytes_retained < full and h.bytes_full == full
    assert [e["retained"] for e in h.events] == [True, False, True, True]
    assert not np.array_equal(score(h), visible)
    with pytest.raises(eventkv.Error, match="evicted"):
        h.rows("source")


def test_forgetting_is_verified(model):
    events = [dict(EVENTS[0], policy="forget")] + EVENTS[1:]
    h = history(model, events)
    decisions = h.forget(["source"])
    assert decisions[0]["keeping"] == "forgotten"
    (proof,) = h.proofs
    assert proof["verified"] and proof["value_independent"] and proof["equals_fresh"]
    assert proof["recomputed_events"] == 2


def test_a_recall_fact_survives_eviction_as_a_record(model):
    events = [dict(EVENTS[0], policy="recall",
                   facts=[{"key": "window", "value": "open", "type": "binary",
                           "statement": "the attic window is {value}"}])] + EVENTS[1:]
    h = history(model, events)
    h.evict(["source"])
    assert h.fact_state("window") == "record"
    assert any(e["id"].startswith("record") for e in h.events)


def test_transplanting_every_row_serves_the_donor(model):
    # Two histories that differ in the source's value; with the source
    # evicted, B served with A's rows answers exactly as A does.
    a = history(model)
    b = history(model, [dict(EVENTS[0], content="Keep the attic window shut.")] + EVENTS[1:])
    for h in (a, b):
        h.evict(["source"])
    assert not np.array_equal(score(a), score(b))
    for event in ("carrier", "filler"):
        b.transplant(a, event)
    np.testing.assert_array_equal(score(a), score(b))
    with pytest.raises(eventkv.Error, match="layers"):
        b.transplant(a, "carrier", layers=(3, 99))


def test_fork_shares_rows_and_diverges(model):
    h = history(model)
    before = score(h)
    other = h.fork()
    other.evict(["source"])
    np.testing.assert_array_equal(score(h), before)
    assert not np.array_equal(score(other), before)


def test_logits_are_the_scores_source(model):
    h = history(model)
    query = model.query_tokens(QUESTION, PREFIX)
    np.testing.assert_array_equal(h.score_tokens(query, [model.tokenize(" open")]),
                                  score(h)[:1])
    logits = h.logits(query)
    assert logits.shape == (model.n_vocab,) and logits.dtype == np.float32
    candidate = model.tokenize(" there")
    (log_prob,) = h.score_tokens(query, [candidate])
    expected = logits[candidate[0]] - np.log(np.sum(np.exp(logits.astype(np.float64) - logits.max()))) - logits.max()
    assert len(candidate) == 1
    assert log_prob == pytest.approx(expected, abs=1e-4)


def test_the_gil_is_released_while_computing(model):
    long_events = [{"id": f"e{i}", "role": "user", "content": "The attic window is open. " * 40}
                   for i in range(4)]
    ticks = 0
    done = threading.Event()

    def compute():
        history(model, long_events)
        done.set()

    worker = threading.Thread(target=compute)
    worker.start()
    while not done.is_set():
        ticks += 1
    worker.join()
    assert ticks > 1000
