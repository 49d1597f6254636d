#!/usr/bin/env bash
# How well `ab --profile` names where B's extra CPU goes, how rarely it blames a function in A/A, and what profiling
# costs the run it watches.
#
#   tests/perf/profile_calibration.sh [BUILD_DIR] [K]      (defaults: build/dev, 20)
#
# Rows, each K times (Echo of 2 bytes, c=1, 8000 calls a side, ab's default blocks and server restarts):
#   burn   A/B: B's built-in server burns 40 us of CPU per call in rpcscope::burnCpu: the first change named must be
#          burnCpu, at 40 us per call +-25%                                    (target: >= 19 of 20)
#   aa     A/A: the same built-in server both sides: no function reported as changed (target: >= 19 of 20)
#   cost   the p50 of `run` with --profile against without, K pairs interleaved, which first alternating (10000
#          calls each, c=1): the ratio
#          of their medians, and the profiler's own CPU per run                  (target: p50 within 2%)
#   costaa the same pairs with neither profiled: how far the ratio moves by itself (the cost row's own noise)
# ROWS="burn aa" runs only those rows (default: burn aa cost; costaa only when asked). Every load is on 127.0.0.1 and bounded by its call count.
set -euo pipefail
build=${1:-build/dev}
k=${2:-20}
rows=${ROWS:-"burn aa cost"}
wanted() { [[ " $rows " == *" $1 "* ]]; }
cli=$(cd "$build" && pwd)/app/rpcscope-cli
[[ -x $cli ]] || { echo "profile_calibration: no $cli (build first)" >&2; exit 2; }
command -v perf > /dev/null || { echo "profile_calibration: perf is not installed (linux-perf)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo_call=(--call rpcscope.bench.v1.Bench/Echo)

# The rows of "Where B's server time went": "A B B-A interval self function".
changes() { awk '/^Where B.s server time went/ { on = 1; skip = 2; next } on && skip > 0 { skip--; next }
                 on && /^  / { print; next } on { exit }' "$1"; }

if wanted burn; then
    named=0
    for i in $(seq "$k"); do
        out=$work/burn$i.txt
        "$cli" ab --a builtin --b builtin --b-env RPCSCOPE_SERVE_BURN=40us "${echo_call[@]}" -n 8000 -c 1 --profile \
            > "$out" 2>&1 || true
        first=$(changes "$out" | head -1)
        change=$(awk '{ print $3 }' <<< "$first")
        if [[ $first == *rpcscope::burnCpu ]] && awk -v c="$change" 'BEGIN { exit !(c >= 30 && c <= 50) }'; then
            named=$((named + 1))
        else
            echo "burn run $i: first change: ${first:-none}" >&2
        fi
        echo "burn run $i: ${first:-no change named}" >&2
    done
    echo "burn: burnCpu named first at 40 us per call +-25% in $named of $k runs (target: 95%)"
fi

if wanted aa; then
    clean=0
    for i in $(seq "$k"); do
        out=$work/aa$i.txt
        "$cli" ab --a builtin --b builtin --b-env RPCSCOPE_AA_SIDE=b "${echo_call[@]}" -n 8000 -c 1 --profile \
            > "$out" 2>&1 || true
        if grep -q "no function changed beyond noise" "$out"; then
            clean=$((clean + 1))
        else
            echo "aa run $i: $(changes "$out" | head -3 | tr -s ' ' | paste -sd'|')" >&2
        fi
    done
    echo "aa: no function reported as changed in $clean of $k A/A runs (target: 95%)"
fi

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
p50() { awk '/^  50 % in/ { v = $4; u = $5; if (u == "ms") v *= 1000; if (u == "ns") v /= 1000; print v; exit }' "$1"; }

if wanted cost; then
    plain=()
    profiled=()
    cpu=()
    for i in $(seq "$k"); do
        # Which of a pair goes first alternates: the second run of a pair was 1% faster by itself (costaa).
        if ((i % 2)); then
            "$cli" run builtin "${echo_call[@]}" -n 10000 -c 1 > "$work/plain$i.txt" 2>&1
            "$cli" run builtin "${echo_call[@]}" -n 10000 -c 1 --profile > "$work/prof$i.txt" 2>&1
        else
            "$cli" run builtin "${echo_call[@]}" -n 10000 -c 1 --profile > "$work/prof$i.txt" 2>&1
            "$cli" run builtin "${echo_call[@]}" -n 10000 -c 1 > "$work/plain$i.txt" 2>&1
        fi
        plain+=("$(p50 "$work/plain$i.txt")")
        profiled+=("$(p50 "$work/prof$i.txt")")
        cpu+=("$(sed -n 's/.*profiler.s own CPU \([0-9.]*\) s.*/\1/p' "$work/prof$i.txt" | head -1)")
    done
    mp=$(median "${plain[@]}")
    mq=$(median "${profiled[@]}")
    mc=$(median "${cpu[@]}")
    awk -v p="$mp" -v q="$mq" -v c="$mc" -v k="$k" 'BEGIN {
        printf "cost: p50 %.1f us without --profile, %.1f us with (ratio %.3f, median of %d runs each); profiler CPU %.2f s per run\n", p, q, q / p, k, c }'
fi

if wanted costaa; then
    first=()
    second=()
    for i in $(seq "$k"); do
        "$cli" run builtin "${echo_call[@]}" -n 10000 -c 1 > "$work/first$i.txt" 2>&1
        "$cli" run builtin "${echo_call[@]}" -n 10000 -c 1 > "$work/second$i.txt" 2>&1
        first+=("$(p50 "$work/first$i.txt")")
        second+=("$(p50 "$work/second$i.txt")")
    done
    awk -v p="$(median "${first[@]}")" -v q="$(median "${second[@]}")" -v k="$k" 'BEGIN {
        printf "costaa: p50 %.1f us and %.1f us, neither profiled (ratio %.3f, median of %d runs each)\n", p, q, q / p, k }'
fi
