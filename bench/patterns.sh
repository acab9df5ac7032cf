#!/usr/bin/env bash
# The pattern corpus (tests/programs/patterns/) traced at a size: per pattern, the trace's
# bytes, bytes per call, the staged (raw segment) bytes, and the whole run's wall time
# untraced and traced (alternating runs, medians, ratio).
#
# Usage: bench/patterns.sh [rounds=5] [scale=10]
#   scale multiplies each pattern's iteration count (the tests run 1 and 10).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
scale=${2:-10}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
# name and iteration count (each at scale 1 is what the tests run first).
patterns=(
    "ior_posix 4"
    "interleaved 20"
    "stdio_log 1000"
    "checkpoint_restart 100"
    "fortran_sequential 1000"
    "random_reads 10000"
)
printf '%-20s %9s %8s %10s %10s %10s %8s %8s\n' pattern calls "trace B" "B/call" "staged B" "untraced s" "traced s" ratio
for spec in "${patterns[@]}"; do
    read -r name n <<<"$spec"
    n=$((n * scale))
    source=tests/programs/patterns/$name
    if [ -f "$source.f90" ]; then
        gfortran -O2 -o "$work/$name" "$source.f90"
    else
        cc -O2 -o "$work/$name" "$source.c"
    fi
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        rm -rf "$work/d" && mkdir "$work/d"
        start=$(now)
        "$work/$name" "$work/d" "$n"
        middle=$(now)
        rm -rf "$work/d" "$work"/t.cairn "$work"/.t.cairn.staging-* && mkdir "$work/d"
        "$cairn" run -q --keep-staging -o "$work/t.cairn" -- "$work/$name" "$work/d" "$n"
        end=$(now)
        untraced+=("$(echo "$middle - $start" | bc)")
        traced+=("$(echo "$end - $middle" | bc)")
    done
    calls=$("$cairn" summary --json "$work/t.cairn" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
    bytes=$(stat -c %s "$work/t.cairn")
    staged=$(du -b -s "$work"/.t.cairn.staging-* | awk '{s += $1} END {print s}')
    base=$(median "${untraced[@]}")
    with=$(median "${traced[@]}")
    awk -v p="$name" -v c="$calls" -v b="$bytes" -v s="$staged" -v u="$base" -v t="$with" \
        'BEGIN { printf "%-20s %9d %8d %10.3f %10d %10.4f %8.4f %8.3f\n", p, c, b, b / c, s, u, t, t / u }'
done
