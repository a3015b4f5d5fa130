#!/usr/bin/env bash
# Runs the Python package tests: tests/python/run.sh EVENTKV_BINARY PACKAGE_DIR MODEL.gguf [pytest args...]
# PACKAGE_DIR holds the built package (build/python, with eventkv/_eventkv*.so);
# the tests run in build/venv (scripts/test-venv), the notebook included.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 EVENTKV_BINARY PACKAGE_DIR MODEL.gguf [pytest args...]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
EVENTKV="$(realpath "$1")"
EVENTKV_MODEL="$(realpath "$3")"
PYTHONPATH="$(realpath "$2")"
export EVENTKV EVENTKV_MODEL PYTHONPATH
shift 3
"$root/scripts/test-venv"
cd "$root"
exec build/venv/bin/pytest -q -p no:cacheprovider tests/python "$@"
