#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up (install missing packages, build) and run the whole test suite. `.ci/run` calls exactly this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# NOTE: in CI (CI=true, 2 cores) the CUDA units are built for sm_90 only, which halves their compile time; a local
# run builds the default architectures (80;90). NHVK_CMAKE_ARGS, when set, is used as given.
if [ "${CI:-}" = true ] && [ -z "${NHVK_CMAKE_ARGS:-}" ]; then
    export NHVK_CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90"
fi
"$here/scripts/setup.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900
