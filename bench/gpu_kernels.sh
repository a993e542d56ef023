#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU half of issue "kernels that fill the GPU" in one run of under five minutes on an H200: its four timed targets
# in one call, and Nsight Compute on the yardstick's two kernels, to say where the rest of the time goes. Needs a CUDA
# device, a build (bench/README.md step 1), nvcc, and for the profiles ncu (skipped without it). Logs go to OUT-DIR, a
# summary to stdout.
#   1. the yardstick: bench/peers/closed_form_cuda.cu's hand-written kernel and `nhvk run bench/peers/nh_particle_rk4
#      .toml` at N (10^7) members, integration seconds of each and their ratio (target: hand-written / nhvk ≥ 0.6);
#   2. ball_on_turntable DOPRI5 in double (target ≤ 3.0 s) and in float (target ≤ double), rolling_disc DOPRI5 in
#      double (target ≤ 1.2 s), at 10^6 members, from the configs/ files;
#   3. Nsight Compute on rk4_kernel and on nhvk's ensemble_chunk_kernel of the yardstick at 10^6 members (its sections
#      of launch, occupancy, throughput, instruction and warp-state statistics, in the logs; the summary shows
#      duration, registers, occupancy, instructions executed, IPC, issue-slot use and cycles per issued instruction).
# Usage: bench/gpu_kernels.sh [build-dir] [out-dir]        (default: build, gpu_kernels)
# Environment: N (default 10000000), NCU (default: ncu on PATH), CUDA_ARCH (nvcc's -arch, default native), ARCH (the
# kernels' architecture for `nhvk compile`, default the device's).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-gpu_kernels}"
n="${N:-10000000}"
ncu="${NCU:-$(command -v ncu || true)}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$out"
start=$(date +%s)
step() { echo; echo "=== [$(($(date +%s) - start)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
[ -x "$build/nhvk" ] || { echo "gpu_kernels: no $build/nhvk (build first: bench/README.md step 1)" >&2; exit 2; }
git -C "$here" rev-parse --short HEAD 2>/dev/null || true

# run LABEL ARGS...: one nhvk run on the device (bench/gpu_run.sh)
. "$here/bench/gpu_run.sh"
rk4="$here/bench/peers/nh_particle_rk4.toml"
# the runs' kernels, compiled by NVRTC in parallel first (into nhvk's cache, NHVK_CACHE_DIR where set)
arch="${ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')}"
printf '%s\n' "nh_particle double rk4" "ball_on_turntable double dopri5" "ball_on_turntable float dopri5" \
    "rolling_disc double dopri5" | xargs -P 4 -L 1 sh -c '
    "$0" compile "$1" --arch "'"$arch"'" --precision "$2" --method "$3" >/dev/null 2>&1 ||
        echo "nhvk compile $1 $2 $3 failed"' "$build/nhvk"
# NOTE: a first run, so that the driver's compile of the backend's own kernels is not in a timed run
timeout 300 "$build/nhvk" run "$rk4" --backend cuda -q --trajectories 100000 --out "$out/warm" >"$out/warm.log" 2>&1 ||
    echo "warm-up run: rc $? ($(tail -1 "$out/warm.log"))"

step "1. the RK4 yardstick at N = $n"
timeout 120 "$nvcc" -std=c++17 -O3 -arch="${CUDA_ARCH:-native}" -o "$out/closed_form_cuda" \
    "$here/bench/peers/closed_form_cuda.cu" || echo "nvcc of closed_form_cuda failed"
timeout 60 "$out/closed_form_cuda" --n "$n" >"$out/peer.json" 2>"$out/peer.log" || echo "closed_form_cuda: rc $?"
rm -rf "$out/run"
timeout 120 "$build/nhvk" run "$rk4" --backend cuda -q --trajectories "$n" --out "$out/run" >"$out/run.log" 2>&1 ||
    echo "nhvk yardstick: rc $? ($(tail -1 "$out/run.log"))"
python3 - "$out/peer.json" "$out/run/summary.json" <<'PY'
import json, sys
try:
    peer = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["integration_seconds"]
    s = json.load(open(sys.argv[2]))
    own = s["timing"]["integration_seconds"]
    print(f"hand-written {peer:.4f} s, nhvk {own:.4f} s (valid {s['trajectories']['valid']}): "
          f"hand-written / nhvk = {peer / own:.2f} (target ≥ 0.6)")
except (OSError, ValueError, KeyError, IndexError) as e:
    print(f"yardstick: no result ({e})")
PY

step "2. the large models at 10^6"
ball="$here/configs/ball_on_turntable.toml"
run "ball_on_turntable DOPRI5 double (target ≤ 3.0 s)" "$ball" --trajectories 1000000
run "ball_on_turntable DOPRI5 float (target ≤ double)" "$ball" --trajectories 1000000 \
    --set 'integrator.precision="float"'
run "rolling_disc DOPRI5 double (target ≤ 1.2 s)" "$here/configs/rolling_disc.toml" --trajectories 1000000

if [ -n "$ncu" ]; then
    step "3. Nsight Compute on the yardstick's two kernels at 10^6"
    # NOTE: whole sections rather than metric names, which differ between ncu versions: a name it does not know
    # fails the whole profile
    sections=(--section LaunchStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis
        --section InstructionStats --section WarpStateStats)
    keys="Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Ipc|Issue Slots|Executed Instructions"
    keys+="|Warp Cycles Per Issued|Compute \\(SM\\) Throughput|Avg. Active Threads"
    # the warm-up launch on one trajectory first: the second launch of rk4_kernel is the timed one
    timeout 90 "$ncu" --kernel-name rk4_kernel --launch-skip 1 --launch-count 1 "${sections[@]}" \
        "$out/closed_form_cuda" --n 1000000 >"$out/ncu_peer.log" 2>&1
    echo "rk4_kernel: rc $?"
    grep -E "$keys" "$out/ncu_peer.log" | head -30
    rm -rf "$out/ncu_run"
    timeout 120 "$ncu" --kernel-name regex:ensemble_chunk_kernel --launch-count 1 "${sections[@]}" \
        "$build/nhvk" run "$rk4" --backend cuda -q --trajectories 1000000 --chunk 1000000 --out "$out/ncu_run" \
        >"$out/ncu_nhvk.log" 2>&1
    echo "ensemble_chunk_kernel: rc $?"
    grep -E "$keys" "$out/ncu_nhvk.log" | head -30
else
    step "3. skipped: no ncu"
fi
step "done"
