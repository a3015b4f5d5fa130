#!/usr/bin/env bash
# Issue 32 item 2: `eventkv history` memory grows with the KV rows, not with
# the square of an event's length. One long user turn of about 1k, 2k and 4k
# tokens on a real model: the peak RSS growth per added token from 2k to 4k
# tokens is at most 1.3 times that from 1k to 2k (linear memory keeps it
# equal; per-token lists of visible rows, quadratic, doubled it),
# and the 4k peak stays within the model file + its KV rows + 25% + 64 MiB of
# process overhead.
#   tests/cli/history_memory.sh EVENTKV MODEL.gguf
set -u
eventkv=$1
model=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/check.sh"

# Prints "tokens kv_bytes peak_rss_bytes" of one history run.
measure() {
  python3 - "$eventkv" "$model" "$1" "$tmp" <<'PY'
import json, resource, subprocess, sys
eventkv, model, words, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
vocab = ["north", "river", "lamp", "seven", "quiet", "garden", "stone", "blue"]
history = {
    "events": [{"id": "system", "role": "system", "content": "You are a home assistant."},
               {"id": "log", "role": "user",
                "content": " ".join(vocab[i % len(vocab)] for i in range(words))}],
    "query": {"question": "Is the lamp on?", "answer_prefix": "The lamp is",
              "candidates": [" on", " off"]}}
path = f"{tmp}/h{words}.json"
json.dump(history, open(path, "w"))
out = subprocess.run([eventkv, "history", path, "-m", model, "-t", "2", "--json"], check=True,
                     capture_output=True, text=True).stdout
# RUSAGE_CHILDREN's peak is that of the largest child so far: one child per run.
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
doc = json.loads(out)
print(doc["events"][-1]["end"], doc["kv_bytes_full"], peak)
PY
}

read -r t1 kv1 rss1 <<<"$(measure 1024)"
read -r t2 kv2 rss2 <<<"$(measure 2048)"
read -r t4 kv4 rss4 <<<"$(measure 4096)"
echo "tokens $t1 $t2 $t4; peak RSS MiB $((rss1 >> 20)) $((rss2 >> 20)) $((rss4 >> 20)); KV MiB $((kv1 >> 20)) $((kv2 >> 20)) $((kv4 >> 20))"
model_bytes=$(stat -c %s "$model")
per_token_1=$(((rss2 - rss1) / (t2 - t1)))
per_token_2=$(((rss4 - rss2) / (t4 - t2)))
check "RSS growth per token from 2k to 4k ($per_token_2 bytes) at most 1.3x that from 1k to 2k ($per_token_1 bytes)" \
  test $((10 * per_token_2)) -le $((13 * per_token_1))
check "peak RSS at 4k tokens within model + KV + 25% + 64 MiB" \
  test "$rss4" -le $(((model_bytes + kv4) * 5 / 4 + (64 << 20)))
[ "$failures" -eq 0 ]
