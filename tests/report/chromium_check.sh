#!/usr/bin/env bash
# Loads the sample report in headless Chromium, as a reader's browser would:
# the page must render to its end, keep every chart, and log nothing to the
# console (it has no scripts, so any console line is a blocked load or an
# error). The findings table ("What reproduced") must fit a 1280-px window
# and a 390-px phone, its verdict column in view without scrolling: a test
# page frames the report at both widths and measures it. Leaves report.png
# (1100 px), report-1280.png and report-phone.png, screenshots of the page's
# top, in OUT_DIR.
#   chromium_check.sh RENDER_SAMPLE OUT_DIR
# Exits 77 (ctest: skipped) when Chromium is not installed.
set -u
render_sample=$1
out=$2

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIPPED: chromium is not installed (scripts/install-deps installs it)"
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)  # Chromium wants absolute file:// URLs
rm -f "$out"/*.log "$out"/*.png
page="$out/report.html"
"$render_sample" "$page" || { echo "FAIL: render_sample could not write $page"; exit 1; }

flags=(--headless --disable-gpu --no-first-run --hide-scrollbars --enable-logging=stderr --v=0
  "--user-data-dir=$out/profile")
[ "$(id -u)" -ne 0 ] || flags+=(--no-sandbox)  # Chromium refuses to run as root with its sandbox
load() {  # load URL LOG ARGS...: stdout is Chromium's
  local url=$1 log=$2
  shift 2
  timeout 60 "$chromium" "${flags[@]}" "$@" "$url" 2>"$log"
}

# A page whose image the policy blocks proves that console lines reach the log.
printf '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src %s">%s\n' \
  "'none'" '<img src="data:,">' >"$out/canary.html"
load "file://$out/canary.html" "$out/canary.log" --dump-dom >/dev/null
if ! grep -q "CONSOLE" "$out/canary.log"; then
  echo "FAIL: Chromium's console lines do not reach its log; this check would be blind"
  exit 1
fi

url="file://$page"
load "$url" "$out/chromium-dom.log" --dump-dom >"$out/dom.html" || { echo "FAIL: Chromium could not load the page"; exit 1; }
load "$url" "$out/chromium-screenshot.log" --window-size=1100,3000 "--screenshot=$out/report.png" >/dev/null ||
  { echo "FAIL: Chromium could not take a screenshot"; exit 1; }

for shot in 1280,report-1280 390,report-phone; do
  load "$url" "$out/chromium-${shot#*,}.log" --window-size="${shot%,*},3000" "--screenshot=$out/${shot#*,}.png" \
    >/dev/null || { echo "FAIL: Chromium could not take the ${shot#*,} screenshot"; exit 1; }
done

# The layout check: the report framed at both widths, measured by a script of
# the test page (the report itself has none).
cat >"$out/layout.html" <<'HTML'
<!DOCTYPE html><html><body>
<iframe id="wide" src="report.html" style="width:1280px;height:900px;border:0"></iframe>
<iframe id="phone" src="report.html" style="width:390px;height:900px;border:0"></iframe>
<script>
function measure(id) {
  const doc = document.getElementById(id).contentDocument;
  const box = doc.querySelector("section#findings .table");
  if (!box) return id + ":no-findings-table";
  const verdict = box.querySelector("tbody tr td:last-child");
  const inView = verdict.getBoundingClientRect().right <= doc.documentElement.clientWidth;
  const scrolls = box.scrollWidth > box.clientWidth;
  return id + ":" + (inView && !scrolls ? "fits" : "overflows") + "(" + box.scrollWidth + "/" +
         box.clientWidth + ")";
}
window.onload = () => {
  document.body.setAttribute("data-layout", measure("wide") + " " + measure("phone"));
};
</script></body></html>
HTML
layout=$(load "file://$out/layout.html" "$out/layout.log" --allow-file-access-from-files \
  --virtual-time-budget=10000 --dump-dom | grep -o 'data-layout="[^"]*"')

failures=0
if [ "$layout" != "${layout//overflows/}" ] || [ "$(grep -o fits <<<"$layout" | wc -l)" -ne 2 ]; then
  echo "FAIL: the findings table does not fit at 1280 px and on a phone: ${layout:-no measurement}"
  failures=$((failures + 1))
fi
console=$(grep -h "CONSOLE" "$out"/chromium-*.log)
console_lines=$(printf '%s' "$console" | grep -c . || true)
if [ "$console_lines" -ne 0 ]; then
  echo "FAIL: $console_lines console messages:"
  echo "$console"
  failures=$((failures + 1))
fi
written=$(grep -o "<svg" "$page" | wc -l)
rendered=$(grep -o "<svg" "$out/dom.html" | wc -l)
if [ "$written" -eq 0 ] || [ "$rendered" -ne "$written" ]; then
  echo "FAIL: the page has $written charts, the rendered document $rendered"
  failures=$((failures + 1))
fi
if ! grep -q '<section id="runs">' "$out/dom.html"; then
  echo "FAIL: the rendered document stops before its last section"
  failures=$((failures + 1))
fi
if [ ! -s "$out/report.png" ]; then
  echo "FAIL: no screenshot"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || exit 1
echo "ok: rendered in Chromium with 0 console messages and $rendered of $written charts; findings table $layout; screenshots in $out"
