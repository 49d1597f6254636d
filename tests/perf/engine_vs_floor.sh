#!/usr/bin/env bash
# Benchmark (a command, not a test): rpcscope-cli against floor_client, the least a C++ gRPC client does to call
# Bench/Echo (tests/perf/floor_client.cpp: generic stub, completion queue, hand-written request bytes, reply not
# decoded), on the built-in server (1 thread). Prints one table of ratios with the targets they are held to:
#
#   (2) c=1 sequential trivial Echo: p50 and p99, rpcscope-cli vs floor          target p50 within 5%
#   (3) c=1 10 MiB request, empty reply: p50, rpcscope-cli vs floor              target within 10%
#   (4) client CPU per call on a 1 MiB reply, decoded vs --discard-response      target discard >= 2x less
#       (4) on Echo's bytes reply, (4b) on List's structured reply of the same size
#   (5) client peak RSS after a short and after a long run                       target growth < 16 MiB
#
# Latency items alternate the two clients for ROUNDS rounds and compare the medians of the rounds. A MISS is
# reported, not failed: the exit status is 0 whenever everything could be measured, 1 when something could not
# (a run with failed calls, a number missing from the output), 2 when the build is missing, 3 when the server
# does not start.
#
#   tests/perf/engine_vs_floor.sh [BUILD_DIR]
#
# Knobs (environment): ROUNDS (5), SEQ_CALLS (20000), SEQ_WARMUP (1000), BIG_CALLS (50), BIG_WARMUP (5),
# CPU_CALLS (2000), RSS_SHORT (100000), RSS_LONG (2000000), RSS_C (50: callers in the RSS runs),
# RSS_LONG_LIMIT (150s: the long RSS run stops there and the calls it reached are reported).
set -euo pipefail
build=${1:-build/dev}
rounds=${ROUNDS:-5}
seq_calls=${SEQ_CALLS:-20000} seq_warmup=${SEQ_WARMUP:-1000}
big_calls=${BIG_CALLS:-50} big_warmup=${BIG_WARMUP:-5}
cpu_calls=${CPU_CALLS:-2000}
rss_short=${RSS_SHORT:-100000} rss_long=${RSS_LONG:-2000000} rss_c=${RSS_C:-50} rss_limit=${RSS_LONG_LIMIT:-150s}

cli=$build/app/rpcscope-cli
floor=$build/tests/perf/floor_client
[[ -x $cli ]] || { echo "no $cli: run 'make build' first" >&2; exit 2; }
[[ -x $floor ]] || { echo "no $floor: build the floor_client target first" >&2; exit 2; }
proto=$(dirname "$0")/../../proto/rpcscope/bench/v1/bench.proto
[[ -f $proto ]] || { echo "no $proto" >&2; exit 2; }
method=rpcscope.bench.v1.Bench/Echo

# shellcheck source=server.sh
source "$(dirname "$0")/server.sh"

unmeasured=0
touch "$tmp"/{c2p50,c2p99,f2p50,f2p99,c3p50,f3p50} # one figure per round
fail() { echo "engine_vs_floor: $*" >&2; unmeasured=1; }
progress() { echo "... $*" >&2; }

# --- Reading the two clients' outputs --------------------------------------------------------------------

# shellcheck source=cli_report.sh
source "$(dirname "$0")/cli_report.sh" # cli_percentile, cli_cpu_per_call
# "  Client CPU:\t72.3 us/call (1.23 s in all), peak RSS 29.9 MiB": the RSS in bytes.
cli_peak_rss() {
    awk '/^ *Client CPU:/ {
        for (i = 1; i < NF; ++i) if ($i == "RSS") {
            u = $(i + 2); s = u == "B" ? 1 : u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : -1
            if (s > 0) { printf "%.0f\n", $(i + 1) * s; exit }
        }
    }' "$1"
}
cli_count() { awk -F'\t' '$1 ~ /^ *Count:$/ { print $2; exit }' "$1"; }
cli_ok() { awk -F'\t' '$1 ~ /^ *\[OK\]$/ { split($2, f, " "); print f[1]; exit }' "$1"; }
cli_received() { # "  Bytes/call:\t7 B sent, 7 B received" -> bytes received per call
    awk -F'\t' '$1 ~ /^ *Bytes\/call:$/ { n = split($2, f, " ")
        u = f[n - 1]; s = u == "B" ? 1 : u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : -1
        if (s > 0) printf "%.0f\n", f[n - 2] * s; exit }' "$1"
}
floor_value() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; } # FILE KEY

# Runs rpcscope-cli against the server; output in FILE. Checks that every timed call ended OK.
run_cli() { # FILE ARGS...
    local out=$1
    shift
    if ! "${pin_client[@]}" "$cli" run --proto "$proto" --call "${call_method:-$method}" "$@" "$address" >"$out" 2>&1; then
        fail "rpcscope-cli $* failed: $(tail -n 3 "$out")"
        return 1
    fi
    local count ok
    count=$(cli_count "$out") ok=$(cli_ok "$out")
    if [[ -z $count || ${ok:-0} != "$count" ]]; then
        fail "rpcscope-cli $*: ${ok:-0} of ${count:-?} calls OK"
        return 1
    fi
}
# Runs floor_client against the server; output in FILE. Checks that every timed call ended OK.
run_floor() { # FILE ARGS...
    local out=$1
    shift
    if ! "${pin_client[@]}" "$floor" "$address" "$@" >"$out" 2>&1; then
        fail "floor_client $* failed: $(tail -n 3 "$out")"
        return 1
    fi
    local errors
    errors=$(floor_value "$out" errors)
    if [[ $errors != 0 ]]; then
        fail "floor_client $*: $errors calls not OK ($(floor_value "$out" first_error))"
        return 1
    fi
}

ratios() { # A_FILE B_FILE: the per-round ratios a/b, "1.02 0.99 ..."
    paste "$1" "$2" | awk '$2 > 0 { printf "%s%.3f", (n++ ? " " : ""), $1 / $2 } END { print "" }'
}
# shellcheck source=table.sh
source "$(dirname "$0")/table.sh"

# Other work on the machine shows up as latency tails, so the CPU time others used meanwhile is reported: all
# busy time (/proc/stat) minus this script's clients (waited-for children, `times`) and the server's.
clk_tck=$(getconf CLK_TCK)
busy_seconds() {
    awk -v hz="$clk_tck" '$1 == "cpu" { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}
# `times` must run in this shell, not in a subshell (whose children are not this shell's): FILE gets its output.
children_seconds() { awk 'NR == 2 { gsub(/[ms]/, " "); printf "%.2f\n", $1 * 60 + $2 + $3 * 60 + $4 }' "$1"; }
server_seconds() {
    awk -v hz="$clk_tck" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$server_pid/stat"
}
times >"$tmp/times_start"
busy_start=$(busy_seconds) server_start=$(server_seconds)
wall_start=$SECONDS

# Warm both paths once (connection set-up, page faults, the server's allocator) before measuring anything.
progress "warming up"
run_floor "$tmp/warm" --payload 5 -n 2000 || true
run_cli "$tmp/warm" -d '{"payload":"aGVsbG8="}' -c 1 -n 2000 || true

# (2) c=1 sequential trivial Echo, payload "hello" (5 bytes): p50 and p99.
for ((r = 1; r <= rounds; ++r)); do
    progress "(2) trivial Echo c=1, round $r/$rounds: $seq_calls calls after $seq_warmup warm-up, each client"
    if run_floor "$tmp/floor2" --payload 5 -n "$seq_calls" --warmup "$seq_warmup"; then
        floor_value "$tmp/floor2" p50_us >>"$tmp/f2p50"
        floor_value "$tmp/floor2" p99_us >>"$tmp/f2p99"
    fi
    if run_cli "$tmp/cli2" -d '{"payload":"aGVsbG8="}' -c 1 -n "$seq_calls" --warmup "$seq_warmup"; then
        cli_percentile "$tmp/cli2" 50 >>"$tmp/c2p50"
        cli_percentile "$tmp/cli2" 99 >>"$tmp/c2p99"
    fi
done
ratio_row "(2) Echo 5 B, c=1: p50" "$(median <"$tmp/c2p50")" "$(median <"$tmp/f2p50")" us \
    le 1.05 "ratio <= 1.05"
ratio_row "(2) Echo 5 B, c=1: p99" "$(median <"$tmp/c2p99")" "$(median <"$tmp/f2p99")" us \
    info 0 "(none)"

# (3) c=1, a 10 MiB request answered with an empty reply (response_size 0): p50.
for ((r = 1; r <= rounds; ++r)); do
    progress "(3) 10 MiB request c=1, round $r/$rounds: $big_calls calls after $big_warmup warm-up, each client"
    if run_floor "$tmp/floor3" --payload 10MiB --response-size 0 -n "$big_calls" --warmup "$big_warmup"; then
        floor_value "$tmp/floor3" p50_us >>"$tmp/f3p50"
    fi
    if run_cli "$tmp/cli3" --fill payload=10MiB -d '{"responseSize":0}' -c 1 -n "$big_calls" \
        --warmup "$big_warmup"; then
        cli_percentile "$tmp/cli3" 50 >>"$tmp/c3p50"
    fi
done
ratio_row "(3) Echo 10 MiB in, 0 B out, c=1: p50" "$(median <"$tmp/c3p50")" \
    "$(median <"$tmp/f3p50")" us le 1.10 "ratio <= 1.10"

# (4) Client CPU per call on a 1 MiB reply: decoded (the default) vs --discard-response; the floor (which never
# decodes) for reference.
progress "(4) 1 MiB reply c=1: $cpu_calls calls decoded, discarded, and by the floor"
cpu_decode='' cpu_discard='' cpu_floor=''
reply_args=(-d '{"responseSize":1048576}' --max-recv-size 4MiB -c 1 -n "$cpu_calls" --warmup 100)
if run_cli "$tmp/cli4d" "${reply_args[@]}"; then
    cpu_decode=$(cli_cpu_per_call "$tmp/cli4d")
    received=$(cli_received "$tmp/cli4d")
    # The report rounds to 0.1 MiB; a reply far from 1 MiB means the request was not understood.
    ((${received:-0} > 1000000 && ${received:-0} < 1100000)) || fail "(4) replies are ${received:-?} B, not 1 MiB"
fi
run_cli "$tmp/cli4x" "${reply_args[@]}" --discard-response && cpu_discard=$(cli_cpu_per_call "$tmp/cli4x")
if run_floor "$tmp/floor4" --payload 0 --response-size 1MiB --max-recv-size 4MiB -n "$cpu_calls" --warmup 100; then
    cpu_floor=$(floor_value "$tmp/floor4" cpu_us_per_call)
    # EchoResponse{payload: 1 MiB}: tag, 3-byte length, the bytes.
    [[ $(floor_value "$tmp/floor4" reply_bytes) == 1048580 ]] ||
        fail "(4) the floor's replies are $(floor_value "$tmp/floor4" reply_bytes) B, not 1048580"
fi
# rpcscope figure: decoded; peer figure: discarded.
ratio_row "(4) CPU/call, 1 MiB reply: decoded / discarded" "$cpu_decode" "$cpu_discard" us/call ge 2 "ratio >= 2"
ratio_row "(4) CPU/call, 1 MiB reply: discarded / floor" "$cpu_discard" "$cpu_floor" us/call info 0 "(none)"
# (4b) The same on a 1 MiB reply that is structured (Bench/List: 42,000 small messages) rather than one bytes
# field: decoding a bytes field is one copy, decoding many messages is the client CPU that --discard-response is
# for (the case that made k6 add discardResponseMessage).
progress "(4b) 1 MiB structured reply c=1: decoded and discarded"
cpu_decode_s='' cpu_discard_s=''
list_args=(-d '{"count":42000,"nameSize":8}' --max-recv-size 4MiB -c 1 -n $((cpu_calls / 10 + 1)) --warmup 10)
call_method=rpcscope.bench.v1.Bench/List run_cli "$tmp/cli4sd" "${list_args[@]}" && cpu_decode_s=$(cli_cpu_per_call "$tmp/cli4sd")
call_method=rpcscope.bench.v1.Bench/List run_cli "$tmp/cli4sx" "${list_args[@]}" --discard-response &&
    cpu_discard_s=$(cli_cpu_per_call "$tmp/cli4sx")
ratio_row "(4b) CPU/call, 1 MiB List reply: decoded / discarded" "$cpu_decode_s" "$cpu_discard_s" us/call ge 2 "ratio >= 2"

# (5) Client peak RSS after a short and a long run (trivial Echo). The long run is bounded by a duration too, so
# it cannot take the whole afternoon on a slow machine; the calls it reached are reported.
progress "(5) RSS: $rss_short calls, then $rss_long calls (at most $rss_limit), c=$rss_c"
rss_a='' rss_b='' calls_a='' calls_b=''
if run_cli "$tmp/cli5a" -d '{"payload":"aGVsbG8="}' -c "$rss_c" -n "$rss_short"; then
    rss_a=$(cli_peak_rss "$tmp/cli5a") calls_a=$(cli_count "$tmp/cli5a")
fi
if run_cli "$tmp/cli5b" -d '{"payload":"aGVsbG8="}' -c "$rss_c" -n "$rss_long" -z "$rss_limit"; then
    rss_b=$(cli_peak_rss "$tmp/cli5b") calls_b=$(cli_count "$tmp/cli5b")
fi
if [[ -n $rss_a && -n $rss_b ]]; then
    growth=$(awk -v a="$rss_a" -v b="$rss_b" 'BEGIN { printf "%.1f", (b - a) / 1048576 }')
    verdict=$(awk -v g="$growth" 'BEGIN { print (g < 16 ? "PASS" : "MISS") }')
    row "(5) peak RSS after $calls_b vs $calls_a calls" \
        "$(awk -v b="$rss_b" 'BEGIN { printf "%.1f MiB", b / 1048576 }')" \
        "$(awk -v a="$rss_a" 'BEGIN { printf "%.1f MiB", a / 1048576 }')" \
        "+$growth MiB" "growth < 16 MiB" "$verdict"
else
    row "(5) peak RSS, long vs short run" "${rss_b:-n/a}" "${rss_a:-n/a}" "n/a" "growth < 16 MiB" "UNMEASURED"
    unmeasured=1
fi

# --- Output ----------------------------------------------------------------------------------------------

echo
pinning=", nothing pinned (one core)"
((${#pin_client[@]})) && pinning=", server on core 1, clients on core 0"
echo "rpcscope-cli vs floor_client, built-in server (1 thread) at $address$pinning"
echo "latency rows: median of $rounds alternating rounds per client; (2) $seq_calls calls after $seq_warmup warm-up," \
    "(3) $big_calls calls after $big_warmup warm-up; (4) $cpu_calls calls; (5) c=$rss_c"
times >"$tmp/times_end"
other=$(awk -v b="$(busy_seconds)" -v b0="$busy_start" \
    -v c="$(children_seconds "$tmp/times_end")" -v c0="$(children_seconds "$tmp/times_start")" \
    -v s="$(server_seconds)" -v s0="$server_start" -v w=$((SECONDS - wall_start)) 'BEGIN {
    o = (b - b0) - (c - c0) - (s - s0); if (o < 0) o = 0
    printf "%.1f CPU-s in %d s (%.0f%% of one core)", o, w, (w > 0 ? 100 * o / w : 0) }')
echo "other processes used $other meanwhile; more than a few % makes the latency rows noisy"
echo "per-round p50 ratios: (2) $(ratios "$tmp/c2p50" "$tmp/f2p50"); (3) $(ratios "$tmp/c3p50" "$tmp/f3p50")"
if [[ -n $calls_b && $calls_b != "$rss_long" ]]; then
    echo "note: the long RSS run was stopped by its $rss_limit limit after $calls_b of $rss_long calls"
fi
print_table floor/peer
exit "$unmeasured"
