#!/usr/bin/env bash
# Benchmark (a command, not a test): trivial Echo at 50 calls in flight on one connection: h2load, rpcscope-cli over
# gRPC C++'s client (--transport grpc) and over its own client on bare HTTP/2 (--transport h2grpc). h2load does no
# gRPC work (it sends a hand-framed body and ignores grpc-status), so it is the floor for an HTTP/2 client. Against
# two servers, each pinned to a core of its own (the clients to the other): the built-in one (gRPC C++, 1 thread)
# and the grpc-go peer (tests/peers/grpcgo_server, the neutral server the h2grpc issue measured on), which batches
# its replies into fewer, larger writes. Prints throughput and client CPU per call (user + system time of the
# whole process over the calls), and their ratios, for each server.
#
#   tests/perf/echo_vs_h2load.sh [BUILD_DIR] [CALLS]
set -euo pipefail
build=${1:-build/dev}
calls=${2:-200000}
inflight=50
cli=$build/app/rpcscope-cli
go_server=$build/tests/peers/grpcgo_server
[[ -x $cli ]] || { echo "no $cli: run 'make build' first" >&2; exit 2; }
command -v h2load >/dev/null || { echo "h2load missing: apt-get install nghttp2-client" >&2; exit 2; }

# shellcheck source=server.sh
source "$(dirname "$0")/server.sh"
builtin_address=$address

# A gRPC message: 1 byte "not compressed", 4 bytes length, then EchoRequest{payload: "hello"} (0a 05 hello).
printf '\x00\x00\x00\x00\x07\x0a\x05hello' >"$tmp/body"
proto=$(dirname "$0")/../../proto/rpcscope/bench/v1/bench.proto

TIMEFORMAT='%R %U %S'
measure() { # prints "wall user sys" of the command, its output to $tmp/out
    { time "$@" >"$tmp/out" 2>&1; } 2>&1
}

# compare SERVER_NAME ADDRESS: the three clients against one server, one table.
compare() {
    local name=$1 at=$2
    # Warm the server and the paths once (connection set-up, page faults), then measure.
    "${pin_client[@]}" "$cli" run --proto "$proto" --call rpcscope.bench.v1.Bench/Echo -n 2000 -c 50 "$at" >/dev/null
    read -r h_wall h_user h_sys < <(measure "${pin_client[@]}" h2load -n "$calls" -c 1 -m "$inflight" \
        -d "$tmp/body" -H 'content-type: application/grpc' -H 'te: trailers' "http://$at/rpcscope.bench.v1.Bench/Echo")
    h_rps=$(grep -oE 'finished in [0-9.]+[a-z]+, [0-9.]+ req/s' "$tmp/out" | grep -oE '[0-9.]+ req/s' | cut -d' ' -f1)
    h_ok=$(grep -oE '[0-9]+ succeeded' "$tmp/out" | head -n1 | cut -d' ' -f1)
    local t
    for t in grpc h2grpc; do
        read -r wall user sys < <(measure "${pin_client[@]}" "$cli" run --transport "$t" --proto "$proto" \
            --call rpcscope.bench.v1.Bench/Echo -d '{"payload":"aGVsbG8="}' -n "$calls" -c "$inflight" "$at")
        declare -g "${t}_user=$user" "${t}_sys=$sys"
        declare -g "${t}_rps=$(grep -oE 'Requests/sec:\s+[0-9.]+' "$tmp/out" | grep -oE '[0-9.]+$')"
        declare -g "${t}_ok=$(grep -oE '\[OK\]\s+[0-9]+' "$tmp/out" | grep -oE '[0-9]+$' || echo 0)"
    done
    # shellcheck disable=SC2154 # set by declare -g above
    awk -v server="$name" -v calls="$calls" -v hr="$h_rps" -v hu="$h_user" -v hs="$h_sys" -v hok="$h_ok" \
        -v rr="$grpc_rps" -v ru="$grpc_user" -v rs="$grpc_sys" -v rok="$grpc_ok" \
        -v nr="$h2grpc_rps" -v nu="$h2grpc_user" -v ns="$h2grpc_sys" -v nok="$h2grpc_ok" 'BEGIN {
        hcpu = (hu + hs) * 1e6 / calls; rcpu = (ru + rs) * 1e6 / calls; ncpu = (nu + ns) * 1e6 / calls
        printf "\nEcho, %d calls, 50 in flight on one connection, server: %s\n", calls, server
        printf "%-22s %12s %18s %14s %8s\n", "client", "req/s", "client CPU/call", "of it system", "OK"
        printf "%-22s %12.0f %15.1f us %11.1f us %8d\n", "h2load (floor)", hr, hcpu, hs * 1e6 / calls, hok
        printf "%-22s %12.0f %15.1f us %11.1f us %8d\n", "rpcscope-cli grpc", rr, rcpu, rs * 1e6 / calls, rok
        printf "%-22s %12.0f %15.1f us %11.1f us %8d\n", "rpcscope-cli h2grpc", nr, ncpu, ns * 1e6 / calls, nok
        printf "ratio grpc/h2load:   throughput %.2f, client CPU per call %.2f\n", rr / hr, rcpu / hcpu
        printf "ratio h2grpc/h2load: throughput %.2f, client CPU per call %.2f (the target: at most 2)\n", nr / hr, ncpu / hcpu
        printf "ratio grpc/h2grpc:   client CPU per call %.2f\n", rcpu / ncpu
    }'
}

compare "built-in (gRPC C++, 1 thread)" "$builtin_address"

start_go_server "$go_server"
if [[ -n $go_address ]]; then
    compare "grpc-go 1.33 (tests/peers/grpcgo_server, 1 core)" "$go_address"
else
    echo "no $go_server (Go missing: make setup, then build): the grpc-go server's table is left out" >&2
fi
