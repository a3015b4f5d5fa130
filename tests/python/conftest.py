"""Fixtures of the eventkv package tests: the model (EVENTKV_MODEL), the CLI
binary (EVENTKV) and a donor pair the CLI stored, to compare with."""

import os
import subprocess
from pathlib import Path

import pytest

import eventkv

ROOT = Path(__file__).resolve().parents[2]
TINY_SCENARIO = ROOT / "tests" / "fixtures" / "scenarios" / "tiny.json"
PAIR_ID = "1:0:noted:1"


@pytest.fixture(scope="session")
def model_path():
    return os.environ["EVENTKV_MODEL"]


@pytest.fixture(scope="session")
def model(model_path):
    return eventkv.Model(model_path, threads=2)


@pytest.fixture(scope="session")
def cli_db(tmp_path_factory, model_path):
    """One donor pair of the tiny scenario, run by the CLI."""
    db = tmp_path_factory.mktemp("cli") / "run.db"
    subprocess.run(
        [os.environ["EVENTKV"], "probe", str(TINY_SCENARIO), "-m", model_path, "-t", "2",
         "--pairs", "1", "--constructions", "noted", "--distances", "1", "--db", str(db)],
        check=True, capture_output=True)
    return str(db)
