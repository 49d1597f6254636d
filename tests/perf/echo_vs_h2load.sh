#!/usr/bin/env bash
# Benchmark (a command, not a test): trivial Echo at 50 calls in flight on one connection against the built-in
# server: h2load, rpcscope-cli over gRPC C++'s client (--transport grpc) and over its own client on bare HTTP/2
# (--transport h2grpc). h2load does no gRPC work (it sends a hand-framed body and ignores grpc-status), so it is
# the floor for an HTTP/2 client. Prints throughput and client CPU per call, and their ratios.
#
#   tests/perf/echo_vs_h2load.sh [BUILD_DIR] [CALLS]
set -euo pipefail
build=${1:-build/dev}
calls=${2:-200000}
inflight=50
cli=$build/app/rpcscope-cli
[[ -x $cli ]] || { echo "no $cli: run 'make build' first" >&2; exit 2; }
command -v h2load >/dev/null || { echo "h2load missing: apt-get install nghttp2-client" >&2; exit 2; }

# shellcheck source=server.sh
source "$(dirname "$0")/server.sh"

# A gRPC message: 1 byte "not compressed", 4 bytes length, then EchoRequest{payload: "hello"} (0a 05 hello).
printf '\x00\x00\x00\x00\x07\x0a\x05hello' >"$tmp/body"

TIMEFORMAT='%R %U %S'
measure() { # prints "wall user sys" of the command, its output to $tmp/out
    { time "$@" >"$tmp/out" 2>&1; } 2>&1
}

# Warm both paths once (connection set-up, page faults), then measure.
"${pin_client[@]}" "$cli" run --call rpcscope.bench.v1.Bench/Echo --builtin -n 2000 -c 50 >/dev/null

read -r h_wall h_user h_sys < <(measure "${pin_client[@]}" h2load -n "$calls" -c 1 -m "$inflight" -d "$tmp/body" \
    -H 'content-type: application/grpc' -H 'te: trailers' "http://$address/rpcscope.bench.v1.Bench/Echo")
h_rps=$(grep -oE 'finished in [0-9.]+[a-z]+, [0-9.]+ req/s' "$tmp/out" | grep -oE '[0-9.]+ req/s' | cut -d' ' -f1)
h_ok=$(grep -oE '[0-9]+ succeeded' "$tmp/out" | head -n1 | cut -d' ' -f1)

proto=$(dirname "$0")/../../proto/rpcscope/bench/v1/bench.proto
read -r r_wall r_user r_sys < <(measure "${pin_client[@]}" "$cli" run --proto "$proto" \
    --call rpcscope.bench.v1.Bench/Echo -d '{"payload":"aGVsbG8="}' -n "$calls" -c "$inflight" "$address")
r_rps=$(grep -oE 'Requests/sec:\s+[0-9.]+' "$tmp/out" | grep -oE '[0-9.]+$')
r_ok=$(grep -oE '\[OK\]\s+[0-9]+' "$tmp/out" | grep -oE '[0-9]+$' || echo 0)

read -r n_wall n_user n_sys < <(measure "${pin_client[@]}" "$cli" run --transport h2grpc --proto "$proto" \
    --call rpcscope.bench.v1.Bench/Echo -d '{"payload":"aGVsbG8="}' -n "$calls" -c "$inflight" "$address")
n_rps=$(grep -oE 'Requests/sec:\s+[0-9.]+' "$tmp/out" | grep -oE '[0-9.]+$')
n_ok=$(grep -oE '\[OK\]\s+[0-9]+' "$tmp/out" | grep -oE '[0-9]+$' || echo 0)

awk -v calls="$calls" -v hr="$h_rps" -v hu="$h_user" -v hs="$h_sys" -v hok="$h_ok" \
    -v rr="$r_rps" -v ru="$r_user" -v rs="$r_sys" -v rok="$r_ok" \
    -v nr="$n_rps" -v nu="$n_user" -v ns="$n_sys" -v nok="$n_ok" 'BEGIN {
    hcpu = (hu + hs) * 1e6 / calls; rcpu = (ru + rs) * 1e6 / calls; ncpu = (nu + ns) * 1e6 / calls
    printf "Echo, %d calls, 50 in flight on one connection, built-in server (1 thread)\n", calls
    printf "%-22s %12s %18s %8s\n", "client", "req/s", "client CPU/call", "OK"
    printf "%-22s %12.0f %15.1f us %8d\n", "h2load (floor)", hr, hcpu, hok
    printf "%-22s %12.0f %15.1f us %8d\n", "rpcscope-cli grpc", rr, rcpu, rok
    printf "%-22s %12.0f %15.1f us %8d\n", "rpcscope-cli h2grpc", nr, ncpu, nok
    printf "ratio grpc/h2load:   throughput %.2f, client CPU per call %.2f\n", rr / hr, rcpu / hcpu
    printf "ratio h2grpc/h2load: throughput %.2f, client CPU per call %.2f\n", nr / hr, ncpu / hcpu
    printf "ratio grpc/h2grpc:   client CPU per call %.2f (the target: at least 2)\n", rcpu / ncpu
}'
