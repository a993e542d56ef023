#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up (install missing packages, build) and run the whole test suite. `.ci/run` calls exactly this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900
