#!/usr/bin/env bash
# Export throughput: traces of two corpus patterns (a folded one, ior_posix, and an
# irregular one, random_reads) written by `cairn export` in each format, R rounds each;
# medians of the wall time, events per second and output bytes per event (the whole
# directory for the table and OTF2 formats).
#
# Usage: bench/export.sh [rounds=5] [scale=10]
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
printf '%-14s %-9s %9s %10s %12s %10s\n' pattern format events "median s" "events/s" "B/event"
for spec in "ior_posix 4" "random_reads 10000"; do
    read -r name n <<<"$spec"
    cc -O2 -o "$work/$name" "tests/programs/patterns/$name.c"
    rm -rf "$work/d" && mkdir "$work/d"
    "$cairn" run -q -o "$work/$name.cairn" -- "$work/$name" "$work/d" "$((n * scale))"
    events=$(trace_calls "$cairn" "$work/$name.cairn")
    for format in perfetto chrome csv parquet otf2; do
        times=()
        for _ in $(seq "$rounds"); do
            start=$(now)
            "$cairn" export --format "$format" -o "$work/out.$format" "$work/$name.cairn" 2>/dev/null
            times+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        done
        # shellcheck disable=SC2086
        t=$(median ${times[*]})
        bytes=$(du -sb "$work/out.$format" | cut -f1)
        awk -v n="$name" -v f="$format" -v e="$events" -v t="$t" -v b="$bytes" \
            'BEGIN { printf "%-14s %-9s %9d %10.4f %12.0f %10.1f\n", n, f, e, t, e / t, b / e }'
    done
done
