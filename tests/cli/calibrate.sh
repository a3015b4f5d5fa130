#!/usr/bin/env bash
# eventkv calibrate on a random-weight model: measuring and reading back the
# database give the same profile, byte for byte; bad input is one line, a
# non-zero exit and no profile file.
set -u
eventkv=$1
tiny=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/check.sh
. "$(dirname "$0")/check.sh"

"$eventkv" make-test-model --arch llama -o "$tmp/model.gguf" >/dev/null || exit 1
mkdir "$tmp/families"
for family in house office; do
  sed "s/\"name\": \"tiny-binary\",/\"name\": \"tiny-$family\", \"family\": \"$family\",/" "$tiny" \
    >"$tmp/families/$family.json"
done

"$eventkv" calibrate -m "$tmp/model.gguf" -t 1 --scenarios "$tmp/families" --run --db "$tmp/r.db" \
  -o "$tmp/measured.json" >"$tmp/table" 2>"$tmp/err"
check "measuring writes a profile" test -s "$tmp/measured.json"
check "the table names both families" grep -q "office" "$tmp/table"
"$eventkv" calibrate -m "$tmp/model.gguf" --scenarios "$tmp/families" --db "$tmp/r.db" \
  -o "$tmp/read.json" >/dev/null 2>&1
check "reading the database back gives the same profile" cmp -s "$tmp/measured.json" "$tmp/read.json"
fingerprint=$(sed -n 's/.*"model_fingerprint": "\([0-9a-f]*\)".*/\1/p' "$tmp/read.json")
"$eventkv" calibrate --fingerprint "$fingerprint" --scenarios "$tmp/families" --db "$tmp/r.db" \
  -o "$tmp/by-fingerprint.json" >/dev/null 2>&1
check "--fingerprint reads the same runs as -m" cmp -s "$tmp/read.json" "$tmp/by-fingerprint.json"
check "no absolute path in the profile" bash -c "! grep -q '$tmp' '$tmp/read.json'"
"$eventkv" calibrate --fingerprint "$fingerprint" --scenarios "$(dirname "$tiny")" --db "$tmp/r.db" \
  >"$tmp/table" 2>/dev/null
check "a run without its scenario file is unresolved" grep -q "unresolved:tiny-house" "$tmp/table"

# expect_error DESCRIPTION PATTERN ARGS...: one line on stderr, a non-zero
# exit, and no profile written.
expect_error() {
  local description=$1 pattern=$2
  shift 2
  "$eventkv" calibrate "$@" -o "$tmp/bad.json" >/dev/null 2>"$tmp/err"
  local code=$?
  if [ "$code" -eq 0 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/err" ||
    [ -e "$tmp/bad.json" ]; then
    echo "FAIL: $description (exit $code):"
    cat "$tmp/err"
    failures=$((failures + 1))
  else
    echo "ok: $description: $(cat "$tmp/err")"
  fi
}
expect_error "a missing database" "absent.db: no such results database" \
  --fingerprint "$fingerprint" --scenarios "$tmp/families" --db "$tmp/absent.db"
expect_error "a model without runs" "no runs of the model with fingerprint 0123" \
  --fingerprint 0123 --scenarios "$tmp/families" --db "$tmp/r.db"
expect_error "--fingerprint without --db" "running scenarios needs -m" \
  --fingerprint "$fingerprint" --scenarios "$tmp/families"
expect_error "--quick without measuring" "--quick: applies to measuring" \
  -m "$tmp/model.gguf" --quick --scenarios "$tmp/families" --db "$tmp/r.db"
expect_error "a missing scenario folder" "nowhere: no such scenario folder" \
  -m "$tmp/model.gguf" --scenarios "$tmp/nowhere" --db "$tmp/r.db"
expect_error "no model" "give the model" --db "$tmp/r.db"
"$eventkv" calibrate -m "$tmp/model.gguf" --scenarios "$tmp/families" --db "$tmp/r.db" \
  -o "$tmp/no-folder/p.json" >/dev/null 2>"$tmp/err"
check "an unwritable output fails in one line" test "$(wc -l <"$tmp/err")" -eq 1
check "an unwritable output leaves no file" test ! -e "$tmp/no-folder/p.json"
exit $((failures > 0))
