#!/usr/bin/env bash
# Added cost per call of this libcairn.so against another one (a previous commit's), in the
# same invocation: one-byte pwrite() calls to /dev/shm untraced, with this library and with
# the other, alternating, R rounds; medians of ns/call. Build the other library with e.g.
#   git worktree add /tmp/old <commit> && (cd /tmp/old && cargo build --release -p cairn-preload)
#
# Usage: bench/pwrite_ab.sh OTHER_LIBCAIRN_SO [calls=2000000] [rounds=11] [same|scattered|pairs]
set -euo pipefail
cd "$(dirname "$0")/.."
other=${1:?usage: bench/pwrite_ab.sh OTHER_LIBCAIRN_SO [calls] [rounds] [mode]}
calls=${2:-2000000}
rounds=${3:-11}
mode=${4:-same}
# shellcheck source=bench/common.sh
. bench/common.sh
cargo build --release --workspace --quiet
this=$(target/release/cairn lib)
work=$(mktemp -d /dev/shm/cairn-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/pwrite_loop" bench/pwrite_loop.c
untraced=()
with_this=()
with_other=()
for _ in $(seq "$rounds"); do
    untraced+=("$("$work/pwrite_loop" "$work/target" "$calls" "$mode")")
    rm -rf "$work/staging"
    with_this+=("$(CAIRN_DIR="$work/staging" LD_PRELOAD="$this" "$work/pwrite_loop" "$work/target" "$calls" "$mode")")
    rm -rf "$work/staging"
    with_other+=("$(CAIRN_DIR="$work/staging" LD_PRELOAD="$other" "$work/pwrite_loop" "$work/target" "$calls" "$mode")")
done
base=$(median "${untraced[@]}")
this_median=$(median "${with_this[@]}")
other_median=$(median "${with_other[@]}")
awk -v m="$mode" -v u="$base" -v a="$this_median" -v b="$other_median" 'BEGIN {
    printf "%s: untraced %.1f ns/call; this library %.1f (+%.1f); the other %.1f (+%.1f); medians of the rounds\n", m, u, a, a - u, b, b - u
}'
