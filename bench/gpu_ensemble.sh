#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU ensemble benchmark (needs a CUDA device): the same config as cpu_ensemble.sh on --backend cuda, with the time
# of each stage (sampling, integration, reduction: device time from CUDA events; host<->device transfers). Usage: bench/gpu_ensemble.sh [build-dir] [sizes...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
shift || true
sizes=("$@")
((${#sizes[@]})) || sizes=(1000000 10000000)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "| trajectories | backend | chunk | wall s | traj/s | sample s | integrate s | reduce s | transfer s | peak RSS MiB | valid | median d_q(t_end) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
    for chunk in 262144 1048576; do
        /usr/bin/time -f "%e %M" -o "$out/time" "$build/nhvk" run "$here/bench/configs/nh_particle_bench.toml" -q \
            --backend cuda --chunk "$chunk" --trajectories "$n" --out "$out/run" --set run.exact_memory_mb=0
        read -r wall rss_kb <"$out/time"
        python3 - "$out/run/summary.json" "$n" "$wall" "$rss_kb" "$chunk" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2]); wall = float(sys.argv[3]); rss = int(sys.argv[4]) / 1024
t = s['timing']
print(f"| {n} | {s['backend']} | {sys.argv[5]} | {wall:.2f} | {n / wall:.0f} | {t['sampling_seconds']:.3f} | "
      f"{t['integration_seconds']:.3f} | {t['reduction_seconds']:.3f} | {t.get('transfer_seconds', 0.0):.3f} | "
      f"{rss:.0f} | {s['trajectories']['valid']} | {s['divergence']['q']['p50'][-1]:.6g} |")
PY
    done
done
