#!/usr/bin/env bash
# cairn's loop folding against Sequitur (the grammar compression of Recorder and Pilgrim),
# on the same symbols — each event's exactly-kept key after cairn's relative encodings —
# from real runs: the folded tree's nodes against the grammar's rules and symbols, and the
# throughput of each on one core (crates/trace/examples/grammar_comparison.rs).
#
# Usage: bench/grammar_comparison.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --quiet
cargo build --release --quiet -p cairn-trace --example grammar_comparison
root=$(pwd)
cairn=$root/target/release/cairn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/loops" tests/programs/loops.c
cc -O2 -o "$work/checkpoint" examples/checkpoint.c
python=$(python3 -c 'import sys; print(sys.executable)')
traces=()
trace() {
    local name=$1; shift
    local run="$work/run-${#traces[@]}"
    mkdir -p "$run"
    (cd "$run" && "$cairn" run -q -o trace.cairn -- "$@" >/dev/null)
    traces+=("$name=$run/trace.cairn")
}
trace "loops 10^3" "$work/loops" . 1000
trace "loops 10^5" "$work/loops" . 100000
trace "loops 10^6" "$work/loops" . 1000000
trace "checkpoint example" "$work/checkpoint"
trace "dd 4k x 100000" dd if=/dev/zero of=dd.out bs=4k count=100000 status=none
trace "tar /usr/include" tar cf include.tar -C /usr include
trace "python arrays" "$python" "$root/bench/python_arrays.py" .
"$root/target/release/examples/grammar_comparison" "${traces[@]}"
