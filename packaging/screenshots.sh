#!/usr/bin/env bash
# Regenerates the README's screenshots under Xvfb: the window as it starts, and after one click on Run.
set -euo pipefail
build=${1:-build/dev}
out=resources/screenshots
mkdir -p "$out"
export QT_QPA_PLATFORMTHEME=
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" --screenshot "$out/start.png"
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/rpcscope" --run --screenshot "$out/run-finished.png"
echo "wrote $out/start.png $out/run-finished.png"
