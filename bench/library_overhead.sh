#!/usr/bin/env bash
# Added cost per call of generated hooks (wrapgen's HDF5 rows), as bench/pwrite_overhead.sh
# measures the built-in ones: N calls each of H5Pset_alignment and of a one-double H5Dwrite
# (into an in-memory file), untraced and traced (LD_PRELOAD of the release libcairn.so),
# alternating, R rounds; prints the medians of ns/call, the added ns/call and the ratio.
#
# Usage: bench/library_overhead.sh [calls=200000] [rounds=7]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200000}
rounds=${2:-7}
cargo build --release --workspace --quiet
work=$(mktemp -d /dev/shm/cairn-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 -I/usr/include/hdf5/openmpi -o "$work/hdf5_loop" bench/hdf5_loop.c \
    -L/usr/lib/x86_64-linux-gnu/hdf5/openmpi -lhdf5
library=$(target/release/cairn lib)
untraced_set=(); untraced_write=(); traced_set=(); traced_write=()
for round in $(seq "$rounds"); do
    read -r set write < <(cd "$work" && ./hdf5_loop "$calls")
    untraced_set+=("$set"); untraced_write+=("$write")
    rm -rf "$work/staging"
    read -r set write < <(cd "$work" && CAIRN_DIR="$work/staging" LD_PRELOAD="$library" ./hdf5_loop "$calls")
    traced_set+=("$set"); traced_write+=("$write")
done
target/release/cairn merge "$work/staging" -o "$work/trace.cairn" 2>/dev/null
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
report() {
    local name=$1 base with
    base=$(median $2)
    with=$(median $3)
    awk -v n="$name" -v a="$base" -v b="$with" 'BEGIN { printf "%-18s untraced %8.1f ns/call, traced %8.1f, added %7.1f ns/call, ratio %.3f\n", n, a, b, b - a, b / a }'
}
echo "calls per run: $calls of each ($rounds rounds, alternating)"
report H5Pset_alignment "${untraced_set[*]}" "${traced_set[*]}"
report H5Dwrite "${untraced_write[*]}" "${traced_write[*]}"
echo "trace of one traced run: $(stat -c %s "$work/trace.cairn") bytes; $(target/release/cairn summary "$work/trace.cairn" | grep -E '^  (H5Pset_alignment|H5Dwrite) ' | awk '!seen[$1]++ {printf "%s %s calls; ", $1, $4}')"
