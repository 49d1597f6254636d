#!/bin/sh
# rpcscope's client protocol for a client that cannot be changed: runs COMMAND once per call and times it, as
# hyperfine would (docs/client-protocol.md). A call is OK when COMMAND exits 0; {target} in COMMAND is the address.
# Calls run one at a time whatever the block's concurrency, and the time includes starting COMMAND.
#
#   rpcscope-cli ab --a builtin --b builtin \
#       --client "sh examples/clients/percall.sh 'grpcurl -plaintext {target} rpcscope.bench.v1.Bench/Echo'" ...
set -u
[ $# -eq 1 ] || { echo "usage: percall.sh 'COMMAND'" >&2; exit 2; }
target=${RPCSCOPE_TARGET:-}
command=$(printf '%s' "$1" | sed "s|{target}|$target|g")
now() { date +%s%N; }
printf '{"ready": true}\n'
number() { printf '%s' "$1" | sed -n "s/.*\"$2\": *\([0-9][0-9]*\).*/\1/p"; }
while IFS= read -r line; do
    [ -n "$line" ] || continue
    block=$(number "$line" block)
    calls=$(number "$line" calls)
    duration=$(number "$line" duration_ms)
    warmup=$(number "$line" warmup_calls)
    [ -n "$block" ] || { printf '{"fatal": "percall.sh: no block number in the line it was given"}\n'; exit 1; }
    i=0
    while [ "$i" -lt "${warmup:-0}" ]; do
        sh -c "$command" > /dev/null 2>&1
        i=$((i + 1))
    done
    end=0
    [ -n "$duration" ] && [ -z "$calls" ] && end=$(( $(now) + duration * 1000000 ))
    i=0
    while :; do
        if [ "$end" -gt 0 ]; then [ "$(now)" -lt "$end" ] || break; else [ "$i" -lt "${calls:-0}" ] || break; fi
        start=$(now)
        if sh -c "$command" > /dev/null 2>&1; then ok=true; else ok=false; fi
        printf '{"latency_ns": %s, "ok": %s}\n' "$(( $(now) - start ))" "$ok"
        i=$((i + 1))
    done
    printf '{"done": %s}\n' "$block"
done
