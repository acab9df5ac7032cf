#!/usr/bin/env bash
# Every MPI program of the corpus (tests/programs/patterns/) at two rank counts and two
# sizes, lossless, under Open MPI's mpirun (oversubscribed): the trace's bytes, its process
# table (PROC) and events (EVNT), and how much it grows from the first rank count to the
# second (issue: within 10%) and from N to 10·N steps (within 5%). One run each: it
# measures sizes, not time. The master-worker and tagged-task farms are irregular by design
# (which worker answers first changes from run to run): a lossless trace keeps an event per
# message, so they grow with N.
#
# bt_cells (NPB BT-IO's cells) needs square rank counts.
#
# Usage: bench/corpus_ranks.sh [ranks="4 16"] [n=20]
set -euo pipefail
cd "$(dirname "$0")/.."
read -r low high <<<"${1:-4 16}"
n=${2:-20}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
data=$(mktemp -d /dev/shm/cairn-corpus.XXXXXX)
trap 'rm -rf "$work" "$data"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source_of=tests/programs/patterns
build() {
    case $1 in
    # h5pcc compiles and links in two steps and leaves the object file where it runs.
    hdf5_hyperslab | dataset_per_segment) (cd "$work" && h5pcc.openmpi -O2 -o "$1" "$OLDPWD/$source_of/$1.c") ;;
    pnetcdf_vars) mpicc.openmpi -O2 -o "$work/$1" "$source_of/$1.c" -lpnetcdf ;;
    halo_axes) mpif90.openmpi -O2 -o "$work/$1" "$source_of/$1.f90" ;;
    *) mpicc.openmpi -O2 -o "$work/$1" "$source_of/$1.c" ;;
    esac
}
# The program's arguments for N steps (tasks, items) in directory $3.
arguments() {
    case $1 in
    comm_copy | wait_order) echo "$3 $2" ;;
    hdf5_hyperslab) echo "$3 $((1024 * $2))" ;;
    imbalanced) echo "$2 $3/p" ;;
    irregular | rank_logs) echo "$2 $3/log" ;;
    master_worker | tagged_tasks | halo_axes) echo "$2" ;;
    *) echo "$3 $2" ;;
    esac
}
section() { "$cairn" dump --sections "$1" | awk -v name="$2" '$1 == name":" || $1 == name { print $3 }'; }
printf '%-20s %7s | %7s %5s %6s | %7s %5s %6s | %8s %8s\n' program steps \
    "B@$low" PROC EVNT "B@$high" PROC EVNT "ranks +%" "x10 +%"
programs=(bt_cells comm_copy comm_reuse coupled_halves dataset_per_segment doubling halo2d halo_axes hdf5_hyperslab imbalanced
    irregular master_worker multigrid persistent_halo progress_log rank_logs rank_trees residual_history slabs stencil3d tagged_tasks transpose wait_order
    wandering_neighbours)
for program in "${programs[@]}"; do
    build "$program"
    declare -A bytes=() procs=() events=()
    for np in "$low" "$high" "$low@10"; do
        ranks=${np%@*}
        steps=$n
        [ "$np" = "$low@10" ] && steps=$((10 * n))
        rm -rf "${data:?}"/* && mkdir -p "$data/d"
        # shellcheck disable=SC2046
        mpirun.openmpi --oversubscribe -np "$ranks" "$cairn" run -q -o "$work/t.cairn" -- \
            "$work/$program" $(arguments "$program" "$steps" "$data/d") >/dev/null
        bytes[$np]=$(stat -c %s "$work/t.cairn")
        procs[$np]=$(section "$work/t.cairn" PROC)
        events[$np]=$(section "$work/t.cairn" EVNT)
    done
    awk -v p="$program" -v n="$n" -v b1="${bytes[$low]}" -v p1="${procs[$low]}" \
        -v e1="${events[$low]}" -v b2="${bytes[$high]}" -v p2="${procs[$high]}" \
        -v e2="${events[$high]}" -v b10="${bytes[$low@10]}" \
        'BEGIN { printf "%-20s %7d | %7d %5d %6d | %7d %5d %6d | %7.1f%% %7.1f%%\n",
                 p, n, b1, p1, e1, b2, p2, e2, 100 * (b2 - b1) / b1, 100 * (b10 - b1) / b1 }'
done
