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

printf 'GGUF' >"$tmp/short.gguf"
printf 'NOPE\003\000\000\000' >"$tmp/magic.gguf"
expect_error "missing file" "cannot open" inspect "$tmp/absent.gguf"
expect_error "directory" "not a regular file" inspect "$tmp"
expect_error "truncated header" "truncated" inspect "$tmp/short.gguf"
expect_error "wrong magic" "bad magic" inspect "$tmp/magic.gguf"
expect_error "unknown arch for test model" "unknown architecture" make-test-model --arch gpt9 -o "$tmp/x.gguf"
expect_error "unknown type for test model" "unknown ggml type" make-test-model --type q9_9 -o "$tmp/x.gguf"
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
expect_error "generate: zero threads" "must be >= 1" generate -m "$tmp/tiny.gguf" -p hi -t -1
expect_error "generate: bad top-p" "top-p must be in" generate -m "$tmp/tiny.gguf" -p hi --temp 1 --top-p 2
"$eventkv" generate -m "$tmp/tiny.gguf" -p hi -n 4 -t 1 >/dev/null 2>&1 || { echo "FAIL: generate"; failures=$((failures + 1)); }
printf '{"events": [{"id": "a", "role": "user"}]}' >"$tmp/history.json"
expect_error "history: event without content" "events\[0\]: needs a string field 'content'" history "$tmp/history.json" -m "$tmp/tiny.gguf"
printf '{"events": [{"id": "a", "role": "user", "content": "x"}], "evict": ["zz"], "query": {"question": "q", "candidates": [" a"]}}' >"$tmp/history.json"
expect_error "history: evict unknown event" "unknown event 'zz'" history "$tmp/history.json" -m "$tmp/tiny.gguf"
expect_error "history: no file" "cannot open" history "$tmp/none.json" -m "$tmp/tiny.gguf"
expect_error "probe: no scenario" "cannot open scenario" probe "$tmp/none.json" -m "$tmp/tiny.gguf" --db "$tmp/r.db"
scenario="$(dirname "$0")/../../scenarios/paper/distance.json"
expect_error "probe: unknown construction" "has no construction 'nope'" probe "$scenario" -m "$tmp/tiny.gguf" --constructions nope --db "$tmp/r.db"
expect_error "probe: unknown distance" "has no filler distance 5" probe "$scenario" -m "$tmp/tiny.gguf" --distances 0,5 --db "$tmp/r.db"
expect_error "landing: unknown distance" "has no filler distance 5" landing "$scenario" -m "$tmp/tiny.gguf" --distance 5 --db "$tmp/r.db"
expect_error "landing: no scenario" "cannot open scenario" landing "$tmp/none.json" -m "$tmp/tiny.gguf" --db "$tmp/r.db"
expect_error "report: no database" "no such results database" report --db "$tmp/none.db" -o "$tmp/r.html"
expect_error "suite: no scenario folder" "no such scenario folder" suite -m "$tmp/tiny.gguf" --scenarios "$tmp/none" --db "$tmp/r.db"
[ ! -e "$tmp/r.html" ] || { echo "FAIL: a failed report left a file"; failures=$((failures + 1)); }
expect_error "probe: a bad second model fails before the first runs" "absent.gguf: cannot open" \
  probe "$scenario" -m "$tmp/tiny.gguf" -m "$tmp/absent.gguf" --db "$tmp/new.db"
expect_error "landing: no model" "absent.gguf: cannot open" landing "$scenario" -m "$tmp/absent.gguf" --db "$tmp/new.db"
printf 'not sqlite' >"$tmp/text.db"
expect_error "merge: an input that is not a database" "text.db: file is not a database" merge "$tmp/new.db" "$tmp/text.db"
[ ! -e "$tmp/new.db" ] || { echo "FAIL: a failed probe, landing or merge left a database"; failures=$((failures + 1)); }
expect_error "probe: zero KV cells" "--ctx: must be an integer >= 1, not '0'" probe "$scenario" -m "$tmp/tiny.gguf" -c 0
expect_error "landing: zero pairs" "--pairs: must be an integer >= 1, not '0'" landing "$scenario" -m "$tmp/tiny.gguf" --pairs 0
expect_error "generate: a count that is not a number" "--n-predict: must be an integer >= 0, not 'x'" generate -m "$tmp/tiny.gguf" -p hi -n x
expect_error "a missing required option" "--model is required" probe "$scenario"
leftovers=$(find "$tmp" -name '*.tmp-*' | wc -l)
[ "$leftovers" -eq 0 ] || { echo "FAIL: temporary files left behind"; failures=$((failures + 1)); }

echo "$failures failures"
[ "$failures" -eq 0 ]
