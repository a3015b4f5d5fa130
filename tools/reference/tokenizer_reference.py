#!/usr/bin/env python3
"""Writes tests/fixtures/tokenizer/: the token ids llama.cpp's tokenizer gives
for a corpus of 2,000+ strings, per tokenizer, and rendered chats.

The reference is llama.cpp built locally from a fetched snapshot: a small C
program, compiled here against its llama.h and libllama, loads each GGUF file
vocab-only and calls llama_tokenize. Models:

- the real models under models/ (the two Qwen2.5-Coder files share one
  vocabulary, which this script verifies, so they share one fixture);
- generated models of each tokenizer kind (`eventkv make-test-model
  --tokenizer ...`), BPE with each supported pre-tokenizer;
- llama.cpp's vocab-only test files under shared/testdata/vocab when present.

Fixtures stay small: the corpus once (corpus.json), then per tokenizer one
32-bit FNV-1a hash of the ids of each string (the C++ test recomputes it), and
full ids only for the chats.

Usage: tools/reference/tokenizer_reference.py --eventkv build/eventkv \\
           --llama-cpp /path/to/llama.cpp [--models models] [--shared ../shared]
(--llama-cpp is a source tree with libllama built in build/bin.)
"""
import argparse
import hashlib
import json
import random
import struct
import subprocess
import tempfile
from pathlib import Path

import jinja2
from gguf import GGUFReader

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "tokenizer"

REAL_MODELS = {
    "smollm2": ["smollm2-135m-instruct-q4_1.gguf"],
    "gemma3": ["gemma-3-270m-q4_k_m.gguf"],
    "qwen2.5": ["qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"],
}
GENERATED = {
    "generated-byte-level": ["--tokenizer", "byte-level"],
    "generated-bpe-default": ["--tokenizer", "bpe", "--pre", "default"],
    "generated-bpe-gpt2": ["--tokenizer", "bpe", "--pre", "gpt-2"],
    "generated-bpe-smollm": ["--tokenizer", "bpe", "--pre", "smollm"],
    "generated-bpe-qwen2": ["--tokenizer", "bpe", "--pre", "qwen2"],
    "generated-bpe-llama3": ["--tokenizer", "bpe", "--pre", "llama-bpe"],
    "generated-bpe-tekken": ["--tokenizer", "bpe", "--pre", "tekken"],
    "generated-spm": ["--tokenizer", "spm"],
    "generated-gemma4": ["--tokenizer", "gemma4"],
}
VOCAB_FILES = ["gpt-2", "llama-spm", "phi-3", "refact", "starcoder"]

HELPER_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "llama.h"

static void quiet(enum ggml_log_level level, const char * text, void * data) {
  (void) level; (void) text; (void) data;
}

/* stdin: records (u32 length, u8 flags: 1 parse_special, 2 add_special, bytes);
   stdout: one line of ids per record. */
int main(int argc, char ** argv) {
  if (argc != 2) return 2;
  llama_log_set(quiet, NULL);
  llama_backend_init();
  struct llama_model_params params = llama_model_default_params();
  params.vocab_only = 1;
  struct llama_model * model = llama_model_load_from_file(argv[1], params);
  if (!model) return 1;
  const struct llama_vocab * vocab = llama_model_get_vocab(model);
  int32_t capacity = 1 << 16;
  int32_t * ids = malloc(sizeof(int32_t) * capacity);
  uint32_t length;
  uint8_t flags;
  while (fread(&length, 4, 1, stdin) == 1 && fread(&flags, 1, 1, stdin) == 1) {
    char * text = malloc(length + 1);
    if (length > 0 && fread(text, 1, length, stdin) != length) return 3;
    int32_t n = llama_tokenize(vocab, text, length, ids, capacity, flags & 2, flags & 1);
    if (n < 0) {
      capacity = -n;
      ids = realloc(ids, sizeof(int32_t) * capacity);
      n = llama_tokenize(vocab, text, length, ids, capacity, flags & 2, flags & 1);
    }
    for (int32_t i = 0; i < n; ++i) printf(i ? " %d" : "%d", ids[i]);
    printf("\n");
    fflush(stdout);
    free(text);
  }
  return 0;
}
"""


class LlamaTokenizer:
    """llama.cpp's tokenizer for one GGUF file, in a helper process."""

    def __init__(self, helper: Path, model: Path):
        self.proc = subprocess.Popen([str(helper), str(model)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def tokenize(self, text: str, parse_special: bool, add_special: bool = False) -> list[int]:
        data = text.encode("utf-8")
        flags = (1 if parse_special else 0) | (2 if add_special else 0)
        self.proc.stdin.write(struct.pack("<IB", len(data), flags) + data)
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("llama.cpp helper stopped")
        return [int(x) for x in line.split()]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def build_helper(llama_cpp: Path, work: Path) -> Path:
    source = work / "tokenize_helper.c"
    source.write_text(HELPER_C)
    binary = work / "tokenize_helper"
    lib = llama_cpp / "build" / "bin"
    subprocess.run(["cc", "-O1", "-o", str(binary), str(source), f"-I{llama_cpp / 'include'}",
                    f"-I{llama_cpp / 'ggml' / 'include'}", f"-L{lib}", "-lllama",
                    f"-Wl,-rpath,{lib}"], check=True)
    return binary


def fnv1a32(ids: list[int]) -> str:
    """32-bit FNV-1a over the ids as little-endian int32 (tokenizer_reference_test.cc)."""
    h = 0x811C9DC5
    for b in struct.pack(f"<{len(ids)}i", *ids):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


# ---------------------------------------------------------------- corpus

ENGLISH = [
    "Hello world", " Hello world", "Hello, world!", "The quick brown fox jumps over the lazy dog.",
    "I'm sure you'll find it's what we've been looking for, isn't it?", "I'M SHOUTING, DON'T YOU SEE?",
    "She said: \"don't\" — and left.", "It's 5 o'clock somewhere.", "e.g. i.e. etc. Mr. Smith Jr.",
    "Please switch the hallway light on.", "Is the hallway light on or off? Answer with one word.",
    "Done — I've noted the hallway light's new state.", "[log] hallway_light changed by user request",
    "A sentence with  two spaces and   three.", "Tabs\tbetween\twords", "line one\nline two\n",
    "Windows\r\nline endings\r\n", "trailing space ", " leading space", "  both  ",
    "'s 't 're 've 'm 'll 'd", "'S 'T 'RE 'VE 'M 'LL 'D", "rock'n'roll", "y'all'd've",
    "HTTP/1.1 200 OK", "user@example.com", "https://example.com/path?query=1&b=2#frag",
]
CODE = [
    "def f(x):\n    return x * 2\n", "int main() {\n  printf(\"%d\\n\", 42);\n  return 0;\n}",
    "for (let i = 0; i < n; ++i) { sum += a[i]; }", "const x = () => ({ a: 1, b: [2, 3] });",
    "{\"key\": \"value\", \"list\": [1, 2.5, -3e10, null, true]}", "SELECT * FROM t WHERE id = 7;",
    "if x != y && z >= 0 || !w:\n\tpass", "#include <vector>\nstd::vector<int> v{1,2,3};",
    "    indented(4)\n        indented(8)\n", "\t\ttabbed();\n", "a+=1;b-=2;c*=3;d/=4;e%=5;",
    "x = y ** 2 // 3 << 4 >> 5 ^ 6 | 7 & ~8", "$HOME/bin:$PATH", "echo 'hi' | grep -v x > /dev/null 2>&1",
    "<div class=\"a\"><span>text</span></div>", "<table><tr><td>1</td></tr></table>",
    "```python\nprint('hi')\n```", "// comment\n/* block */", "#!/usr/bin/env bash\nset -euo pipefail",
    "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }", "SELECT COUNT(*) AS n FROM logs;",
]
NUMBERS = [
    "0", "7", "42", "123", "1234", "12345", "123456", "1234567", "12345678901234567890",
    "3.14159", "-0.001", "1e-10", "1,000,000", "1 000 000", "2024-01-02", "12:34:56", "+1 (555) 123-4567",
    "v1.2.3", "0x1F", "0b1010", "100%", "$19.99", "€5", "¥1000", "½ ¾ ⅓", "Ⅻ ⅻ", "²³¹", "٠١٢٣٤٥٦٧٨٩",
    "१२३", "一二三", "①②③", "𝟘𝟙𝟚", "a1b2c3", "abc123def", "7th 21st 3rd", "4 ½ months",
]
WHITESPACE = [
    "", " ", "  ", "   ", "    ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r", " \n", "\n ",
    " \t \n ", "\u00a0", "a\u00a0b", "\u3000", "a\u2009b", "\u2028", "\u2029", "\u0085", "\u000b\u000c",
    "x" + " " * 40 + "y", "\n" * 40, "\t" * 35, " " * 100, "a \n\n b", "a\n \n b", "word \t\nword",
]
PUNCTUATION = [
    "!", "?!", "...", "…", "—", "–", "“quoted”", "‘single’", "«guillemets»", "¡Hola! ¿Qué?", "!!!???",
    "(((nested)))", "[]{}<>", "@#$%^&*", "~`|\\", "a.b,c;d:e", "::", "->", "=>", "<=>", "!==", "&&||",
    "。、！？", "「括弧」", "※★☆", "§¶†‡", "•◦▪", "✓✗", "→←↑↓", "∑∏∫√∞≠≤≥", "°C", "™©®",
]
EMOJI = [
    "😀", "😀😃😄", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇯🇵", "1️⃣", "❤️", "🦙", "🤖 robot", "hi👋there",
    "🧑🏾‍🚀", "🫠🫡🫶", "😀 😀  😀", "🔥" * 20,
]
CJK = [
    "你好，世界", "我爱自然语言处理。", "日本語のテキストです。", "カタカナとひらがな", "漢字かな交じり文",
    "中文English混合", "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ", "𠀀𠀁𪚥", "龘靐齉", "東京都渋谷区", "今日は良い天気ですね",
]
KOREAN = [
    "안녕하세요", "한국어 텍스트입니다.", "ㄱㄴㄷㄹ", "각", "대한민국 서울특별시", "Korean 한글 mix 123",
]
RTL = [
    "مرحبا بالعالم", "السلام عليكم ورحمة الله", "שלום עולם", "בְּרֵאשִׁית בָּרָא", "العربية 123 English",
    "עברית (סוגריים)", "فارسی: سلام", "اردو زبان", "\u200fRTL mark\u200f", "\u202eoverride\u202c",
]
COMBINING = [
    "e\u0301", "cafe\u0301", "café", "n\u0303", "a\u0300\u0301\u0302\u0303", "Z̴̡̢̛͓̩a̷̧̛͕l̸̨̛g̶̢o̵̧",
    "नमस्ते दुनिया", "हिन्दी", "สวัสดีครับ", "ภาษาไทย", "Ελληνικά", "Привет, мир!", "Ꮳꮃꭹ", "ქართული",
    "ॐ", "\u0301leading mark", "x\u20dd", "Å Å", "ﬁ ﬂ", "ǅ ǈ", "Ǳ", "ß ẞ", "İı",
]
LONG = [
    "a" * 1000, "ab" * 300, "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft",
    "pneumonoultramicroscopicsilicovolcanoconiosis", "x" * 257, "😀" * 100, "漢" * 200, "1" * 500,
    "aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQgZGF0YQ==" * 8, "-" * 300, "=" * 120, "_" * 64,
    "https://example.com/" + "very/long/path/" * 30, "word " * 200,
]
SPECIAL_TEXT = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|im_start|>user\nhi<|im_end|>\n",
    "<start_of_turn>user\nhi<end_of_turn>\n", "<bos>", "<eos>", "<s>", "</s>", "<unk>", "<pad>",
    "<tool_call>", "</tool_call>", "<unused12>", "[INST] hi [/INST]", "<|begin_of_text|>",
    "<|start_header_id|>user<|end_header_id|>", "<|eot_id|>", "<|im_sta", "|im_end|>", "<<|im_end|>>",
    "text<|im_end|>text", "<|im_end|><|im_end|>", " <|im_end|> ", "<mask>", "[multimodal]",
    "<table><tr>", "<start_of_image>", "<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>",
    "<filename>a.py", "<jupyter_code>", "<repo_name>", "<reponame>", "<|file_sep|>", "[PAD151665]",
    "<end_of_turn><start_of_turn>", "<|endoftext|><|endoftext|>", "a</s>b<s>c",
]
MISC = [
    "\u0000", "a\u0000b", "\u0001\u001f", "\u007f", "\ufeffBOM", "zero\u200bwidth", "\u200c\u200d",
    "\ue000\uf8ff", "\U000f0000", "\u0378", "\uffff", "\U0010ffff", "\ufffd", "\u2ffc\u31ef",
    "\U0001cc00", "\U00010d40", "Ἀθῆναι", "Ⓐⓑⓒ", "𝕳𝖊𝖑𝖑𝖔", "ℌℑℜ", "ǰ", "ŉ", "ΐ",
]

POOLS = [ENGLISH, CODE, NUMBERS, WHITESPACE, PUNCTUATION, EMOJI, CJK, KOREAN, RTL, COMBINING, MISC,
         SPECIAL_TEXT]
ATOMS = sorted({x for pool in POOLS for x in pool if len(x) < 200} | set(
    "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 \t\n\r'\".,;:!?-_()[]{}<>/\\|@#$%^&*+=~`"))


def random_strings(count: int, seed: int) -> list[str]:
    """Random mixes of atoms and characters: the boundaries between classes."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            atom = rng.choice(ATOMS)
            if rng.random() < 0.3 and len(atom) > 3:
                start = rng.randrange(len(atom))
                atom = atom[start:start + rng.randint(1, 6)]
            parts.append(atom)
        joiner = rng.choice(["", " ", "", "\n", "  "])
        out.append(joiner.join(parts))
    return out


def build_corpus() -> list[str]:
    corpus = []
    for pool in POOLS + [LONG]:
        corpus.extend(pool)
    corpus.extend(random_strings(2000, seed=20260501))
    seen, unique = set(), []
    for s in corpus:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return unique


# ---------------------------------------------------------------- chats

CHATS = [
    {"messages": [{"role": "user", "content": "Hello!"}], "add_generation_prompt": True},
    {"messages": [{"role": "system", "content": "You are a home assistant."},
                  {"role": "user", "content": "Please switch the hallway light on."},
                  {"role": "assistant", "content": "Done — I've noted the hallway light's new state."},
                  {"role": "user", "content": "Is the hallway light on or off? Answer with one word."}],
     "add_generation_prompt": True},
    {"messages": [{"role": "user", "content": "  leading and trailing spaces  "},
                  {"role": "assistant", "content": "\n\nnewlines first\n\n"},
                  {"role": "user", "content": "digits 1234567 and emoji 🦙 and 你好"}],
     "add_generation_prompt": False},
    {"messages": [{"role": "user", "content": "What is the weather?"},
                  {"role": "assistant", "content": "<tool_call>\n{\"name\": \"weather\"}\n</tool_call>"},
                  {"role": "tool", "content": "{\"temp\": 21}"},
                  {"role": "assistant", "content": "It is 21 degrees."}],
     "add_generation_prompt": True},
    {"messages": [{"role": "user", "content": "Check both sensors."},
                  {"role": "tool", "content": "hallway: on"},
                  {"role": "tool", "content": "kitchen: off"},
                  {"role": "assistant", "content": "Hallway on, kitchen off."}],
     "add_generation_prompt": False},
    {"messages": [{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": "def f(x):\n    return x\n"},
                  {"role": "assistant", "content": "```python\nprint(1)\n```"}],
     "add_generation_prompt": False},
]

SMOLLM_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
QWEN_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def render_format(name: str, messages: list[dict], add_generation_prompt: bool, bos: str) -> str:
    """The documented event-safe renderings (src/tokenizer/chat_format.h), written
    independently of the C++ code."""
    out = ""
    if name in ("chatml", "smollm2", "qwen2.5"):
        default = {"smollm2": SMOLLM_SYSTEM, "qwen2.5": QWEN_SYSTEM}.get(name)
        if default and messages[0]["role"] != "system":
            out += f"<|im_start|>system\n{default}<|im_end|>\n"
        for m in messages:
            if name == "qwen2.5" and m["role"] == "tool":
                out += f"<|im_start|>user\n<tool_response>\n{m['content']}\n</tool_response><|im_end|>\n"
            else:
                out += f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n"
        if add_generation_prompt:
            out += "<|im_start|>assistant\n"
    elif name == "gemma":
        out += bos
        for m in messages:
            role = "model" if m["role"] == "assistant" else "user"
            out += f"<start_of_turn>{role}\n{m['content'].strip()}<end_of_turn>\n"
        if add_generation_prompt:
            out += "<start_of_turn>model\n"
    elif name == "gemma4":
        out += bos
        for m in messages:
            role = {"assistant": "model", "system": "system"}.get(m["role"], "user")
            channel = "<|channel>thought\n<channel|>" if role == "model" else ""
            out += f"<|turn>{role}\n{channel}{m['content'].strip()}<turn|>\n"
        if add_generation_prompt:
            out += "<|turn>model\n<|channel>thought\n<channel|>"
    elif name == "llama3":
        out += bos
        for m in messages:
            role = "ipython" if m["role"] == "tool" else m["role"]
            out += f"<|start_header_id|>{role}<|end_header_id|>\n\n{m['content'].strip()}<|eot_id|>"
        if add_generation_prompt:
            out += "<|start_header_id|>assistant<|end_header_id|>\n\n"
    elif name == "mistral":
        out += bos
        for m in messages:
            tag = {"system": "SYSTEM_PROMPT", "user": "INST", "tool": "TOOL_RESULTS"}.get(m["role"])
            if tag:
                out += f"[{tag}] {m['content']}[/{tag}]"
            else:
                out += f" {m['content']}</s>"
    else:
        raise ValueError(name)
    return out


def official_template(model: Path) -> str | None:
    fields = GGUFReader(str(model)).fields
    if "tokenizer.chat_template" not in fields:
        return None
    return fields["tokenizer.chat_template"].contents()


def render_official(template: str, messages: list[dict], add_generation_prompt: bool, bos: str = "") -> str:
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda v, **kw: json.dumps(v, **kw)
    return env.from_string(template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                            tools=None, bos_token=bos, eos_token="")


def chat_fixture(tok: LlamaTokenizer, model: Path, formats: list[str], bos_text: str,
                 template: str | None = None) -> list[dict]:
    """Rendered chats with llama.cpp's ids of the whole string and, per message,
    the token count of the text up to its end (so spans are checked too).
    `template` (else the file's own) is compared with the rendering where the
    format claims to follow it."""
    template = template or official_template(model)
    out = []
    for name in formats:
        for chat in CHATS:
            messages, gen = chat["messages"], chat["add_generation_prompt"]
            text = render_format(name, messages, gen, bos_text)
            entry = {"format": name, "messages": messages, "add_generation_prompt": gen, "text": text,
                     "ids": tok.tokenize(text, parse_special=True)}
            ends = []
            for i in range(len(messages)):
                prefix = render_format(name, messages[:i + 1], False, bos_text)
                ends.append(len(tok.tokenize(prefix, parse_special=True)))
            entry["message_ends"] = ends
            if template and name in ("smollm2", "qwen2.5", "gemma4"):
                official = render_official(template, messages, gen, bos_text)
                entry["official_template_agrees"] = official == text
            out.append(entry)
    return out


# ---------------------------------------------------------------- fixtures

def vocab_digest(model: Path) -> str:
    fields = GGUFReader(str(model)).fields
    h = hashlib.sha256()
    for key in sorted(k for k in fields if k.startswith("tokenizer.ggml.")):
        h.update(key.encode())
        h.update(repr(fields[key].contents()).encode())
    return h.hexdigest()[:16]


def corpus_fixture(tok: LlamaTokenizer, corpus: list[str]) -> dict:
    plain, special_differs = [], {}
    for i, s in enumerate(corpus):
        ids = tok.tokenize(s, parse_special=False)
        plain.append(fnv1a32(ids))
        with_specials = tok.tokenize(s, parse_special=True)
        if with_specials != ids:
            special_differs[str(i)] = fnv1a32(with_specials)
    return {"plain": "".join(plain), "special_differs": special_differs}


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eventkv", type=Path, required=True)
    parser.add_argument("--llama-cpp", type=Path, required=True)
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--shared", type=Path, default=Path("../shared"))
    args = parser.parse_args()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus()
    assert len(corpus) >= 2000, len(corpus)
    write_json(FIXTURES / "corpus.json", corpus)
    print(f"corpus: {len(corpus)} strings")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        helper = build_helper(args.llama_cpp, work)
        families = {}
        for family, files in REAL_MODELS.items():
            paths = [args.models / f for f in files]
            digests = {vocab_digest(p) for p in paths}
            assert len(digests) == 1, f"{family}: files differ in vocabulary"
            families[family] = {"source": "real", "files": files, "path": paths[0]}
        for family, flags in GENERATED.items():
            path = work / f"{family}.gguf"
            subprocess.run([str(args.eventkv), "make-test-model", *flags, "-o", str(path)], check=True,
                           stdout=subprocess.DEVNULL)
            families[family] = {"source": "generated", "make_test_model": flags, "path": path}
        for name in VOCAB_FILES:
            path = args.shared / "testdata" / "vocab" / f"ggml-vocab-{name}.gguf"
            if path.exists():
                families[f"vocab-{name}"] = {"source": "shared", "files": [path.name], "path": path}

        chat_formats = {"smollm2": ["smollm2"], "qwen2.5": ["qwen2.5"], "gemma3": ["gemma"],
                        "generated-bpe-qwen2": ["chatml", "llama3", "mistral"], "generated-spm": ["gemma"],
                        "generated-gemma4": ["gemma4"]}
        # Gemma 4's own template, from the llama.cpp tree (the generated file has none).
        gemma4_template = args.llama_cpp / "models" / "templates" / "google-gemma-4-31B-it.jinja"
        templates = {"generated-gemma4": gemma4_template.read_text() if gemma4_template.exists() else None}
        chats = {}
        for family, info in families.items():
            path = info.pop("path")
            tok = LlamaTokenizer(helper, path)
            info.update(corpus_fixture(tok, corpus))
            info["vocab_digest"] = vocab_digest(path)
            write_json(FIXTURES / f"{family}.json", info)
            if family in chat_formats:
                bos = {"gemma3": "<bos>", "generated-spm": "<s>", "generated-gemma4": "<bos>"}.get(family, "")
                chats[family] = chat_fixture(tok, path, chat_formats[family], bos, templates.get(family))
            tok.close()
            print(f"{family}: {len(info['special_differs'])} strings differ with specials parsed")
        write_json(FIXTURES / "chats.json", chats)


if __name__ == "__main__":
    main()
