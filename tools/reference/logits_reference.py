#!/usr/bin/env python3
"""Writes tests/fixtures/logits/*.json: reference logits of every real model
and of generated tiny models of every architecture, from independent
implementations on the same GGUF files and the same token ids.

- Hugging Face transformers, float32 (`from_pretrained(gguf_file=...)`):
  per prompt, the top-50 logits at every position; at 3 positions a strided
  sample of the full vector (every vocabulary id for generated models, ~1024
  ids for real ones, to keep fixtures small) plus its max and logsumexp.
- llama.cpp (`llama-simple`, greedy): the 32-token continuation text of each
  prompt of each real model, on the quantized file as shipped and on a copy
  whose every tensor gguf-py dequantized to F32 (llama.cpp then keeps
  activations in float, so its continuation should equal a float engine's;
  the quantized run rounds activations to 8 bits inside matrix products).
  Prompt ids come from `llama-tokenize`. The F32 copy is skipped for models
  over 3 GiB of F32 weights. The generated mistral3 and gemma4 models get
  continuations from `llama-completion` with an f32 KV cache and flash
  attention off (`llama_f32_continuation_bytes`).

Caveats handled here (see FACTS.md section 6), each checked by transformers'
own load report, which refuses mismatched shapes: GGUF stores no
query_pre_attn_scalar for gemma3, and llama.cpp (like eventkv) uses head_dim,
so the generated gemma3 model (head_dim 64) is loaded with that override;
transformers' qwen3 GGUF mapping ignores attention.key_length, so the
generated qwen3 model gets head_dim=64 explicitly. transformers' GGUF loader
has no mistral3 or gemma4: mistral3 goes through a llama twin file, gemma4's
Gemma4ForCausalLM is configured from the file's keys and given its tensors
by name (load_gemma4).

Usage: tools/reference/logits_reference.py --eventkv build/eventkv \\
           --llama /path/to/llama.cpp/build/bin --models models
Needs: pip install -r tools/reference/requirements-forward.txt
"""
import argparse
import base64
import json
import subprocess
import tempfile
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers
from gguf.quants import dequantize
from transformers import AutoModelForCausalLM

TOP_K = 50
SAMPLED_IDS = 1024
CONTINUATION_TOKENS = 32
MAX_F32_BYTES = 3 << 30

REAL_MODELS = {
    "smollm2-135m-instruct-q4_1.gguf": "chatml",
    "gemma-3-270m-q4_k_m.gguf": "gemma",
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": "chatml",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf": "chatml",
}

PROMPTS = {
    "chatml": [
        "The capital of France is",
        "<|im_start|>system\nYou are a home assistant.<|im_end|>\n<|im_start|>user\nPlease switch the hallway "
        "light on.<|im_end|>\n<|im_start|>assistant\n",
        "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
        "In 1969, 417 people watched the 3 rockets; 12.5% of them",
        "Once upon a time, in a small village by the sea, there lived",
    ],
    "gemma": [
        "The capital of France is",
        "<start_of_turn>user\nPlease switch the hallway light on.<end_of_turn>\n<start_of_turn>model\n",
        "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
        "In 1969, 417 people watched the 3 rockets; 12.5% of them",
        "Once upon a time, in a small village by the sea, there lived",
    ],
}

# Generated models: (label, arch, weight type, layers, general.name, seed, YaRN factor or 0, further
# make-test-model options, recorded in the fixture under these names: {"swa_pattern": 3} is --swa-pattern 3,
# {"dense": True} is --dense).
GENERATED = [
    ("llama-q8_0", "llama", "q8_0", 2, "", 11, 0, {}),
    ("mistral-q4_k", "llama", "q4_k", 2, "Mistral tiny", 12, 0, {}),
    ("qwen2-f16", "qwen2", "f16", 2, "", 13, 0, {}),
    ("qwen3-q6_k", "qwen3", "q6_k", 2, "", 14, 0, {}),
    ("gemma3-q5_0", "gemma3", "q5_0", 6, "", 15, 0, {}),
    ("qwen2-yarn-q8_0", "qwen2", "q8_0", 2, "", 16, 4.0, {}),
    ("mistral3-f32", "mistral3", "f32", 2, "", 17, 4.0, {}),
    ("gemma4-f32", "gemma4", "f32", 6, "", 18, 0, {}),
    # Gemma 4's dense layout (12B, 31B): full layers 2, 5 and 6.
    ("gemma4-dense-f32", "gemma4", "f32", 7, "", 19, 0, {"dense": True, "swa_pattern": 3}),
]
# make-test-model --yarn scales over this many original positions (mistral3:
# MISTRAL3_CONTEXT, so that the prompts cross its attention temperature's steps).
YARN_ORIGINAL_CONTEXT = 128
MISTRAL3_CONTEXT = 16
MISTRAL3_TEMPERATURE = 0.1
# Prompts of the greedy continuations by llama.cpp of the generated mistral3 and gemma4 models.
CONTINUATION_TEXTS = ["The capital of France is", "def fibonacci(n):", "Hello, world! 12345"]


def b64(values) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode()


def b64_ids(values) -> str:
    return base64.b64encode(np.asarray(values, dtype="<i4").tobytes()).decode()


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def load_hf(directory: Path, file_name: str, **overrides):
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=file_name, dtype=torch.float32, **overrides)
    return model.eval()


def logits_of(model, ids) -> np.ndarray:
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=False)
    return out.logits[0].float().numpy()


def prompt_entry(logits: np.ndarray, ids, full: bool) -> dict:
    n, n_vocab = logits.shape
    top = np.argsort(-logits, axis=1, kind="stable")[:, :TOP_K]
    stride = 1 if full else max(1, n_vocab // SAMPLED_IDS)
    sample_ids = np.arange(0, n_vocab, stride)
    positions = sorted({0, n // 2, n - 1})
    samples = []
    for p in positions:
        row = logits[p].astype(np.float64)
        lse = float(np.log(np.exp(row - row.max()).sum()) + row.max())
        samples.append({"position": p, "values": b64(logits[p][sample_ids]), "max": float(row.max()),
                        "logsumexp": lse})
    return {
        "ids": [int(i) for i in ids],
        "top_ids": b64_ids(top.reshape(-1)),
        "top_values": b64(np.take_along_axis(logits, top, axis=1).reshape(-1)),
        "max_abs": [float(v) for v in np.abs(logits).max(axis=1)],
        "sample_stride": int(stride),
        "samples": samples,
    }


def llama_ids(llama_bin: Path, model: Path, text: str):
    out = subprocess.run([str(llama_bin / "llama-tokenize"), "-m", str(model), "-p", text, "--ids", "--log-disable"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def llama_continuation_bytes(llama_bin: Path, model: Path, text: str) -> bytes:
    out = subprocess.run([str(llama_bin / "llama-simple"), "-m", str(model), "-n", str(CONTINUATION_TOKENS), text],
                         check=True, capture_output=True).stdout
    head, sep, tail = out.partition(text.encode())
    if not sep:
        raise RuntimeError(f"llama-simple did not echo the prompt: {out[:200]!r}")
    return tail[:-1] if tail.endswith(b"\n") else tail


def llama_f32_continuation_bytes(llama_bin: Path, model: Path, text: str) -> bytes:
    """llama.cpp's greedy continuation with an f32 KV cache and flash attention off. Random-weight models are
    ill-conditioned: llama-simple's defaults (f16 cache, flash attention) flip picks that lead by 0.1 nats."""
    out = subprocess.run([str(llama_bin / "llama-completion"), "-m", str(model), "-p", text, "-n",
                          str(CONTINUATION_TOKENS), "--temp", "0", "-ctk", "f32", "-ctv", "f32", "-fa", "off",
                          "-no-cnv", "--no-warmup", "--no-display-prompt", "-t", "2"],
                         check=True, capture_output=True).stdout
    # After the tokens it prints " [end of text]\n" at an end-of-generation token, then "\n\n".
    return out.removesuffix(b"\n\n").removesuffix(b" [end of text]\n")


def llama_continuation(llama_bin: Path, model: Path, text: str) -> str:
    return llama_continuation_bytes(llama_bin, model, text).decode()


def write_f32_copy(src: Path, dst: Path) -> bool:
    """Writes src with every tensor dequantized to F32; False when too large."""
    reader = gguf.GGUFReader(src)
    if sum(int(np.prod([int(x) for x in t.shape])) for t in reader.tensors) * 4 > MAX_F32_BYTES:
        return False
    writer = gguf.GGUFWriter(dst, reader.fields["general.architecture"].contents())
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value_type = gguf.GGUFValueType(field.types[0])
        sub_type = gguf.GGUFValueType(field.types[1]) if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), value_type, sub_type=sub_type)
    for t in reader.tensors:
        shape = [int(x) for x in t.shape][::-1]
        data = dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape(shape)
        writer.add_tensor(t.name, data, raw_dtype=gguf.GGMLQuantizationType.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return True


def real_fixture(args, file_name: str) -> dict:
    path = Path(args.models) / file_name
    model = load_hf(Path(args.models), file_name)
    with tempfile.TemporaryDirectory() as tmp:
        f32_path = Path(tmp) / "f32.gguf"
        has_f32 = write_f32_copy(path, f32_path)
        prompts = []
        for text in PROMPTS[REAL_MODELS[file_name]]:
            ids = llama_ids(Path(args.llama), path, text)
            entry = prompt_entry(logits_of(model, ids), ids, full=False)
            entry["text"] = text
            entry["llama_cpp_continuation"] = llama_continuation(Path(args.llama), path, text)
            if has_f32:
                entry["llama_cpp_f32_continuation"] = llama_continuation(Path(args.llama), f32_path, text)
            prompts.append(entry)
    return {"model": file_name, "prompts": prompts}


def generated_fixture(args, label, arch, weight_type, layers, name, seed, yarn, extra) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{label}.gguf"
        cmd = [args.eventkv, "make-test-model", "--arch", arch, "--type", weight_type, "--layers", str(layers),
               "--seed", str(seed), "-o", str(path)]
        if name:
            cmd += ["--name", name]
        if yarn:
            cmd += ["--yarn", str(yarn)]
        if arch == "mistral3":
            cmd += ["--yarn-context", str(MISTRAL3_CONTEXT), "--attn-temperature", str(MISTRAL3_TEMPERATURE)]
        for option, value in extra.items():
            flag = "--" + option.replace("_", "-")
            cmd += [flag] if value is True else [flag, str(value)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        if arch in ("mistral3", "gemma4"):
            if arch == "mistral3":
                model = load_ministral3(args, Path(tmp), path, weight_type, layers, seed, yarn)
            else:
                model = load_gemma4(path)
            digest = fnv1a64(path.read_bytes())
            entry = generated_entry(model, arch, weight_type, layers, name, seed, yarn, extra, digest)
            # A random model's bytes need not be UTF-8: the continuations are stored in base64.
            entry["continuations"] = [
                {"text": text, "ids": llama_ids(Path(args.llama), path, text),
                 "llama_cpp_continuation_b64": base64.b64encode(
                     llama_f32_continuation_bytes(Path(args.llama), path, text)).decode()}
                for text in CONTINUATION_TEXTS]
            return entry
        overrides = {"gemma3": {"query_pre_attn_scalar": 64}, "qwen3": {"head_dim": 64}}.get(arch, {})
        if yarn:
            # transformers' GGUF loader does not read rope.scaling.*: the YaRN parameters are given here.
            overrides["rope_parameters"] = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": yarn,
                                            "original_max_position_embeddings": YARN_ORIGINAL_CONTEXT}
        model = load_hf(Path(tmp), path.name, **overrides)
        digest = fnv1a64(path.read_bytes())
    return generated_entry(model, arch, weight_type, layers, name, seed, yarn, extra, digest)


def load_ministral3(args, directory: Path, path: Path, weight_type, layers, seed, yarn):
    """transformers' GGUF loader has no mistral3: the same tensors are written as a llama file (make-test-model
    draws them alike), loaded as Llama (which undoes the converter's Q/K permutation), and moved into
    Ministral3ForCausalLM configured as the mistral3 file says."""
    twin = directory / "llama-twin.gguf"
    subprocess.run([args.eventkv, "make-test-model", "--arch", "llama", "--type", weight_type, "--layers",
                    str(layers), "--seed", str(seed), "-o", str(twin)], check=True, stdout=subprocess.DEVNULL)
    ours, theirs = gguf.GGUFReader(path), gguf.GGUFReader(twin)
    assert [(t.name, bytes(t.data)) for t in ours.tensors] == [(t.name, bytes(t.data)) for t in theirs.tensors]
    llama = load_hf(directory, twin.name)
    c = llama.config
    config = transformers.Ministral3Config(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_hidden_layers, num_attention_heads=c.num_attention_heads,
        num_key_value_heads=c.num_key_value_heads, head_dim=c.head_dim, rms_norm_eps=c.rms_norm_eps,
        max_position_embeddings=int(yarn * MISTRAL3_CONTEXT), tie_word_embeddings=c.tie_word_embeddings,
        rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": yarn,
                         "original_max_position_embeddings": MISTRAL3_CONTEXT,
                         "llama_4_scaling_beta": MISTRAL3_TEMPERATURE})
    model = transformers.Ministral3ForCausalLM(config).to(torch.float32)
    model.load_state_dict(llama.state_dict(), strict=True)
    return model.eval()


# Gemma4ForCausalLM's parameter names of the GGUF tensor names llama.cpp reads.
GEMMA4_GLOBAL = {"token_embd": "embed_tokens", "output_norm": "norm",
                 "per_layer_token_embd": "embed_tokens_per_layer",
                 "per_layer_model_proj": "per_layer_model_projection",
                 "per_layer_proj_norm": "per_layer_projection_norm"}
GEMMA4_LAYER = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
                "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
                "attn_k_norm": "self_attn.k_norm", "post_attention_norm": "post_attention_layernorm",
                "ffn_norm": "pre_feedforward_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
                "ffn_down": "mlp.down_proj", "post_ffw_norm": "post_feedforward_layernorm",
                "inp_gate": "per_layer_input_gate", "proj": "per_layer_projection",
                "post_norm": "post_per_layer_input_norm", "layer_output_scale": "layer_scalar"}


def load_gemma4(path: Path):
    """Gemma4ForCausalLM configured as the gemma4 file's keys say (as llama.cpp's converter wrote them from a
    Gemma4TextConfig), with the file's tensors dequantized to float32."""
    reader = gguf.GGUFReader(path)

    def key(name, default=None):
        field = reader.fields.get("gemma4." + name)
        return default if field is None else field.contents()

    tensors = {t.name: torch.from_numpy(
        dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape([int(x) for x in t.shape][::-1]))
        for t in reader.tensors}
    n_layer = key("block_count")
    sliding = key("attention.sliding_window_pattern")
    n_head_kv, n_ff = key("attention.head_count_kv"), key("feed_forward_length")
    n_shared = key("attention.shared_kv_layers", 0)
    full = [il for il in range(n_layer) if not sliding[il]]
    local = [il for il in range(n_layer) if sliding[il]]
    factors = tensors["rope_freqs.weight"].numpy()
    config = transformers.Gemma4TextConfig(
        vocab_size=tensors["token_embd.weight"].shape[0], hidden_size=key("embedding_length"),
        intermediate_size=n_ff[0], num_hidden_layers=n_layer, num_attention_heads=key("attention.head_count"),
        num_key_value_heads=n_head_kv[local[0]], head_dim=key("attention.key_length_swa"),
        global_head_dim=key("attention.key_length"), num_global_key_value_heads=n_head_kv[full[0]],
        attention_k_eq_v=f"blk.{full[0]}.attn_v.weight" not in tensors,
        rms_norm_eps=key("attention.layer_norm_rms_epsilon"), max_position_embeddings=key("context_length"),
        sliding_window=key("attention.sliding_window"),
        layer_types=["sliding_attention" if s else "full_attention" for s in sliding],
        rope_parameters={
            "sliding_attention": {"rope_type": "default", "rope_theta": key("rope.freq_base_swa")},
            "full_attention": {"rope_type": "proportional", "rope_theta": key("rope.freq_base"),
                               "partial_rotary_factor": float((factors == 1.0).sum()) / len(factors)}},
        final_logit_softcapping=key("final_logit_softcapping"), tie_word_embeddings=True,
        vocab_size_per_layer_input=tensors["token_embd.weight"].shape[0],
        hidden_size_per_layer_input=key("embedding_length_per_layer_input", 0), num_kv_shared_layers=n_shared,
        use_double_wide_mlp=n_ff[-1] == 2 * n_ff[0] and n_shared > 0, attn_implementation="eager")
    model = transformers.Gemma4ForCausalLM(config).to(torch.float32)
    state = {}
    for name, value in tensors.items():
        if name == "rope_freqs.weight":
            continue
        parts = name.split(".")
        if parts[0] == "blk":
            hf = f"model.layers.{parts[1]}.{GEMMA4_LAYER[parts[2]]}.weight"
            state[hf.removesuffix(".weight") if parts[2] == "layer_output_scale" else hf] = value
        else:
            state[f"model.{GEMMA4_GLOBAL[parts[0]]}.weight"] = value
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    model.tie_weights()
    assert torch.equal(model.lm_head.weight, state["model.embed_tokens.weight"])
    return model.eval()


def generated_entry(model, arch, weight_type, layers, name, seed, yarn, extra, digest) -> dict:
    rng = np.random.default_rng(seed)
    prompts = [prompt_entry(logits_of(model, ids), ids, full=True)
               for ids in (rng.integers(0, 259, size=length).tolist() for length in (1, 7, 19, 24, 33))]
    generated = {"arch": arch, "type": weight_type, "layers": layers, "name": name, "seed": seed, **extra}
    if yarn:
        generated["yarn"] = yarn
    if arch == "mistral3":
        generated["yarn_context"] = MISTRAL3_CONTEXT
        generated["attn_temperature"] = MISTRAL3_TEMPERATURE
    return {"generated": generated,
            "fnv1a64": digest, "hf_class": type(model).__name__, "prompts": prompts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eventkv", default="build/eventkv")
    parser.add_argument("--llama", required=True, help="llama.cpp build/bin with llama-tokenize, llama-simple and llama-completion")
    parser.add_argument("--models", default="models")
    parser.add_argument("--out", default="tests/fixtures/logits")
    parser.add_argument("--only", nargs="*", help="labels or model files to regenerate")
    args = parser.parse_args()
    torch.set_num_threads(2)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reference = f"transformers {transformers.__version__} float32, torch {torch.__version__}"
    jobs = [(g[0], lambda g=g: generated_fixture(args, *g)) for g in GENERATED]
    jobs += [(Path(f).stem, lambda f=f: real_fixture(args, f)) for f in REAL_MODELS if (Path(args.models) / f).exists()]
    for label, make in jobs:
        if args.only and label not in args.only:
            continue
        fixture = make()
        fixture["reference"] = reference
        (out / f"{label}.json").write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
        print(f"wrote {out / (label + '.json')}", flush=True)


if __name__ == "__main__":
    main()
