#!/usr/bin/env bash
# Benchmark (a command, not a test): rpcscope's two gRPC clients side by side on latency, against the built-in
# server (1 thread) and the grpc-go peer when it is built. The figure is --transport h2grpc's, the peer figure
# --transport grpc's (gRPC C++), each the median over ROUNDS rounds that alternate the two:
#
#   (1) c=1 sequential trivial Echo (5 B): p50 and p99                 target p50 ratio <= 1
#   (2) c=1 Echo of a 10 MiB request, empty reply: p50               target ratio <= 1
#
# Client CPU per call at 50 in flight is tests/perf/echo_vs_h2load.sh's. A MISS is reported, not failed: the exit
# status is 0 whenever everything could be measured, 1 when something could not.
#
#   tests/perf/h2grpc_vs_grpc.sh [BUILD_DIR]
#
# Knobs (environment): ROUNDS (5), SEQ_CALLS (10000), SEQ_WARMUP (500), BIG_CALLS (200), BIG_WARMUP (5).
# A 10 MiB call's time spreads from 2 to 4 ms on the built-in server; with 40 calls a round the ratio of the medians
# moved by 5-10% from one run of this script to the next.
set -euo pipefail
build=${1:-build/dev}
rounds=${ROUNDS:-5}
seq_calls=${SEQ_CALLS:-10000} seq_warmup=${SEQ_WARMUP:-500}
big_calls=${BIG_CALLS:-200} big_warmup=${BIG_WARMUP:-5}
cli=$build/app/rpcscope-cli
go_server=$build/tests/peers/grpcgo_server
[[ -x $cli ]] || { echo "no $cli: run 'make build' first" >&2; exit 2; }
proto=$(dirname "$0")/../../proto/rpcscope/bench/v1/bench.proto

# shellcheck source=server.sh
source "$(dirname "$0")/server.sh"
# shellcheck source=table.sh
source "$(dirname "$0")/table.sh"
unmeasured=0
progress() { echo "... $*" >&2; }

# shellcheck source=cli_report.sh
source "$(dirname "$0")/cli_report.sh" # cli_percentile
# run TRANSPORT ADDRESS FILE ARGS...: one run, every call OK or it is not measured.
run() {
    local transport=$1 at=$2 out=$3
    shift 3
    if ! "${pin_client[@]}" "$cli" run --transport "$transport" --proto "$proto" \
        --call rpcscope.bench.v1.Bench/Echo --fail-on-error "$@" "$at" >"$out" 2>&1; then
        echo "h2grpc_vs_grpc: $transport $* failed: $(grep -m1 -E 'UNAVAIL|ERROR|\]' "$out")" >&2
        unmeasured=1
        return 1
    fi
}

# rows SERVER ADDRESS: the two latency items against one server.
rows_for() {
    local name=$1 at=$2 t r
    for t in grpc h2grpc; do : >"$tmp/$t.p50" && : >"$tmp/$t.p99" && : >"$tmp/$t.big"; done
    run h2grpc "$at" "$tmp/warm" -d '{"payload":"aGVsbG8="}' -c 1 -n 1000 || true
    for ((r = 1; r <= rounds; ++r)); do
        progress "$name: round $r/$rounds"
        for t in grpc h2grpc; do
            if run "$t" "$at" "$tmp/out" -d '{"payload":"aGVsbG8="}' -c 1 -n "$seq_calls" --warmup "$seq_warmup"; then
                cli_percentile "$tmp/out" 50 >>"$tmp/$t.p50"
                cli_percentile "$tmp/out" 99 >>"$tmp/$t.p99"
            fi
            if run "$t" "$at" "$tmp/out" --fill payload=10MiB -d '{"responseSize":0}' --max-recv-size 16MiB -c 1 -n "$big_calls" \
                --warmup "$big_warmup"; then
                cli_percentile "$tmp/out" 50 >>"$tmp/$t.big"
            fi
        done
    done
    ratio_row "$name: (1) Echo 5 B, c=1: p50" "$(median <"$tmp/h2grpc.p50")" "$(median <"$tmp/grpc.p50")" us \
        le 1.0 "ratio <= 1"
    ratio_row "$name: (1) Echo 5 B, c=1: p99" "$(median <"$tmp/h2grpc.p99")" "$(median <"$tmp/grpc.p99")" us \
        info 0 "(none)"
    ratio_row "$name: (2) Echo 10 MiB in, c=1: p50" "$(median <"$tmp/h2grpc.big")" "$(median <"$tmp/grpc.big")" us \
        le 1.0 "ratio <= 1"
}

rows_for built-in "$address"
start_go_server "$go_server"
if [[ -n $go_address ]]; then
    rows_for grpc-go "$go_address"
else
    echo "no $go_server (Go missing): the grpc-go rows are left out" >&2
fi
echo
echo "h2grpc (rpcscope's HTTP/2 client) against grpc (gRPC C++), medians of $rounds rounds"
print_table "grpc"
exit "$unmeasured"
