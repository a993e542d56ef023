#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up (install missing packages, build) and run the main job on the bundled quickstart config.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# NOTE: nhvk alone, not the tests (scripts/test.sh builds those): the quickstart needs nothing else
"$here/scripts/setup.sh" --target nhvk "$here/build"
"$here/build/nhvk" run "$here/configs/quickstart.toml" --out "${1:-$here/out/quickstart}"
