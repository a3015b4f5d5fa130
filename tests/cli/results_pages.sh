#!/usr/bin/env bash
# Every results page with a database in docs/data is exactly what `eventkv
# report --markdown` writes from it (bar line 3, the generation time and
# version): docs/NAME.md from docs/data/NAME.db.xz (NAME: results-*; the
# calibration-* archives are checked by profiles.sh), and docs/results.md from
# all of them pooled in name order (scripts/results-page). No number on those
# pages is hand-edited, and a report change that alters them fails until they
# are regenerated.
set -u
export LC_ALL=C
eventkv=$1
docs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# check_page PAGE DB: PAGE is the markdown report of DB.
check_page() {
  "$eventkv" report --db "$2" --markdown "$tmp/page.md" >/dev/null
  if cmp -s <(sed 3d "$1") <(sed 3d "$tmp/page.md"); then
    echo "ok: $1 is the report of its database"
  else
    echo "FAIL: $1 differs from the report of its database:"
    diff <(sed 3d "$1") <(sed 3d "$tmp/page.md") | head -20
    failures=$((failures + 1))
  fi
}

dbs=()
for archive in "$docs"/data/results-*.db.xz; do
  [ -e "$archive" ] || continue
  name=$(basename "$archive" .db.xz)
  xz -dc "$archive" >"$tmp/$name.db"
  dbs+=("$tmp/$name.db")
  if [ -f "$docs/$name.md" ]; then
    check_page "$docs/$name.md" "$tmp/$name.db"
  else
    echo "FAIL: $archive has no page $docs/$name.md"
    failures=$((failures + 1))
  fi
done
if [ ${#dbs[@]} -eq 0 ]; then
  echo "FAIL: no $docs/data/results-*.db.xz"
  exit 1
fi
"$eventkv" merge "$tmp/all.db" "${dbs[@]}" >/dev/null
check_page "$docs/results.md" "$tmp/all.db"
exit $((failures > 0))
