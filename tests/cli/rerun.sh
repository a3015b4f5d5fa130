#!/usr/bin/env bash
# A probe run stores what it ran (the scenario's canonical JSON, the chat
# format, each pair's event spans), and `eventkv rerun` recomputes any stored
# pair from the database alone, bit for bit on the same build; a changed
# score, a changed text, another model, a run from before stored scenarios
# and a bad pair id each fail with one line. tools/results/fill_scenario_json.py
# makes such an old run recomputable again from its scenario file.
set -u
eventkv=$1
scenario=$2
tools=$(dirname "$0")/../../tools
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/check.sh"
sql() {  # sql DB STATEMENT: runs it, printing the first column of the first row
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); r = c.execute(sys.argv[2]).fetchone(); c.commit(); print(r[0] if r else "")' "$1" "$2"
}
fails_with() {  # fails_with EXIT PATTERN ARGS...: the command exits EXIT with one stderr line matching
  local code=$1 pattern=$2
  shift 2
  "$eventkv" "$@" >/dev/null 2>"$tmp/err"
  [ "$?" -eq "$code" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pattern" "$tmp/err" || { cat "$tmp/err"; false; }
}

"$eventkv" make-test-model --arch llama -o "$tmp/model.gguf" >/dev/null
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --pairs 2 --db "$tmp/run.db" >/dev/null 2>&1
canonical=$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":"), sort_keys=True))' "$scenario")
check "the run stores its scenario's canonical JSON" test "$(sql "$tmp/run.db" "SELECT scenario_json FROM runs")" = "$canonical"
check "... and its chat format" test "$(sql "$tmp/run.db" "SELECT chat_format FROM runs")" = chatml
check "... and every pair's event spans, ending at its token count" \
  test "$(sql "$tmp/run.db" "SELECT count(*) FROM pairs WHERE json_extract(spans, '\$.a[#-1].end') = n_tokens AND json_extract(spans, '\$.b[#-1].end') = n_tokens")" -eq 8

ids=$("$eventkv" export --db "$tmp/run.db" | tail -n +2 | cut -d, -f1,5,6,7 | tr , : | sort -u)
all_identical=true
for id in $ids; do
  "$eventkv" rerun --db "$tmp/run.db" --pair "$id" -t 2 >"$tmp/out" 2>&1 && grep -q "bit-identical" "$tmp/out" || all_identical=false
done
check "every stored pair ($(echo $ids | wc -w)) recomputes bit-identical, with another thread count" $all_identical
check "... printing every score, stored and recomputed" test "$(grep -c "^  [a-z-]* *[AB]  " "$tmp/out")" -eq 20

mv "$tmp/model.gguf" "$tmp/moved.gguf"
check "a model no longer where the run found it: rerun says to name it" \
  fails_with 1 "model.gguf: no such file (the model of run 1); name it with -m MODEL" rerun --db "$tmp/run.db" --pair 1:1:ok:2
check "... and finds it by -m" "$eventkv" rerun --db "$tmp/run.db" --pair 1:1:ok:2 -m "$tmp/moved.gguf" >/dev/null
"$eventkv" make-test-model --arch qwen2 -o "$tmp/other.gguf" >/dev/null
check "another model is refused by its fingerprint" \
  fails_with 1 "other.gguf: fingerprint [0-9a-f]*, not [0-9a-f]* of run 1's model model: not the model" \
  rerun --db "$tmp/run.db" --pair 1:1:ok:2 -m "$tmp/other.gguf"
check "a pair id that is not RUN:INDEX:CONSTRUCTION:DISTANCE is a usage error" \
  fails_with 2 "--pair: '1:1:ok' is not RUN:INDEX:CONSTRUCTION:DISTANCE" rerun --db "$tmp/run.db" --pair 1:1:ok -m "$tmp/moved.gguf"
check "a pair the run lacks is named, with what the run has" \
  fails_with 1 "run 1 (tiny-binary): no pair 7 of cell ok:2 (cells noted:1, noted:2, ok:1, ok:2; pair indices 0 to 1)" \
  rerun --db "$tmp/run.db" --pair 1:7:ok:2 -m "$tmp/moved.gguf"
check "a run the database lacks is named" fails_with 1 "run.db: no run 4 (runs 1 to 1)" rerun --db "$tmp/run.db" --pair 4:0:ok:2

cp "$tmp/run.db" "$tmp/score.db"
sql "$tmp/score.db" "UPDATE scores SET log_prob = log_prob + 1e-3 WHERE pair_index = 1 AND construction = 'ok' AND distance = 2 AND condition = 'record' AND side = 'B' AND candidate = 0" >/dev/null
check "a changed score fails the rerun" \
  fails_with 1 "run 1 pair 1:1:ok:2: recomputed scores differ from the stored ones by up to 0.001.* nats, beyond the tolerance of 0" \
  rerun --db "$tmp/score.db" --pair 1:1:ok:2 -m "$tmp/moved.gguf"
check "... within --tolerance passes" "$eventkv" rerun --db "$tmp/score.db" --pair 1:1:ok:2 -m "$tmp/moved.gguf" --tolerance 0.01 >/dev/null

cp "$tmp/run.db" "$tmp/texts.db"
sql "$tmp/texts.db" "UPDATE pairs SET texts = replace(texts, 'OK.', 'OK!')" >/dev/null
check "texts the stored scenario does not draw fail the rerun" \
  fails_with 1 "the stored scenario no longer draws the stored texts" rerun --db "$tmp/texts.db" --pair 1:1:ok:2 -m "$tmp/moved.gguf"

cp "$tmp/run.db" "$tmp/old.db"
sql "$tmp/old.db" "UPDATE runs SET scenario_json = ''" >/dev/null
check "a run from before stored scenarios says so" \
  fails_with 1 "run 1 (tiny-binary) predates stored scenarios" rerun --db "$tmp/old.db" --pair 1:1:ok:2 -m "$tmp/moved.gguf"
python3 "$tools/results/fill_scenario_json.py" --scenarios "$(dirname "$scenario")" "$tmp/old.db" >/dev/null
check "... until fill_scenario_json.py fills it from the scenario file" \
  "$eventkv" rerun --db "$tmp/old.db" --pair 1:1:ok:2 -m "$tmp/moved.gguf" >/dev/null

echo "$failures failures"
[ "$failures" -eq 0 ]
