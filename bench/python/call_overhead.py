"""The Python binding's cost per call: a call that does next to nothing in C++
(History.retained_rows) is the binding's own cost; a real score call
(History.score_tokens: arguments converted, GIL released, the engine locked,
a numpy array returned) shows how small a share of it that is. Medians of
repeated timings.

    PYTHONPATH=build/python build/venv/bin/python bench/python/call_overhead.py MODEL.gguf
"""

import statistics
import sys
import time

import eventkv


def median_seconds(call, repeats, rounds=7):
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        samples.append((time.perf_counter() - start) / repeats)
    return statistics.median(samples)


def main():
    model = eventkv.Model(sys.argv[1], threads=1)
    history = eventkv.History(model, verify=False)
    history.add([{"id": "source", "role": "user", "content": "Keep the attic window open."}])
    history.compute()
    query = model.query_tokens("Is the attic window open or shut?", "The attic window is")
    candidates = [model.tokenize(" open"), model.tokenize(" shut")]
    trivial = median_seconds(lambda: history.retained_rows, 100000)
    score = median_seconds(lambda: history.score_tokens(query, candidates), 50)
    print(f"History.retained_rows (binding only): {trivial * 1e9:.0f} ns per call")
    print(f"History.score_tokens ({len(query)}-token query, 2 candidates): {score * 1e3:.3f} ms per call")


if __name__ == "__main__":
    main()
