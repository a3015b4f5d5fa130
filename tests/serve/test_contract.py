# The memory contract through the server: a forgotten fact leaves nothing a
# question can recover, and a recalled fact survives budget eviction.
import pytest

from conftest import Api

SERVICES = ["billing", "search", "checkout", "mailer", "ledger", "gateway"]


def donor(api, service, value):
    """A session whose only difference from its pair is the forgotten value."""
    sid = api.session(kv_budget=0, system="You are a deployment assistant.")["id"]
    out = api.append(sid,
               {"id": "flag", "role": "user", "policy": "forget",
                "content": f"The deploy flag for service {service} is {value}.",
                "facts": [{"key": "flag", "value": value, "type": "binary",
                           "statement": f"the deploy flag for {service} is {{value}}"}]},
               {"id": "ack", "role": "assistant", "content": "Understood, noted."},
               {"id": "filler", "role": "user",
                "content": "Unrelated: the team lunch moved to Thursday at noon."})
    return sid, [e["tokens"] for e in out["events"]]


def ask(api, sid, service):
    return api.ok("POST", f"/sessions/{sid}/score", {
        "question": f"What is the deploy flag for service {service}?",
        "answer_prefix": "The deploy flag is", "candidates": ["on", "off"]})


def test_forgotten_fact_is_not_recoverable(fresh_server):
    # --verify-forget: each forgetting also runs its two proofs.
    api = Api(fresh_server("--verify-forget").url)
    differed_before = 0
    for service in SERVICES:
        (a, tokens_a), (b, tokens_b) = donor(api, service, "on"), donor(api, service, "off")
        # Same token counts: the pair differs in the value only, not in positions.
        assert tokens_a == tokens_b
        before_a, before_b = ask(api, a, service), ask(api, b, service)
        differed_before += before_a["log_probs"] != before_b["log_probs"]
        for sid in (a, b):
            out = api.ok("POST", f"/sessions/{sid}/forget", {"ids": ["flag"]})
            assert [d["event"] for d in out["decisions"]] == ["flag"]
            assert all(d["keeping"] == "forgotten" for d in out["decisions"])
            assert out["proofs"], "verified forgetting reports its proof"
            for proof in out["proofs"]:
                assert proof["verified"] is True
                assert proof["value_independent"] is True
                assert proof["equals_fresh"] is True
                assert proof["recomputed_events"] == 2  # the acknowledgement and the filler
            states = {e["id"]: e["state"] for e in api.events(sid)}
            assert states["flag"] == "forgotten"
            facts = api.ok("GET", f"/sessions/{sid}/contract")["facts"]
            assert [f["state"] for f in facts if f["key"] == "flag"] == ["forgotten"]
        after_a, after_b = ask(api, a, service), ask(api, b, service)
        # Bit for bit: the served rows of A and B no longer depend on the value.
        assert after_a["log_probs"] == after_b["log_probs"], service
        assert after_a["predicted"] == after_b["predicted"]
    # Otherwise the check above would be vacuous.
    assert differed_before == len(SERVICES)


FILLERS = [
    "Let's plan the week. On Monday I will clean the garage and sort the old boxes of books.",
    "Sounds good. Sorting the books first makes the garage much easier to clean afterwards.",
    "On Tuesday I have a dentist appointment in the morning and a long meeting after lunch.",
    "Then keep the evening free so you can rest after such a busy Tuesday.",
    "Wednesday is for groceries: bread, milk, eggs, apples, rice and some fresh vegetables.",
    "A list like that covers most meals; add some beans if you want a cheap source of protein.",
    "Thursday I want to repair the bicycle: the chain is rusty and the back tyre is flat.",
    "Oil the chain after cleaning it and patch the inner tube before buying a new one.",
]


@pytest.mark.parametrize("budget", [160])
def test_recalled_fact_survives_budget_eviction(api, budget):
    sid = api.session(kv_budget=budget)["id"]
    api.append(sid,
               {"id": "colour", "role": "user", "policy": "recall",
                "content": "Remember this: my favourite colour is teal.",
                "facts": [{"key": "colour", "value": "teal", "type": "categorical",
                           "statement": "the user's favourite colour is {value}"}]},
               {"id": "ack", "role": "assistant", "content": "Noted, I will remember it."})
    decisions = []
    for i, text in enumerate(FILLERS):
        out = api.append(sid, {"id": f"f{i}", "role": "user" if i % 2 == 0 else "assistant",
                               "content": text})
        decisions += out["decisions"]
        assert out["session"]["retained_rows"] <= budget
    events = {e["id"]: e for e in api.events(sid)}
    assert events["colour"]["state"] == "evicted", "the fillers must push the fact out"
    assert any(d["event"] == "colour" and d["keeping"] in ("record", "certified carrier")
               for d in decisions)
    contract = api.ok("GET", f"/sessions/{sid}/contract")
    [state] = [f["state"] for f in contract["facts"] if f["key"] == "colour"]
    assert state in ("record", "carrier")
    records = [e for e in events.values() if e["state"] == "record"]
    if state == "record":
        assert any("teal" in e["content"] and e["id"].startswith("record:colour")
                   for e in records), records
    out = api.ok("POST", f"/sessions/{sid}/score", {
        # The record's own wording: SmolLM2-135M follows it, not a paraphrase.
        "question": "What is my favourite colour?",
        "answer_prefix": "The user's favourite colour is",
        "candidates": ["teal", "red", "green", "purple"]})
    assert out["predicted"] == 0, out
