"""Bad input from Python: an eventkv.Error (a RuntimeError) with the
library's one-line message, and nothing changed."""

import pytest

import eventkv
from conftest import TINY_SCENARIO


def one_line(error):
    message = str(error.value)
    assert "\n" not in message and message
    return message


def test_a_missing_model_file(tmp_path):
    with pytest.raises(eventkv.Error) as error:
        eventkv.Model(str(tmp_path / "nope.gguf"))
    assert "nope.gguf" in one_line(error)


def test_a_file_that_is_not_gguf(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all" * 10)
    with pytest.raises(eventkv.Error) as error:
        eventkv.Model(str(bad))
    assert "bad.gguf" in one_line(error)


def test_thread_counts_beyond_the_machine(model_path):
    with pytest.raises(eventkv.Error, match="threads"):
        eventkv.Model(model_path, threads=100000)
    with pytest.raises(eventkv.Error, match="threads"):
        eventkv.Model(model_path, threads=-1)


def test_bad_events_change_nothing(model):
    h = eventkv.History(model)
    with pytest.raises(eventkv.Error) as error:
        h.add({"id": "x", "role": "robot", "content": "hi"})
    assert "unknown chat role 'robot'" in one_line(error)
    with pytest.raises(eventkv.Error, match="no events added"):
        h.compute()
    h.add({"id": "x", "role": "user", "content": "hi"})
    h.compute()
    h.add({"id": "x", "role": "user", "content": "again"})
    with pytest.raises(eventkv.Error, match="x"):
        h.compute()
    assert [e["id"] for e in h.events] == ["preamble", "x"]
    with pytest.raises(eventkv.Error, match="nope"):
        h.evict(["nope"])
    with pytest.raises(eventkv.Error, match="positions"):
        h.logits([1, 2], positions="sideways")
    with pytest.raises(TypeError):
        h.add(42)


def test_kv_cells_beyond_the_context(model):
    with pytest.raises(eventkv.Error, match="kv_cells"):
        eventkv.History(model, kv_cells=10**9)


def test_bad_databases_and_pair_ids(model, cli_db, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("hello")
    with pytest.raises(eventkv.Error):
        eventkv.results(str(other))
    assert other.read_text() == "hello"
    with pytest.raises(eventkv.Error) as error:
        eventkv.stored_pair(cli_db, "banana")
    assert "banana" in one_line(error)
    with pytest.raises(eventkv.Error, match="nope"):
        eventkv.probe(str(TINY_SCENARIO), model, str(tmp_path / "x.db"), constructions=["nope"])
    assert not (tmp_path / "x.db").exists()
    with pytest.raises(eventkv.Error):
        eventkv.probe(str(tmp_path / "missing.json"), model, str(tmp_path / "y.db"))
