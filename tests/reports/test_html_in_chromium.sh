#!/usr/bin/env bash
# Each HTML report rpcscope writes (a run, a comparison of two runs, an A/B pair, the stack comparison), rendered in
# headless Chromium at 1280 and 1920 px wide: fails when the page scrolls sideways, a table or chart is wider than
# the page's text column, or a chart's text (a title, a label, a legend) is cut by its chart's edge.
# Usage: test_html_in_chromium.sh RPCSCOPE_CLI
set -euo pipefail
cli=$1
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
    echo "test_html_in_chromium: chromium is not installed (apt-get install chromium; make setup installs it)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen
db=$work/runs.sqlite
call=(--call rpcscope.bench.v1.Bench/Echo --fill payload=1KiB)

# The reports, from real runs of the built-in servers (bounded: a few thousand calls each).
log=$work/cli.log
"$cli" run --builtin "${call[@]}" -n 2000 -c 4 --db "$db" --name "a run with a rather long name to see how it wraps" \
    -O html -o "$work/run.html" >>"$log" 2>&1
"$cli" run --builtin --transport h2grpc "${call[@]}" -n 2000 -c 2 --db "$db" --name "the same over h2grpc" >>"$log" 2>&1
"$cli" export 1 2 --db "$db" -O html -o "$work/compare.html" >>"$log" 2>&1
# exit 4: B is found slower, as it should be
"$cli" ab --a builtin --b builtin --b-env RPCSCOPE_SERVE_DELAY=200us "${call[@]}" -n 2400 -c 2 --until-decided \
    --db "$db" >>"$log" 2>&1 || [[ $? == 4 ]]
"$cli" export last~1 last --db "$db" -O html -o "$work/ab.html" >>"$log" 2>&1
"$cli" matrix --builtin --call rpcscope.bench.v1.Bench/Sum --payloads 'nums=10;nums=1000' -n 300 -c 2 \
    -O html -o "$work/stacks.html" >>"$log" 2>&1

# What the page itself measures once laid out, written into the page for --dump-dom to print (no backslash or
# ampersand in it: it goes through sed).
probe='<script>
window.addEventListener("load", () => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth + 1)
    problems.push(`the page scrolls sideways: ${root.scrollWidth} px wide in a ${window.innerWidth} px window`);
  const column = document.body.getBoundingClientRect();
  for (const el of document.querySelectorAll("table, figure, svg, .verdict, pre")) {
    const box = el.getBoundingClientRect();
    if (box.right > column.right + 1 || el.scrollWidth > el.clientWidth + 1)
      problems.push(`${el.tagName.toLowerCase()}.${el.getAttribute("class") || ""} overflows: `
        + `${Math.round(box.right)} px against the text column at ${Math.round(column.right)} px`);
  }
  for (const svg of document.querySelectorAll("svg")) {
    const frame = svg.getBoundingClientRect();
    for (const text of svg.querySelectorAll("text")) {
      const box = text.getBoundingClientRect();
      if (box.width === 0)
        continue;
      if (box.left < frame.left - 1 || box.right > frame.right + 1 || box.top < frame.top - 1
          || box.bottom > frame.bottom + 1)
        problems.push(`chart text cut by its chart: "${text.textContent.trim().slice(0, 60)}"`);
    }
  }
  const out = document.createElement("pre");
  out.id = "layout-probe";
  out.textContent = problems.length ? problems.join(" | ") : "LAYOUT-OK";
  document.body.appendChild(out);
});
</script>'

failed=0
# The A/B pair was decided pair by pair: its report says so first (it left that verdict out).
if ! grep -q 'Judged until decided: regression' "$work/ab.html"; then
    echo "FAIL: ab.html does not carry the sequential verdict the A/B run was decided by" >&2
    failed=1
fi
for report in run compare ab stacks; do
    for width in 1280 1920; do
        page=$work/$report-$width.html
        sed "s#</body>#${probe//$'\n'/ }</body>#" "$work/$report.html" >"$page"
        dom=$(timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --window-size="$width,1000" --virtual-time-budget=5000 --dump-dom "file://$page" 2>/dev/null || true)
        result=$(sed -n '/<pre id="layout-probe">/,/<\/pre>/p' <<<"$dom" | sed 's/<[^>]*>//g')
        if [[ $result == *LAYOUT-OK* ]]; then
            echo "ok: $report.html at $width px"
        else
            echo "FAIL: $report.html at $width px:${result:- no result from Chromium}" >&2
            failed=1
        fi
    done
done
exit $failed
