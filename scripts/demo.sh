#!/usr/bin/env bash
# Builds cairn and runs its main job on the bundled example: trace it, summarise it, and
# write its HTML report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo build --release --workspace
mkdir -p target/demo
cc -O2 -o target/demo/checkpoint examples/checkpoint.c
cd target/demo
rm -f checkpoint.cairn
../release/cairn run -o checkpoint.cairn -- ./checkpoint
../release/cairn summary checkpoint.cairn
../release/cairn report checkpoint.cairn -o checkpoint.html
echo "open target/demo/checkpoint.html in a browser for the I/O network, timeline and tables"
