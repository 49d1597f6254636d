#!/usr/bin/env bash
# How ab judges client commands (issue 36): the case behind it reproduced, and A/A runs of one client command.
#
#   tests/perf/client_calibration.sh [BUILD_DIR] [K]      (defaults: build/dev, 10)
#
# Rows (examples/clients/grpc_echo_client.py under /usr/bin/python3, against the built-in server, c=1, ab's default
# blocks and 5 client and server processes a side):
#   case   A/B: Sum of 100,000 int64s (a 283 KB request); A with PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp, B with
#          =python on the client: ab must report B slower (a regression)     (target: >= 9 of 10 runs)
#   bytes  the same A/B on Echo of a 10 MiB bytes field (the case's field): reported, not held to a target (on
#          Debian's protobuf 3.21 either runtime only copies the bytes: serialise 0.75 vs 1.31 ms, parse 1.00 vs
#          0.53 ms)
#   aa     A/A: the same command both sides (cpp, the case's Sum): no regression or improvement
#   aasmall A/A on Echo of 1 KiB, 400 calls a side                           (targets: <= 5% false verdicts)
# CASE_FLAGS adds ab flags to the case row (-n 1000 --restarts 10: more calls and processes a side).
# ROWS="case aa" runs only those rows (default: case aa aasmall; bytes only when asked). Every load is on 127.0.0.1 and bounded by -n.
set -euo pipefail
build=${1:-build/dev}
k=${2:-10}
rows=${ROWS:-"case aa aasmall"}
wanted() { [[ " $rows " == *" $1 "* ]]; }
cli=$(cd "$build" && pwd)/app/rpcscope-cli
[[ -x $cli ]] || { echo "client_calibration: no $cli (build first)" >&2; exit 2; }
python=/usr/bin/python3
"$python" -c 'import grpc, google.protobuf' 2> /dev/null \
    || { echo "client_calibration: $python has no grpcio or protobuf (python3-grpcio, python3-protobuf)" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export RPCSCOPE_PY_GEN=$work/gen
client() { echo "$python $here/examples/clients/grpc_echo_client.py $1"; }
runtime=PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION
# The verdict word of a comparison's output (empty when the run ended without one: its output says why).
verdict() {
    grep -Eo '^(regression|improvement|change within threshold|no significant change|inconclusive|too few samples)' \
        "$1" | head -1 || true
}

abcase() {
    local name=$1 args=$2 method=$3 found=0
    for i in $(seq "$k"); do
        out=$work/$name$i.txt
        # shellcheck disable=SC2086
        "$cli" ab --a builtin --b builtin --client "$(client "$args")" --a-client-env "$runtime=cpp" \
            --b-client-env "$runtime=python" --call "rpcscope.bench.v1.Bench/$method" -n 200 -c 1 --no-save \
            ${CASE_FLAGS:-} > "$out" 2>&1 || true
        v=$(verdict "$out")
        [[ $v == regression ]] && found=$((found + 1))
        echo "$name run $i: ${v:-no verdict} ($(grep -E '^p50 ' "$out" | awk '{ print $2, $3, "->", $4, $5, $8 }'))" >&2
    done
    echo "$name: B (pure-Python protobuf runtime on the client) found slower in $found of $k runs (target: 9 of 10)"
}
if wanted case; then abcase case "--sum 100000" Sum; fi
if wanted bytes; then abcase bytes "--payload-bytes 10MB" Echo; fi

aa() {
    local name=$1 args=$2 method=$3 calls=$4 false=0
    for i in $(seq "$k"); do
        out=$work/$name$i.txt
        "$cli" ab --a builtin --b builtin --client "$(client "$args")" --client-env "$runtime=cpp" \
            --call "rpcscope.bench.v1.Bench/$method" -n "$calls" -c 1 --no-save > "$out" 2>&1 || true
        v=$(verdict "$out")
        [[ $v == regression || $v == improvement ]] && false=$((false + 1))
        echo "$name run $i: ${v:-no verdict: $(grep -m1 'rpcscope-cli ab:' "$out")}" >&2
    done
    echo "$name: $false false verdicts in $k A/A runs ($args, $calls calls a side; target: at most 5%)"
}
if wanted aa; then aa aa "--sum 100000" Sum 200; fi
if wanted aasmall; then aa aasmall "--payload-bytes 1KB" Echo 400; fi
