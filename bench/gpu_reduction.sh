#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU half of two issues in one run of under five minutes: the device statistics (the block reduction,
# stats/block_reduce.hpp) and the integration kernels' occupancy. Needs a CUDA device, a build (bench/README.md step 1)
# and, for the profiles, Nsight Compute (ncu; skipped without it). Each step has a time limit; logs go to OUT-DIR,
# a summary to stdout.
#   1. the device reduction and the device's selection of order statistics against their host twins, bit for bit
#      (CudaBlockReduce, CudaSelect), a sweep's parts reduced on the device against the host's reduction of the same
#      metrics (CudaSweepParts), and the CUDA-vs-CPU statistics; the first two under compute-sanitizer's racecheck,
#      synccheck and memcheck;
#   2. the statistics' targets: bench/gpu_statistics.sh at N (the RK4 yardstick against the hand-written kernel at N
#      in the default settings and at 10·N in histogram mode; the DOPRI5 bench at N), the DOPRI5 bench without
#      replica groups, the DOPRI5 bench at 10^6 with exact quantiles (the selection and the groups' medians on the
#      device), and configs/sweep_particle_mu0.toml at 200000 members per point (its points reduced on the device part
#      by part: integration against reduction);
#   3. Nsight Compute on block_reduce_kernel (exact mode: the DOPRI5 bench at 10^6; histogram mode: the yardstick at
#      10^6): grid, registers, shared memory, local-memory traffic, SM and memory throughput, occupancy;
#   4. the integration kernels: ball_on_turntable DOPRI5 in double and float and rolling_disc DOPRI5 at 10^6, and
#      Nsight Compute on ball_on_turntable's double chunk kernel at 65536 members.
# Usage: bench/gpu_reduction.sh [build-dir] [out-dir]        (default: build, gpu_reduction)
# Environment: N (default 10000000), NCU (default: ncu on PATH), SANITIZER (default: compute-sanitizer on PATH).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-gpu_reduction}"
n="${N:-10000000}"
ncu="${NCU:-$(command -v ncu || true)}"
mkdir -p "$out"
start=$(date +%s)
step() { echo; echo "=== [$(($(date +%s) - start)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
[ -x "$build/nhvk" ] || { echo "gpu_reduction: no $build/nhvk (build first: bench/README.md step 1)" >&2; exit 2; }
git -C "$here" rev-parse --short HEAD 2>/dev/null || true

step "1. the block reduction, the selection and a sweep's parts on the device against the host; CUDA-vs-CPU statistics"
timeout 150 "$build/tests/nhvk_kernels_tests" --gtest_filter='CudaBlockReduce.*:CudaSelect.*:CudaSweepParts.*:CudaVsCpuEnsemble.*' \
    >"$out/tests.log" 2>&1
echo "rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure" "$out/tests.log" | head -20

# NOTE: the block reduction's and the selection's barriers and shared memory are checked by the sanitizer's racecheck
# and synccheck (a host twin runs a block's threads one after the other, so it cannot see a race), their accesses by
# memcheck (the selection's test of 3·10^6 values is left out: too slow under the sanitizer)
sanitizer="${SANITIZER:-$(command -v compute-sanitizer || true)}"
if [ -n "$sanitizer" ]; then
    for tool in racecheck synccheck memcheck; do
        timeout 60 "$sanitizer" --tool "$tool" --error-exitcode 3 "$build/tests/nhvk_kernels_tests" \
            --gtest_filter='CudaBlockReduce.*:CudaSelect.DeviceSelects*' >"$out/sanitizer_$tool.log" 2>&1
        echo "compute-sanitizer $tool: rc $? ($(grep -cE "ERROR SUMMARY: [1-9]|Race reported|Barrier error" \
            "$out/sanitizer_$tool.log") error lines)"
    done
fi

step "2. the statistics' targets (bench/gpu_statistics.sh, N = $n)"
CHUNKS=65536 timeout 120 bash "$here/bench/gpu_statistics.sh" "$build" "$n" 2>&1 | tee "$out/gpu_statistics.md"

# run LABEL ARGS...: one nhvk run on the device (bench/gpu_run.sh)
. "$here/bench/gpu_run.sh"
dopri="$here/bench/configs/nh_particle_bench.toml"
run "DOPRI5 bench, N = $n, replicas 0" "$dopri" --trajectories "$n" --set statistics.replicas=0
run "DOPRI5 bench, 10^6, exact quantiles" "$dopri" --trajectories 1000000 --set run.exact_memory_mb=100000
run "sweep_particle_mu0, 9 points of 200000 (1.8e6)" "$here/configs/sweep_particle_mu0.toml" --trajectories 200000

metrics=launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
# profile NAME KERNEL LAUNCHES ARGS...: Nsight Compute's metrics of the first LAUNCHES launches of KERNEL in one run
profile() {
    local name="$1" kernel="$2" launches="$3"
    shift 3
    rm -rf "$out/ncu_run"
    timeout 90 "$ncu" --kernel-name "regex:$kernel" --launch-count "$launches" --metrics "$metrics" \
        "$build/nhvk" run "$@" --backend cuda -q --out "$out/ncu_run" >"$out/ncu_$name.log" 2>&1
    echo "$name: rc $?"
    grep -E "$kernel|launch__|sm__|gpu__|l1tex__" "$out/ncu_$name.log" | head -40
}
if [ -n "$ncu" ]; then
    step "3. Nsight Compute on block_reduce_kernel"
    profile reduce_exact block_reduce_kernel 3 "$dopri" --trajectories 1000000 --set run.exact_memory_mb=100000
    profile reduce_histogram block_reduce_kernel 3 "$here/bench/peers/nh_particle_rk4.toml" --trajectories 1000000 \
        --set run.exact_memory_mb=0
else
    step "3. skipped: no ncu"
fi

step "4. the integration kernels at 10^6 (issue: kernels that fill the GPU)"
ball="$here/configs/ball_on_turntable.toml"
run "ball_on_turntable DOPRI5 double" "$ball" --trajectories 1000000
run "ball_on_turntable DOPRI5 float" "$ball" --trajectories 1000000 --set 'integrator.precision="float"'
run "rolling_disc DOPRI5 double" "$here/configs/rolling_disc.toml" --trajectories 1000000
[ -z "$ncu" ] || profile ball ensemble_chunk_kernel 1 "$ball" --trajectories 65536
step done
