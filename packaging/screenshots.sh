#!/usr/bin/env bash
# Regenerates the README's screenshots under Xvfb: the window as it starts, mid-run, after one click on Run, the
# stack comparison of Sum at three sizes, schema errors, a server stream mid-run, the History page, an A/B
# comparison, an exported chart and the sample HTML report. Runs go to a throwaway history, never the user's.
set -euo pipefail
build=${1:-build/dev}
out=resources/screenshots
mkdir -p "$out" docs
export QT_QPA_PLATFORMTHEME=
RPCSCOPE_DB=$(mktemp -d)/runs.sqlite
export RPCSCOPE_DB
# Settings of their own too (the user's stacks, window layout), so the pictures do not depend on this machine's.
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
# A laptop's screen: every picture is the window at 1366x768, as most people will see it.
gui() { xvfb-run -a -s "-screen 0 1366x768x24" "$build/app/rpcscope" --window-size 1366x768 "$@"; }
cli="$build/app/rpcscope-cli"
gui --screenshot "$out/start.png"
gui --run --screenshot "$out/run-finished.png"
gui --method rpcscope.bench.v1.Bench/Sum --calls 2000 --matrix 'nums=2;nums=100;nums=1000' --screenshot "$out/compare-stacks.png"
# The same with stacks of one's own (here the built-in servers by name, and one that is down), kept in the settings.
mkdir -p "$XDG_CONFIG_HOME/rpcscope"
printf '[matrix]\nstacks=%s\n' '"grpc-cpp=grpc/protobuf@builtin", "web=http/json@builtin", "mp=msgpack/msgpack@builtin", "down=grpc/protobuf@127.0.0.1:1", "codec=none/json"' \
    > "$XDG_CONFIG_HOME/rpcscope/rpcscope.conf"
gui --method rpcscope.bench.v1.Bench/Sum --calls 2000 --matrix 'nums=2;nums=100;nums=1000' --screenshot "$out/compare-my-stacks.png"
rm "$XDG_CONFIG_HOME/rpcscope/rpcscope.conf"
gui --run --duration 30s --calls 0 --screenshot-after 2500 --screenshot "$out/mid-run.png"
gui --method rpcscope.bench.v1.Bench/List --send-once --screenshot "$out/send-once.png"
gui tests/data/broken/syntax.proto --screenshot "$out/schema-errors.png"
# A run that measured nothing: every call to a port where nothing listens fails; the page says so instead of 0 ns.
failing=$(mktemp -d)/failing.rpcscope.json
cat >"$failing" <<'JSON'
{ "rpcscope_scenario": 1, "method": "rpcscope.bench.v1.Bench/Echo", "transport": "grpc", "target": "127.0.0.1:1",
  "fills": ["payload=1KiB"], "load": { "calls": 3000, "concurrency": 8, "timeout": "2s" } }
JSON
gui --scenario "$failing" --run --screenshot "$out/failed-run.png"
# A server stream mid-run: 8 Download streams of 2 s each, a message every 200 us; the charts per message.
gui --scenario tests/data/download-stream.rpcscope.json --run --screenshot-after 5000 --screenshot "$out/stream-mid-run.png"
# A/B: the same built-in server, B made 1 ms slower through its environment (as a library upgrade would);
# ab exits 4 on that regression, which is the point here.
"$cli" ab --a builtin --b builtin --b-env RPCSCOPE_SERVE_DELAY=1ms --call rpcscope.bench.v1.Bench/Echo \
    -d '{"payload":"aGVsbG8="}' -n 20000 -c 8 --name "Echo before/after" --label demo --db "$RPCSCOPE_DB" \
    > /dev/null 2>&1 || [ $? -eq 4 ]
"$cli" run --builtin --transport http --call rpcscope.bench.v1.Bench/Sum --fill nums=100 -n 5000 --label demo \
    --db "$RPCSCOPE_DB" > /dev/null 2>&1
ab_a=$("$cli" history list --db "$RPCSCOPE_DB" --label "A" | awk 'NR==2 {print $1}')
ab_b=$("$cli" history list --db "$RPCSCOPE_DB" --label "B" | awk 'NR==2 {print $1}')
gui --history --screenshot "$out/history.png"
gui --compare "$ab_a,$ab_b" --screenshot "$out/compare-runs.png"
"$cli" export "$ab_a" "$ab_b" --db "$RPCSCOPE_DB" -O png -o "$out/exported-spectrum.png" --chart spectrum \
    -O html -o docs/sample-comparison-report.html -O slide-png -o "$out/slide.png"
# A live A/B judged pair by pair, from the GUI test that runs one (the window at 1366x768 when it saves pictures).
shots=$(mktemp -d)
RPCSCOPE_SCREENSHOTS=$shots QT_QPA_PLATFORM=offscreen "$build/tests/tst_guiresults" liveAbUntilDecidedStopsOnAClearSlowdown \
    >/dev/null 2>&1 && cp "$shots/guiresults-ab-live.png" "$out/ab-live.png"
# A split run's workers, merged from four segments' reports (the same test binary, another test).
RPCSCOPE_SCREENSHOTS=$shots QT_QPA_PLATFORM=offscreen "$build/tests/tst_guiresults" \
    aFolderOfSegmentsIsMergedAndShownWithItsWorkers >/dev/null 2>&1 \
    && cp "$shots/guiresults-split-run-workers.png" "$out/split-run-workers.png"
# The sample report as a browser shows it, at a laptop's width (the README links the page and shows this picture).
if command -v chromium >/dev/null; then
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1366,1700 \
        --screenshot="$out/html-report.png" "file://$PWD/docs/sample-comparison-report.html" 2>/dev/null
fi
echo "wrote $out/{start,run-finished,send-once,compare-stacks,compare-my-stacks,mid-run,schema-errors,failed-run,stream-mid-run,history,compare-runs,exported-spectrum,slide,html-report,ab-live,split-run-workers}.png and docs/sample-comparison-report.html"
