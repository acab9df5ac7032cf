#!/usr/bin/env bash
# Added cost per intercepted call: N one-byte pwrite() calls to /dev/shm, untraced and
# traced (LD_PRELOAD of the release libcairn.so), alternating, R rounds; prints the medians
# of ns/call, the added ns/call and the ratio. Collection time (cairn merge) is separate.
#
# Usage: bench/pwrite_overhead.sh [calls=2000000] [rounds=7]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-2000000}
rounds=${2:-7}
cargo build --release --workspace --quiet
work=$(mktemp -d /dev/shm/cairn-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/pwrite_loop" bench/pwrite_loop.c
library=$(target/release/cairn lib)
untraced=()
traced=()
for round in $(seq "$rounds"); do
    untraced+=("$("$work/pwrite_loop" "$work/target" "$calls")")
    rm -rf "$work/staging"
    traced+=("$(CAIRN_DIR="$work/staging" LD_PRELOAD="$library" "$work/pwrite_loop" "$work/target" "$calls")")
done
start=$(date +%s.%N)
target/release/cairn merge "$work/staging" -o "$work/trace.cairn" 2>/dev/null
end=$(date +%s.%N)
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
base=$(median "${untraced[@]}")
with=$(median "${traced[@]}")
echo "calls per run:            $calls ($rounds rounds, alternating)"
echo "untraced ns/call (median): $base   [${untraced[*]}]"
echo "traced ns/call (median):   $with   [${traced[*]}]"
awk -v a="$base" -v b="$with" 'BEGIN { printf "added ns/call:             %.1f\nratio traced/untraced:     %.3f\n", b - a, b / a }'
awk -v s="$start" -v e="$end" -v n="$calls" 'BEGIN { printf "collect (cairn merge) of one run: %.2f s (%.0f ns/event)\n", e - s, (e - s) * 1e9 / n }'
echo "trace size of one run: $(stat -c %s "$work/trace.cairn") bytes"
