#!/usr/bin/env bash
# The whole test suite: formatting, lints, the build (the tests run programs under the
# freshly built libcairn.so), and every test of every crate.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo build --workspace
cargo test --workspace
