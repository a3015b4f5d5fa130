#!/usr/bin/env python3
"""Hugging Face `tokenizers` speed on the same 10 MB corpus as
bench/tokenizer_bench.cc, one thread, for the side-by-side figure.

Run the C++ benchmark first (it writes the corpus), then this, in the same
session:
    build/eventkv_bench --benchmark_filter=tokenizer
    tools/reference/hf_tokenizer_bench.py --models models

Tokenizers come from transformers' GGUF conversion (an approximation of the
real tokenizer for SmolLM2 and Gemma, docs/FACTS.md section 6: fine for speed,
not for ids). Encode time is the best of --repeats runs, both of one encode()
call on the whole corpus (as the C++ benchmark does) and of encode_batch() on
its lines (often faster in `tokenizers`); load time includes the GGUF
conversion.
"""
import os

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from transformers import AutoTokenizer  # noqa: E402

MODELS = ["smollm2-135m-instruct-q4_1.gguf", "gemma-3-270m-q4_k_m.gguf",
          "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"]


def best_time(repeats: int, run) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--corpus", type=Path,
                        default=Path(tempfile.gettempdir()) / "eventkv-tokenizer-bench-corpus.txt")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    text = args.corpus.read_bytes().decode("utf-8")
    size_mb = len(text.encode("utf-8")) / 1e6
    print(f"corpus {args.corpus}: {size_mb:.2f} MB")
    for name in MODELS:
        start = time.perf_counter()
        tok = AutoTokenizer.from_pretrained(str(args.models.resolve()), gguf_file=name).backend_tokenizer
        load_s = time.perf_counter() - start
        lines = text.splitlines(keepends=True)
        whole = best_time(args.repeats, lambda: tok.encode(text, add_special_tokens=False))
        batch = best_time(args.repeats, lambda: tok.encode_batch(lines, add_special_tokens=False))
        print(f"{name}: encode {size_mb / whole:.2f} MB/s whole text, {size_mb / batch:.2f} MB/s "
              f"by line; load {load_s:.2f} s")


if __name__ == "__main__":
    main()
