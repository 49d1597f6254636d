#!/usr/bin/env bash
# Benchmark (a command, not a test): rpcscope-cli's streams against stream_floor, the least a C++ gRPC client
# does to read or write a stream (tests/perf/stream_floor.cpp: generic stub, completion queue, one operation at a
# time, hand-written request bytes, messages not decoded), on the built-in server (1 thread). Prints one table:
#
#   (1) server stream (Bench/Download), messages read per second and client CPU per message,
#       rpcscope-cli --discard-response vs floor                                 target rate >= 0.90, CPU <= 1.25x
#   (1d) the same, rpcscope-cli decoding every message                           (info: what decoding costs)
#   (2) client stream (Bench/Upload), messages written per second and CPU per message   same targets as (1)
#   (1h), (2h) the same over --transport h2grpc (rpcscope's own HTTP/2 client) against --transport grpc's figures
#       (not the floor's)                                                        target rate >= 1.0, CPU <= 1.0
#   (1g) (1h) from the grpc-go peer (tests/peers/grpcgo_server, when built), which batches a stream's messages into
#       few writes where the built-in server writes each one: the server less the limit, the client more
#                                                                                target rate >= 1.0, CPU <= 1.0
#
# Rounds alternate the two clients; each figure is the median of the rounds. A MISS is reported, not failed: the
# exit status is 0 whenever everything could be measured, 1 when something could not, 2 when the build is missing,
# 3 when the server does not start.
#
#   tests/perf/stream_vs_floor.sh [BUILD_DIR]
#
# Knobs (environment): ROUNDS (5), MESSAGES (100000 per stream), SIZE (64 bytes per message), STREAMS (3 per run).
set -euo pipefail
build=${1:-build/dev}
rounds=${ROUNDS:-5}
messages=${MESSAGES:-100000}
size=${SIZE:-64}
streams=${STREAMS:-3}

cli=$build/app/rpcscope-cli
floor=$build/tests/perf/stream_floor
go_server=$build/tests/peers/grpcgo_server
proto=$(dirname "$0")/../../proto/rpcscope/bench/v1/bench.proto # the grpc-go peer has no reflection
[[ -x $cli ]] || { echo "no $cli: run 'make build' first" >&2; exit 2; }
[[ -x $floor ]] || { echo "no $floor: build the stream_floor target first" >&2; exit 2; }

# shellcheck source=server.sh
source "$(dirname "$0")/server.sh"
figure_decimals=2
# shellcheck source=table.sh
source "$(dirname "$0")/table.sh"

unmeasured=0
fail() { echo "stream_vs_floor: $*" >&2; unmeasured=1; }
progress() { echo "... $*" >&2; }

# rpcscope-cli's report: "Total:\t634 ms", "Client CPU:\t72.3 us/call", "Messages:\t3 sent, 300000 received (...)".
cli_total_s() {
    awk -F'\t' '$1 ~ /^ *Total:$/ { split($2, f, " ")
        s = f[2] == "ns" ? 1e-9 : f[2] == "us" ? 1e-6 : f[2] == "ms" ? 1e-3 : f[2] == "s" ? 1 : -1
        if (s > 0) printf "%.6f\n", f[1] * s; exit }' "$1"
}
# shellcheck source=cli_report.sh
source "$(dirname "$0")/cli_report.sh" # cli_cpu_per_call
cli_messages() { # FILE sent|received
    awk -F'\t' -v which="$2" '$1 ~ /^ *Messages:$/ { split($2, f, " ")
        print (which == "sent" ? f[1] : f[3]); exit }' "$1"
}
floor_value() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }

# One rpcscope-cli run of STREAMS streams, one at a time: "messages_per_s cpu_us_per_message" on stdout.
run_cli() { # KIND(download|upload) EXTRA_ARGS... (the server: $at, else the built-in one)
    local kind=$1 out=$tmp/cli.out
    shift
    local args=(--proto "$proto" --call "rpcscope.bench.v1.Bench/Download" -d "{\"count\":$messages,\"size\":$size}")
    [[ $kind == upload ]] && args=(--proto "$proto" --call "rpcscope.bench.v1.Bench/Upload" --fill "payload=$size" --stream-call-count "$messages")
    if ! "${pin_client[@]}" "$cli" run "${args[@]}" -n "$streams" -c 1 "$@" "${at:-$address}" >"$out" 2>&1; then
        fail "rpcscope-cli $kind failed: $(tail -n 3 "$out")"
        return
    fi
    local moved total cpu
    moved=$(cli_messages "$out" "$([[ $kind == upload ]] && echo sent || echo received)")
    total=$(cli_total_s "$out") cpu=$(cli_cpu_per_call "$out")
    if [[ $moved != $((messages * streams)) || -z $total || -z $cpu ]] || ! grep -q "\[OK\]	$streams responses" "$out"; then
        fail "rpcscope-cli $kind: ${moved:-?} of $((messages * streams)) messages, or calls not OK: $(grep -E 'Messages|\[' "$out" | head -n 3)"
        return
    fi
    awk -v m="$moved" -v t="$total" -v c="$cpu" -v per="$messages" 'BEGIN { printf "%.1f %.3f\n", m / t, c / per }'
}

run_floor() { # KIND
    local out=$tmp/floor.out
    if ! "${pin_client[@]}" "$floor" "$address" "$1" --messages "$messages" --size "$size" --streams "$streams" >"$out" 2>&1; then
        fail "stream_floor $1 failed: $(tail -n 3 "$out")"
        return
    fi
    if [[ $(floor_value "$out" errors) != 0 || $(floor_value "$out" messages) != $((messages * streams)) ]]; then
        fail "stream_floor $1: $(floor_value "$out" messages) messages, $(floor_value "$out" errors) errors ($(floor_value "$out" first_error))"
        return
    fi
    echo "$(floor_value "$out" messages_per_s) $(floor_value "$out" cpu_us_per_message)"
}

# Warm-up: the server's and the clients' first faults.
run_floor download >/dev/null
run_cli download --discard-response >/dev/null

start_go_server "$go_server"
if [[ -n $go_address ]]; then
    at=$go_address run_cli download --discard-response >/dev/null
else
    echo "no $go_server (Go missing: make setup, then build): rows (1g) are left out" >&2
fi

for ((r = 1; r <= rounds; ++r)); do
    progress "round $r of $rounds"
    for item in download upload decoded download_h2 upload_h2 gdownload gdownload_h2; do
        kind=${item%_h2} extra=(--discard-response) at=
        [[ $item == decoded ]] && kind=download extra=()
        [[ $item == upload* ]] && extra=()
        [[ $item == *_h2 ]] && extra+=(--transport h2grpc)
        if [[ $item == g* ]]; then
            [[ -n $go_address ]] || continue
            kind=download at=$go_address
        fi
        own=$([[ $item == decoded || $item == *_h2 || $item == g* ]] && echo 1 || true) # no floor run for it
        if ((r % 2)); then
            c=$(run_cli "$kind" "${extra[@]}") f=$([[ -n $own ]] || run_floor "$kind")
        else
            f=$([[ -n $own ]] || run_floor "$kind") c=$(run_cli "$kind" "${extra[@]}")
        fi
        [[ -n $c ]] && echo "$c" >>"$tmp/cli.$item"
        [[ -n $f ]] && echo "$f" >>"$tmp/floor.$item"
    done
done

figure() { # FILE COLUMN: the median of the rounds
    [[ -s $1 ]] && awk -v c="$2" '{ print $c }' "$1" | median
}
for item in download upload; do
    label=$([[ $item == download ]] && echo "(1) server stream" || echo "(2) client stream")
    ratio_row "$label: messages/s" "$(figure "$tmp/cli.$item" 1)" "$(figure "$tmp/floor.$item" 1)" "/s" ge 0.90 ">= 0.90"
    ratio_row "$label: CPU/message" "$(figure "$tmp/cli.$item" 2)" "$(figure "$tmp/floor.$item" 2)" "us" le 1.25 "<= 1.25"
    if [[ $item == download ]]; then
        ratio_row "(1d) decoding: messages/s" "$(figure "$tmp/cli.decoded" 1)" "$(figure "$tmp/floor.download" 1)" "/s" info 0 "info"
        ratio_row "(1d) decoding: CPU/message" "$(figure "$tmp/cli.decoded" 2)" "$(figure "$tmp/floor.download" 2)" "us" info 0 "info"
    fi
done
for item in download upload; do
    label=$([[ $item == download ]] && echo "(1h) server stream, h2grpc/grpc" || echo "(2h) client stream, h2grpc/grpc")
    ratio_row "$label: messages/s" "$(figure "$tmp/cli.${item}_h2" 1)" "$(figure "$tmp/cli.$item" 1)" "/s" ge 1.0 ">= 1.0"
    ratio_row "$label: CPU/message" "$(figure "$tmp/cli.${item}_h2" 2)" "$(figure "$tmp/cli.$item" 2)" "us" le 1.0 "<= 1.0"
done

if [[ -n $go_address ]]; then
    ratio_row "(1g) grpc-go server stream, h2grpc/grpc: messages/s" "$(figure "$tmp/cli.gdownload_h2" 1)" \
        "$(figure "$tmp/cli.gdownload" 1)" "/s" ge 1.0 ">= 1.0"
    ratio_row "(1g) grpc-go server stream, h2grpc/grpc: CPU/message" "$(figure "$tmp/cli.gdownload_h2" 2)" \
        "$(figure "$tmp/cli.gdownload" 2)" "us" le 1.0 "<= 1.0"
fi

echo
pinning=", nothing pinned (one core)"
((${#pin_client[@]})) && pinning=", server on core 1, clients on core 0"
echo "rpcscope-cli vs stream_floor, built-in server (1 thread) at $address$pinning"
echo "$streams streams of $messages messages of $size bytes per run, one stream at a time; median of $rounds alternating rounds"
print_table floor
exit "$unmeasured"
