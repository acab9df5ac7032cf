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
if [ -d "$given" ]; then
    cp -r "$given" "$work/ior-src"
    (cd "$work/ior-src" && ./bootstrap && ./configure && make -j2) >"$work/ior-build.log" 2>&1
    ior=$work/ior-src/src/ior
else
    ior=$given
fi
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
# IOR's own options per mode: 4 KiB transfers (64 KiB for collective MPI-IO), write then read.
modes=(
    "posix-fpp|-a POSIX -F -w -r -b 128m -t 4k"
    "posix-shared|-a POSIX -w -r -b 32m -t 4k"
    "mpiio-collective|-a MPIIO -c -w -r -b 32m -t 64k"
)
printf '%-18s %9s %8s %8s %10s %10s %10s %7s\n' mode calls "trace B" "B/call" "staged B" "untraced s" "traced s" ratio
for mode in "${modes[@]}"; do
    name=${mode%%|*}
    options=${mode#*|}
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$ior" $options -o /dev/shm/cairn-bench-ior >/dev/null
        middle=$(now)
        rm -rf "$work/t.cairn" "$work"/.t.cairn.staging-*
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$cairn" run -q --keep-staging -o "$work/t.cairn" -- \
            "$ior" $options -o /dev/shm/cairn-bench-ior >/dev/null
        end=$(now)
        untraced+=("$(echo "$middle - $start" | bc)")
        traced+=("$(echo "$end - $middle" | bc)")
    done
    calls=$("$cairn" summary --json "$work/t.cairn" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
    bytes=$(stat -c %s "$work/t.cairn")
    staged=$(du -b -s "$work"/.t.cairn.staging-* | awk '{s += $1} END {print s}')
    base=$(median "${untraced[@]}")
    with=$(median "${traced[@]}")
    awk -v m="$name" -v c="$calls" -v b="$bytes" -v s="$staged" -v u="$base" -v t="$with" \
        'BEGIN { printf "%-18s %9d %8d %8.4f %10d %10.3f %10.3f %7.3f\n", m, c, b, b / c, s, u, t, t / u }'
done
