#!/usr/bin/env bash
# Regenerates the call-table rows cairn generates from libraries' headers with
# `cairn wrapgen`, from Debian's headers (scripts/install-deps.sh installs them):
# crates/model/src/calls/hdf5.rs, pnetcdf.rs and netcdf.rs. A test (crates/cli/tests/libraries.rs)
# fails when a checked-in file differs from what this writes, so rerun it after changing
# wrapgen or the lists of calls.
#
# Usage: scripts/generate-calls.sh [DIR]   (default: crates/model/src/calls)
set -euo pipefail
cd "$(dirname "$0")/.."
cairn=${CAIRN:-target/debug/cairn}
directory=${1:-crates/model/src/calls}
mpi_include=/usr/lib/x86_64-linux-gnu/openmpi/include
list() { tr -s ' \n' ',' < "$1" | sed 's/,$//'; }
# HDF5: files, datasets, attributes and groups (open, create, read, write, close), and the
# property-list calls that decide collective I/O, chunking and alignment. Its rows go on
# to PnetCDF's.
"$cairn" wrapgen /usr/include/hdf5/openmpi/hdf5.h --layer hdf5 -I "$mpi_include" \
    --include "$(list scripts/hdf5-calls.txt)" \
    --macro-name for_each_generated_call --then for_each_pnetcdf_call -o "$directory/hdf5.rs"
# PnetCDF: datasets (create, open, close, sync, define mode), dimensions, variables,
# attributes, and typed array reads and writes, independent and collective.
"$cairn" wrapgen /usr/include/pnetcdf.h --layer netcdf -I "$mpi_include" \
    --include "$(list scripts/pnetcdf-calls.txt)" \
    --macro-name for_each_pnetcdf_call --then for_each_netcdf_call -o "$directory/pnetcdf.rs"
# NetCDF (serial; NetCDF-4 files through HDF5, whose calls it makes are hooked as HDF5's):
# the same, without the collective forms.
"$cairn" wrapgen /usr/include/netcdf.h --layer netcdf \
    --include "$(list scripts/netcdf-calls.txt)" \
    --macro-name for_each_netcdf_call -o "$directory/netcdf.rs"
