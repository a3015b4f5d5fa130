#!/usr/bin/env python3
"""Fills runs.scenario_json of results databases written before eventkv
stored it (results schema 1 and 2), from the scenario files the runs were
made from: a file fills the runs whose scenario_hash is the FNV-1a 64 hash of
its canonical JSON (compact, keys sorted), so only the very scenario that was
run is stored. Nothing else in a database changes (its schema version stays);
runs no file matches are listed and left empty. A .db.xz archive is
decompressed, filled and compressed again (xz -9).

Usage: tools/results/fill_scenario_json.py DB_OR_ARCHIVE... [--scenarios DIR]
       (default DIR: scenarios/paper of this checkout)
"""
import argparse
import json
import lzma
import sqlite3
import sys
import tempfile
from pathlib import Path


def fnv1a64(data: bytes) -> str:
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(value, "x")


def canonical(path: Path) -> str:
    """The scenario as eventkv stores it: nlohmann::json's dump of the parsed
    file without its "family" (a label for calibration, not part of the run)."""
    doc = json.loads(path.read_text())
    doc.pop("family", None)
    return json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def fill(db_path: Path, by_hash: dict) -> None:
    db = sqlite3.connect(db_path)
    unmatched = []
    for run_id, name, scenario_hash in db.execute(
            "SELECT id, scenario_name, scenario_hash FROM runs WHERE scenario_json = '' ORDER BY id").fetchall():
        if scenario_hash in by_hash:
            db.execute("UPDATE runs SET scenario_json = ? WHERE id = ?", (by_hash[scenario_hash], run_id))
        else:
            unmatched.append(f"{run_id} ({name})")
    db.commit()
    db.close()
    if unmatched:
        print(f"{db_path}: no scenario file matches runs {', '.join(unmatched)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("databases", nargs="+", type=Path)
    parser.add_argument("--scenarios", type=Path, default=Path(__file__).resolve().parents[2] / "scenarios" / "paper")
    args = parser.parse_args()
    by_hash = {}
    for path in sorted(args.scenarios.glob("*.json")):
        text = canonical(path)
        by_hash[fnv1a64(text.encode())] = text
    for path in args.databases:
        if path.name.endswith(".xz"):
            with tempfile.TemporaryDirectory() as tmp:
                db_path = Path(tmp) / path.name[:-3]
                db_path.write_bytes(lzma.decompress(path.read_bytes()))
                fill(db_path, by_hash)
                path.write_bytes(lzma.compress(db_path.read_bytes(), preset=9))
        else:
            fill(path, by_hash)
        print(f"filled {path}")


if __name__ == "__main__":
    main()
