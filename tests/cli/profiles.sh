#!/usr/bin/env bash
# Every profile in profiles/ is exactly what `eventkv calibrate` writes from
# its model's archives: profiles/NAME.json from docs/data/results-NAME.db.xz
# and docs/data/calibration-NAME.db.xz (the second wording families), with
# the bundled scenario folders resolving the families (scripts/profiles).
# Only eventkv_version, the build that wrote it, may differ. No number in a
# profile is hand-edited, and a change that alters one fails until the
# profiles are regenerated.
set -u
export LC_ALL=C
eventkv=$1
source_dir=$2
# shellcheck source=tests/cli/check.sh
. "$(dirname "$0")/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

profiles=0
for profile in "$source_dir"/profiles/*.json; do
  [ -e "$profile" ] || continue
  profiles=$((profiles + 1))
  name=$(basename "$profile" .json)
  dbs=()
  for archive in "$source_dir/docs/data/results-$name.db.xz" "$source_dir/docs/data/calibration-$name.db.xz"; do
    [ -e "$archive" ] || continue
    xz -dc "$archive" >"$tmp/$(basename "$archive" .xz)"
    dbs+=(--db "$tmp/$(basename "$archive" .xz)")
  done
  fingerprint=$(sed -n 's/^  "model_fingerprint": "\([0-9a-f]*\)",$/\1/p' "$profile")
  if ! "$eventkv" calibrate --fingerprint "$fingerprint" "${dbs[@]}" \
    --scenarios "$source_dir/scenarios/paper" --scenarios "$source_dir/scenarios/families" \
    -o "$tmp/$name.json" >/dev/null; then
    echo "FAIL: calibrate could not regenerate $profile"
    failures=$((failures + 1))
  elif cmp -s <(grep -v '^  "eventkv_version": ' "$profile") <(grep -v '^  "eventkv_version": ' "$tmp/$name.json"); then
    echo "ok: $profile is the calibration of its archives"
  else
    echo "FAIL: $profile differs from the calibration of its archives:"
    diff <(grep -v '^  "eventkv_version": ' "$profile") <(grep -v '^  "eventkv_version": ' "$tmp/$name.json") | head -20
    failures=$((failures + 1))
  fi
done
if [ "$profiles" -eq 0 ]; then
  echo "FAIL: no $source_dir/profiles/*.json"
  exit 1
fi
exit $((failures > 0))
