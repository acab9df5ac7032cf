#!/usr/bin/env bash
# Real mdtest (the metadata benchmark in https://github.com/hpc/ior, built from its public
# source: src/mdtest beside src/ior) untraced and traced by cairn, 4 ranks on this machine
# under Open MPI, its tree in /dev/shm: alternating runs, medians of the whole `mpirun`
# wall time, ratio; the trace's size, bytes per call and staging; then, per mode, the
# trace's size at ten times the items (it should not grow). Not bundled (CI cannot fetch):
# pass the path of an `mdtest` binary, or of an IOR source tree to build it.
#
# Usage: bench/mdtest.sh MDTEST_BINARY_OR_IOR_SOURCE [rounds=5] [ranks=4] [items=1000]
set -euo pipefail
cd "$(dirname "$0")/.."
given=${1:?usage: bench/mdtest.sh MDTEST_BINARY_OR_IOR_SOURCE [rounds] [ranks] [items]}
rounds=${2:-5}
ranks=${3:-4}
items=${4:-1000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
tree=$(mktemp -d /dev/shm/cairn-bench-mdtest.XXXXXX)
trap 'rm -rf "$work" "$tree"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
mdtest=$(ior_tree_program "$given" "$work" mdtest)
# mdtest's own options per mode (-n items per rank, one iteration): files only; files and
# directories (create, stat, rename, remove); 4 KiB written and read back per file; a
# tree of depth 2 and branching 3 with a directory per rank (-u).
modes=(
    "files|-F"
    "files-and-dirs|"
    "files-4k-data|-F -w 4096 -e 4096"
    "tree-unique-dirs|-z 2 -b 3 -u"
)
report_header mode
sizes=()
for mode in "${modes[@]}"; do
    name=${mode%%|*}
    options=${mode#*|}
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        rm -rf "${tree:?}"/*
        start=$(now)
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$mdtest" -n "$items" -i 1 $options -d "$tree" >/dev/null
        untraced+=("$(echo "$(now) - $start" | bc)")
        rm -rf "${tree:?}"/* "$work/t.cairn" "$work"/.t.cairn.staging-*
        start=$(now)
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$cairn" run -q --keep-staging -o "$work/t.cairn" -- \
            "$mdtest" -n "$items" -i 1 $options -d "$tree" >/dev/null
        traced+=("$(echo "$(now) - $start" | bc)")
    done
    report_trace "$name" "$cairn" "$work/t.cairn" "${untraced[*]}" "${traced[*]}"
    small=$(stat -c %s "$work/t.cairn")
    rm -rf "${tree:?}"/* "$work/t10.cairn"
    # shellcheck disable=SC2086
    mpirun --oversubscribe -np "$ranks" "$cairn" run -q -o "$work/t10.cairn" -- \
        "$mdtest" -n $((10 * items)) -i 1 $options -d "$tree" >/dev/null
    sizes+=("$name: $small B at -n $items, $(stat -c %s "$work/t10.cairn") B at -n $((10 * items)) ($(trace_calls "$cairn" "$work/t10.cairn") calls)")
done
echo
printf '%s\n' "${sizes[@]}"
