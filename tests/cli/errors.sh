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

"$eventkv" make-test-model --arch gemma3 --type q4_k -o "$tmp/tiny.gguf" >/dev/null || failures=$((failures + 1))
"$eventkv" inspect "$tmp/tiny.gguf" | grep -q "architecture  gemma3" || { echo "FAIL: inspect text"; failures=$((failures + 1)); }
"$eventkv" inspect --json "$tmp/tiny.gguf" | grep -q '"sliding_window": 8' || { echo "FAIL: inspect json"; failures=$((failures + 1)); }
leftovers=$(find "$tmp" -name '*.tmp-*' | wc -l)
[ "$leftovers" -eq 0 ] || { echo "FAIL: temporary files left behind"; failures=$((failures + 1)); }

echo "$failures failures"
[ "$failures" -eq 0 ]
