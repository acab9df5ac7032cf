#!/usr/bin/env bash
# Real CoMD (ECP-copa/CoMD, the ExMatEx molecular-dynamics proxy: Lennard-Jones, link
# cells, a 3-D domain decomposition; built from its public source with Open MPI's mpicc;
# not bundled: pass a built `CoMD-mpi` or its source tree) on each number of RANKS under
# Open MPI, 10 × 10 × 10 unit cells (4,000 atoms) a rank, at STEPS and 10 × STEPS time
# steps: the trace's bytes, its streams, the tracer's staged record bytes, the whole
# `mpirun` wall untraced and traced (alternating, medians, ratio), and whether the trace's
# bytes sent equal its bytes received. Every step CoMD redistributes atoms and exchanges
# halos with `MPI_Sendrecv` along x, y and z, then reduces the energies.
#
# Usage: bench/comd.sh PATH_TO_COMD_MPI_OR_SOURCE [rounds=3] [ranks="4 16"] [steps=100]
set -euo pipefail
cd "$(dirname "$0")/.."
comd=${1:?usage: bench/comd.sh PATH_TO_COMD_MPI_OR_SOURCE [rounds] [ranks] [steps]}
rounds=${2:-3}
ranks=${3:-"4 16"}
steps=${4:-100}
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
if [ -d "$comd" ]; then
    cp -r "$comd" "$work/src"
    (cd "$work/src/src-mpi" && sed -e 's/^CC = mpicc$/CC = mpicc.openmpi/' -e 's/-O5/-O2/' \
        -e 's/-std=c99/-std=gnu99/' Makefile.vanilla >Makefile && make -j2 >/dev/null)
    comd=$work/src/bin/CoMD-mpi
fi
comd=$(realpath "$comd")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work"
# A grid of ranks as close to a cube as the count allows (4: 2 × 2 × 1, 16: 4 × 2 × 2).
grid() {
    python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
dims = [1, 1, 1]
left = n
while left > 1:
    p = next(q for q in range(2, left + 1) if left % q == 0)
    dims[dims.index(min(dims))] *= p
    left //= p
dims.sort(reverse=True)
print(*dims)
PY
}
run() {
    read -r i j k <<<"$(grid "$np")"
    mpirun.openmpi --oversubscribe -np "$np" "$@" "$comd" -i "$i" -j "$j" -k "$k" \
        -x $((10 * i)) -y $((10 * j)) -z $((10 * k)) -N "$run_steps" -n "$run_steps" >/dev/null
}
printf '%-5s %6s %10s %7s %10s %10s %10s %7s %s\n' ranks steps "trace B" streams "staged B" "untraced s" "traced s" ratio "sent = received"
for np in $ranks; do
    for run_steps in "$steps" $((10 * steps)); do
        untraced=()
        traced=()
        for round in $(seq "$rounds"); do
            start=$(now)
            run
            untraced+=("$(echo "$(now) - $start" | bc)")
            rm -rf trace.cairn .trace.cairn.staging-*
            start=$(now)
            run "$cairn" run -q --keep-staging -o trace.cairn --
            traced+=("$(echo "$(now) - $start" | bc)")
            [ "$round" = "$rounds" ] || rm -rf .trace.cairn.staging-*
        done
        staged=$(record_bytes .trace.cairn.staging-*)
        same=$("$cairn" summary --json trace.cairn | python3 -c 'import json,sys; m=json.load(sys.stdin)["mpi_messages"]; print("yes" if m["sent_bytes"] == m["received_bytes"] > 0 else "NO")')
        streams=$("$cairn" dump trace.cairn | grep '^pid ' | grep -vc '; as pid ' || true)
        # shellcheck disable=SC2086
        awk -v r="$np" -v n="$run_steps" -v b="$(stat -c %s trace.cairn)" -v c="$streams" -v s="$staged" \
            -v u="$(median ${untraced[*]})" -v t="$(median ${traced[*]})" -v same="$same" \
            'BEGIN { printf "%-5s %6d %10d %7d %10d %10.3f %10.3f %7.3f %s\n", r, n, b, c, s, u, t, t / u, same }'
        rm -rf .trace.cairn.staging-* CoMD-mpi.*.yaml
    done
done
