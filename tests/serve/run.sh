#!/usr/bin/env bash
# Runs the serve tests: tests/serve/run.sh EVENTKV_BINARY MODEL.gguf [pytest args...]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 EVENTKV_BINARY MODEL.gguf [pytest args...]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
EVENTKV="$(realpath "$1")"
EVENTKV_MODEL="$(realpath "$2")"
export EVENTKV EVENTKV_MODEL
shift 2
"$root/scripts/test-venv"
cd "$root"
exec build/venv/bin/pytest -q -p no:cacheprovider tests/serve "$@"
