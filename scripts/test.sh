#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up (install missing packages, build) and run the whole test suite. `.ci/run` calls exactly this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# NOTE: in CI (CI=true, 2 cores, no GPU) the CUDA units are compiled to sm_90 PTX only (`90-virtual`): the CUDA C++
# is compiled and checked in full, but ptxas, which takes two thirds of a unit's time (ball_on_turntable: 229 s with
# SASS, 79 s PTX only), is left to the driver's JIT on a GPU. bench/kernel_resources.sh runs ptxas for the register
# and spill table. The C++ is compiled at -Og there: the per-model host units and the interpreter's units are most of
# CI's build, and -Og compiles them several times faster than -O1 while the tests that integrate them run as fast
# (they spend their time elsewhere; bench/results/2026-11-29-ci-og.md). A model file compiled at run time takes the
# build's flags, so the model-file tests' compiles shrink the same way. Without -ffast-math the
# arithmetic is the same IEEE operations at any level, so the tests check the same results; NDEBUG is off, so
# Eigen's own checks run too. The statistics unit stays -O3 (CMakeLists.txt).
# A local run builds Release (-O3) and the default architectures (80;90). NHVK_CMAKE_ARGS, when set, is used as given.
if [ "${CI:-}" = true ] && [ -z "${NHVK_CMAKE_ARGS:-}" ]; then
    export NHVK_CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90-virtual -DCMAKE_CXX_FLAGS_RELEASE=-Og"
fi
"$here/scripts/setup.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900
