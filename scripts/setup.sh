#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages nhvk needs (idempotent: skips what is present), then configure and build.
# Usage: scripts/setup.sh [--target T] [--prefix DIR] [build-dir]     (run as root, or with sudo available)
#   --target T    build only CMake target T (run_example.sh builds `nhvk` alone; default: everything, the tests too)
#   --prefix DIR  then install into DIR: DIR/bin/nhvk, DIR/lib/libnhvk.so and DIR/share/nhvk/ (what model files
#                 compile against, models/, configs/), and the CMake package (DIR/include, DIR/lib/cmake/nhvk)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target=""
prefix=""
build=""
while (($#)); do
    case "$1" in
    --target) target="${2:?--target needs a CMake target}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    -*) echo "nhvk setup: unknown option '$1' (expected --target T, --prefix DIR, or a build folder)" >&2; exit 2 ;;
    *) build="$1"; shift ;;
    esac
done
build="${build:-$here/build}"

packages=(cmake g++ make libeigen3-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev librandom123-dev
          libgtest-dev libgmock-dev libomp-dev libthrust-dev libopenmpi-dev openmpi-bin libnetcdf-dev clang-format)
# NOTE: libthrust-dev (Thrust 1.17) serves the host reductions where there is no CUDA toolkit; with a toolkit, CMake
# prefers the toolkit's own Thrust, and the test build.no_cuda_toolkit still needs this one, so it is always installed.
# libopenmpi-dev and openmpi-bin (mpirun): `mpirun -np R nhvk run` and its tests; CMake leaves MPI out without them.
# libnetcdf-dev: stats.nc and sweep.nc (CMake leaves them out without it).
# clang-format: the test format.clang_format checks the committed .clang-format against every C++/CUDA file.
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "nhvk setup: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || echo "nhvk setup: nvcc not found, building without the CUDA backend" >&2

jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release ${NHVK_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs" ${target:+--target "$target"}
if [ -n "$prefix" ]; then
    cmake --install "$build" --prefix "$prefix" >/dev/null
    echo "nhvk setup: installed into $prefix (run $prefix/bin/nhvk)" >&2
fi
