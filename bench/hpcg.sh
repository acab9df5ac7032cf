#!/usr/bin/env bash
# Real HPCG (hpcg-benchmark/hpcg, built from its public source; not bundled: pass a built
# `xhpcg` or its source tree, built here with its Linux_MPI setup and Open MPI's mpicxx)
# on each number of RANKS under Open MPI, 16³ points a rank, its quick path (`--rt=0`:
# the reference and validation CG solves and one timed set, 1,800–2,000 halo exchanges a
# rank): the trace's bytes, its streams, the tracer's staged record bytes, the whole
# `mpirun` wall untraced and traced (alternating, medians, ratio), and the trace's
# MPI_Send count against the program's own (an independent PMPI counter built here).
# HPCG exchanges with up to 26 neighbours in rank order, face, edge and corner messages
# of their own sizes, on four multigrid levels: boundary ranks of a 3-D grid differ.
#
# Usage: bench/hpcg.sh PATH_TO_XHPCG_OR_SOURCE [rounds=3] [ranks="4 8 16"] [levels="100"]
set -euo pipefail
cd "$(dirname "$0")/.."
hpcg=${1:?usage: bench/hpcg.sh PATH_TO_XHPCG_OR_SOURCE [rounds] [ranks] [levels]}
rounds=${2:-3}
ranks=${3:-"4 8 16"}
levels=${4:-100}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
if [ -d "$hpcg" ]; then
    mkdir -p "$work/build"
    (cd "$work/build" && "$(realpath "$hpcg")/configure" Linux_MPI >/dev/null && make -j2 >/dev/null)
    hpcg=$work/build/bin/xhpcg
fi
hpcg=$(realpath "$hpcg")
# The program's own count of MPI_Send calls, through the profiling interface.
cat >"$work/count.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
static long sends;
int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
    sends++;
    return PMPI_Send(b, c, t, d, tag, comm);
}
int MPI_Finalize(void) {
    long total = 0;
    PMPI_Reduce(&sends, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) fprintf(stderr, "sends %ld\n", total);
    return PMPI_Finalize();
}
EOF
mpicc.openmpi -shared -fPIC -o "$work/libcount.so" "$work/count.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work"
run() { mpirun.openmpi --oversubscribe -np "$np" "$@" "$hpcg" --nx=16 --ny=16 --nz=16 --rt=0 >/dev/null; }
printf '%-5s %-6s %10s %7s %10s %10s %10s %7s %s\n' ranks level "trace B" streams "staged B" "untraced s" "traced s" ratio "MPI_Send: trace / program"
for np in $ranks; do
    program=$(run -x LD_PRELOAD="$work/libcount.so" 2>&1 | awk '/^sends/ { print $2 }')
    for level in $levels; do
        untraced=()
        traced=()
        for round in $(seq "$rounds"); do
            start=$(now)
            run
            untraced+=("$(echo "$(now) - $start" | bc)")
            rm -rf trace.cairn .trace.cairn.staging-*
            start=$(now)
            run "$cairn" run -q --keep-staging --precision "$level" -o trace.cairn --
            traced+=("$(echo "$(now) - $start" | bc)")
            [ "$round" = "$rounds" ] || rm -rf .trace.cairn.staging-*
        done
        staged=$(record_bytes .trace.cairn.staging-*)
        sends=$("$cairn" summary --json trace.cairn | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"]["MPI_Send"]["count"])')
        # Streams, not threads: a thread that shares another's stream is printed "as pid …".
        streams=$("$cairn" dump trace.cairn | grep '^pid ' | grep -vc '; as pid ' || true)
        # shellcheck disable=SC2086
        awk -v r="$np" -v l="$level" -v b="$(stat -c %s trace.cairn)" -v n="$streams" -v s="$staged" \
            -v u="$(median ${untraced[*]})" -v t="$(median ${traced[*]})" -v c="$sends / $program" \
            'BEGIN { printf "%-5s %-6s %10d %7d %10d %10.3f %10.3f %7.3f %s\n", r, l, b, n, s, u, t, t / u, c }'
        rm -rf .trace.cairn.staging-* HPCG-Benchmark*.txt hpcg*.txt
    done
done
