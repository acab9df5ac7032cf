#!/usr/bin/env bash
# Real MPI point-to-point benchmarks (the OSU micro-benchmarks, built from their public
# source, e.g. `fetch github:forresti/osu-micro-benchmarks`) under `cairn run`, 2 ranks of
# Open MPI on this machine: per benchmark the bytes sent, received and posted for as the
# summary counts them (received must equal sent), and the whole `mpirun` wall time untraced
# and traced (alternating runs, medians). Not bundled (CI cannot fetch): pass the directory
# holding the built osu_bw, osu_bibw and osu_latency, or the source tree to build them.
#
# Usage: bench/osu_messages.sh OSU_PT2PT_DIR_OR_SOURCE [rounds=3]
set -euo pipefail
cd "$(dirname "$0")/.."
given=${1:?usage: bench/osu_messages.sh OSU_PT2PT_DIR_OR_SOURCE [rounds]}
rounds=${2:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -f "$given/configure" ]; then
    cp -r "$given" "$work/osu-src"
    (cd "$work/osu-src" && ./configure CC=mpicc.openmpi CXX=mpicxx.openmpi && make -j2) \
        >"$work/osu-build.log" 2>&1
    binaries=$work/osu-src/mpi/pt2pt
else
    binaries=$given
fi
# shellcheck source=bench/common.sh
. bench/common.sh
printf '%-12s %14s %14s %14s %10s %10s %7s\n' benchmark sent received posted "untraced s" "traced s" ratio
for benchmark in osu_latency osu_bw osu_bibw; do
    untraced=()
    traced=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        mpirun.openmpi --oversubscribe -np 2 "$binaries/$benchmark" -i 20 -x 2 >/dev/null
        untraced+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        rm -f "$work/$benchmark.cairn"
        start=$(now)
        mpirun.openmpi --oversubscribe -np 2 "$cairn" run -q -o "$work/$benchmark.cairn" -- \
            "$binaries/$benchmark" -i 20 -x 2 >/dev/null
        traced+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
    done
    read -r sent received posted < <("$cairn" summary --json "$work/$benchmark.cairn" | python3 -c '
import json, sys
m = json.load(sys.stdin)["mpi_messages"]
print(m["sent_bytes"], m["received_bytes"], m["posted_receive_bytes"])')
    # shellcheck disable=SC2086
    u=$(median ${untraced[*]})
    # shellcheck disable=SC2086
    t=$(median ${traced[*]})
    awk -v n="$benchmark" -v s="$sent" -v r="$received" -v p="$posted" -v u="$u" -v t="$t" \
        'BEGIN { printf "%-12s %14.0f %14.0f %14.0f %10.4f %10.4f %7.3f\n", n, s, r, p, u, t, t / u }'
done
