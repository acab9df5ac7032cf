#!/usr/bin/env bash
# Added cost per intercepted call: N one-byte pwrite() calls to /dev/shm, untraced and
# traced (LD_PRELOAD of the release libcairn.so), alternating, R rounds; prints the medians
# of ns/call, the added ns/call and the ratio. Collection time (cairn merge) is separate.
# Mode `same` writes at one offset (the tracer folds the calls into one run record as they
# happen); `scattered` writes at offsets it cannot fold (every call is a staged record).
#
# Usage: bench/pwrite_overhead.sh [calls=2000000] [rounds=7] [same|scattered]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-2000000}
rounds=${2:-7}
mode=${3:-same}
cargo build --release --workspace --quiet
work=$(mktemp -d /dev/shm/cairn-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/pwrite_loop" bench/pwrite_loop.c
library=$(target/release/cairn lib)
untraced=()
traced=()
for round in $(seq "$rounds"); do
    untraced+=("$("$work/pwrite_loop" "$work/target" "$calls" "$mode")")
    rm -rf "$work/staging"
    traced+=("$(CAIRN_DIR="$work/staging" LD_PRELOAD="$library" "$work/pwrite_loop" "$work/target" "$calls" "$mode")")
done
start=$(date +%s.%N)
target/release/cairn merge "$work/staging" -o "$work/trace.cairn" 2>/dev/null
end=$(date +%s.%N)
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1; }
base=$(median "${untraced[@]}")
with=$(median "${traced[@]}")
base_min=$(minimum "${untraced[@]}")
with_min=$(minimum "${traced[@]}")
echo "calls per run:            $calls ($rounds rounds, alternating, offsets: $mode)"
echo "staged by one traced run: $(du -sb "$work/staging" | cut -f1) bytes"
echo "untraced ns/call (median): $base   [${untraced[*]}]"
echo "traced ns/call (median):   $with   [${traced[*]}]"
awk -v a="$base" -v b="$with" 'BEGIN { printf "added ns/call:             %.1f\nratio traced/untraced:     %.3f\n", b - a, b / a }'
# The machine's noise only ever adds time: the fastest rounds show the cost most cleanly.
awk -v a="$base_min" -v b="$with_min" 'BEGIN { printf "fastest rounds: untraced %.2f, traced %.2f, added %.1f ns/call\n", a, b, b - a }'
awk -v s="$start" -v e="$end" -v n="$calls" 'BEGIN { printf "collect (cairn merge) of one run: %.2f s (%.0f ns/event)\n", e - s, (e - s) * 1e9 / n }'
echo "trace size of one run: $(stat -c %s "$work/trace.cairn") bytes"
