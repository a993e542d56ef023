#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU ensemble benchmark: wall time, rate and peak resident memory of `nhvk run` on bench/configs/nh_particle_bench.toml
# for several ensemble sizes, in histogram mode (exact_memory_mb = 0) so that host memory must not grow with N.
# Usage: bench/cpu_ensemble.sh [build-dir] [sizes...]   (default: build, 100000 1000000)
# Writes a Markdown table to stdout; copy it with date, machine and commit into bench/results/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
shift || true
sizes=("$@")
((${#sizes[@]})) || sizes=(100000 1000000)
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "| trajectories | threads | quantiles | wall s | traj/s | peak RSS MiB | valid | growth exponent q |"
echo "|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
    /usr/bin/time -f "%e %M" -o "$out/time" "$build/nhvk" run "$here/bench/configs/nh_particle_bench.toml" -q \
        --trajectories "$n" --out "$out/run" --set run.exact_memory_mb=0
    read -r wall rss_kb <"$out/time"
    python3 - "$out/run/summary.json" "$n" "$wall" "$rss_kb" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2]); wall = float(sys.argv[3]); rss = int(sys.argv[4]) / 1024
print(f"| {n} | {s['threads']} | {s['statistics']['quantiles']} | {wall:.1f} | {n / wall:.0f} | {rss:.0f} | "
      f"{s['trajectories']['valid']} | {s['growth_exponent']['q']:.4f} |")
PY
done
