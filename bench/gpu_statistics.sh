#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The statistics' share of a GPU run (issue 21's targets; needs a CUDA device): the peers' RK4 workload
# (bench/peers/nh_particle_rk4.toml) against the hand-written closed-form CUDA kernel end to end, in the default
# settings (exact quantiles, selected on the device) and in histogram mode, and the DOPRI5 bench
# (bench/configs/nh_particle_bench.toml) at the default chunk and at larger ones. Prints one Markdown table: wall time
# (the whole process, /usr/bin/time, CUDA context creation included), the run's own time (the hand-written kernel's
# total_seconds, nhvk's summary.json `timing.seconds`: from its start to its outputs), each stage's device time from
# summary.json, peak resident memory. Each nhvk line names the device reduction's items and budget in force
# (NHVK_DEVICE_ITEMS, NHVK_DEVICE_BUDGET_MB: the defaults when unset; the items shape only accumulate_chunk, which the
# device uses for histogram rows too wide for the block reduction's shared memory).
# Usage: bench/gpu_statistics.sh [build-dir] [N]        (default: build, 10000000)
# Environment: CUDA_ARCH (the hand-written kernel's -arch, default native), BIG (the histogram-mode size of the RK4
#   workload, default 10·N), CHUNKS (the DOPRI5 bench's chunk sizes, default "65536 262144 1048576").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-10000000}"
big="${BIG:-$((10 * n))}"
chunks=(${CHUNKS:-65536 262144 1048576})
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

echo "| run | N | chunk | quantiles | process wall s | run s | integrate s | sample s | reduce s | transfer s | (reduce+sample)/run | peak RSS MiB | valid |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"

# the hand-written kernel: its own JSON line (integration from CUDA events, total from the host clock)
"$nvcc" -std=c++17 -O3 -arch="${CUDA_ARCH:-native}" -o "$tmp/closed_form_cuda" "$here/bench/peers/closed_form_cuda.cu"
for m in "$n" "$big"; do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/closed_form_cuda" --n "$m" >"$tmp/peer.json"
    read -r wall rss_kb <"$tmp/time"
    python3 - "$tmp/peer.json" "$m" "$wall" "$rss_kb" <<'PY'
import json, sys
p = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(f"| hand-written closed-form CUDA RK4 | {sys.argv[2]} | | | {float(sys.argv[3]):.3f} | {p['total_seconds']:.4f} | "
      f"{p['integration_seconds']:.4f} | | | | | {int(sys.argv[4]) / 1024:.0f} | |")
PY
done

# nhvk_run LABEL N CHUNK CONFIG [options...]
nhvk_run() {
    local label="$1" m="$2" chunk="$3" config="$4"
    shift 4
    rm -rf "$tmp/run"
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$build/nhvk" run "$config" -q --backend cuda --trajectories "$m" \
        --chunk "$chunk" --out "$tmp/run" "$@"
    read -r wall rss_kb <"$tmp/time"
    python3 - "$tmp/run/summary.json" "$label" "$m" "$chunk" "$wall" "$rss_kb" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
label, m, chunk, wall, rss = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), int(sys.argv[6]) / 1024
t = s["timing"]
share = (t["reduction_seconds"] + t["sampling_seconds"]) / t["seconds"]
print(f"| {label} | {m} | {chunk} | {s['statistics']['quantiles']} | {wall:.3f} | {t['seconds']:.3f} | "
      f"{t['integration_seconds']:.4f} | "
      f"{t['sampling_seconds']:.4f} | {t['reduction_seconds']:.4f} | {t.get('transfer_seconds', 0.0):.4f} | "
      f"{share:.1%} | {rss:.0f} | {s['trajectories']['valid']} |")
PY
}

rk4="$here/bench/peers/nh_particle_rk4.toml"
nhvk_run "nhvk, peers' RK4 workload, default" "$n" 65536 "$rk4"
nhvk_run "nhvk, peers' RK4 workload, histogram" "$n" 65536 "$rk4" --set run.exact_memory_mb=0
nhvk_run "nhvk, peers' RK4 workload, histogram" "$big" 65536 "$rk4" --set run.exact_memory_mb=0
for chunk in "${chunks[@]}"; do
    nhvk_run "nhvk, DOPRI5 bench" "$n" "$chunk" "$here/bench/configs/nh_particle_bench.toml"
done
# SWEEP="items:budget_mb ...": the DOPRI5 bench at the default chunk and the peers' workload in histogram mode, with
# other device-reduction shapes
for shape in ${SWEEP:-}; do
    export NHVK_DEVICE_ITEMS="${shape%%:*}" NHVK_DEVICE_BUDGET_MB="${shape##*:}"
    nhvk_run "nhvk, DOPRI5 bench, items $NHVK_DEVICE_ITEMS, budget $NHVK_DEVICE_BUDGET_MB MiB" "$n" 65536 \
        "$here/bench/configs/nh_particle_bench.toml"
    nhvk_run "nhvk, peers' RK4, histogram, items $NHVK_DEVICE_ITEMS, budget $NHVK_DEVICE_BUDGET_MB MiB" "$n" 65536 \
        "$rk4" --set run.exact_memory_mb=0
done
