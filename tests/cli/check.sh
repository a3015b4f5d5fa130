# Sourced by the CLI shell tests: check DESCRIPTION COMMAND... runs the
# command, prints ok or FAIL, and counts failures in $failures.
failures=0
check() {
  local description=$1
  shift
  if "$@"; then echo "ok: $description"; else echo "FAIL: $description"; failures=$((failures + 1)); fi
}
