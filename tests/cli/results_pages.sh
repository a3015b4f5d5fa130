#!/usr/bin/env bash
# Every results page with a database in docs/data is exactly what `eventkv
# report --markdown` writes from it (bar line 3, the generation time and
# version): docs/NAME.md from docs/data/NAME.db.xz. No number on those pages
# is hand-edited, and a report change that alters them fails until they are
# regenerated.
set -u
eventkv=$1
docs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checked=0
for archive in "$docs"/data/*.db.xz; do
  [ -e "$archive" ] || continue
  name=$(basename "$archive" .db.xz)
  page="$docs/$name.md"
  if [ ! -f "$page" ]; then
    echo "FAIL: $archive has no page $page"
    failures=$((failures + 1))
    continue
  fi
  xz -dc "$archive" >"$tmp/$name.db" && "$eventkv" report --db "$tmp/$name.db" --markdown "$tmp/$name.md" >/dev/null
  if cmp -s <(sed 3d "$page") <(sed 3d "$tmp/$name.md"); then
    echo "ok: $page is the report of $archive"
  else
    echo "FAIL: $page differs from the report of $archive:"
    diff <(sed 3d "$page") <(sed 3d "$tmp/$name.md") | head -20
    failures=$((failures + 1))
  fi
  checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || { echo "FAIL: no docs/data/*.db.xz"; failures=$((failures + 1)); }
exit $((failures > 0))
