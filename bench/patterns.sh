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
# shellcheck source=bench/common.sh
. bench/common.sh
# name and iteration count (each at scale 1 is what the tests run first).
patterns=(
    "ior_posix 4"
    "interleaved 20"
    "stdio_log 1000"
    "checkpoint_restart 100"
    "fortran_sequential 1000"
    "random_reads 10000"
    "random_seeks 1638"
    "worker_threads 16"
)
report_header pattern
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
    report_trace "$name" "$cairn" "$work/t.cairn" "${untraced[*]}" "${traced[*]}"
done
