# Sourced by the benchmarks in tests/perf: figures read off rpcscope-cli's text report.

# "  50 % in 202 us" (ns/us/ms/s) as microseconds.
cli_percentile() { # FILE P
    awk -v p="$2" '$1 == p && $2 == "%" && $3 == "in" {
        scale = $5 == "ns" ? 1e-3 : $5 == "us" ? 1 : $5 == "ms" ? 1e3 : $5 == "s" ? 1e6 : -1
        if (scale > 0) { printf "%.3f\n", $4 * scale; exit }
    }' "$1"
}
# "  Client CPU:\t72.3 us/call (1.23 s in all), peak RSS 29.9 MiB": the us/call.
cli_cpu_per_call() { awk -F'\t' '$1 ~ /^ *Client CPU:$/ { split($2, f, " "); print f[1]; exit }' "$1"; }
