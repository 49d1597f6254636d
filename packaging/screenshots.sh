#!/usr/bin/env bash
# Regenerates the README's screenshots under Xvfb: the window as it starts, after one click on Run, and the
# stack comparison of Sum at three sizes.
set -euo pipefail
build=${1:-build/dev}
out=resources/screenshots
mkdir -p "$out"
export QT_QPA_PLATFORMTHEME=
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" --screenshot "$out/start.png"
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" --run --screenshot "$out/run-finished.png"
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" --method rpcscope.bench.v1.Bench/Sum --calls 2000 \
    --matrix 'nums=2;nums=100;nums=1000' --screenshot "$out/compare-stacks.png"
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" --run --duration 30s --calls 0 --screenshot-after 2500 \
    --screenshot "$out/mid-run.png"
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" tests/data/broken/syntax.proto --screenshot "$out/schema-errors.png"
echo "wrote $out/{start,run-finished,compare-stacks,mid-run,schema-errors}.png"
