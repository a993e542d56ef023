#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package's tests (python/, tests/python/) against a build's nhvk, in a fresh virtual environment.
# Usage: run_pytest.sh BUILD_DIR [PYTEST_ARGS...]   (BUILD_DIR/nhvk is the executable under test; PYTEST_ARGS go to
#        pytest, e.g. -m "not netcdf" for a build without the netCDF library, which writes no stats.nc or sweep.nc)
# Creates BUILD_DIR/python-venv anew (python3 -m venv --clear; $PYTHON instead of python3 if set), installs the
# package with its plot extra and pytest from PyPI (needs network access to PyPI or a configured mirror), prints
# the versions used and runs pytest on tests/python with NHVK_EXECUTABLE=BUILD_DIR/nhvk. Exits non-zero on any
# failure. Writes nothing into the source tree: the package is built from a copy under BUILD_DIR (setuptools
# builds in the tree it is given), pytest's temporaries go to BUILD_DIR/python-pytest-tmp, no bytecode or cache.
set -euo pipefail

die() {
    echo "run_pytest.sh: $*" >&2
    exit 1
}

[ $# -ge 1 ] || die "usage: run_pytest.sh BUILD_DIR [PYTEST_ARGS...]"
[ -d "$1" ] || die "BUILD_DIR '$1' is not a folder"
build="$(cd "$1" && pwd)"
shift
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exe="$build/nhvk"
[ -f "$exe" ] && [ -x "$exe" ] || die "no nhvk executable at '$exe': build it first (cmake --build '$build')"

python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || die "'$python' not found: the Python tests need Python >= 3.9"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
    die "$("$python" --version 2>&1) is too old: the nhvk package needs Python >= 3.9"

venv="$build/python-venv"
"$python" -m venv --clear "$venv" ||
    die "'$python -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
vpy="$venv/bin/python"

src="$build/python-src"
rm -rf "$src"
cp -R "$repo/python" "$src"
rm -rf "$src/build" "$src"/src/*.egg-info

export PIP_DISABLE_PIP_VERSION_CHECK=1
"$vpy" -m pip install --quiet "$src[plot]" pytest || die "pip install of the package or pytest failed"

echo "run_pytest.sh: $("$vpy" --version 2>&1) in $venv"
echo "run_pytest.sh: $("$vpy" -m pip --version)"
echo "run_pytest.sh: $("$vpy" -m pytest --version 2>&1)"
echo "run_pytest.sh: nhvk package $("$vpy" -c 'import nhvk; print(nhvk.__version__)'), NHVK_EXECUTABLE=$exe"

export NHVK_EXECUTABLE="$exe"
export PYTHONDONTWRITEBYTECODE=1
export MPLBACKEND=Agg
cd "$repo/tests/python"
exec "$vpy" -m pytest -p no:cacheprovider --basetemp="$build/python-pytest-tmp" "$@" "$repo/tests/python"
