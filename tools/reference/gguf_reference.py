#!/usr/bin/env python3
"""Writes tests/fixtures/gguf_reference.json from gguf-py (llama.cpp's numpy
reader), an implementation independent of ours:

- type_zoo: every row of the generated type-zoo file, dequantized by gguf-py;
- real_models: per real model, hyperparameters read from its metadata and a
  few dequantized rows of one tensor of every type it stores.

Usage: tools/reference/gguf_reference.py --eventkv build/eventkv --models models
"""
import argparse
import base64
import hashlib
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

ZOO_SEED = 7
VALUES_PER_ROW = 512
REAL_MODELS = [
    "smollm2-135m-instruct-q4_1.gguf",
    "gemma-3-270m-q4_k_m.gguf",
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
]


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def dequantized_row(tensor, row: int) -> str:
    """Row `row` of a tensor via gguf-py's dequantizer: float32 little-endian, base64."""
    raw = np.asarray(tensor.data)
    raw2d = raw.reshape(-1, raw.shape[-1]) if raw.ndim > 1 else raw.reshape(1, -1)
    values = dequantize(raw2d[row : row + 1], tensor.tensor_type).astype("<f4").reshape(-1)
    return base64.b64encode(values[:VALUES_PER_ROW].tobytes()).decode()


def n_rows(tensor) -> int:
    shape = [int(x) for x in tensor.shape]
    rows = 1
    for extent in shape[1:]:
        rows *= extent
    return rows


def row_entry(tensor, row: int) -> dict:
    return {"tensor": tensor.name, "type": tensor.tensor_type.name, "row": row, "values_f32_base64": dequantized_row(tensor, row)}


def type_zoo(eventkv: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "zoo.gguf"
        subprocess.run([eventkv, "make-test-model", "--type-zoo", "--seed", str(ZOO_SEED), "-o", str(path)],
                       check=True, stdout=subprocess.DEVNULL)
        data = path.read_bytes()
        reader = GGUFReader(path)
        rows = [row_entry(t, r) for t in reader.tensors for r in range(n_rows(t))]
    return {"seed": ZOO_SEED, "fnv1a64": fnv1a64(data), "rows": rows}


def field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    value = f.contents()
    if isinstance(value, list):  # per-layer arrays: uniform in these models
        assert len(set(value)) == 1, key
        value = value[0]
    return value


def hyperparameters(reader) -> dict:
    arch = field(reader, "general.architecture")
    n_embd = field(reader, f"{arch}.embedding_length")
    n_head = field(reader, f"{arch}.attention.head_count")
    tensors = {t.name: t for t in reader.tensors}
    return {
        "architecture": arch,
        "n_vocab": int(tensors["token_embd.weight"].shape[1]),
        "n_ctx_train": field(reader, f"{arch}.context_length"),
        "n_embd": n_embd,
        "n_layer": field(reader, f"{arch}.block_count"),
        "n_head": n_head,
        "n_head_kv": field(reader, f"{arch}.attention.head_count_kv", n_head),
        "head_dim": field(reader, f"{arch}.attention.key_length", n_embd // n_head),
        "n_ff": field(reader, f"{arch}.feed_forward_length"),
        "rms_eps": field(reader, f"{arch}.attention.layer_norm_rms_epsilon"),
        "rope_freq_base": field(reader, f"{arch}.rope.freq_base", 10000.0),
        "sliding_window": field(reader, f"{arch}.attention.sliding_window", 0),
        "tied_output": "output.weight" not in tensors,
    }


def real_model(path: Path) -> dict:
    reader = GGUFReader(path)
    rows, seen = [], set()
    for tensor in reader.tensors:
        kind = tensor.tensor_type.name
        if kind in seen:
            continue
        seen.add(kind)
        last = n_rows(tensor) - 1
        rows += [row_entry(tensor, r) for r in sorted({0, last})]
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            sha.update(block)
    return {"file": path.name, "sha256": sha.hexdigest(), "hyperparameters": hyperparameters(reader), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eventkv", default="build/eventkv")
    parser.add_argument("--models", default="models")
    parser.add_argument("--out", default="tests/fixtures/gguf_reference.json")
    args = parser.parse_args()
    fixture = {"generator": "tools/reference/gguf_reference.py (gguf-py dequantize)", "type_zoo": type_zoo(args.eventkv)}
    fixture["real_models"] = [real_model(Path(args.models) / name) for name in REAL_MODELS
                              if (Path(args.models) / name).exists()]
    Path(args.out).write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}: {len(fixture['type_zoo']['rows'])} zoo rows, "
          f"{len(fixture['real_models'])} real models")


if __name__ == "__main__":
    main()
