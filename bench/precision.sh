#!/usr/bin/env bash
# Precision levels on irregular programs: trace size and whole-job wall for each level,
# with the untraced run alternating with the traced ones (medians, ratio).
#
# 1. tests/programs/patterns/irregular.c (two rank groups, message sizes jittering with
#    rank and step, a solver loop whose count changes every step, rank 0 logging) under
#    Open MPI's mpirun, at each number of ranks and each precision level; every level's
#    calls and bytes are checked against the lossless trace's.
#    The same for tests/programs/patterns/imbalanced.c (a load-imbalanced particle code:
#    per rank and step 40–47 messages to the next rank and 100–109 writes to its own file).
# 2. tests/programs/patterns/random_seeks.c (IOR -z: lseek + write at shuffled offsets)
#    and tests/programs/patterns/random_sizes.c (compressed blocks: appended with sizes of
#    their own, read back shuffled with pread of each size at its offset)
#    at N and 10·N blocks, each level.
#
# Each MPI line also gives the bytes the tracer staged (its records, all ranks).
#
# Usage: bench/precision.sh [rounds=3] [ranks="8 16 32 64"] [levels="100 95 90 70 60 30 0"] [steps=100]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
ranks=${2:-"8 16 32 64"}
levels=${3:-"100 95 90 70 60 30 0"}
steps=${4:-100}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O1 -g -o "$work/irregular" tests/programs/patterns/irregular.c
mpicc.openmpi -O1 -g -o "$work/imbalanced" tests/programs/patterns/imbalanced.c
gcc -O1 -g -o "$work/random_seeks" tests/programs/patterns/random_seeks.c
gcc -O1 -g -o "$work/random_sizes" tests/programs/patterns/random_sizes.c
# What every level must keep exactly: calls (count, bytes), MPI bytes sent, events.
figures() {
    "$cairn" summary --json "$1" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(sorted((k, v["count"], v["bytes"]) for k, v in s["calls"].items()), s.get("mpi_messages", {}).get("sent_bytes"), s["events"])'
}
printf '%-14s %6s %6s %10s %10s %10s %10s %7s %s\n' program ranks level "trace B" "staged B" "untraced s" "traced s" ratio totals
# mpi_levels PROGRAM ARGUMENTS...: each rank count, each level, alternating with untraced runs.
mpi_levels() {
    local program=$1
    shift
    for n in $ranks; do
        job=(mpirun.openmpi --oversubscribe -np "$n")
        declare -A traced=()
        declare -A staged=()
        untraced=()
        exact=""
        for round in $(seq "$rounds"); do
            start=$(now)
            "${job[@]}" "$work/$program" "$@" >/dev/null 2>&1
            untraced+=("$(echo "$(now) - $start" | bc)")
            for level in $levels; do
                start=$(now)
                "${job[@]}" "$cairn" run -q --keep-staging --precision "$level" \
                    -o "$work/$program-$n-$level.cairn" -- "$work/$program" "$@" >/dev/null 2>&1
                traced[$level]+=" $(echo "$(now) - $start" | bc)"
                # What the tracer staged (the records' bytes), then the staging goes.
                staged[$level]=$(record_bytes "$work"/."$program-$n-$level".cairn.staging-*)
                rm -rf "$work"/."$program-$n-$level".cairn.staging-*
            done
        done
        for level in $levels; do
            trace=$work/$program-$n-$level.cairn
            totals=$(figures "$trace")
            [ -z "$exact" ] && exact=$totals
            check=$([ "$totals" = "$exact" ] && echo exact || echo DIFFER)
            u=$(median "${untraced[@]}")
            # shellcheck disable=SC2086
            t=$(median ${traced[$level]})
            printf '%-14s %6d %6d %10d %10d %10.3f %10.3f %7.3f %s\n' "$program" "$n" "$level" \
                "$(stat -c %s "$trace")" "${staged[$level]}" "$u" "$t" "$(echo "$t / $u" | bc -l)" "$check"
        done
        unset traced staged
    done
}
mpi_levels irregular "$steps" "$work/log"
mpi_levels imbalanced "$steps" "$work/particles"
for program in random_seeks random_sizes; do
    for blocks in 2000 20000; do
        exact=""
        for level in $levels; do
            rm -rf "$work/blocks" && mkdir -p "$work/blocks"
            trace=$work/$program-$blocks-$level.cairn
            "$cairn" run -q --precision "$level" -o "$trace" -- "$work/$program" "$work/blocks" "$blocks"
            totals=$(figures "$trace")
            [ -z "$exact" ] && exact=$totals
            check=$([ "$totals" = "$exact" ] && echo exact || echo DIFFER)
            printf '%-14s %6s %6d %10d %10s %10s %10s %7s %s (%d blocks)\n' "$program" 1 "$level" \
                "$(stat -c %s "$trace")" - - - - "$check" "$blocks"
        done
    done
done
