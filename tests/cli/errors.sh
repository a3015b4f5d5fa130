#!/usr/bin/env bash
# The CLI answers bad input with one line on stderr and a non-zero exit.
set -u
eventkv=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect_error() {  # expect_error DESCRIPTION PATTERN ARGS...
  local description=$1 pattern=$2
  shift 2
  "$eventkv" "$@" >"$tmp/out" 2>"$tmp/err"
  local code=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$code" -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/err"; then
    echo "FAIL: $description (exit $code, $lines stderr lines):"
    cat "$tmp/err"
    failures=$((failures + 1))
  else
    echo "ok: $description: $(cat "$tmp/err")"
  fi
}

expect_usage() {  # expect_usage DESCRIPTION PATTERN ARGS...: one line, exit code 2
  local description=$1 pattern=$2
  shift 2
  "$eventkv" "$@" >"$tmp/out" 2>"$tmp/err"
  local code=$?
  if [ "$code" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/err"; then
    echo "FAIL: $description (exit $code, want 2):"
    cat "$tmp/err"
    failures=$((failures + 1))
  else
    echo "ok: $description: $(cat "$tmp/err")"
  fi
}

printf 'GGUF' >"$tmp/short.gguf"
printf 'NOPE\003\000\000\000' >"$tmp/magic.gguf"
expect_error "missing file" "cannot open" inspect "$tmp/absent.gguf"
expect_error "directory" "not a regular file" inspect "$tmp"
expect_error "truncated header" "truncated" inspect "$tmp/short.gguf"
expect_error "wrong magic" "bad magic" inspect "$tmp/magic.gguf"
expect_error "unknown arch for test model" "unknown architecture" make-test-model --arch gpt9 -o "$tmp/x.gguf"
expect_error "unknown type for test model" "unknown ggml type" make-test-model --type q9_9 -o "$tmp/x.gguf"
expect_error "test model width off the blocks" "multiples of 256" make-test-model --embd 300 -o "$tmp/x.gguf"
expect_error "test model heads not grouped" "multiple of --kv-heads" make-test-model --heads 6 --kv-heads 4 --head-dim 128 -o "$tmp/x.gguf"
expect_error "dense layout of a non-gemma4 test model" "only gemma4 has a dense layout" make-test-model --arch llama --dense -o "$tmp/x.gguf"
echo "not a gguf" >"$tmp/x.txt"
expect_error "test model vocabulary from a non-GGUF" "x.txt" make-test-model --vocab-from "$tmp/x.txt" -o "$tmp/x.gguf"
[ ! -e "$tmp/x.gguf" ] || { echo "FAIL: a failed make-test-model left a file"; failures=$((failures + 1)); }

"$eventkv" --version | grep -q "^eventkv [0-9a-f]\{7\}" || { echo "FAIL: --version"; failures=$((failures + 1)); }
"$eventkv" make-test-model --arch gemma3 --type q4_k -o "$tmp/tiny.gguf" >/dev/null || failures=$((failures + 1))
"$eventkv" inspect "$tmp/tiny.gguf" | grep -q "architecture  gemma3" || { echo "FAIL: inspect text"; failures=$((failures + 1)); }
"$eventkv" inspect --json "$tmp/tiny.gguf" | grep -q '"sliding_window": 8' || { echo "FAIL: inspect json"; failures=$((failures + 1)); }
expect_error "tokenize: missing model" "cannot open" tokenize -m "$tmp/absent.gguf" hi
expect_error "tokenize: bad JSON" "input is not JSON" tokenize -m "$tmp/tiny.gguf" --chat '{bad'
expect_error "tokenize: not a list" "JSON list" tokenize -m "$tmp/tiny.gguf" --chat '{"role": "user"}'
expect_error "tokenize: unknown role" "unknown chat role 'robot'" tokenize -m "$tmp/tiny.gguf" --chat '[{"role": "robot", "content": "x"}]'
expect_error "tokenize: unknown format" "unknown chat format 'vicuna'" tokenize -m "$tmp/tiny.gguf" --chat --format vicuna '[]'
expect_error "tokenize: format without its tokens" "needs the special token" tokenize -m "$tmp/tiny.gguf" --chat --format gemma '[{"role": "user", "content": "x"}]'
"$eventkv" tokenize -m "$tmp/tiny.gguf" "hi there" | grep -q "^8 tokens" || { echo "FAIL: tokenize text"; failures=$((failures + 1)); }
echo '[{"role": "user", "content": "hi"}]' | "$eventkv" tokenize -m "$tmp/tiny.gguf" --chat --generation-prompt - |
  grep -q "message 0 (user) .*\[0, 10)" || { echo "FAIL: tokenize --chat"; failures=$((failures + 1)); }
expect_usage "generate: negative threads" "--threads: must be an integer from 0 to" generate -m "$tmp/tiny.gguf" -p hi -t -1
expect_usage "generate: more threads than the machine has" "--threads: must be an integer from 0 to $(nproc --all)" \
  generate -m "$tmp/tiny.gguf" -p hi -t 100000
expect_usage "probe: more threads than the machine has" "--threads: must be an integer from 0 to" \
  probe "$(dirname "$0")/../fixtures/scenarios/tiny.json" -m "$tmp/tiny.gguf" -t 100000 --db "$tmp/r.db"
for temp in nan inf -1; do
  expect_usage "generate: --temp $temp" "--temp: must be a finite number >= 0, not '$temp'" generate -m "$tmp/tiny.gguf" -p hi --temp "$temp"
done
expect_usage "generate: -c beyond the trained context" "--ctx: 2000000000 is more than .*trained context of 512 tokens" \
  generate -m "$tmp/tiny.gguf" -p hi -c 2000000000
expect_usage "chat: -c beyond the trained context" "--ctx: 600 is more than .*trained context of 512 tokens" \
  chat -m "$tmp/tiny.gguf" -c 600
expect_error "generate: bad top-p" "top-p must be in" generate -m "$tmp/tiny.gguf" -p hi --temp 1 --top-p 2
"$eventkv" generate -m "$tmp/tiny.gguf" -p hi -n 4 -t 1 >/dev/null 2>&1 || { echo "FAIL: generate"; failures=$((failures + 1)); }
printf '{"events": [{"id": "a", "role": "user"}]}' >"$tmp/history.json"
expect_error "history: event without content" "events\[0\]: needs a string field 'content'" history "$tmp/history.json" -m "$tmp/tiny.gguf"
printf '{"events": [{"id": "a", "role": "user", "content": "x"}], "evict": ["zz"], "query": {"question": "q", "candidates": [" a"]}}' >"$tmp/history.json"
expect_error "history: evict unknown event" "unknown event 'zz'" history "$tmp/history.json" -m "$tmp/tiny.gguf"
expect_error "history: no file" "cannot open" history "$tmp/none.json" -m "$tmp/tiny.gguf"
expect_usage "history: -c beyond the trained context" "--ctx: 600 is more than .*trained context of 512" \
  history "$tmp/history.json" -m "$tmp/tiny.gguf" -c 600 --evict a
long=$(printf 'word %.0s' $(seq 1 600))
printf '{"events": [{"id": "a", "role": "user", "content": "%s"}], "query": {"question": "q", "candidates": [" a"]}}' "$long" >"$tmp/long.json"
expect_error "history: longer than the trained context" "long.json: the history and its query take [0-9]* tokens, more than the context of 512" \
  history "$tmp/long.json" -m "$tmp/tiny.gguf"
expect_error "history: longer than -c" "more than the context of 100" history "$tmp/long.json" -m "$tmp/tiny.gguf" -c 100

# contract: bad histories, evictions and profiles, each one line; nothing is written.
contract_history() {  # contract_history POLICY VALUE
  printf '{"version": 1, "events": [{"id": "u1", "role": "user", "content": "I use vim.", "policy": "%s", "facts": [{"key": "editor", "value": "%s", "type": "name"}]}, {"id": "a1", "role": "assistant", "content": "Noted."}]}' "$1" "$2" >"$tmp/agent.json"
}
contract_history recall vim
expect_error "contract: evict unknown event" "unknown event 'nope'" contract "$tmp/agent.json" -m "$tmp/tiny.gguf" --evict u1,nope
expect_usage "contract: no eviction" "say what to evict" contract "$tmp/agent.json" -m "$tmp/tiny.gguf"
expect_usage "contract: bad budget" "--budget: must be a number of KV rows or a share like 25%, not '120%'" \
  contract "$tmp/agent.json" -m "$tmp/tiny.gguf" --budget 120%
contract_history erase vim
expect_error "contract: unknown policy" "agent.json: /events/0/policy: unknown policy 'erase'" contract "$tmp/agent.json" -m "$tmp/tiny.gguf" --evict u1
contract_history recall emacs
expect_error "contract: fact not in its event" "/events/0/facts/0/value: 'emacs' does not occur" contract "$tmp/agent.json" -m "$tmp/tiny.gguf" --evict u1
contract_history recall vim
printf '{"version": 1}' >"$tmp/profile.json"
expect_error "contract: malformed profile" "profile.json: " contract "$tmp/agent.json" -m "$tmp/tiny.gguf" --evict u1 --profile "$tmp/profile.json"
expect_error "contract: another model's profile" "smollm2.json: a profile of smollm2-135m-instruct-q4_1 (ebc2a28e3656a9b4), not of" \
  contract "$tmp/agent.json" -m "$tmp/tiny.gguf" --evict u1 --profile "$(dirname "$0")/../../profiles/smollm2.json"
# serve: refused before it listens, each one line.
expect_usage "serve: beyond loopback without a key" "--host: listening beyond loopback needs an API key" \
  serve -m "$tmp/tiny.gguf" --host 0.0.0.0
expect_usage "serve: bad port" "--port" serve -m "$tmp/tiny.gguf" --port 70000
expect_usage "serve: budget past the context" "--kv-budget: must be at most the context of" \
  serve -m "$tmp/tiny.gguf" --kv-budget 100000
expect_error "serve: another model's profile" "smollm2.json: a profile of smollm2-135m-instruct-q4_1" \
  serve -m "$tmp/tiny.gguf" --profile "$(dirname "$0")/../../profiles/smollm2.json"
touch "$tmp/state-file"
expect_error "serve: a state dir that is a file" "state-file" serve -m "$tmp/tiny.gguf" --state-dir "$tmp/state-file" --port 0
expect_error "probe: no scenario" "cannot open scenario" probe "$tmp/none.json" -m "$tmp/tiny.gguf" --db "$tmp/r.db"
scenario="$(dirname "$0")/../../scenarios/paper/distance.json"
expect_usage "probe: unknown construction" "has no construction 'nope'" probe "$scenario" -m "$tmp/tiny.gguf" --constructions nope --db "$tmp/r.db"
expect_usage "probe: unknown construction, before the model loads" "has no construction 'nope'" probe "$scenario" -m "$tmp/absent.gguf" --constructions nope --db "$tmp/r.db"
expect_usage "probe: unknown distance" "has no filler distance 5" probe "$scenario" -m "$tmp/tiny.gguf" --distances 0,5 --db "$tmp/r.db"
expect_usage "landing: unknown distance" "has no filler distance 5" landing "$scenario" -m "$tmp/tiny.gguf" --distance 5 --db "$tmp/r.db"
tiny="$(dirname "$0")/../fixtures/scenarios/tiny.json"
for command in probe landing suite; do
  target=("$tiny")
  [ "$command" = suite ] && target=(--scenarios "$(dirname "$tiny")")
  expect_usage "$command: -c beyond what the model takes" "--ctx: 2000000000 is more than the default of 8192 KV cells" \
    "$command" "${target[@]}" -m "$tmp/tiny.gguf" -c 2000000000 --db "$tmp/r.db"
done
expect_usage "probe: --pairs beyond the scenario cap" "--pairs: must be an integer from 1 to 1000000" \
  probe "$tiny" -m "$tmp/tiny.gguf" --pairs 2000000 --db "$tmp/r.db"
sed 's/"role": "user"/"role": "robot"/' "$tiny" >"$tmp/robot.json"
expect_error "probe: unknown chat role, naming the file and field" "robot.json: /source/role: unknown chat role 'robot'" \
  probe "$tmp/robot.json" -m "$tmp/absent.gguf" --db "$tmp/r.db"
sed 's/"values": \["open", "shut"\]/"values": ["open", "shut tight and locked"]/' "$tiny" >"$tmp/lengths.json"
expect_error "probe: payload values of different token lengths, named with their counts" \
  "the last: the source event takes [0-9]* tokens with '[a-z ]*' but [0-9]* with '[a-z ]*'" \
  probe "$tmp/lengths.json" -m "$tmp/tiny.gguf" --db "$tmp/r.db"
"$eventkv" probe "$tiny" -m "$tmp/tiny.gguf" --dry-run --db "$tmp/r.db" >"$tmp/dry.out" 2>&1
[ "$(grep -c "^cell: .* tokens per side" "$tmp/dry.out")" -eq 4 ] && grep -q '^  source .* "Leave\|^  source .* "Keep' "$tmp/dry.out" ||
  { echo "FAIL: probe --dry-run shows pair 0 of each of the 4 cells"; cat "$tmp/dry.out"; failures=$((failures + 1)); }
[ ! -e "$tmp/r.db" ] || { echo "FAIL: a refused or dry probe, landing or suite left a database"; failures=$((failures + 1)); }
expect_error "landing: no scenario" "cannot open scenario" landing "$tmp/none.json" -m "$tmp/tiny.gguf" --db "$tmp/r.db"
expect_error "report: no database" "no such results database" report --db "$tmp/none.db" -o "$tmp/r.html"
expect_error "suite: no scenario folder" "no such scenario folder" suite -m "$tmp/tiny.gguf" --scenarios "$tmp/none" --db "$tmp/r.db"
[ ! -e "$tmp/r.html" ] || { echo "FAIL: a failed report left a file"; failures=$((failures + 1)); }
expect_error "probe: a bad second model fails before the first runs" "absent.gguf: cannot open" \
  probe "$scenario" -m "$tmp/tiny.gguf" -m "$tmp/absent.gguf" --db "$tmp/new.db"
expect_error "landing: no model" "absent.gguf: cannot open" landing "$scenario" -m "$tmp/absent.gguf" --db "$tmp/new.db"
printf 'not sqlite' >"$tmp/text.db"
expect_error "merge: an input that is not a database" "text.db: not an eventkv results database" merge "$tmp/new.db" "$tmp/text.db"
[ ! -e "$tmp/new.db" ] || { echo "FAIL: a failed probe, landing or merge left a database"; failures=$((failures + 1)); }

# A results database that cannot be written (mode 0444, in a 0555 folder)
# exports and reports, unchanged.
mkdir "$tmp/ro"
"$eventkv" probe "$tiny" -m "$tmp/tiny.gguf" -t 1 --pairs 1 --db "$tmp/ro/results.db" >/dev/null 2>&1
chmod 0444 "$tmp/ro/results.db" && chmod 0555 "$tmp/ro"
before=$(md5sum <"$tmp/ro/results.db")
"$eventkv" export --db "$tmp/ro/results.db" >"$tmp/ro.csv" && [ "$(wc -l <"$tmp/ro.csv")" -eq 81 ] &&
  "$eventkv" report --db "$tmp/ro/results.db" --markdown "$tmp/ro.md" >/dev/null && grep -q tiny-binary "$tmp/ro.md" &&
  [ "$before" = "$(md5sum <"$tmp/ro/results.db")" ] ||
  { echo "FAIL: a read-only results database exports and reports"; failures=$((failures + 1)); }
chmod 0755 "$tmp/ro"

# Another program's SQLite file is refused by every command that takes --db,
# and left byte for byte (and in its mtime) as it was, with no -wal or -shm.
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE meta (key, value)"); c.commit()' "$tmp/other.db"
touch -d 2020-01-01 "$tmp/other.db"
before=$(stat -c '%s %Y' "$tmp/other.db")$(md5sum <"$tmp/other.db")
expect_error "export: another SQLite file" "other.db: not an eventkv results database" export --db "$tmp/other.db"
expect_error "report: another SQLite file" "other.db: not an eventkv results database" report --db "$tmp/other.db" --markdown "$tmp/r.md"
expect_error "merge: another SQLite file as input" "other.db: not an eventkv results database" merge "$tmp/new.db" "$tmp/other.db"
expect_error "merge: another SQLite file as output" "other.db: not an eventkv results database" merge "$tmp/other.db" "$tmp/ro/results.db"
expect_error "probe: another SQLite file" "other.db: not an eventkv results database" probe "$tiny" -m "$tmp/tiny.gguf" --pairs 1 --db "$tmp/other.db"
[ "$before" = "$(stat -c '%s %Y' "$tmp/other.db")$(md5sum <"$tmp/other.db")" ] && [ ! -e "$tmp/other.db-wal" ] && [ ! -e "$tmp/other.db-shm" ] ||
  { echo "FAIL: a refused SQLite file was changed"; failures=$((failures + 1)); }
[ ! -e "$tmp/new.db" ] && [ ! -e "$tmp/r.md" ] || { echo "FAIL: a refused --db left a file"; failures=$((failures + 1)); }

# A database of a newer schema is refused, by merge too.
cp "$tmp/ro/results.db" "$tmp/newer.db" && chmod 0644 "$tmp/newer.db"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE meta SET value = 99"); c.commit()' "$tmp/newer.db"
expect_error "export: a newer schema" "newer.db: results database of schema version 99, newer than this eventkv knows" export --db "$tmp/newer.db"
expect_error "merge: a newer schema" "newer.db: results database of schema version 99" merge "$tmp/new.db" "$tmp/newer.db"
expect_error "probe: zero KV cells" "--ctx: must be an integer >= 1, not '0'" probe "$scenario" -m "$tmp/tiny.gguf" -c 0
expect_usage "landing: zero pairs" "--pairs: must be an integer from 1 to 1000000, not '0'" landing "$scenario" -m "$tmp/tiny.gguf" --pairs 0
expect_error "generate: a count that is not a number" "--n-predict: must be an integer >= 0, not 'x'" generate -m "$tmp/tiny.gguf" -p hi -n x
expect_error "a missing required option" "--model is required" probe "$scenario"
leftovers=$(find "$tmp" -name '*.tmp-*' | wc -l)
[ "$leftovers" -eq 0 ] || { echo "FAIL: temporary files left behind"; failures=$((failures + 1)); }

echo "$failures failures"
[ "$failures" -eq 0 ]
