#!/usr/bin/env bash
# Trace size against the raw event stream: for test programs and real programs, the number
# of events, the raw staging segments the preload library wrote (80-byte records), those
# segments compressed with `zstd -19`, and the cairn trace (folded streams, sections
# zstd-compressed). Also the trace size of tests/programs/loops.c as iterations grow.
#
# Usage: bench/trace_sizes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v zstd >/dev/null || { echo "needs zstd (apt-get install zstd)" >&2; exit 1; }
cargo build --release --workspace --quiet
root=$(pwd)
cairn=$root/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/loops" tests/programs/loops.c
cc -O2 -o "$work/checkpoint" examples/checkpoint.c
cc -O1 -fno-builtin -o "$work/posix_basic" tests/programs/posix_basic.c
cc -O1 -fno-builtin -o "$work/stdio" tests/programs/stdio.c
python=$(python3 -c 'import sys; print(sys.executable)')

measure() {
    local name=$1; shift
    local run="$work/run-$name"
    mkdir -p "$run"
    # CAIRN_RUNS=0: the staging keeps every call as its own record, so the zstd column
    # compresses the raw event stream itself (the tracer's run records would fold part of it).
    (cd "$run" && CAIRN_RUNS=0 "$cairn" run -q --keep-staging -o trace.cairn -- "$@" >/dev/null)
    local staging
    staging=$(ls -d "$run"/.trace.cairn.staging-* | head -1)
    local events
    events=$("$cairn" summary --json --all "$run/trace.cairn" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
    # The records actually written (chunks are pre-allocated, so count used bytes only).
    local raw zstd_raw
    raw=$((events * 80))
    zstd_raw=$(cat "$staging"/*.seg | zstd -19 -q -c | wc -c)
    local trace
    trace=$(stat -c %s "$run/trace.cairn")
    printf '%-22s %10s %12s %12s %10s %8.1fx\n' "$name" "$events" "$raw" "$zstd_raw" "$trace" "$(echo "$zstd_raw / $trace" | bc -l)"
}

printf '%-22s %10s %12s %12s %10s %9s\n' workload events "raw B" "zstd(raw) B" "cairn B" "gain"
measure "loops 10^3" "$work/loops" . 1000
measure "loops 10^5" "$work/loops" . 100000
measure "checkpoint example" "$work/checkpoint"
measure "posix_basic test" "$work/posix_basic" .
measure "stdio test" "$work/stdio" .
measure "dd 4k x 100000" dd if=/dev/zero of=dd.out bs=4k count=100000 status=none
measure "tar /usr/include" tar cf include.tar -C /usr include
measure "python arrays" "$python" "$root/bench/python_arrays.py" .
echo
echo "loops.c trace size and summary time (median of 5) against outer iterations:"
for iterations in 1000 10000 100000 1000000; do
    run="$work/iterations-$iterations"
    mkdir -p "$run"
    (cd "$run" && "$cairn" run -q -o trace.cairn -- "$work/loops" . "$iterations")
    times=()
    for _ in 1 2 3 4 5; do
        start=$(date +%s%N)
        "$cairn" summary --json "$run/trace.cairn" >/dev/null
        times+=($(( ($(date +%s%N) - start) / 1000 )))
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
    printf '  %8s iterations (%8s events): %6s B, summary %6s us\n' "$iterations" "$((iterations * 6 + 8 * iterations / 10 + 12))" "$(stat -c %s "$run/trace.cairn")" "$median"
done
