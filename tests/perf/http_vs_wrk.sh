#!/usr/bin/env bash
# Benchmark (a command, not a test): the HTTP/JSON transport's client cost against wrk's, on the same built-in HTTP
# server (1 thread, its own core) with the same keep-alive connections and the same JSON body; then msgpack-rpc
# calls/s with 1 and with 64 calls in flight on one connection. wrk parses replies but decodes nothing, so it is the
# floor for an HTTP/1.1 client; rpcscope also decodes the JSON reply into the response message (and with
# --discard-response it does not). Target: rpcscope's client CPU per call within 3x of wrk's.
#
#   tests/perf/http_vs_wrk.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
set -euo pipefail
build=${1:-build/dev}
seconds=${2:-5}
conns=${3:-50}
cli=$build/app/rpcscope-cli
[[ -x $cli ]] || { echo "no $cli: run 'make build' first" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk missing: apt-get install wrk" >&2; exit 2; }

serve_kind=http
# shellcheck source=server.sh
source "$(dirname "$0")/server.sh"
url=$address/rpcscope.bench.v1.Bench/Sum
body='{"nums":["1","2","3"]}' # what rpcscope sends for -d '{"nums":[1,2,3]}' (proto3 JSON: int64 as strings)
cat >"$tmp/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

TIMEFORMAT='%R %U %S'
measure() { { time "$@" >"$tmp/out" 2>&1; } 2>&1; }

"${pin_client[@]}" "$cli" run --transport http --builtin --call rpcscope.bench.v1.Bench/Sum -n 2000 -c 8 >/dev/null

read -r w_wall w_user w_sys < <(measure "${pin_client[@]}" wrk -t1 -c"$conns" -d"${seconds}s" -s "$tmp/post.lua" "$url")
w_calls=$(grep -oE '[0-9]+ requests in' "$tmp/out" | cut -d' ' -f1)
w_non2xx=$(grep -oE 'Non-2xx or 3xx responses: [0-9]+' "$tmp/out" | grep -oE '[0-9]+$' || echo 0)

run_rpcscope() { # extra flags...; sets r_calls r_user r_sys r_ok r_rps
    read -r r_wall r_user r_sys < <(measure "${pin_client[@]}" "$cli" run --transport http "$url" \
        --call rpcscope.bench.v1.Bench/Sum --protoset "$tmp/bench.protoset" -d '{"nums":[1,2,3]}' \
        -z "${seconds}s" -c "$conns" "$@")
    r_calls=$(grep -oE 'Count:\s+[0-9]+' "$tmp/out" | grep -oE '[0-9]+$')
    r_ok=$(grep -oE '\[OK\]\s+[0-9]+' "$tmp/out" | grep -oE '[0-9]+$' || echo 0)
    r_rps=$(grep -oE 'Requests/sec:\s+[0-9.]+' "$tmp/out" | grep -oE '[0-9.]+$')
}
proto_root=$(dirname "$0")/../../proto
protoc -I "$proto_root" --include_imports --descriptor_set_out="$tmp/bench.protoset" rpcscope/bench/v1/bench.proto
run_rpcscope
d_calls=$r_calls d_user=$r_user d_sys=$r_sys d_ok=$r_ok d_rps=$r_rps
run_rpcscope --discard-response

awk -v s="$seconds" -v c="$conns" -v wc="$w_calls" -v wu="$w_user" -v ws="$w_sys" -v wbad="$w_non2xx" \
    -v dc="$d_calls" -v du="$d_user" -v ds="$d_sys" -v dok="$d_ok" -v drps="$d_rps" \
    -v rc="$r_calls" -v ru="$r_user" -v rs="$r_sys" -v rok="$r_ok" -v rrps="$r_rps" 'BEGIN {
    wcpu = (wu + ws) * 1e6 / wc; dcpu = (du + ds) * 1e6 / dc; rcpu = (ru + rs) * 1e6 / rc
    printf "HTTP/1.1 POST Sum (JSON), %d keep-alive connections, %d s, built-in HTTP server (1 thread)\n", c, s
    printf "%-32s %10s %18s %10s\n", "client", "req/s", "client CPU/call", "failed"
    printf "%-32s %10.0f %15.1f us %10d\n", "wrk (floor)", wc / s, wcpu, wbad
    printf "%-32s %10.0f %15.1f us %10d\n", "rpcscope-cli (decodes replies)", drps, dcpu, dc - dok
    printf "%-32s %10.0f %15.1f us %10d\n", "rpcscope-cli --discard-response", rrps, rcpu, rc - rok
    printf "ratio rpcscope/wrk, client CPU per call: %.2f (decoding), %.2f (discarding); target <= 3\n", dcpu / wcpu, rcpu / wcpu
}'

# msgpack-rpc: calls/s with 1 and 64 calls in flight on one connection.
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true
"${pin_server[@]}" "$cli" serve msgpack --threads 1 >"$tmp/maddress" 2>/dev/null &
server_pid=$!
for _ in $(seq 100); do [[ -s $tmp/maddress ]] && break; sleep 0.05; done
maddress=$(head -n1 "$tmp/maddress")
echo
echo "msgpack-rpc Sum([1,2,3]), one connection, built-in msgpack-rpc server (1 thread), ${seconds} s each"
printf "%-10s %10s %12s %18s\n" "in flight" "calls/s" "p50" "client CPU/call"
for inflight in 1 64; do
    read -r m_wall m_user m_sys < <(measure "${pin_client[@]}" "$cli" run --transport msgpack "$maddress" \
        --call rpcscope.bench.v1.Bench/Sum --protoset "$tmp/bench.protoset" -d '{"nums":[1,2,3]}' \
        -z "${seconds}s" -c "$inflight")
    m_calls=$(grep -oE 'Count:\s+[0-9]+' "$tmp/out" | grep -oE '[0-9]+$')
    m_rps=$(grep -oE 'Requests/sec:\s+[0-9.]+' "$tmp/out" | grep -oE '[0-9.]+$')
    m_p50=$(grep -oE '50 % in [0-9.]+ [a-zµ]+' "$tmp/out" | sed 's/50 % in //')
    awk -v i="$inflight" -v r="$m_rps" -v p="$m_p50" -v n="$m_calls" -v u="$m_user" -v s="$m_sys" \
        'BEGIN { printf "%-10d %10.0f %12s %15.1f us\n", i, r, p, (u + s) * 1e6 / n }'
done
