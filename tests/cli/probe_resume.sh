#!/usr/bin/env bash
# A probe run interrupted (SIGKILL, mid-pair) and resumed ends with exactly
# the scores of an uninterrupted run, and resuming it (or a landing analysis)
# again adds nothing; shards merged give them too, once however often they
# are merged; bad scenarios and databases fail with one line. SIGTERM stops
# like Ctrl-C; --resume (of a probe or a landing analysis) says what differs
# from the unfinished one; two concurrent resumes of one run end cleanly.
set -u
eventkv=$1
scenario=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/check.sh"
run_field() {  # run_field DB SQL-EXPRESSION: its value for the database's only run
  python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT " + sys.argv[2] + " FROM runs").fetchone()[0])' "$1" "$2"
}
row_count() {  # row_count DB TABLE
  python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM " + sys.argv[2]).fetchone()[0])' "$1" "$2"
}
scores() {  # the scores of a database without run ids, sorted
  "$eventkv" export --db "$1" --format csv | tail -n +2 | cut -d, -f2- | sort
}

# interrupted SIGNAL NAME: a probe into $tmp/NAME.db (stderr, with a progress
# line at every pair, in $tmp/NAME.err) sent SIGNAL once 40 scores are stored;
# its exit code in $code.
interrupted() {
  EVENTKV_PROGRESS_SECONDS=0 "$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 \
    --db "$tmp/$2.db" >/dev/null 2>"$tmp/$2.err" &
  local pid=$!
  for _ in $(seq 1 200); do
    [ -f "$tmp/$2.db" ] && [ "$(scores "$tmp/$2.db" 2>/dev/null | wc -l)" -ge 40 ] && break
    sleep 0.05
  done
  kill "-$1" "$pid"
  wait "$pid"
  code=$?
}

"$eventkv" make-test-model --arch llama -o "$tmp/model.gguf" >/dev/null
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/whole.db" >/dev/null 2>&1
scores "$tmp/whole.db" >"$tmp/whole.csv"
check "uninterrupted run stored 6 pairs x 4 cells x 5 conditions x 2 sides x 2 candidates" \
  test "$(wc -l <"$tmp/whole.csv")" -eq 480

"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --pairs 2 --distances 2 --db "$tmp/some.db" >/dev/null 2>&1
check "--distances 2 --pairs 2 ran 2 pairs x 2 cells, the distance-2 rows of the whole run" \
  cmp -s <(grep -F -f <(scores "$tmp/some.db") "$tmp/whole.csv") <(scores "$tmp/some.db")
check "... and 80 rows" test "$(scores "$tmp/some.db" | wc -l)" -eq 80

"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/cut.db" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  [ -f "$tmp/cut.db" ] && [ "$(scores "$tmp/cut.db" 2>/dev/null | wc -l)" -ge 80 ] && break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
partial=$(scores "$tmp/cut.db" | wc -l)
check "the killed run stored some pairs but not all ($partial rows)" test "$partial" -gt 0 -a "$partial" -lt 480
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/cut.db" --resume >/dev/null 2>&1
check "resumed run equals the uninterrupted one" cmp -s "$tmp/whole.csv" <(scores "$tmp/cut.db")
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/cut.db" --resume >/dev/null 2>"$tmp/again.err"
check "resuming the complete run says so" grep -q "already complete" "$tmp/again.err"
check "... and computes nothing: no second run" cmp -s "$tmp/whole.csv" <(scores "$tmp/cut.db")

interrupted INT int
check "Ctrl-C stops with an error that names --resume" test "$code" -ne 0 -a -n "$(grep -- --resume "$tmp/int.err")"
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/int.db" --resume --pairs 3 >/dev/null 2>"$tmp/err"
check "--resume with another --pairs says what differs" \
  grep -q "run 1 of 'tiny-binary' on model (interrupted) was started with 6 pairs per cell, not 3; resume it with --pairs 6" "$tmp/err"
sed 's/"seed": 3/"seed": 4/' "$scenario" >"$tmp/edited.json"
"$eventkv" probe "$tmp/edited.json" -m "$tmp/model.gguf" -t 1 --db "$tmp/int.db" --resume >/dev/null 2>"$tmp/err"
check "--resume with an edited scenario file says so" grep -q "was started from another version of the scenario file" "$tmp/err"
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/int.db" --resume --precision fast >/dev/null 2>"$tmp/err"
check "--resume with another --precision says what differs" \
  grep -q "was computed with --precision exact, not fast; resume it with --precision exact" "$tmp/err"
check "... and none started a run" test "$(row_count "$tmp/int.db" runs)" -eq 1
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/int.db" --resume >/dev/null 2>&1
check "resumed after Ctrl-C equals the uninterrupted run" cmp -s "$tmp/whole.csv" <(scores "$tmp/int.db")

interrupted TERM term
check "SIGTERM stops like Ctrl-C, with an error that names --resume" test "$code" -eq 1 -a -n "$(grep -- --resume "$tmp/term.err")"
check "... and stores the run as interrupted, with its wall time" \
  test "$(run_field "$tmp/term.db" "status || ' ' || (wall_seconds > 0)")" = "interrupted 1"
check "a log (stderr not a terminal) gets progress lines" grep -q "^tiny-binary / model [0-9]*/24 pairs .* ETA" "$tmp/term.err"

"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/race.db" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  [ -f "$tmp/race.db" ] && [ "$(scores "$tmp/race.db" 2>/dev/null | wc -l)" -ge 20 ] && break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/race.db" --resume >/dev/null 2>"$tmp/race1.err" &
first=$!
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/race.db" --resume >/dev/null 2>"$tmp/race2.err"
wait "$first"
check "two concurrent resumes of one run: no raw SQLite error" test -z "$(grep -i "unique" "$tmp/race1.err" "$tmp/race2.err")"
check "... the one that stops says why" \
  test -z "$(grep "error:" "$tmp/race1.err" "$tmp/race2.err" | grep -v "another --resume of this run is running")"
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --db "$tmp/race.db" --resume >/dev/null 2>&1
check "... and the run ends with the uninterrupted scores" cmp -s "$tmp/whole.csv" <(scores "$tmp/race.db")

"$eventkv" landing "$scenario" -m "$tmp/model.gguf" -t 1 --pairs 3 --db "$tmp/landing.db" >"$tmp/landing.out" 2>/dev/null
check "a 3-pair landing analysis counts 3 pairs (not one per stage)" grep -q "^analysed 3 pairs" "$tmp/landing.out"
"$eventkv" landing "$scenario" -m "$tmp/model.gguf" -t 1 --pairs 3 --db "$tmp/landing.db" --resume >"$tmp/landing.out" 2>/dev/null
check "resuming the complete landing computes nothing" grep -q "^analysed 0 pairs.*already complete" "$tmp/landing.out"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE landing_runs SET status = '"'interrupted'"'"); c.commit()' "$tmp/landing.db"
"$eventkv" landing "$scenario" -m "$tmp/model.gguf" -t 1 --pairs 5 --db "$tmp/landing.db" --resume >/dev/null 2>"$tmp/err"
check "landing --resume with another --pairs says what differs" \
  grep -q "landing analysis 1 of 'tiny-binary' on model (interrupted) was started with 3 pairs, not 5; resume it with --pairs 3" "$tmp/err"
"$eventkv" landing "$tmp/edited.json" -m "$tmp/model.gguf" -t 1 --pairs 3 --db "$tmp/landing.db" --resume >/dev/null 2>"$tmp/err"
check "landing --resume with an edited scenario file says so" grep -q "was started from another version of the scenario file" "$tmp/err"
check "... and neither started an analysis" \
  test "$(row_count "$tmp/landing.db" landing_runs)" -eq 1

for k in 0 1 2; do
  "$eventkv" probe "$scenario" -m "$tmp/model.gguf" -t 1 --shard "$k/3" --db "$tmp/shard$k.db" >/dev/null 2>&1
done
"$eventkv" merge "$tmp/merged.db" "$tmp/shard0.db" "$tmp/shard1.db" "$tmp/shard2.db" >/dev/null
check "three shards merged equal the whole run" cmp -s "$tmp/whole.csv" <(scores "$tmp/merged.db")
"$eventkv" export --db "$tmp/merged.db" --format json >"$tmp/summary.json"
check "merged summary pools the shards' pairs" grep -q '"pairs": 6' "$tmp/summary.json"
"$eventkv" merge "$tmp/merged.db" "$tmp/shard1.db" "$tmp/merged.db" >/dev/null
check "merging a shard (or the database itself) again adds nothing" \
  cmp -s "$tmp/whole.csv" <(scores "$tmp/merged.db")

printf '{"name": "x"' >"$tmp/broken.json"
"$eventkv" probe "$tmp/broken.json" -m "$tmp/model.gguf" --db "$tmp/x.db" 2>"$tmp/err" >/dev/null
check "a broken scenario fails with one line naming it" \
  test "$?" -ne 0 -a "$(wc -l <"$tmp/err")" -eq 1 -a -n "$(grep broken.json "$tmp/err")"
"$eventkv" export --db "$tmp/absent.db" 2>"$tmp/err" >/dev/null
check "exporting a missing database fails with one line" test "$?" -ne 0 -a "$(wc -l <"$tmp/err")" -eq 1
"$eventkv" probe "$scenario" -m "$tmp/model.gguf" --shard 3/3 --db "$tmp/x.db" 2>"$tmp/err" >/dev/null
check "a bad shard fails with one line" test "$?" -ne 0 -a "$(wc -l <"$tmp/err")" -eq 1

echo "$failures failures"
[ "$failures" -eq 0 ]
