#!/usr/bin/env bash
# Runs each libFuzzer target built in build/fuzz (the fuzz preset) for SECONDS, one after the other:
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

failed=()
for target in "${targets[@]}"; do
    binary=$build/tests/fuzz/$target
    [[ -x $binary ]] || { echo "fuzz: $binary is not built (make fuzz-build)" >&2; exit 2; }
    work=$build/corpus/$target
    artifacts=$build/artifacts/$target/
    mkdir -p "$work" "$artifacts"
    options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
             -artifact_prefix="$artifacts")
    [[ -f tests/fuzz/$target.dict ]] && options+=(-dict="tests/fuzz/$target.dict")
    echo "== fuzz: $target for ${seconds}s"
    log=$build/$target.log
    if ! "$binary" "${options[@]}" "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz: $target failed; full log $log; replay: $binary $(ls -t "$artifacts" | head -1 | sed "s|^|$artifacts|")" >&2
        failed+=("$target")
        continue
    fi
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' '
    echo
done
if ((${#failed[@]})); then
    echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without a finding"
