#!/usr/bin/env bash
# Real CloverLeaf (UK-MAC/CloverLeaf_ref, the Fortran 90 + MPI mini-app of a 2-D
# Lagrangian-Eulerian hydrodynamics code, built from its public source; not bundled: pass a
# built `clover_leaf` or its source tree, built here with GNU flags and Open MPI) on each
# number of RANKS, CELLS² cells in all, STEPS steps, one OpenMP thread a rank, lossless:
# the trace's bytes and how much they grow from the first rank count, its streams, the
# whole `mpirun` wall untraced and traced (alternating, medians, ratio), and every
# message's count, and the bytes sent and received (from the statuses). CloverLeaf's
# halo exchange posts an MPI_Irecv and an MPI_Isend per neighbour, left/right then
# bottom/top, each followed by an MPI_Waitall of as many requests as the rank has
# neighbours on that axis: a corner chunk waits for 2, an edge chunk for 2 or 4, an
# interior one for 4.
#
# Usage: bench/cloverleaf.sh PATH_TO_CLOVER_LEAF_OR_SOURCE [rounds=3] [ranks="4 16"] [cells=128] [steps=20]
set -euo pipefail
cd "$(dirname "$0")/.."
clover=${1:?usage: bench/cloverleaf.sh PATH_TO_CLOVER_LEAF_OR_SOURCE [rounds] [ranks] [cells] [steps]}
rounds=${2:-3}
ranks=${3:-"4 16"}
cells=${4:-128}
steps=${5:-20}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
if [ -d "$clover" ]; then
    cp -r "$clover" "$work/source"
    make -C "$work/source" COMPILER=GNU MPI_COMPILER=mpif90.openmpi C_MPI_COMPILER=mpicc.openmpi \
        -j2 >/dev/null
    clover=$work/source/clover_leaf
fi
clover=$(realpath "$clover")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
cd "$work"
cat >clover.in <<EOF
*clover
 state 1 density=0.2 energy 1.0
 state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0
 x_cells=$cells
 y_cells=$cells
 xmin=0.0
 ymin=0.0
 xmax=10.0
 ymax=10.0
 initial_timestep=0.04
 timestep_rise=1.5
 max_timestep=0.04
 end_step=$steps
 test_problem 2
*endclover
EOF
# CloverLeaf prints its steps on its standard error too.
run() { mpirun.openmpi --oversubscribe -x OMP_NUM_THREADS -np "$np" "$@" "$clover" >/dev/null 2>&1; }
printf '%-5s %10s %8s %7s %10s %10s %7s %s\n' ranks "trace B" "+%" streams "untraced s" "traced s" ratio \
    "Isend/Irecv n, sent/received B"
first=""
for np in $ranks; do
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        run
        untraced+=("$(echo "$(now) - $start" | bc)")
        rm -f trace.cairn
        start=$(now)
        run "$cairn" run -q -o trace.cairn --
        traced+=("$(echo "$(now) - $start" | bc)")
    done
    bytes=$(stat -c %s trace.cairn)
    first=${first:-$bytes}
    messages=$("$cairn" summary --json trace.cairn | python3 -c '
import json, sys
summary = json.load(sys.stdin)
calls, messages = summary["calls"], summary["mpi_messages"]
print("%d/%d %d/%d" % (calls["MPI_Isend"]["count"], calls["MPI_Irecv"]["count"],
                       messages["sent_bytes"], messages["received_bytes"]))')
    streams=$("$cairn" dump trace.cairn | grep '^pid ' | grep -vc '; as pid ' || true)
    # shellcheck disable=SC2086
    awk -v r="$np" -v b="$bytes" -v f="$first" -v n="$streams" -v u="$(median ${untraced[*]})" \
        -v t="$(median ${traced[*]})" -v m="$messages" \
        'BEGIN { printf "%-5s %10d %7.1f%% %7d %10.3f %10.3f %7.3f %s\n", r, b, 100 * (b - f) / f, n, u, t, t / u, m }'
    rm -f clover.out
done
