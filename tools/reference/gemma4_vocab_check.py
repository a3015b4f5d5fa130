#!/usr/bin/env python3
"""Checks eventkv's gemma4 tokenizer against llama.cpp's on a vocabulary of a
real model's size, where the committed fixture (generated-gemma4) uses a
small generated one.

No Gemma 4 file is at hand, so this builds a Gemma-4-style tokenizer from
Gemma 3's: the same 262,144 pieces and token types (spaces as U+2581, <0xXX>
byte tokens), with tokenizer.ggml.model "gemma4" and BPE merges derived from
the SentencePiece scores the way Hugging Face's slow-to-fast converter does
(every split of a piece into two pieces, ranked by the piece's score). The
vocabulary goes into a tiny generated model (`eventkv make-test-model
--vocab-from`), then every string of the tokenizer corpus is tokenized by
llama.cpp (vocab-only, the helper of tokenizer_reference.py) and by eventkv
(the Python binding), plain and with special tokens parsed, and the
mismatches are counted and shown.

Usage: tools/reference/gemma4_vocab_check.py --eventkv build/eventkv \\
           --llama-cpp /path/to/llama.cpp [--models models]
(PYTHONPATH must reach build/python for `import eventkv`.)
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
from gguf import GGUFReader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tokenizer_reference import FIXTURES, LlamaTokenizer, build_helper  # noqa: E402


def derive_merges(pieces: list[str], scores: list[float]) -> list[str]:
    index = {piece: i for i, piece in enumerate(pieces)}
    merges = []
    for piece, score in zip(pieces, scores):
        local = [(piece[:k], piece[k:]) for k in range(1, len(piece))
                 if piece[:k] in index and piece[k:] in index]
        local.sort(key=lambda pair: (index[pair[0]], index[pair[1]]))
        merges.extend((score, left, right) for left, right in local)
    merges.sort(key=lambda merge: -merge[0])  # stable: equal scores keep piece order
    return [f"{left} {right}" for _, left, right in merges]


def write_vocab(source: Path, out: Path) -> int:
    fields = GGUFReader(str(source)).fields
    pieces = fields["tokenizer.ggml.tokens"].contents()
    scores = fields["tokenizer.ggml.scores"].contents()
    types = fields["tokenizer.ggml.token_type"].contents()
    merges = derive_merges(pieces, scores)
    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_tokenizer_model("gemma4")
    writer.add_token_list(pieces)
    writer.add_token_types(types)
    writer.add_token_scores(scores)
    writer.add_token_merges(merges)
    for key in ("bos_token_id", "eos_token_id", "unknown_token_id", "padding_token_id"):
        full = f"tokenizer.ggml.{key}"
        if full in fields:
            writer.add_uint32(full, int(fields[full].contents()))
    writer.add_bool("tokenizer.ggml.add_bos_token", True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return len(merges)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eventkv", type=Path, required=True)
    parser.add_argument("--llama-cpp", type=Path, required=True)
    parser.add_argument("--models", type=Path, default=Path("models"))
    args = parser.parse_args()
    import eventkv

    corpus = json.loads((FIXTURES / "corpus.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        vocab = work / "gemma4-vocab.gguf"
        n_merges = write_vocab(args.models / "gemma-3-270m-q4_k_m.gguf", vocab)
        model_path = work / "gemma4-tokenizer.gguf"
        subprocess.run([str(args.eventkv), "make-test-model", "--vocab-from", str(vocab), "-o",
                        str(model_path)], check=True, stdout=subprocess.DEVNULL)
        reference = LlamaTokenizer(build_helper(args.llama_cpp, work), model_path)
        model = eventkv.Model(str(model_path), threads=1, panels=False)
        mismatches = 0
        for special in (False, True):
            for text in corpus:
                expected = reference.tokenize(text, parse_special=special)
                got = model.tokenize(text, special=special)
                if got != expected:
                    mismatches += 1
                    if mismatches <= 5:
                        print(f"MISMATCH special={special} {text!r}:\n  llama.cpp {expected[:30]}\n"
                              f"  eventkv   {got[:30]}")
        reference.close()
    print(f"gemma4 tokenizer, {model.n_vocab} tokens, {n_merges} merges: {len(corpus)} strings x 2 modes, "
          f"{mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
