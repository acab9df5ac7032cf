#!/usr/bin/env bash
# Tracing overhead on the IOR-like program (tests/programs/ior_like.c) under Open MPI:
# untraced and traced runs alternate, medians of the slowest rank's elapsed time as the
# program measures it, for POSIX and for collective MPI-IO on a shared file; then the trace
# size (file-based merge) as the number of ranks grows.
#
# Usage: bench/ior_overhead.sh [ranks=4] [rounds=5]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-4}
rounds=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
library=$("$cairn" lib)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 -o "$work/ior_like" tests/programs/ior_like.c
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# block 1 MiB, transfer 4 KiB, 8 segments: 2048 writes and 2048 reads per rank.
for config in "posix shared 0" "mpiio shared 1"; do
    untraced=()
    traced=()
    for round in $(seq "$rounds"); do
        rm -rf "$work/data" && mkdir -p "$work/data"
        untraced+=("$(mpirun.openmpi --oversubscribe -np "$ranks" "$work/ior_like" "$work/data" $config 1048576 4096 8)")
        rm -rf "$work/data" "$work/staging" && mkdir -p "$work/data"
        traced+=("$(mpirun.openmpi --oversubscribe -np "$ranks" -x LD_PRELOAD="$library" -x CAIRN_DIR="$work/staging" "$work/ior_like" "$work/data" $config 1048576 4096 8)")
    done
    base=$(median "${untraced[@]}")
    with=$(median "${traced[@]}")
    awk -v c="$config" -v n="$ranks" -v a="$base" -v b="$with" \
        'BEGIN { printf "%-16s np=%s  untraced %.4f s  traced %.4f s  ratio %.3f (medians of the slowest rank)\n", c, n, a, b, b / a }'
done
echo "trace size of the POSIX shared-file run (file-based merge) against ranks:"
echo "  (default: the MPI runtime's own I/O kept for rank 0 only; none: counted for every rank)"
for n in 2 4 8 16; do
    rm -rf "$work/data" "$work/staging" && mkdir -p "$work/data"
    mpirun.openmpi --oversubscribe -np "$n" -x LD_PRELOAD="$library" -x CAIRN_DIR="$work/staging" "$work/ior_like" "$work/data" posix shared 0 1048576 4096 8 >/dev/null
    "$cairn" merge "$work/staging" -o "$work/ior-$n.cairn" 2>/dev/null
    "$cairn" merge "$work/staging" --runtime-io none -o "$work/ior-none-$n.cairn" 2>/dev/null
    printf '  np=%-2s default %6s B   none %6s B\n' "$n" "$(stat -c %s "$work/ior-$n.cairn")" "$(stat -c %s "$work/ior-none-$n.cairn")"
done
