# Sourced by the bench scripts: medians, a clock, and what a trace and its staging hold.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
# The number of events in a trace.
trace_calls() { "$1" summary --json "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
# Bytes of the staging directories kept (`cairn run --keep-staging`) beside trace $1.
staged_bytes() { du -b -s "$(dirname "$1")"/."$(basename "$1")".staging-* | awk '{s += $1} END {print s}'; }
# The result line of a benchmark: NAME CAIRN TRACE "UNTRACED TIMES" "TRACED TIMES" — the
# trace's events, bytes and staging, and the medians of the times.
report_trace() {
    # shellcheck disable=SC2086
    report_line "$1" "$(trace_calls "$2" "$3")" "$(stat -c %s "$3")" "$(staged_bytes "$3")" \
        "$(median $4)" "$(median $5)"
}
# One result line: name calls trace-bytes staged untraced-median traced-median.
report_line() {
    awk -v n="$1" -v c="$2" -v b="$3" -v s="$4" -v u="$5" -v t="$6" \
        'BEGIN { printf "%-20s %9d %8d %10.4f %10d %10.4f %10.4f %7.3f\n", n, c, b, b / c, s, u, t, t / u }'
}
report_header() {
    printf '%-20s %9s %8s %10s %10s %10s %10s %7s\n' "$1" calls "trace B" "B/call" "staged B" "untraced s" "traced s" ratio
}
