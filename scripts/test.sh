#!/usr/bin/env bash
# The whole test suite: formatting, lints, the builds (the tests run programs under the
# freshly built libcairn.so; the trace-size tests under the release one), and every test
# of every crate. Ends with one line
# "N passed, N failed" totalled over all test binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo build --workspace
# The trace-size tests use the release build (what users run) when it is fresh.
cargo build --workspace --release
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "%d passed, %d failed\n", passed, failed }' "$log"
exit "$status"
