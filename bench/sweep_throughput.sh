#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sweep throughput (issue "Monte Carlo sweeps"): a 100-point [sweep] of 10^4 trajectories per point against one run
# of 10^6 without [sweep], the same config otherwise (bench/configs/nh_particle_sweep.toml: nh_particle, RK4, 10
# output times, so that a point's statistics stay small), each REPEATS times. The target: the sweep's trajectories
# per second within 10 % of the single run's. Prints a Markdown table (wall time, the run's own time and its
# integration and reduction times from summary.json, trajectories per second, peak RSS) and the ratio of the
# medians; copy it with date, machine and commit into bench/results/.
# Usage: bench/sweep_throughput.sh [build-dir] [threads] [repeats]   (default: build, 2, 3; threads 0 = all cores)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
threads="${2:-2}"
repeats="${3:-3}"
config="$here/bench/configs/nh_particle_sweep.toml"
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# The single run: the config's [sweep] table dropped (it is the file's last section), 10^6 members.
sed '/^\[sweep\]/,$d' "$config" >"$out/single.toml"
echo "| run | repeat | trajectories | wall s | run s | integration s | reduction s | traj/s (wall) | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$repeats"); do
    for kind in sweep single; do
        if [[ $kind == sweep ]]; then
            args=("$config" --trajectories 10000)
        else
            args=("$out/single.toml" --trajectories 1000000)
        fi
        rm -rf "$out/run"
        /usr/bin/time -f "%e %M" -o "$out/time" "$build/nhvk" run "${args[@]}" -q --threads "$threads" --out "$out/run"
        read -r wall rss_kb <"$out/time"
        python3 - "$out/run/summary.json" "$kind" "$r" "$wall" "$rss_kb" <<'PY' | tee -a "$out/rows"
import json, sys
s = json.load(open(sys.argv[1])); kind, r = sys.argv[2], sys.argv[3]
wall = float(sys.argv[4]); rss = int(sys.argv[5]) / 1024; tm = s["timing"]
n = s["trajectories"]["requested"]
print(f"| {kind} | {r} | {n} | {wall:.2f} | {tm['seconds']:.2f} | {tm['integration_seconds']:.2f} | "
      f"{tm['reduction_seconds']:.2f} | {n / wall:.0f} | {rss:.0f} |")
PY
    done
done
python3 - "$out/rows" <<'PY'
import statistics, sys
rate = {"sweep": [], "single": []}
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.strip().strip("|").split("|")]
    rate[f[0]].append(float(f[7]))
s, o = statistics.median(rate["sweep"]), statistics.median(rate["single"])
print(f"\nmedian traj/s: sweep {s:.0f}, single run {o:.0f}; ratio sweep/single {s / o:.3f} (target >= 0.9)")
PY
