#!/usr/bin/env bash
# Regenerates the call-table rows cairn generates from libraries' headers
# (crates/model/src/calls/generated.rs) with `cairn wrapgen`, from Debian's headers
# (scripts/install-deps.sh installs them). A test (crates/cli/tests/libraries.rs) fails when
# the checked-in file differs from what this prints, so rerun it after changing wrapgen.
set -euo pipefail
cd "$(dirname "$0")/.."
cairn=${CAIRN:-target/debug/cairn}
# Where the module goes (a test writes it elsewhere and compares).
output=${1:-crates/model/src/calls/generated.rs}
# HDF5: files, datasets, attributes and groups (open, create, read, write, close), and the
# property-list calls that decide collective I/O, chunking and alignment.
"$cairn" wrapgen /usr/include/hdf5/openmpi/hdf5.h --layer hdf5 \
    -I /usr/lib/x86_64-linux-gnu/openmpi/include \
    --include "$(tr -s ' \n' ',' < scripts/hdf5-calls.txt | sed 's/,$//')" \
    --macro-name for_each_generated_call -o "$output"
