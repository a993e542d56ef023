#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a new user pays to get nhvk (issue 39): from a clean clone of the current commit, with ccache off, the build
# that the README's first command does (`scripts/setup.sh --target nhvk`, default CMake options: Release, CUDA
# architectures 80 and 90), then the quickstart's run; then the rest of the build (the tests); the sizes of the
# binaries; and a first run on the CUDA backend's compile path (NVRTC, no device needed: `nhvk compile`).
# Packages must be installed already (setup.sh's apt step is not timed here).
# Usage: bench/lean_build.sh [work-dir] [cmake args...]     e.g. bench/lean_build.sh /tmp/lean -DNHVK_AOT_MODELS=all
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-/tmp/nhvk-lean-build}"
shift || true
rm -rf "$work"
git clone -q "$here" "$work/src"
export CCACHE_DISABLE=1
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
echo "commit $(git -C "$work/src" rev-parse --short HEAD), $(nproc) cores, $(date -u +%F)"
t0=$(now)
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release "$@" >"$work/configure.log"
cmake --build "$work/build" -j "$(nproc)" --target nhvk >"$work/build-nhvk.log"
t1=$(now)
(cd "$work" && /usr/bin/time -f "%e" -o quickstart.time "$work/build/nhvk" run "$work/src/configs/quickstart.toml" \
    --out "$work/out" -q)
t2=$(now)
echo "| step | seconds |"
echo "|---|---|"
echo "| configure + build nhvk | $(secs "$t0" "$t1") |"
echo "| quickstart run | $(cat "$work/quickstart.time") |"
echo "| clone to quickstart outputs (no apt) | $(secs "$t0" "$t2") |"
cmake --build "$work/build" -j "$(nproc)" >"$work/build-rest.log"
t3=$(now)
echo "| the rest of the build (tests) | $(secs "$t2" "$t3") |"
echo
echo "| file | MB | .nv_fatbin MB |"
echo "|---|---|---|"
for f in "$work/build/nhvk" "$work/build/lib/"libnhvk*.so "$work/build/tests/"nhvk_*_tests; do
    [ -f "$f" ] || continue
    fat=$(size -A "$f" | awk '$1 == ".nv_fatbin" { printf "%.1f", $2 / 1e6 }')
    printf "| %s | %.1f | %s |\n" "${f#"$work/build/"}" "$(stat -c %s "$f" | awk '{ print $1 / 1e6 }')" "${fat:-0}"
done
echo
echo "NVRTC, first use (empty cache), double dopri5 ensemble kernels for sm_90:"
NHVK_CACHE_DIR="$work/cache" "$work/build/nhvk" compile nh_particle rolling_disc ball_on_turntable --arch sm_90 \
    --precision double --method dopri5 || echo "(no NVRTC in this build)"
