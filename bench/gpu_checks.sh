#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/README.md's "On a GPU" list in one run, for a machine whose GPU time is short: the CUDA tests first, then issue
# 21's benchmark (bench/gpu_statistics.sh), the replica groups' share of the device reduction, stop_at on the device
# against the CPU, the one-core CPU reduction, a model file on the device, the integration methods' throughput, and
# last the rest of the suite. Each step has a time limit, so a step that hangs costs only its own; every log goes to
# OUT-DIR, and a summary to stdout.
# Usage: bench/gpu_checks.sh [build-dir] [out-dir]        (default: build, gpu_checks)
# Environment: N (the benchmarks' ensemble size, default 10000000), JOBS (ctest's parallel jobs, default nproc),
#   SKIP_TESTS=1 (benchmarks only), CUDA_TESTS_S / REST_TESTS_S (the two ctest runs' limits, default 300 / 300 s),
#   METHODS_N (gpu_methods.sh's ensemble size, default 1000000).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-gpu_checks}"
n="${N:-10000000}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 4)}"
mkdir -p "$out"
start=$(date +%s)
step() { echo; echo "=== [$(($(date +%s) - start)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
[ -x "$build/nhvk" ] || { echo "gpu_checks: no $build/nhvk (build first: bench/README.md step 1)" >&2; exit 2; }
git -C "$here" rev-parse --short HEAD 2>/dev/null || true
# NOTE: the NVRTC model-file tests (CudaModelFile, CudaCompile) take minutes of compiling; they run with the rest
cuda_tests='CudaVsCpu|CudaBackend|Population|ExactSelection|ScaleOut|ReplicaInterval'
not_here='NOT_BUILT|^build\.|^docs\.|^format\.|^install\.'

if [ "${SKIP_TESTS:-0}" != 1 ]; then
    step "CUDA tests"
    timeout "${CUDA_TESTS_S:-300}" ctest --test-dir "$build" -R "$cuda_tests" -E "$not_here" -j "$jobs" \
        --timeout 200 --output-on-failure >"$out/ctest_cuda.log" 2>&1
    echo "rc $?"
    grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$out/ctest_cuda.log" | head -40
fi

step "issue 21's targets (bench/gpu_statistics.sh)"
timeout 600 bash "$here/bench/gpu_statistics.sh" "$build" "$n" 2>&1 | tee "$out/gpu_statistics.md"

# run LABEL ARGS...: one nhvk run, its timing and the growth law's interval method from summary.json
run() {
    local label="$1"
    shift
    rm -rf "$out/run"
    timeout 300 "$build/nhvk" run "$@" -q --out "$out/run" >"$out/run.log" 2>&1
    local rc=$?
    echo "$label (rc $rc): $(python3 - "$out/run/summary.json" <<'PY' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))
t = s["timing"]
print(", ".join(f"{k} {t[k]:.4f}" for k in ("seconds", "integration_seconds", "sampling_seconds",
                                            "reduction_seconds") if k in t),
      "|", s["statistics"]["quantiles"], "| interval", s["growth_exponent"]["sampling"]["interval_method"])
PY
)"
}
dopri="$here/bench/configs/nh_particle_bench.toml"
step "the replica groups' share of the device reduction (DOPRI5 bench, N = $n)"
run "statistics.replicas = 10 (default)" "$dopri" --backend cuda --trajectories "$n"
run "statistics.replicas = 0" "$dopri" --backend cuda --trajectories "$n" --set statistics.replicas=0

step "stop_at on the device against the CPU (ball_on_turntable, Omega = 8, stop_at = 10)"
for backend in cuda cpu; do
    rm -rf "$out/stop_$backend"
    timeout 300 "$build/nhvk" run "$here/configs/ball_on_turntable.toml" --backend "$backend" --threads "$jobs" \
        --set model.params.Omega=8 --set divergence.stop_at=10 -q --out "$out/stop_$backend" >/dev/null 2>&1
    echo "$backend rc $?"
done
python3 - "$out/stop_cuda/summary.json" "$out/stop_cpu/summary.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("diverged at_time equal:", a["trajectories"]["diverged"]["at_time"] == b["trajectories"]["diverged"]["at_time"],
      "| failed", a["trajectories"]["failed"]["total"], b["trajectories"]["failed"]["total"],
      "| interval", a["growth_exponent"]["sampling"]["interval_method"], b["growth_exponent"]["sampling"]["interval_method"])
PY

step "the one-core CPU reduction at 10^5 (issue 21's CPU target), three runs"
for i in 1 2 3; do run "cpu, 1 thread, exact" "$dopri" --backend cpu --threads 1 --trajectories 100000; done

step "a model file on the device against its built-in twin"
BACKEND=cuda timeout 300 bash "$here/bench/model_file_throughput.sh" "$build" 1000000 "$jobs" 2 nh_particle 2>&1 |
    tee "$out/model_file_cuda.md"

step "the integration methods on the device (bench/gpu_methods.sh, N = ${METHODS_N:-1000000})"
timeout 300 bash "$here/bench/gpu_methods.sh" "$build" "${METHODS_N:-1000000}" 2>&1 | tee "$out/gpu_methods.md"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
    step "the rest of the suite (the NVRTC model-file tests among them)"
    timeout "${REST_TESTS_S:-300}" ctest --test-dir "$build" -E "$not_here|$cuda_tests" \
        -j "$jobs" --timeout 200 --output-on-failure >"$out/ctest_rest.log" 2>&1
    echo "rc $?"
    grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$out/ctest_rest.log" | head -40
fi
step done
