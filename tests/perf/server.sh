# Sourced by the benchmarks in tests/perf: pins the server and the clients to different cores when there are
# two, starts the built-in server (1 thread; gRPC unless $serve_kind says http or msgpack) and sets $address (a URL
# for http); stops it and removes $tmp on exit. Expects $cli (the rpcscope-cli binary) to be set. start_go_server
# starts the grpc-go peer beside it.
pin_server=() pin_client=()
if (($(nproc) >= 2)); then # server and client on different cores
    pin_server=(taskset -c 1) pin_client=(taskset -c 0)
fi
tmp=$(mktemp -d)
server_pid= go_pid=
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null
    [[ -n $go_pid ]] && kill "$go_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

"${pin_server[@]}" "$cli" serve "${serve_kind:-grpc}" --threads 1 >"$tmp/address" 2>/dev/null &
server_pid=$!
for _ in $(seq 100); do [[ -s $tmp/address ]] && break; sleep 0.05; done
address=$(head -n1 "$tmp/address")
[[ -n $address ]] || { echo "server did not start" >&2; exit 3; }

# The grpc-go peer (tests/peers/grpcgo_server, BUILD_DIR/tests/peers/grpcgo_server: pass it) on the server's core:
# sets $go_address, empty when it is not built (the caller says what it leaves out); exits 3 when it does not start.
start_go_server() { # GO_SERVER
    go_address=
    [[ -x $1 ]] || return 0
    "${pin_server[@]}" "$1" --port 0 >"$tmp/go_address" 2>/dev/null &
    go_pid=$!
    for _ in $(seq 100); do [[ -s $tmp/go_address ]] && break; sleep 0.05; done
    go_address=$(head -n1 "$tmp/go_address")
    [[ -n $go_address ]] || { echo "the grpc-go server did not start" >&2; exit 3; }
}
