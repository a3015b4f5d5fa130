"""eventkv from Python: the C++ engine's models, event histories and donor-pair
experiments (see the project's README and SPEC).

    import eventkv
    model = eventkv.Model("models/smollm2-135m-instruct-q4_1.gguf", threads=2)
    history = eventkv.History(model)
    history.add([{"id": "source", "role": "user", "content": "The porch light is on."}])
    history.compute()
    history.evict(["source"])
    history.score("Is the porch light on or off?", ["on", "off"], answer_prefix="It is")

Errors are eventkv.Error (a RuntimeError) with the library's one-line message.
The GIL is released while the engine computes.
"""

from __future__ import annotations

from typing import Any

from ._eventkv import (
    Error,
    History,
    Model,
    landing,
    probe,
    rerun,
    score_columns,
    score_pair,
    stored_pair,
    summary,
)

__all__ = [
    "Error",
    "History",
    "Model",
    "landing",
    "probe",
    "rerun",
    "results",
    "score_pair",
    "stored_pair",
    "summary",
]


def results(db: str) -> Any:
    """Every stored score of the results database `db` as a pandas DataFrame, one
    row per (run, pair, condition, side, candidate), the columns of
    `eventkv export --format csv`. pandas is optional for eventkv and needed here."""
    try:
        import pandas
    except ImportError as error:
        raise ImportError("eventkv.results needs pandas (pip install pandas)") from error
    return pandas.DataFrame(score_columns(db))
