#!/usr/bin/env bash
# Benchmark (a command, not a test): what reading a client command's reports costs rpcscope, per call, against a
# floor measured in the same run (the same bytes through a pipe, lines counted). Target: under 1 us a call.
#
#   tests/perf/client_protocol_overhead.sh [BUILD_DIR] [CALLS]      (defaults: build/dev, 2000000)
set -euo pipefail
build=${1:-build/dev}
bench=$build/tests/perf/clientprotocol_bench
[[ -x $bench ]] || { echo "client_protocol_overhead: no $bench (build first)" >&2; exit 2; }
exec "$bench" "${2:-2000000}"
