#!/usr/bin/env bash
# Real IOR (https://github.com/hpc/ior, built from its public source) untraced and traced
# by cairn, 4 ranks on this machine under Open MPI, data on /dev/shm: alternating runs,
# medians of the whole `mpirun` wall time, ratio; the trace's size, bytes per call, and
# the staging's size. IOR is not bundled (CI cannot fetch): pass the path of an `ior`
# binary, or of an IOR source tree to build it in a temporary directory.
#
# Usage: bench/ior.sh IOR_BINARY_OR_SOURCE [rounds=5] [ranks=4]
set -euo pipefail
cd "$(dirname "$0")/.."
given=${1:?usage: bench/ior.sh IOR_BINARY_OR_SOURCE [rounds] [ranks]}
rounds=${2:-5}
ranks=${3:-4}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work" /dev/shm/cairn-bench-ior*' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
ior=$(ior_tree_program "$given" "$work" ior)
# IOR's own options per mode: 4 KiB transfers (64 KiB for collective MPI-IO), write then read;
# -z: each block once, at shuffled offsets.
modes=(
    "posix-fpp|-a POSIX -F -w -r -b 128m -t 4k"
    "posix-shared|-a POSIX -w -r -b 32m -t 4k"
    "mpiio-collective|-a MPIIO -c -w -r -b 32m -t 64k"
    "posix-fpp-random|-a POSIX -F -z -w -r -b 32m -t 4k"
)
# HDF5 (when the IOR given has the backend): a dataset per segment, 10 and then 100
# segments of 64 KiB a rank in 16 KiB transfers, written and read back: how the trace
# grows with the segments.
help=$("$ior" -h 2>&1 || true)
if [[ $help == *"Module HDF5"* ]]; then
    modes+=(
        "hdf5-10-segments|-a HDF5 -w -r -b 64k -t 16k -s 10"
        "hdf5-100-segments|-a HDF5 -w -r -b 64k -t 16k -s 100"
    )
fi
report_header mode
for mode in "${modes[@]}"; do
    name=${mode%%|*}
    options=${mode#*|}
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$ior" $options -o /dev/shm/cairn-bench-ior >/dev/null
        untraced+=("$(echo "$(now) - $start" | bc)")
        # The previous round's trace and staging are removed outside the timed runs.
        rm -rf "$work/t.cairn" "$work"/.t.cairn.staging-*
        start=$(now)
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$cairn" run -q --keep-staging -o "$work/t.cairn" -- \
            "$ior" $options -o /dev/shm/cairn-bench-ior >/dev/null
        traced+=("$(echo "$(now) - $start" | bc)")
    done
    report_trace "$name" "$cairn" "$work/t.cairn" "${untraced[*]}" "${traced[*]}"
done
