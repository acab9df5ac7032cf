#!/usr/bin/env bash
# Merge time at the end of a parallel run, np = 2 … 64 (oversubscribed on this machine).
# Two ways: `mpirun -np N cairn run -- ior_like ...`, where each rank collects its own
# segments after its program ends and the ranks' traces merge up a tree over files (fan-in
# CAIRN_MERGE_FANIN, default 4); and the merge at MPI_Finalize over PMPI
# (`mpirun -x LD_PRELOAD -x CAIRN_OUTPUT ...`), whose figure is rank 0's "merged N ranks at
# MPI_Finalize in X ms" (each rank building its own trace included). The figures are
# rank 0's "merged N ranks in X ms (Y ms reading and merging here ...)": X from the end of
# its own collection to the whole job's trace, waiting for children included (ranks end at
# different times; the children collect their own segments meanwhile), Y its own work. Baseline in the same invocation: one process
# building the trace from every rank's staging segments (`cairn merge STAGING`, what a bare
# LD_PRELOAD run needs), timed around the command. Medians of `rounds` runs.
#
# Usage: bench/merge_at_end.sh [rounds=3] [largest np=64]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
largest=${2:-64}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
library=$("$cairn" lib)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 -o "$work/ior_like" tests/programs/ior_like.c
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# block 256 KiB, transfer 4 KiB, 4 segments: 256 writes and 256 reads per rank.
arguments=(posix shared 0 262144 4096 4)
printf '%4s %14s %12s %14s %16s %8s %10s\n' np "tree merge ms" "rank 0 work" "finalize ms" "one-process ms" ratio "trace B"
n=2
while [ "$n" -le "$largest" ]; do
    tree=()
    work0=()
    finalize=()
    single=()
    for round in $(seq "$rounds"); do
        rm -rf "$work/data" && mkdir -p "$work/data"
        log=$(mpirun.openmpi --oversubscribe -np "$n" "$cairn" run --runtime-io none -o "$work/tree.cairn" -- \
            "$work/ior_like" "$work/data" "${arguments[@]}" 2>&1 >/dev/null)
        tree+=("$(printf '%s\n' "$log" | sed -n 's/.*merged [0-9]* ranks in \([0-9.]*\) ms.*/\1/p')")
        work0+=("$(printf '%s\n' "$log" | sed -n 's/.*(\([0-9.]*\) ms reading and merging.*/\1/p')")
        rm -rf "$work/data" "$work/staging" && mkdir -p "$work/data"
        log=$(mpirun.openmpi --oversubscribe -np "$n" -x LD_PRELOAD="$library" -x CAIRN_DIR="$work/staging" \
            -x CAIRN_OUTPUT="$work/finalize.cairn" -x CAIRN_RUNTIME_IO=none \
            "$work/ior_like" "$work/data" "${arguments[@]}" 2>&1 >/dev/null)
        finalize+=("$(printf '%s\n' "$log" | sed -n 's/.*merged [0-9]* ranks at MPI_Finalize in \([0-9.]*\) ms.*/\1/p')")
        start=$(date +%s%N)
        "$cairn" merge --runtime-io none "$work/staging" -o "$work/single.cairn" 2>/dev/null
        single+=("$(( ($(date +%s%N) - start) / 1000 ))")
    done
    a=$(median "${tree[@]}")
    w=$(median "${work0[@]}")
    f=$(median "${finalize[@]}")
    b=$(median "${single[@]}")
    awk -v n="$n" -v a="$a" -v w="$w" -v f="$f" -v b="$b" -v s="$(stat -c %s "$work/tree.cairn")" \
        'BEGIN { printf "%4d %14.1f %12.1f %14.1f %16.1f %8.2f %10d\n", n, a, w, f, b / 1000, a / (b / 1000), s }'
    n=$((n * 2))
done
