#!/usr/bin/env bash
# Real S3D-IO (wkliao/S3D-IO: the checkpoint kernel of the S3D combustion code, Fortran,
# through PnetCDF; built from its public source with Open MPI's mpif90 and Debian's
# PnetCDF; not bundled: pass its source tree). Every checkpoint is a new netCDF file named
# after the simulated time, 4 variables written collectively (blocking, method 0, or
# non-blocking, method 1) over a process grid; PnetCDF duplicates a communicator for each
# file. Built twice, for CHECKPOINTS="5 50" (its `i_time_end`); per method, rank count and
# checkpoint count: the trace's bytes, its growth with the checkpoints and with the ranks,
# the whole `mpirun` wall untraced and traced (alternating, medians, ratio), and the bytes
# the trace says reached the checkpoint files against what the arrays hold. The files go
# to /dev/shm.
#
# Usage: bench/s3dio.sh PATH_TO_S3D_IO_SOURCE [rounds=3] [grids="2x2x1 4x2x2"] [cells=40] [checkpoints="5 50"]
set -euo pipefail
cd "$(dirname "$0")/.."
source=${1:?usage: bench/s3dio.sh PATH_TO_S3D_IO_SOURCE [rounds] [grids] [cells] [checkpoints]}
rounds=${2:-3}
grids=${3:-"2x2x1 4x2x2"}
cells=${4:-40}
checkpoints=${5:-"5 50"}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
data=$(mktemp -d /dev/shm/cairn-s3dio.XXXXXX)
trap 'rm -rf "$work" "$data"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
# Debian's PnetCDF Fortran module lives with gfortran's other modules.
module=$(dirname "$(find /usr/lib -name pnetcdf.mod -print -quit)")
for n in $checkpoints; do
    cp -r "$source" "$work/s3d-$n"
    sed -i "s/i_time_end *= *[0-9]*/i_time_end = $n/" "$work/s3d-$n/param_m.f90"
    make -C "$work/s3d-$n" MPIF90=mpif90.openmpi FCFLAGS="-O2 -w" INC="-I$module" \
        LIBS=-lpnetcdf >/dev/null
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work"
read -r low_grid _ <<<"$grids"
read -r low_checkpoints _ <<<"$checkpoints"
printf '%-11s %6s %5s %9s %7s %7s %10s %10s %7s %s\n' method grid ckpts "trace B" "ckpts+%" \
    "ranks+%" "untraced s" "traced s" ratio "written: trace / arrays"
for method in 0 1; do
    name=blocking
    [ "$method" = 1 ] && name=nonblocking
    declare -A sizes=()
    for grid in $grids; do
        IFS=x read -r px py pz <<<"$grid"
        np=$((px * py * pz))
        for n in $checkpoints; do
            run() {
                mpirun.openmpi --oversubscribe -np "$np" "$@" "$work/s3d-$n/s3d_io.x" \
                    "$cells" "$cells" "$cells" "$px" "$py" "$pz" "$method" F "$data" >/dev/null
            }
            alternate "$rounds" "$data"
            sizes[$grid@$n]=$(stat -c %s trace.cairn)
            written=$("$cairn" summary --json trace.cairn | python3 -c '
import json, sys
files = json.load(sys.stdin)["files"]
print(sum(f["bytes_written"] for f in files if f["path"].endswith(".nc")))')
            # 16 doubles a grid point: 11 species, pressure, temperature, 3 velocities.
            arrays=$((cells * cells * cells * 16 * 8 * n))
            # shellcheck disable=SC2086
            awk -v m="$name" -v g="$grid" -v n="$n" -v b="${sizes[$grid@$n]}" \
                -v s="${sizes[$grid@$low_checkpoints]}" -v k="${sizes[$low_grid@$n]:-0}" \
                -v u="$(median ${untraced[*]})" -v t="$(median ${traced[*]})" \
                -v w="$written" -v a="$arrays" 'BEGIN {
                    steps = (n == '"$low_checkpoints"') ? "-" : sprintf("%+.1f", 100 * (b - s) / s)
                    ranks = (g == "'"$low_grid"'") ? "-" : sprintf("%+.1f", 100 * (b - k) / k)
                    printf "%-11s %6s %5s %9d %7s %7s %10.3f %10.3f %7.3f %d / %d\n",
                        m, g, n, b, steps, ranks, u, t, t / u, w, a }'
        done
    done
    unset sizes
done
