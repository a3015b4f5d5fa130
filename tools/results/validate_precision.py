#!/usr/bin/env python3
"""Re-scores archived donor pairs with another precision and compares their
labels and margins with the stored ones (issue 29 item 4: --precision fast
against the exact scores of docs/data).

    PYTHONPATH=build/python build/venv/bin/python tools/results/validate_precision.py \\
        RESULTS.db MODEL.gguf [--pairs 1000] [--precision fast] [--threads 2] [--seed 1] [--json OUT]

Pairs are drawn evenly at random (seeded) from every run of the database;
each is recomputed from the database alone (eventkv.rerun) under the five
conditions. Prints, per condition, how many labels are identical, the label
changes, and the margin differences; --json keeps every pair's result.
"""

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict

import eventkv


def pair_ids(db):
    columns = eventkv.score_columns(db)
    ids = set()
    for run, index, construction, distance in zip(columns["run_id"], columns["pair_index"],
                                                  columns["construction"], columns["distance"]):
        ids.add(f"{run}:{index}:{construction}:{distance}")
    return sorted(ids)


def progress(done, total, started):
    if not sys.stderr.isatty():
        return
    rate = done / max(time.time() - started, 1e-9)
    eta = (total - done) / rate if rate > 0 else 0
    print(f"\r{done}/{total} pairs, {rate:.2f} pairs/s, ETA {eta:.0f} s", end="", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db")
    parser.add_argument("model")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--precision", default="fast")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json")
    args = parser.parse_args()

    model = eventkv.Model(args.model, threads=args.threads, precision=args.precision)
    ids = pair_ids(args.db)
    chosen = sorted(random.Random(args.seed).sample(ids, min(args.pairs, len(ids))))
    results, started = [], time.time()
    for done, pair in enumerate(chosen, 1):
        rerun = eventkv.rerun(model, args.db, pair)
        results.append({"pair": pair, "labels": rerun["labels"]})
        progress(done, len(chosen), started)
    seconds = time.time() - started
    if sys.stderr.isatty():
        print(file=sys.stderr)

    same, changes, margin_diff = Counter(), defaultdict(Counter), defaultdict(list)
    for r in results:
        for condition, label in r["labels"].items():
            same[condition] += label["stored"] == label["recomputed"]
            if label["stored"] != label["recomputed"]:
                changes[condition][f"{label['stored']} -> {label['recomputed']}"] += 1
            margin_diff[condition].append(label["recomputed_margin"] - label["stored_margin"])
    n = len(results)
    print(f"{args.db}: {n} pairs re-scored with --precision {args.precision} on {args.model} "
          f"(seed {args.seed}) in {seconds:.0f} s ({n / seconds:.2f} pairs/s, {model.threads} threads)")
    total_same = sum(same.values())
    total = n * len(same)
    print(f"labels identical: {total_same} of {total} ({100 * total_same / total:.2f}%)")
    print(f"{'condition':14} {'identical':>12} {'margin diff: mean':>18} {'mean |d|':>9} {'max |d|':>9}  changes")
    for condition in sorted(same):
        d = margin_diff[condition]
        print(f"{condition:14} {same[condition]:>5} ({100 * same[condition] / n:5.1f}%) "
              f"{statistics.fmean(d):>+18.4f} {statistics.fmean(abs(x) for x in d):>9.4f} "
              f"{max(abs(x) for x in d):>9.4f}  {dict(changes[condition]) or ''}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"db": args.db, "model": args.model, "precision": args.precision,
                       "seed": args.seed, "seconds": seconds, "pairs": results}, out)


if __name__ == "__main__":
    main()
