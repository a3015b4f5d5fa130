#!/usr/bin/env bash
# What the CLI prints for people and programs: tokenize --json (spans that
# tile the decoded text, for byte-level, SPM and gemma4 tokenizers), chat saying
# that a reply was cut at its token limit, and probe saying that its pair
# count is per cell.
set -u
eventkv=$1
scenario=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/check.sh"

# Every token's [begin, end) follows the previous one and the last ends the
# text; each piece's bytes are the text's bytes at its span (SPM: but for the
# space it drops at the start).
spans_tile() {
  python3 -c '
import json, sys
out = json.load(sys.stdin)
text, tokens = out["text"].encode(), out["tokens"]
ok = tokens[0]["begin"] == 0 and tokens[-1]["end"] == len(text)
ok = ok and all(a["end"] == b["begin"] for a, b in zip(tokens, tokens[1:]))
ok = ok and text.decode() == sys.argv[1]
sys.exit(0 if ok else 1)' "$1"
}

for tokenizer in byte-level spm gemma4; do
  "$eventkv" make-test-model --arch llama --tokenizer "$tokenizer" -o "$tmp/$tokenizer.gguf" >/dev/null
  check "tokenize --json ($tokenizer): spans tile the text" \
    spans_tile "hello  world, héllo" < <("$eventkv" tokenize -m "$tmp/$tokenizer.gguf" --json "hello  world, héllo")
done
"$eventkv" tokenize -m "$tmp/byte-level.gguf" --json --chat --generation-prompt '[{"role": "user", "content": "hi"}]' >"$tmp/chat.json"
check "tokenize --json --chat: each message's token span" \
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); m = d["messages"][0]; sys.exit(0 if m["role"] == "user" and m["end"] > m["begin"] and d["generation_prompt"]["begin"] == m["end"] else 1)' "$tmp/chat.json"

echo hi | "$eventkv" chat -m "$tmp/spm.gguf" -n 2 -t 1 >/dev/null 2>"$tmp/chat.err"
check "chat says when a reply is cut at -n" grep -q "^\[reply cut at 2 tokens; -n sets the limit\]" "$tmp/chat.err"

# Gemma 4 end to end: its architecture, tokenizer and chat format (detected).
"$eventkv" make-test-model --arch gemma4 --tokenizer gemma4 -o "$tmp/g4.gguf" >/dev/null
"$eventkv" tokenize -m "$tmp/g4.gguf" --json --chat --generation-prompt '[{"role": "user", "content": "hi"}]' >"$tmp/g4chat.json"
check "gemma4: the chat format is detected and the prompt opens an empty thought channel" \
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["format"] == "gemma4" and d["text"].endswith("<|turn>model\n<|channel>thought\n<channel|>") else 1)' "$tmp/g4chat.json"
check "gemma4: chat replies" bash -c "echo hi | '$eventkv' chat -m '$tmp/g4.gguf' -n 2 -t 1 >/dev/null"
check "gemma4: probe runs" "$eventkv" probe "$scenario" -m "$tmp/g4.gguf" -t 1 --pairs 1 --distances 1 --db "$tmp/g4.db"

"$eventkv" probe "$scenario" -m "$tmp/byte-level.gguf" -t 1 --pairs 2 --distances 1 --db "$tmp/r.db" >"$tmp/probe.out" 2>"$tmp/probe.err"
check "probe: '4 pairs' for --pairs 2 on 2 cells says pairs count per cell" \
  grep -q ": 4 pairs in .* s (over 2 cells; --pairs counts pairs per cell)" "$tmp/probe.err"
check "probe: the table's abbreviations are explained under it" grep -q "aligned:anti:un:ot:ti: pairs where" "$tmp/probe.out"

echo "$failures failures"
[ "$failures" -eq 0 ]
