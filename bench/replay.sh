#!/usr/bin/env bash
# Replay fidelity on the pattern corpus: each program run untraced (wall time), traced, and
# its trace replayed by `cairn replay` (with the recorded compute time); R alternating
# rounds, medians of the program's wall, the replay's wall, and their ratio, and the bytes
# the replay moved against the trace's.
#
# Then MPI jobs under Open MPI's mpirun: the ring with MPI-IO and the 2-D halo exchange
# (4 ranks), the irregular program (8 ranks) traced lossless and at precision 0 (its
# histogram trace replayed by derived receives), from tests/programs, and real IOR (hpc/ior, built from its public source: pass
# its binary as IOR=/path/to/ior; CI cannot fetch it) with its MPIIO and POSIX backends;
# each job run untraced and its lossless trace replayed by `mpirun -np 4 cairn replay`,
# alternating, medians of both jobs' walls (launch included) and of the replay's own time
# against the recorded run's.
#
# Last, replays on another rank count: a job traced on 4 ranks, replayed on 8 with
# `--scale-ranks 8`, against the job itself run on 8 (both walls, alternating, medians):
# patterns/slabs (a 1-D decomposition with a file per rank) and, given IOR, its POSIX
# file-per-process and MPIIO backends.
#
# Usage: [IOR=path] bench/replay.sh [rounds=3] [scale=10]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
scale=${2:-10}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/common.sh
. bench/common.sh
printf '%-16s %10s %10s %8s %14s\n' pattern "program s" "replay s" ratio "bytes moved"
for spec in "ior_posix 4" "checkpoint_restart 2" "random_reads 1000"; do
    read -r name n <<<"$spec"
    [ -f "tests/programs/patterns/$name.c" ] || continue
    cc -O2 -o "$work/$name" "tests/programs/patterns/$name.c"
    rm -rf "$work/d" && mkdir "$work/d"
    "$cairn" run -q -o "$work/$name.cairn" -- "$work/$name" "$work/d" "$((n * scale))"
    programs=() replays=()
    for _ in $(seq "$rounds"); do
        rm -rf "$work/d" && mkdir "$work/d"
        start=$(now)
        "$work/$name" "$work/d" "$((n * scale))" >/dev/null
        programs+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        rm -rf "$work/root"
        start=$(now)
        "$cairn" replay --json --root "$work/root" "$work/$name.cairn" >"$work/fidelity.json"
        replays+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
    done
    # shellcheck disable=SC2086
    program=$(median ${programs[*]})
    # shellcheck disable=SC2086
    replay=$(median ${replays[*]})
    moved=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print("%d/%d" % (f["bytes_read"] + f["bytes_written"], f["recorded_bytes_read"] + f["recorded_bytes_written"]))' "$work/fidelity.json")
    awk -v n="$name" -v p="$program" -v r="$replay" -v m="$moved" \
        'BEGIN { printf "%-16s %10.4f %10.4f %8.2f %14s\n", n, p, r, r / p, m }'
done

echo
printf '%-16s %10s %10s %8s %12s %12s %8s %14s\n' "MPI job" "job s" "replay s" ratio "recorded s" "replayed s" ratio "bytes moved"
# name, ranks, precision of the trace, program.
mpi_jobs=("ring 4 100 mpi_ring_io" "halo2d 4 100 patterns/halo2d"
    "irregular 8 100 patterns/irregular" "irregular-p0 8 0 patterns/irregular")
if [ -n "${IOR:-}" ]; then
    mpi_jobs+=("ior-mpiio 4 100 IOR:-a MPIIO" "ior-posix 4 100 IOR:-a POSIX")
fi
for spec in "${mpi_jobs[@]}"; do
    read -r name ranks precision what <<<"$spec"
    mkdir -p "$work/$name.d"
    case "$what" in
        IOR:*)
            command=("$IOR" ${what#IOR:} -b 4m -t 256k -s 4 -w -r -o "$work/$name.d/ior.dat")
            ;;
        *)
            mpicc.openmpi -O2 -o "$work/$name" "tests/programs/$what.c" -lm
            command=("$work/$name" "$work/$name.d")
            case "$name" in
                halo2d) command+=("$((20 * scale))") ;;
                irregular*) command=("$work/$name" "$((5 * scale))" "$work/$name.d/log") ;;
            esac
            ;;
    esac
    job() { mpirun.openmpi --oversubscribe -np "$ranks" "$@"; }
    job "$cairn" run -q --precision "$precision" -o "$work/$name.cairn" -- "${command[@]}" >/dev/null
    programs=() replays=() inner=() recorded=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        job "${command[@]}" >/dev/null
        programs+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        rm -rf "$work/root"
        start=$(now)
        job "$cairn" replay --json --root "$work/root" "$work/$name.cairn" >"$work/fidelity.json"
        replays+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        inner+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay_seconds"])' "$work/fidelity.json")")
        recorded+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recorded_seconds"])' "$work/fidelity.json")")
    done
    # shellcheck disable=SC2086
    program=$(median ${programs[*]})
    # shellcheck disable=SC2086
    replay=$(median ${replays[*]})
    # shellcheck disable=SC2086
    replayed=$(median ${inner[*]})
    # shellcheck disable=SC2086
    was=$(median ${recorded[*]})
    moved=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print("%d/%d" % (f["bytes_read"] + f["bytes_written"], f["recorded_bytes_read"] + f["recorded_bytes_written"]))' "$work/fidelity.json")
    awk -v n="$name" -v p="$program" -v r="$replay" -v w="$was" -v i="$replayed" -v m="$moved" \
        'BEGIN { printf "%-16s %10.4f %10.4f %8.2f %12.4f %12.4f %8.2f %14s\n", n, p, r, r / p, w, i, i / w, m }'
done

echo
printf '%-16s %10s %10s %8s %14s\n' "4 -> 8 ranks" "job@8 s" "replay s" ratio "bytes moved"
scaled_jobs=("slabs patterns/slabs")
if [ -n "${IOR:-}" ]; then
    scaled_jobs+=("ior-posix-F IOR:-a POSIX -F" "ior-mpiio IOR:-a MPIIO")
fi
for spec in "${scaled_jobs[@]}"; do
    read -r name what <<<"$spec"
    mkdir -p "$work/$name.s"
    case "$what" in
        IOR:*)
            command=("$IOR" ${what#IOR:} -b 4m -t 256k -s 4 -w -r -o "$work/$name.s/ior.dat")
            ;;
        *)
            mpicc.openmpi -O2 -o "$work/$name" "tests/programs/$what.c"
            command=("$work/$name" "$work/$name.s" "$((20 * scale))")
            ;;
    esac
    mpirun.openmpi --oversubscribe -np 4 "$cairn" run -q -o "$work/$name-4.cairn" -- "${command[@]}" >/dev/null
    programs=() replays=()
    for _ in $(seq "$rounds"); do
        start=$(now)
        mpirun.openmpi --oversubscribe -np 8 "${command[@]}" >/dev/null
        programs+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
        rm -rf "$work/root"
        start=$(now)
        mpirun.openmpi --oversubscribe -np 8 "$cairn" replay --json --scale-ranks 8 \
            --root "$work/root" "$work/$name-4.cairn" >"$work/fidelity.json"
        replays+=("$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')")
    done
    # shellcheck disable=SC2086
    program=$(median ${programs[*]})
    # shellcheck disable=SC2086
    replay=$(median ${replays[*]})
    moved=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print("%d/%d" % (f["bytes_read"] + f["bytes_written"], f["recorded_bytes_read"] + f["recorded_bytes_written"]))' "$work/fidelity.json")
    awk -v n="$name" -v p="$program" -v r="$replay" -v m="$moved" \
        'BEGIN { printf "%-16s %10.4f %10.4f %8.2f %14s\n", n, p, r, r / p, m }'
done
