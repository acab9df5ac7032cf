#!/usr/bin/env bash
# Installs what cairn's build, example and tests need from Debian's packages, and nothing
# that is already there (safe to run any number of times). Needs root or sudo only when
# something is missing.
set -euo pipefail

needed=()
command -v cc >/dev/null 2>&1 || needed+=(gcc libc6-dev)
command -v python3 >/dev/null 2>&1 || needed+=(python3)
command -v dd >/dev/null 2>&1 || needed+=(coreutils)
# Open MPI and MPICH, for the tests of traced MPI programs under both ABI families (the
# tests call each by its own name, mpicc.openmpi or mpicc.mpich, whichever `mpicc` is).
{ command -v mpicc.openmpi && command -v mpirun.openmpi; } >/dev/null 2>&1 || needed+=(openmpi-bin libopenmpi-dev)
{ command -v mpicc.mpich && command -v mpirun.mpich; } >/dev/null 2>&1 || needed+=(mpich libmpich-dev)
# Open MPI's launcher insists on finding an ssh client even for ranks on this machine.
command -v ssh >/dev/null 2>&1 || needed+=(openssh-client)
# Fortran, for the Fortran MPI test (mpif90 drives gfortran).
command -v gfortran >/dev/null 2>&1 || needed+=(gfortran)
# Python virtual environments, for the export tests' readers from PyPI (below).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || needed+=(python3-venv)
# libotf2 and otf2-print, for the OTF2 export (cairn loads libotf2 at run time) and its test.
# (otf2-tools depends on the library.)
command -v otf2-print >/dev/null 2>&1 || needed+=(otf2-tools)
# Chromium, headless, for the HTML report's tests (the page is drawn by its own script).
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
# Parallel HDF5 over Open MPI, for the HDF5 layer's tests (a real H5Dwrite over MPI-IO),
# and the header cairn's HDF5 hooks are generated from.
[ -f /usr/include/hdf5/openmpi/hdf5.h ] || needed+=(libhdf5-openmpi-dev)
# PnetCDF (over Open MPI), for the NetCDF layer's tests.
[ -f /usr/include/pnetcdf.h ] || needed+=(libpnetcdf-dev)
# NetCDF (serial, NetCDF-4 over HDF5), for a library layer over another.
[ -f /usr/include/netcdf.h ] || needed+=(libnetcdf-dev)
# util-linux's unshare, for the full-staging test's private tmpfs.
command -v unshare >/dev/null 2>&1 || needed+=(util-linux)

if [ ${#needed[@]} -gt 0 ]; then
    echo "install-deps: installing ${needed[*]}" >&2
    sudo_if_needed=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo_if_needed=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_if_needed[@]}" apt-get update -qq
    "${sudo_if_needed[@]}" apt-get install -y -qq --no-install-recommends "${needed[@]}"
fi

# The readers the export tests check cairn's output with, from PyPI, in a virtual
# environment of the repository's own (target/python-tests): Perfetto's trace schema as
# its Python package ships it (its trace processor is a download made at run time, which
# the tests do not rely on), pyarrow for the Parquet tables, and maturin, which builds the
# Python package (python/). The package's own dependencies are kept as wheels in
# target/wheelhouse, so its test installs it in a fresh environment without the network.
cd "$(dirname "$0")/.."
venv=target/python-tests
if ! "$venv/bin/python" -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2, pyarrow.parquet' >/dev/null 2>&1 \
    || [ ! -x "$venv/bin/maturin" ]; then
    echo "install-deps: installing perfetto, pyarrow and maturin into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'perfetto==0.59.1' 'protobuf>=6.31.1,<7' 'pyarrow>=18' 'maturin>=1.5,<2'
fi
if ! ls target/wheelhouse/pandas-*.whl target/wheelhouse/numpy-*.whl >/dev/null 2>&1; then
    echo "install-deps: keeping numpy's and pandas' wheels in target/wheelhouse" >&2
    "$venv/bin/pip" download -q -d target/wheelhouse 'numpy>=1.22' 'pandas>=1.5'
fi
