#!/usr/bin/env bash
# Real BT-IO (wkliao/BTIO: the I/O kernel of NASA's NPB BT, built from its public source
# with Open MPI's mpif90 and Debian's PnetCDF; not bundled: pass its source tree or its
# built `btio`). Each rank owns sqrt(P) cells of a 3-D grid (block-tridiagonal layout) and
# appends one record of the whole array a step to one shared file, through MPI-IO
# collective (method 0), MPI-IO independent (1) or PnetCDF non-blocking (3) writes. Per
# method, rank count and step count: the trace's bytes, how much it grows from the first
# step count to the second and from the first rank count to the second, the whole
# `mpirun` wall untraced and traced (alternating, medians, ratio), and the bytes the trace
# says reached the file against what the array holds (grid^3 x 5 doubles a step; PnetCDF
# adds its header). The file goes to /dev/shm. Rank counts must be squares.
#
# Usage: bench/btio.sh PATH_TO_BTIO_OR_SOURCE [rounds=3] [ranks="4 16"] [grid=64] [steps="10 100"]
set -euo pipefail
cd "$(dirname "$0")/.."
given=${1:?usage: bench/btio.sh PATH_TO_BTIO_OR_SOURCE [rounds] [ranks] [grid] [steps]}
rounds=${2:-3}
ranks=${3:-"4 16"}
grid=${4:-64}
steps=${5:-"10 100"}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
data=$(mktemp -d /dev/shm/cairn-btio.XXXXXX)
trap 'rm -rf "$work" "$data"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
if [ -d "$given" ]; then
    cp -r "$given" "$work/source"
    # Debian's PnetCDF Fortran module lives with gfortran's other modules.
    module=$(dirname "$(find /usr/lib -name pnetcdf.mod -print -quit)")
    make -C "$work/source" MPIF90=mpif90.openmpi FCFLAGS="-O2 -w" INC="-I$module" \
        LIBS=-lpnetcdf >/dev/null
    btio=$work/source/btio
else
    btio=$(realpath "$given")
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work"
# BT-IO reads its parameters from inputbt.data in the working directory.
parameters() { printf 'w\n%s\n%s\n%s %s %s\n%s\n' "$1" "$2" "$grid" "$grid" "$grid" "$data" >inputbt.data; }
run() { mpirun.openmpi --oversubscribe -np "$np" "$@" "$btio" >/dev/null; }
printf '%-11s %5s %5s %9s %7s %7s %10s %10s %7s %s\n' method ranks steps "trace B" "steps+%" \
    "ranks+%" "untraced s" "traced s" ratio "written: trace / array"
read -r low_ranks _ <<<"$ranks"
read -r low_steps _ <<<"$steps"
for method in 0 1 3; do
    case $method in
    0) name=collective ;;
    1) name=independent ;;
    3) name=pnetcdf ;;
    esac
    declare -A sizes=()
    for np in $ranks; do
        for n in $steps; do
            parameters "$method" "$n"
            alternate "$rounds" "$data"
            sizes[$np@$n]=$(stat -c %s trace.cairn)
            written=$("$cairn" summary --json trace.cairn | python3 -c '
import json, sys
files = json.load(sys.stdin)["files"]
print(sum(f["bytes_written"] for f in files if "/btio." in f["path"]))')
            array=$((grid * grid * grid * 40 * n))
            # shellcheck disable=SC2086
            awk -v m="$name" -v r="$np" -v n="$n" -v b="${sizes[$np@$n]}" \
                -v s="${sizes[$np@$low_steps]}" -v k="${sizes[$low_ranks@$n]:-0}" \
                -v u="$(median ${untraced[*]})" -v t="$(median ${traced[*]})" \
                -v w="$written" -v a="$array" 'BEGIN {
                    steps = (n == '"$low_steps"') ? "-" : sprintf("%+.1f", 100 * (b - s) / s)
                    ranks = (r == '"$low_ranks"') ? "-" : sprintf("%+.1f", 100 * (b - k) / k)
                    printf "%-11s %5s %5s %9d %7s %7s %10.3f %10.3f %7.3f %d / %d\n",
                        m, r, n, b, steps, ranks, u, t, t / u, w, a }'
        done
    done
    unset sizes
done
