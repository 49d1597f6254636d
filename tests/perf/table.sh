# Sourced by the benchmarks in tests/perf: the table of figures, ratios and verdicts they print. Rows are
# collected with row/ratio_row and printed, aligned, by print_table; a missing figure sets $unmeasured to 1.
# $figure_decimals (default 1) is how many decimals the figures get.
rows=()
median() { # of the numbers on stdin, one a line; nothing when there are none
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
# ITEM FIGURE PEER_FIGURE RATIO TARGET VERDICT, tab-separated.
row() { rows+=("$(printf '%s\t%s\t%s\t%s\t%s\t%s' "$@")"); }
# A row with a ratio a/b held to "ratio <= limit" (OP le), ">= limit" (ge) or nothing (info); missing numbers make
# an n/a row.
ratio_row() { # ITEM A B UNIT OP LIMIT TARGET_TEXT
    local item=$1 a=$2 b=$3 unit=$4 op=$5 limit=$6 target=$7 format="%.${figure_decimals:-1}f %s"
    if [[ -z $a || -z $b ]]; then
        row "$item" "${a:-n/a}" "${b:-n/a}" "n/a" "$target" "UNMEASURED"
        unmeasured=1
        return
    fi
    local ratio verdict
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
    verdict=$(awk -v r="$ratio" -v op="$op" -v l="$limit" 'BEGIN {
        if (op == "info") print "info"; else if (op == "le" ? (r <= l) : (r >= l)) print "PASS"; else print "MISS" }')
    # shellcheck disable=SC2059 # the format is ours
    row "$item" "$(printf "$format" "$a" "$unit")" "$(printf "$format" "$b" "$unit")" "$ratio" "$target" "$verdict"
}
print_table() { # PEER_COLUMN_NAME: the rows under a header, columns aligned
    {
        printf 'item\trpcscope\t%s\tratio\ttarget\tverdict\n' "$1"
        printf '%s\n' "${rows[@]}"
    } | awk -F'\t' '{ for (i = 1; i <= NF; ++i) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NF }
        END { for (r = 1; r <= NR; ++r) { line = ""
                  for (i = 1; i <= n; ++i) line = line sprintf(i == 1 ? "%-" w[i] "s" : "  %" w[i] "s", cell[r, i])
                  print line } }'
}
