#!/usr/bin/env bash
# Memory high-water marks: the traced program's peak resident memory with and without the
# tracer (10 million one-byte pwrite calls, tests/programs/many_calls.c, which prints its own
# VmHWM); the same for 256 threads alive at once, each staging 2,000 pwrites one by one
# (tests/programs/many_threads.c), and for 1,000,000 distinct paths named
# (tests/programs/many_paths.c; the path table's budget); and the peak resident memory of
# building the trace (`cairn merge`) for the first run and for `tar` of /usr/lib
# (irregular I/O).
#
# Usage: bench/memory.sh [calls=10000000]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-10000000}
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
cargo build --release --workspace --quiet
cairn=$(pwd)/target/release/cairn
library=$("$cairn" lib)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/many_calls" tests/programs/many_calls.c
untraced=$("$work/many_calls" "$work/target.dat" "$calls")
traced=$(CAIRN_DIR="$work/staging" LD_PRELOAD="$library" "$work/many_calls" "$work/target.dat" "$calls")
echo "traced program, $calls pwrite calls: peak RSS $untraced KiB untraced, $traced KiB traced (+$((traced - untraced)) KiB)"
echo "staging written: $(du -sk "$work/staging" | cut -f1) KiB"
/usr/bin/time -f "cairn merge of that run: %e s, peak RSS %M KiB" "$cairn" merge "$work/staging" -o "$work/many.cairn" 2>&1 | grep -v '^cairn:'
rm -rf "$work/staging"
cc -O2 -pthread -o "$work/many_threads" tests/programs/many_threads.c
untraced=$("$work/many_threads" "$work/target.dat" 256 2000)
traced=$(CAIRN_DIR="$work/staging" LD_PRELOAD="$library" "$work/many_threads" "$work/target.dat" 256 2000)
echo "traced program, 256 threads x 2000 pwrites staged one by one: peak RSS $untraced KiB untraced, $traced KiB traced (+$((traced - untraced)) KiB)"
rm -rf "$work/staging"
cc -O2 -o "$work/many_paths" tests/programs/many_paths.c
untraced=$("$work/many_paths" "$work" 1000000)
traced=$(CAIRN_DIR="$work/staging" LD_PRELOAD="$library" "$work/many_paths" "$work" 1000000)
echo "traced program, 1000000 distinct paths: peak RSS $untraced KiB untraced, $traced KiB traced (+$((traced - untraced)) KiB)"
rm -rf "$work/staging"
mkdir -p "$work/tar"
(cd "$work/tar" && CAIRN_DIR="$work/staging" LD_PRELOAD="$library" tar cf usr-lib.tar -C /usr lib && rm -f usr-lib.tar)
/usr/bin/time -f "cairn merge of tar cf /usr/lib: %e s, peak RSS %M KiB" "$cairn" merge "$work/staging" -o "$work/tar.cairn" 2>&1 | grep -v '^cairn:'
/usr/bin/time -f "cairn summary of it: %e s, peak RSS %M KiB" "$cairn" summary "$work/tar.cairn" 2>&1 >/dev/null | tail -1
