#!/usr/bin/env bash
# Real HACC-IO (glennklockwood/hacc-io, the CORAL checkpoint/restart benchmark of the HACC
# cosmology code, built from its public source; not bundled: pass its source tree, built
# here twice with Open MPI's mpicxx — one shared file, and file per process) on each
# number of RANKS, PARTICLES a rank (9 arrays, 38 bytes a particle, each written with
# lseek + write and read back and verified): the trace's bytes, the whole `mpirun` wall
# untraced and traced (alternating, medians, ratio), and the bytes the trace says were
# written and read against what the kernel counted for the same processes
# (`/proc/self/io`, in the trace; the difference on reads is the MPI runtime's plugin
# loading, counted but not kept). The files go to /dev/shm.
#
# Usage: bench/haccio.sh PATH_TO_HACC_IO_SOURCE [rounds=3] [ranks="4 16"] [particles=100000]
set -euo pipefail
cd "$(dirname "$0")/.."
source=${1:?usage: bench/haccio.sh PATH_TO_HACC_IO_SOURCE [rounds] [ranks] [particles]}
rounds=${2:-3}
ranks=${3:-"4 16"}
particles=${4:-100000}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
data=$(mktemp -d /dev/shm/cairn-haccio.XXXXXX)
trap 'rm -rf "$work" "$data"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
flags="-O2 -DGLEAN_PRINT_PERROR -D_FILE_OFFSET_BITS=64 -D_LARGEFILE64_SOURCE -w"
for mode in shared fpp; do
    cp -r "$source" "$work/$mode"
    extra=
    [ "$mode" = fpp ] && extra=-DHACC_IO_FILE_PER_PROCESS
    make -C "$work/$mode" -j2 CXX=mpicxx.openmpi CXXFLAGS="$flags $extra" hacc_io >/dev/null
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work"
run() { mpirun.openmpi --oversubscribe -np "$np" "$@" "$work/$mode/hacc_io" "$particles" "$data/out" >/dev/null; }
printf '%-6s %-5s %9s %10s %10s %7s %s\n' mode ranks "trace B" "untraced s" "traced s" ratio \
    "written: trace / kernel; read: trace / kernel"
for mode in shared fpp; do
    for np in $ranks; do
        untraced=()
        traced=()
        for round in $(seq "$rounds"); do
            rm -rf "${data:?}"/*
            start=$(now)
            run
            untraced+=("$(echo "$(now) - $start" | bc)")
            rm -rf "${data:?}"/* trace.cairn
            start=$(now)
            run "$cairn" run -q -o trace.cairn --
            traced+=("$(echo "$(now) - $start" | bc)")
        done
        bytes=$("$cairn" summary --json trace.cairn | python3 -c '
import json, sys
io = json.load(sys.stdin)["kernel_io"]
print(io["traced_written_bytes"], "/", io["written_bytes"], end="; ")
print(io["traced_read_bytes"], "/", io["read_bytes"])')
        # shellcheck disable=SC2086
        awk -v m="$mode" -v r="$np" -v b="$(stat -c %s trace.cairn)" -v u="$(median ${untraced[*]})" \
            -v t="$(median ${traced[*]})" -v c="$bytes" \
            'BEGIN { printf "%-6s %-5s %9d %10.3f %10.3f %7.3f %s\n", m, r, b, u, t, t / u, c }'
    done
done
