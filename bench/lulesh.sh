#!/usr/bin/env bash
# Real LULESH 2.0 (LLNL/LULESH, the shock-hydrodynamics proxy app, built from its public
# source; not bundled: pass a built `lulesh2.0` or its source tree, built here with Open
# MPI's mpicxx, no OpenMP) on each cube number of RANKS under Open MPI, SIZE³ elements a
# rank, ITERATIONS time steps: the trace's bytes, its streams, the tracer's staged record
# bytes, the whole `mpirun` wall untraced and traced (alternating, medians, ratio), and
# the trace's MPI_Isend calls and bytes against the program's own (an independent PMPI
# counter built here), with the bytes its MPI_Wait calls say arrived. LULESH exchanges
# with up to 26 neighbours (faces, edges, corners of its 3-D rank cube) in five routines
# of their own field counts: MPI_Irecv from each, MPI_Isend to each, MPI_Waitall on the
# sends, MPI_Wait on each receive. Then the same at the first rank count with ten times
# the iterations (the trace should not grow).
#
# Usage: bench/lulesh.sh PATH_TO_LULESH_OR_SOURCE [rounds=3] [ranks="8 27 64"] [size=8] [iterations=20]
set -euo pipefail
cd "$(dirname "$0")/.."
lulesh=${1:?usage: bench/lulesh.sh PATH_TO_LULESH_OR_SOURCE [rounds] [ranks] [size] [iterations]}
rounds=${2:-3}
ranks=${3:-"8 27 64"}
size=${4:-8}
iterations=${5:-20}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
if [ -d "$lulesh" ]; then
    cp -r "$lulesh" "$work/source"
    make -C "$work/source" -j2 MPICXX="mpicxx.openmpi -DUSE_MPI=1" CXXFLAGS="-O2 -I. -w" \
        LDFLAGS="-O2" >/dev/null
    lulesh=$work/source/lulesh2.0
fi
lulesh=$(realpath "$lulesh")
# The program's own count and bytes of MPI_Isend, through the profiling interface.
cat >"$work/count.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
static long counts[2];
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm,
              MPI_Request *r) {
    int size;
    PMPI_Type_size(t, &size);
    counts[0]++;
    counts[1] += (long)c * size;
    return PMPI_Isend(b, c, t, d, tag, comm, r);
}
int MPI_Finalize(void) {
    long total[2] = {0, 0};
    PMPI_Reduce(counts, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) fprintf(stderr, "isends %ld %ld\n", total[0], total[1]);
    return PMPI_Finalize();
}
EOF
mpicc.openmpi -shared -fPIC -o "$work/libcount.so" "$work/count.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
cd "$work"
run() { mpirun.openmpi --oversubscribe -np "$np" "$@" "$lulesh" -s "$size" -i "$steps" >/dev/null; }
printf '%-5s %-6s %10s %7s %10s %10s %10s %7s %s\n' ranks steps "trace B" streams "staged B" \
    "untraced s" "traced s" ratio "MPI_Isend calls, bytes: trace / program; MPI_Wait bytes"
first=${ranks%% *}
for case in $ranks "$first@10"; do
    np=${case%@*}
    steps=$iterations
    [ "$case" = "$first@10" ] && steps=$((10 * iterations))
    program=$(run -x LD_PRELOAD="$work/libcount.so" 2>&1 | awk '/^isends/ { print $2 " " $3 }')
    untraced=()
    traced=()
    for round in $(seq "$rounds"); do
        start=$(now)
        run
        untraced+=("$(echo "$(now) - $start" | bc)")
        rm -rf trace.cairn .trace.cairn.staging-*
        start=$(now)
        run "$cairn" run -q --keep-staging -o trace.cairn --
        traced+=("$(echo "$(now) - $start" | bc)")
        [ "$round" = "$rounds" ] || rm -rf .trace.cairn.staging-*
    done
    staged=$(record_bytes .trace.cairn.staging-*)
    counted=$("$cairn" summary --json trace.cairn | python3 -c '
import json, sys
calls = json.load(sys.stdin)["calls"]
print(calls["MPI_Isend"]["count"], calls["MPI_Isend"]["bytes"], calls["MPI_Wait"]["bytes"])')
    read -r isends isent waited <<<"$counted"
    read -r own_isends own_sent <<<"$program"
    streams=$("$cairn" dump trace.cairn | grep '^pid ' | grep -vc '; as pid ' || true)
    # shellcheck disable=SC2086
    awk -v r="$np" -v i="$steps" -v b="$(stat -c %s trace.cairn)" -v n="$streams" -v s="$staged" \
        -v u="$(median ${untraced[*]})" -v t="$(median ${traced[*]})" \
        -v c="$isends / $own_isends, $isent / $own_sent; $waited" \
        'BEGIN { printf "%-5s %-6s %10d %7d %10d %10.3f %10.3f %7.3f %s\n", r, i, b, n, s, u, t, t / u, c }'
    rm -rf .trace.cairn.staging-*
done
