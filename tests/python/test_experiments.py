"""Donor pairs from Python against the CLI's stored scores, bit for bit; the
results database as a DataFrame; probe and landing runs."""

import numpy as np
import pytest

import eventkv
from conftest import PAIR_ID, TINY_SCENARIO


def test_a_pair_scored_through_python_equals_the_cli_bit_for_bit(model, cli_db):
    pair = eventkv.stored_pair(cli_db, PAIR_ID)
    assert set(pair["scores"]) == {"visible", "sparse-global", "record", "sparse-local", "no-carrier"}
    assert eventkv.score_pair(model, pair) == pair["scores"]
    rerun = eventkv.rerun(model, cli_db, PAIR_ID)
    assert rerun["max_abs_diff"] == 0.0 and len(rerun["scores"]) == 20
    assert rerun["same_tokens"] and rerun["same_texts"]


def test_a_changed_pair_scores_differently(model, cli_db):
    pair = eventkv.stored_pair(cli_db, PAIR_ID)
    pair["texts"]["question"] = "Tell me: " + pair["texts"]["question"]
    assert eventkv.score_pair(model, pair)["visible"] != pair["scores"]["visible"]


def test_the_history_api_reproduces_the_conditions(model, cli_db):
    # Built by hand: each side computed alone, the source evicted. The probe
    # batches both sides and ten served caches into shared products, so the
    # hand-built scores agree to float rounding (within the report's 1e-4 nats
    # tie floor), not bit for bit.
    pair = eventkv.stored_pair(cli_db, PAIR_ID)
    texts = pair["texts"]
    sides = {}
    for side in ("a", "b"):
        h = eventkv.History(model)
        h.add(texts[side])
        h.compute()
        sides[side] = h

    def scores(h):
        return h.score(texts["question"], pair["candidates"], answer_prefix=texts["answer_prefix"],
                       answer_format=pair["answer_format"])

    def check(condition):
        for side, h in sides.items():
            np.testing.assert_allclose(scores(h), pair["scores"][condition][side.upper()], rtol=0,
                                       atol=1e-4)

    check("visible")
    for h in sides.values():
        h.evict(["source"])
    check("sparse-global")


def test_probe_from_python_stores_what_the_cli_stores(model, cli_db, tmp_path):
    db = str(tmp_path / "python.db")
    outcome = eventkv.probe(str(TINY_SCENARIO), model, db, pairs=1, constructions=["noted"],
                            distances=[1])
    assert outcome["pairs_computed"] == 1 and not outcome["invalid"]
    ours, theirs = eventkv.results(db), eventkv.results(cli_db)
    assert len(ours) == 20
    assert list(ours.columns) == ["run_id", "model", "scenario", "payload_type", "pair_index",
                                  "construction", "distance", "condition", "side", "candidate",
                                  "candidate_text", "is_value_a", "is_value_b", "log_prob"]
    assert ours["log_prob"].tolist() == theirs["log_prob"].tolist()
    again = eventkv.probe(str(TINY_SCENARIO), model, db, pairs=1, constructions=["noted"],
                          distances=[1], resume=True)
    assert again["already_complete"] and again["pairs_computed"] == 0
    summary = eventkv.summary(db)
    assert len(summary["runs"]) == 1
    (cell,) = summary["cells"]
    assert (cell["scenario"], cell["construction"], cell["distance"], cell["valid"]) == (
        "tiny-binary", "noted", 1, True)


def test_landing_from_python(model, tmp_path):
    db = str(tmp_path / "landing.db")
    outcome = eventkv.landing(str(TINY_SCENARIO), model, db, pairs=2, construction="noted",
                              distance=1)
    assert outcome["pairs_computed"] == 2


def test_fast_precision_is_recorded_and_rerun_compares_labels(model_path, cli_db, tmp_path):
    fast = eventkv.Model(model_path, threads=2, precision="fast")
    assert fast.precision == "fast"
    rerun = eventkv.rerun(fast, cli_db, PAIR_ID)
    assert rerun["max_abs_diff"] > 0  # int8 products move the scores
    labels = rerun["labels"]
    assert set(labels) == {"visible", "sparse-global", "record", "sparse-local", "no-carrier"}
    assert labels["sparse-local"]["recomputed"] == "unmoved"
    assert labels["sparse-local"]["recomputed_margin"] == 0.0
    db = str(tmp_path / "fast.db")
    eventkv.probe(str(TINY_SCENARIO), fast, db, pairs=1, constructions=["noted"], distances=[1])
    assert [run["precision"] for run in eventkv.summary(db)["runs"]] == ["fast"]
    with pytest.raises(eventkv.Error, match="unknown precision 'slow'"):
        eventkv.Model(model_path, precision="slow")
