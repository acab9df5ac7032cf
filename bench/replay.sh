#!/usr/bin/env bash
# Replay fidelity on the pattern corpus: each program run untraced (wall time), traced, and
# its trace replayed by `cairn replay` (with the recorded compute time); R alternating
# rounds, medians of the program's wall, the replay's wall, and their ratio, and the bytes
# the replay moved against the trace's.
#
# Usage: bench/replay.sh [rounds=3] [scale=10]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
scale=${2:-10}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
printf '%-16s %10s %10s %8s %14s\n' pattern "program s" "replay s" ratio "bytes moved"
for spec in "ior_posix 4" "checkpoint_restart 2" "random_reads 1000"; do
    read -r name n <<<"$spec"
    [ -f "tests/programs/patterns/$name.c" ] || continue
    cc -O2 -o "$work/$name" "tests/programs/patterns/$name.c"
    rm -rf "$work/d" && mkdir "$work/d"
    "$cairn" run -q -o "$work/$name.cairn" -- "$work/$name" "$work/d" "$((n * scale))"
    programs=() replays=()
    for _ in $(seq "$rounds"); do
        rm -rf "$work/d" && mkdir "$work/d"
        start=$(now)
        "$work/$name" "$work/d" "$((n * scale))" >/dev/null
        programs+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        rm -rf "$work/root"
        start=$(now)
        "$cairn" replay --json --root "$work/root" "$work/$name.cairn" >"$work/fidelity.json"
        replays+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
    done
    # shellcheck disable=SC2086
    program=$(median ${programs[*]})
    # shellcheck disable=SC2086
    replay=$(median ${replays[*]})
    moved=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print("%d/%d" % (f["bytes_read"] + f["bytes_written"], f["recorded_bytes_read"] + f["recorded_bytes_written"]))' "$work/fidelity.json")
    awk -v n="$name" -v p="$program" -v r="$replay" -v m="$moved" \
        'BEGIN { printf "%-16s %10.4f %10.4f %8.2f %14s\n", n, p, r, r / p, m }'
done
