#!/usr/bin/env bash
# Runs each libFuzzer target built in build/fuzz (the fuzz preset) for SECONDS, FUZZ_JOBS at a time (default: the
# number of CPUs; each fuzzer is one process on one CPU, so two CPUs fuzz two targets in the time of one):
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      (`make fuzz` runs it with FUZZ_SECONDS; every target by default)
# Each starts from its checked-in seeds and regression inputs (tests/fuzz/corpus/TARGET, read only) plus what earlier
# runs here found (build/fuzz/corpus/TARGET, not checked in). A crash, hang, leak or sanitizer report stops that
# target and fails the script; the input is kept in build/fuzz/artifacts/ and the command to replay it is printed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds=${1:-30}
shift || true
build=${FUZZ_BUILD_DIR:-build/fuzz}
targets=("$@")
if ((${#targets[@]} == 0)); then
    for source in tests/fuzz/fuzz_*.cpp; do
        targets+=("$(basename "$source" .cpp)")
    done
fi

jobs=${FUZZ_JOBS:-$(nproc)}
((jobs >= 1)) || jobs=1
for target in "${targets[@]}"; do
    binary=$build/tests/fuzz/$target
    [[ -x $binary ]] || { echo "fuzz: $binary is not built (make fuzz-build)" >&2; exit 2; }
done

# One target: its summary line, or the end of its log and the replay command; the exit status says which.
fuzz_one() {
    local target=$1 binary=$build/tests/fuzz/$1
    local work=$build/corpus/$target artifacts=$build/artifacts/$target/ log=$build/$target.log
    mkdir -p "$work" "$artifacts"
    local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
                   -artifact_prefix="$artifacts")
    [[ -f tests/fuzz/$target.dict ]] && options+=(-dict="tests/fuzz/$target.dict")
    if ! "$binary" "${options[@]}" "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz: $target failed; full log $log; replay: $binary $(ls -t "$artifacts" | head -1 | sed "s|^|$artifacts|")" >&2
        return 1
    fi
    echo "== fuzz: $target ran ${seconds}s: $(grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' ')"
}

# Each target's output goes to its own file and is printed whole when it ends, so parallel runs do not interleave.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A pids=()
failed=()
# Waits for the next target to end (bash 5.1's wait -n -p names it) and prints its output.
collect_next() {
    local pid status=0
    wait -n -p pid || status=$?
    local target=${pids[$pid]}
    cat "$out/$target"
    ((status == 0)) || failed+=("$target")
    unset "pids[$pid]"
}
echo "fuzz: ${#targets[@]} target(s), ${seconds}s each, $jobs at a time"
for target in "${targets[@]}"; do
    while ((${#pids[@]} >= jobs)); do
        collect_next
    done
    fuzz_one "$target" >"$out/$target" 2>&1 &
    pids[$!]=$target
done
while ((${#pids[@]})); do
    collect_next
done
if ((${#failed[@]})); then
    echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without a finding"
