#!/usr/bin/env bash
# Trace size of the SPMD test programs against the number of ranks: the ring with MPI-IO
# (tests/programs/mpi_ring_io.c: Isend/Irecv/Waitall in nested loops, Allreduce, collective
# and independent MPI-IO on a shared file), file per process (mpi_parts.c) and the IOR-like
# program (ior_like.c, POSIX, shared file, 256 KiB per rank in 4 KiB transfers, 4 segments),
# each under Open MPI's mpirun (oversubscribed) with the preload library, merged by
# `cairn merge` at the exact level (100) and at precision 99. Prints the trace's bytes, the
# per-process section (PROC: pid, start, end of every rank) and the events section (EVNT),
# and how many streams the ranks' events make.
#
# Usage: bench/trace_vs_ranks.sh [ranks="2 4 8 16 32 64"]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-"2 4 8 16 32 64"}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
library=$("$cairn" lib)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for program in mpi_ring_io mpi_parts ior_like; do
    mpicc.openmpi -O1 -o "$work/$program" "tests/programs/$program.c"
done
section() { "$cairn" dump --sections "$1" | awk -v name="$2" '$1 == name { print $3 }'; }
printf '%-12s %5s | %8s %6s %6s | %8s %6s %6s | %7s\n' program np bytes PROC EVNT "p99 bytes" PROC EVNT streams
for program in mpi_ring_io mpi_parts ior_like; do
    arguments=()
    [ "$program" = ior_like ] && arguments=(posix shared 0 262144 4096 4)
    for n in $ranks; do
        rm -rf "$work/data" "$work/staging"
        mkdir -p "$work/data"
        mpirun.openmpi --oversubscribe -np "$n" -x LD_PRELOAD="$library" -x CAIRN_DIR="$work/staging" \
            "$work/$program" "$work/data" "${arguments[@]}" >/dev/null
        "$cairn" merge -q "$work/staging" -o "$work/exact.cairn"
        "$cairn" merge -q --precision 99 "$work/staging" -o "$work/p99.cairn"
        streams=$("$cairn" dump "$work/exact.cairn" | grep '^pid' | grep -vc 'as pid' || true)
        printf '%-12s %5s | %8s %6s %6s | %8s %6s %6s | %7s\n' "$program" "$n" \
            "$(stat -c %s "$work/exact.cairn")" "$(section "$work/exact.cairn" PROC)" "$(section "$work/exact.cairn" EVNT)" \
            "$(stat -c %s "$work/p99.cairn")" "$(section "$work/p99.cairn" PROC)" "$(section "$work/p99.cairn" EVNT)" \
            "$streams"
    done
done
