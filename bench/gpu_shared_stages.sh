#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU half of DOPRI5's stage vectors in shared memory (nhvk/stage_store.hpp; issue "kernels that fill the GPU"), in
# one run of under five minutes. Needs a CUDA device and a build (bench/README.md step 1); Nsight Compute (ncu) and
# compute-sanitizer are used where found. Logs go to OUT-DIR, a summary to stdout.
#   0. the kernels the later steps use, compiled with NVRTC in parallel (nhvk compile) into the script's cache;
#   1. correctness on the device: the chunk, trajectory and statistics tests against the CPU (CudaVsCpu,
#      CudaVsCpuEnsemble) for three models whose double DOPRI5 kernels keep their stages in shared memory
#      (ball_on_turntable, rolling_disc, parallel_velocities), and for the same in float and in RK4, which do not;
#      the ball as a model file too (CudaModelFile);
#   2. compute-sanitizer memcheck on the ball's chunk test (a column outside the block's dynamic shared memory);
#   3. the integration at 10^6 members: ball_on_turntable DOPRI5 in double and float, rolling_disc and
#      parallel_velocities DOPRI5 in double (the issue's targets: the ball ≤ 3.0 s, float at or under double,
#      rolling_disc ≤ 1.2 s; before: 7.68, 26.2 and 2.48 s on an H200 at 2dc6368);
#   4. Nsight Compute on the ball's double chunk kernel: registers, dynamic shared memory, local-memory traffic,
#      achieved occupancy, duration.
# Usage: bench/gpu_shared_stages.sh [build-dir] [out-dir]        (default: build, gpu_shared_stages)
# Environment: NCU (default: ncu on PATH), SANITIZER (default: compute-sanitizer on PATH).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-gpu_shared_stages}"
ncu="${NCU:-$(command -v ncu || true)}"
sanitizer="${SANITIZER:-$(command -v compute-sanitizer || true)}"
mkdir -p "$out"
start=$(date +%s)
step() { echo; echo "=== [$(($(date +%s) - start)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
[ -x "$build/nhvk" ] || { echo "gpu_shared_stages: no $build/nhvk (build first: bench/README.md step 1)" >&2; exit 2; }
git -C "$here" rev-parse --short HEAD 2>/dev/null || true
# NOTE: one compile cache for the whole script, so that the kernels NVRTC compiles in step 0 serve the later steps
export NHVK_CACHE_DIR="${NHVK_CACHE_DIR:-$out/cache}"

step "0. the kernels of step 1 compiled by NVRTC into the cache, ten processes at once"
for m in ball_on_turntable rolling_disc parallel_velocities; do
    for pm in double:dopri5 float:dopri5 double:rk4; do
        timeout 120 "$build/nhvk" compile "$m" --precision "${pm%:*}" --method "${pm#*:}" --trajectory \
            >"$out/compile_${m}_${pm/:/_}.log" 2>&1 &
    done
done
# the ball as a model file: the same kernels through a model file's NVRTC unit (CudaModelFile)
timeout 120 "$build/nhvk" compile "$here/models/ball_on_turntable.toml" --precision double --method dopri5 \
    --trajectory >"$out/compile_model_file.log" 2>&1 &
wait
cat "$out"/compile_*.log | grep -E "compiled|error" | head -20

step "1. the device against the CPU, shared-memory stages (double DOPRI5) and not (float, RK4)"
filter=""
for m in ball_on_turntable rolling_disc parallel_velocities; do
    for c in double_dopri5 float_dopri5 double_rk4; do filter+="Models/CudaVsCpu*.*/${m}_$c:"; done
done
filter+="Models/CudaModelFile.*/ball_on_turntable_double_dopri5"
timeout 150 "$build/tests/nhvk_kernels_tests" --gtest_filter="$filter" >"$out/tests.log" 2>&1
echo "rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure" "$out/tests.log" | head -20

if [ -n "$sanitizer" ]; then
    step "2. compute-sanitizer memcheck, the ball's double DOPRI5 chunk"
    timeout 60 "$sanitizer" --tool memcheck --error-exitcode 3 "$build/tests/nhvk_kernels_tests" \
        --gtest_filter='Models/CudaVsCpu.ChunkMetricsAndStatusesMatch/ball_on_turntable_double_dopri5' \
        >"$out/sanitizer_memcheck.log" 2>&1
    echo "memcheck: rc $? ($(grep -cE "ERROR SUMMARY: [1-9]" "$out/sanitizer_memcheck.log") error lines)"
else
    step "2. skipped: no compute-sanitizer"
fi

# run LABEL ARGS...: one nhvk run on the device (bench/gpu_run.sh)
. "$here/bench/gpu_run.sh"
step "3. the integration at 10^6"
ball="$here/configs/ball_on_turntable.toml"
run "ball_on_turntable DOPRI5 double" "$ball" --trajectories 1000000
run "ball_on_turntable DOPRI5 float" "$ball" --trajectories 1000000 --set 'integrator.precision="float"'
run "rolling_disc DOPRI5 double" "$here/configs/rolling_disc.toml" --trajectories 1000000
run "parallel_velocities DOPRI5 double" "$here/configs/parallel_velocities.toml" --trajectories 1000000

if [ -n "$ncu" ]; then
    step "4. Nsight Compute on the ball's double chunk kernel, 65536 members"
    metrics=launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers
    metrics+=,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
    metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
    metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
    metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
    rm -rf "$out/ncu_run"
    timeout 90 "$ncu" --kernel-name "regex:ensemble_chunk_kernel" --launch-count 1 --metrics "$metrics" \
        "$build/nhvk" run "$ball" --trajectories 65536 --backend cuda -q --out "$out/ncu_run" >"$out/ncu_ball.log" 2>&1
    echo "ncu: rc $?"
    grep -E "ensemble_chunk_kernel|launch__|sm__|gpu__|l1tex__" "$out/ncu_ball.log" | head -20
else
    step "4. skipped: no ncu"
fi
step done
