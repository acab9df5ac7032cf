#!/usr/bin/env bash
# The pattern corpus (tests/programs/patterns/) traced at a size: per pattern, the trace's
# bytes, bytes per call, the staged (raw segment) bytes, and the whole run's wall time
# untraced and traced (alternating runs, medians, ratio).
#
# Then the MPI patterns (process grids, recursive doubling, transpose) under Open MPI's
# mpirun (oversubscribed) at each number of ranks: the same figures, and the bytes of the
# trace's events section (what the rank merge keeps; the process table grows by about 20
# bytes a rank). Data in /dev/shm.
#
# Usage: bench/patterns.sh [rounds=5] [scale=10] [ranks="4 16"]
#   scale multiplies each pattern's iteration count (the tests run 1 and 10).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
scale=${2:-10}
ranks=${3:-"4 16"}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
# The programs' own files go to /dev/shm (as bench/ior.sh's do): on the disk, creating and
# deleting their 64 MiB files moved the untraced runs by ±15% from one run to the next;
# the trace and its staging stay beside the build.
data=$(mktemp -d /dev/shm/cairn-patterns.XXXXXX)
trap 'rm -rf "$work" "$data"' EXIT
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
    "uneven_steps 30"
    "metadata 100"
    "random_sizes 2000"
    "deflated_chunks 200"
    "step_log 200"
    "indexed_records 1000"
)
report_header pattern
for spec in "${patterns[@]}"; do
    read -r name n <<<"$spec"
    n=$((n * scale))
    source=tests/programs/patterns/$name
    if [ -f "$source.f90" ]; then
        gfortran -O2 -o "$work/$name" "$source.f90"
    elif [ "$name" = deflated_chunks ]; then
        # Real HDF5 (Debian's parallel build, used serially) with the deflate filter.
        mpicc.openmpi -O2 -I/usr/include/hdf5/openmpi -o "$work/$name" "$source.c" \
            -L/usr/lib/x86_64-linux-gnu/hdf5/openmpi -lhdf5
    else
        cc -O2 -o "$work/$name" "$source.c"
    fi
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        rm -rf "$data/d" && mkdir "$data/d"
        start=$(now)
        "$work/$name" "$data/d" "$n"
        untraced+=("$(echo "$(now) - $start" | bc)")
        # Removing what the untraced run wrote is no part of either run's time.
        rm -rf "$data/d" "$work"/t.cairn "$work"/.t.cairn.staging-* && mkdir "$data/d"
        start=$(now)
        "$cairn" run -q --keep-staging -o "$work/t.cairn" -- "$work/$name" "$data/d" "$n"
        traced+=("$(echo "$(now) - $start" | bc)")
    done
    report_trace "$name" "$cairn" "$work/t.cairn" "${untraced[*]}" "${traced[*]}"
done
# MPI patterns: name and steps (at scale 1).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_patterns=(
    "halo2d 10"
    "stencil3d 10"
    "doubling 10"
    "transpose 10"
    "coupled_halves 10"
)
echo
report_header "pattern@ranks"
for spec in "${mpi_patterns[@]}"; do
    read -r name n <<<"$spec"
    n=$((n * scale))
    mpicc.openmpi -O2 -o "$work/$name" "tests/programs/patterns/$name.c"
    for np in $ranks; do
        untraced=()
        traced=()
        for _ in $(seq "$rounds"); do
            rm -rf "$data/d" && mkdir "$data/d"
            start=$(now)
            mpirun.openmpi --oversubscribe -np "$np" "$work/$name" "$data/d" "$n"
            untraced+=("$(echo "$(now) - $start" | bc)")
            rm -rf "$data/d" "$work"/t.cairn "$work"/.t.cairn.staging-* && mkdir "$data/d"
            start=$(now)
            mpirun.openmpi --oversubscribe -np "$np" "$cairn" run -q --keep-staging \
                -o "$work/t.cairn" -- "$work/$name" "$data/d" "$n"
            traced+=("$(echo "$(now) - $start" | bc)")
        done
        report_trace "$name@$np" "$cairn" "$work/t.cairn" "${untraced[*]}" "${traced[*]}"
        echo "    events section: $("$cairn" dump --sections "$work/t.cairn" | awk '$1 == "EVNT" { print $3 }') B"
    done
done
