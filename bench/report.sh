#!/usr/bin/env bash
# `cairn report` at 4, 64, 1,024 and 4,096 ranks: generated SPMD traces (cairn_trace::synthetic,
# an IOR-like shared-file writer with a halo exchange; offline-generated, as this machine
# cannot run 1,024 ranks), merged, then reported R times. Prints the medians of the build
# time, the page's size, and the time headless Chromium takes to load the page and run its
# script (--dump-dom; includes Chromium's own start).
#
# Usage: bench/report.sh [rounds=3] [ranks="4 64 1024 4096"]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
ranks=${2:-4 64 1024 4096}
cargo build --release --workspace --quiet
cargo build --release -p cairn-trace --example generate_rank_traces --quiet
cairn=$(pwd)/target/release/cairn
generate=$(pwd)/target/release/examples/generate_rank_traces
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
printf '%6s %10s %12s %10s %12s\n' ranks events "build s" "page KB" "render s"
for n in $ranks; do
    "$generate" "$n" "$work/r$n"
    "$cairn" merge -q "$work/r$n"/rank-*.cairn -o "$work/m$n.cairn"
    events=$(trace_calls "$cairn" "$work/m$n.cairn")
    builds=() renders=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        "$cairn" report "$work/m$n.cairn" -o "$work/m$n.html" 2>/dev/null
        builds+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        start=$(now)
        chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$work/m$n.html" >"$work/dom" 2>/dev/null
        renders+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        grep -q 'data-ready="yes"' "$work/dom"
    done
    # shellcheck disable=SC2086
    build=$(median ${builds[*]})
    # shellcheck disable=SC2086
    render=$(median ${renders[*]})
    size=$(stat -c %s "$work/m$n.html")
    awk -v n="$n" -v e="$events" -v b="$build" -v s="$size" -v r="$render" \
        'BEGIN { printf "%6d %10d %12.3f %10.1f %12.3f\n", n, e, b, s / 1024, r }'
done
