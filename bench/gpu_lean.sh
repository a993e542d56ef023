#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 39's GPU half, in under 5 minutes on an H100/H200 with a built default build (no model compiled ahead of
# time): the built-in models' kernels compiled at run time by NVRTC against the ahead-of-time kernels they replace.
#  1. first use: `nhvk compile` of three models for this device (NVRTC's time per combination, empty cache);
#  2. the runs of issue 41's table (H200, commit 2dc6368, kernels compiled ahead of time): integration seconds
#     (device, summed) then were ball_on_turntable DOPRI5 double 10^6: 7.68; rolling_disc DOPRI5 / RK4 10^6: 2.48 /
#     1.14; the RK4 yardstick bench/peers/nh_particle_rk4.toml 10^7: 0.420. Each run twice (the float one once),
#     from the filled cache;
#  3. with AOT_BUILD=<a build configured with -DNHVK_AOT_MODELS=all> the same runs with it, for the ratio on this
#     machine (its build takes longer than this script's budget: make it beforehand);
#  4. the CUDA tests of the backend (every model's kernels through NVRTC, compiled in parallel into the build's cache).
# Usage: bench/gpu_lean.sh [build-dir] [out-dir]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-$here/bench-gpu-lean}"
mkdir -p "$out"
export NHVK_CACHE_DIR="$out/cache"
rm -rf "$NHVK_CACHE_DIR"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "commit $(git -C "$here" rev-parse --short HEAD)" | tee -a "$out/device.txt"

echo "## 1. NVRTC first use"
timeout 240 "$build/nhvk" compile nh_particle rolling_disc ball_on_turntable --precision double --method all \
    2>&1 | tee "$out/compile.txt"
timeout 120 "$build/nhvk" compile ball_on_turntable --precision float --method dopri5 2>&1 | tee -a "$out/compile.txt"

run() { # label build config args...
    local label="$1" b="$2" cfg="$3"
    shift 3
    rm -rf "$out/run"
    timeout 120 "$b/nhvk" run "$cfg" -q --backend cuda --out "$out/run" "$@" || { echo "| $label | failed |"; return; }
    python3 - "$out/run/summary.json" "$label" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = s["timing"]; tr = s["trajectories"]
print(f"| {sys.argv[2]} | {t['integration_seconds']:.3f} | {t['seconds']:.3f} | {tr.get('valid', '')} |")
PY
}
runs() { # build tag
    for r in 1 2; do
        run "ball_on_turntable dopri5 double 1e6 $2 #$r" "$1" "$here/configs/ball_on_turntable.toml" --trajectories 1000000
        # NOTE: once: 26 s of integration at 2dc6368 (issue 41), most of this script's budget
        [ "$r" = 1 ] && run "ball_on_turntable dopri5 float 1e6 $2 #$r" "$1" "$here/configs/ball_on_turntable.toml" \
            --trajectories 1000000 --set 'integrator.precision="float"'
        run "rolling_disc dopri5 1e6 $2 #$r" "$1" "$here/configs/rolling_disc.toml" --trajectories 1000000
        run "rolling_disc rk4 1e6 $2 #$r" "$1" "$here/configs/rolling_disc.toml" --trajectories 1000000 \
            --set 'integrator.method="rk4"'
        run "nh_particle rk4 yardstick 1e7 $2 #$r" "$1" "$here/bench/peers/nh_particle_rk4.toml" --trajectories 10000000
    done
}
echo "## 2. runs (NVRTC kernels)"
echo "| run | integration s | run s | valid |"
echo "|---|---|---|---|"
runs "$build" nvrtc | tee "$out/runs.txt"
if [ -n "${AOT_BUILD:-}" ]; then
    echo "## 3. the same with the ahead-of-time build $AOT_BUILD"
    runs "$AOT_BUILD" aot | tee -a "$out/runs.txt"
fi
echo "## 4. the CUDA tests"
timeout 150 ctest --test-dir "$build" -R 'CudaVsCpu|CudaBackend|CudaCompile|BuiltinCudaCompile' -j "$(nproc)" \
    --timeout 140 2>&1 | tail -15 | tee "$out/ctest.txt"
