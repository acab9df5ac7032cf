#!/usr/bin/env bash
# Real LAMMPS (Debian's `lammps` package, `lmp`; not installed by scripts/install-deps.sh:
# `apt-get install lammps`) running its Lennard-Jones melt benchmark on RANKS ranks under
# Open MPI, per precision level: the trace's bytes at STEPS and at 10 × STEPS time steps,
# the tracer's staged record bytes, the whole `mpirun` wall untraced and traced
# (alternating, medians, ratio), and whether the bytes sent, received and posted for are
# the lossless trace's. LAMMPS's halo exchange posts each MPI_Irecv for exactly the ghost
# count its neighbour sends, and the counts change at every neighbour-list rebuild (every
# 20 steps here): nothing repeats exactly for longer.
#
# Usage: bench/lammps.sh [rounds=3] [ranks="4"] [steps=100] [levels="100 90 0"] [scales="1 10"]
#   each number of ranks in turn; steps × each scale.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
ranks=${2:-4}
steps=${3:-100}
levels=${4:-"100 90 0"}
scales=${5:-"1 10"}
command -v lmp >/dev/null || { echo "no lmp: apt-get install lammps" >&2; exit 2; }
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat >"$work/in.lj" <<'EOF'
# 3-D Lennard-Jones melt (LAMMPS's bench/in.lj), a 10 × 10 × 10 lattice (4,000 atoms).
variable steps index 100
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
thermo 50
run ${steps}
EOF
cd "$work"
lammps() { mpirun.openmpi --oversubscribe -np "$np" "$@" lmp -in in.lj -var steps "$run_steps" -log none -screen none; }
messages() { "$cairn" summary --json "$1" | python3 -c 'import json,sys; m=json.load(sys.stdin)["mpi_messages"]; print(m["sent_bytes"], m["received_bytes"], m["posted_receive_bytes"])'; }
printf '%-5s %-6s %6s %10s %10s %10s %10s %7s %s\n' ranks level steps "trace B" "staged B" "untraced s" "traced s" ratio "messages as lossless"
for np in $ranks; do
for scale in $scales; do
    run_steps=$((scale * steps))
    lossless=""
    for level in $levels; do
        untraced=()
        traced=()
        for round in $(seq "$rounds"); do
            start=$(now)
            lammps
            untraced+=("$(echo "$(now) - $start" | bc)")
            rm -rf trace.cairn .trace.cairn.staging-*
            start=$(now)
            lammps "$cairn" run -q --keep-staging --precision "$level" -o trace.cairn --
            traced+=("$(echo "$(now) - $start" | bc)")
            [ "$round" = "$rounds" ] || rm -rf .trace.cairn.staging-*
        done
        staged=$(record_bytes .trace.cairn.staging-*)
        figures=$(messages trace.cairn)
        [ -n "$lossless" ] || lossless=$figures
        same=$([ "$figures" = "$lossless" ] && echo yes || echo "NO ($figures vs $lossless)")
        # shellcheck disable=SC2086
        awk -v r="$np" -v l="$level" -v n="$run_steps" -v b="$(stat -c %s trace.cairn)" -v s="$staged" \
            -v u="$(median ${untraced[*]})" -v t="$(median ${traced[*]})" -v same="$same" \
            'BEGIN { printf "%-5s %-6s %6d %10d %10d %10.3f %10.3f %7.3f %s\n", r, l, n, b, s, u, t, t / u, same }'
        rm -rf .trace.cairn.staging-*
    done
done
done
