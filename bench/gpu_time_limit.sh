#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 44's GPU half, in under 5 minutes on an H100/H200 with a built default build: how long a SIGTERM waits on
# the CUDA backend, whose chunks are paced to about 2 s each (two in flight), and what the pacing costs.
#  1. ball_on_turntable DOPRI5 float at 10^6 with --chunk 1048576 (unpaced, one chunk holding the whole run: about
#     26 s of integration at 2dc6368, issue 41, before float's default atol became 1e-8, which may shorten it; see
#     bench/results/2026-11-28-float-atol.md): SIGTERM once the progress line shows a third done; run.log's stop
#     line then gives the chunks that finished after the signal (at most 2) and the seconds from the signal to the
#     record; then the resume, whose stats.csv must equal an uninterrupted run's (the 10^6 run of step 2);
#  2. throughput with paced chunks against every chunk full (the pacing's own cost): the DOPRI5 bench at 10^7
#     (bench/configs/nh_particle_bench.toml) and the ball at 10^6, each with the default chunk, where pacing only
#     shrinks a chunk over 2 s, and with --chunk 1048576, where it may grow or shrink them.
# Usage: bench/gpu_time_limit.sh [build-dir] [out-dir]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-$here/bench-gpu-time-limit}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "commit $(git -C "$here" rev-parse --short HEAD)" | tee -a "$out/device.txt"
ball="$here/configs/ball_on_turntable.toml"
float=(--set 'integrator.precision="float"')

echo "## 1. SIGTERM during paced chunks"
rm -rf "$out/stopped"
"$build/nhvk" run "$ball" --backend cuda --trajectories 1000000 --chunk 1048576 "${float[@]}" \
    --out "$out/stopped" --progress-every 0.5 2>"$out/stopped.err" &
pid=$!
for _ in $(seq 1 1200); do
    if grep -Eq 'progress ([3-9][0-9]{5}|[0-9]{7})/1000000' "$out/stopped.err" 2>/dev/null; then break; fi
    sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
echo "exit $? (143: stopped with its record)"
grep progress "$out/stopped.err" | tail -3
grep "stopped by" "$out/stopped/run.log"
timeout 120 "$build/nhvk" run "$ball" --backend cuda --trajectories 1000000 --chunk 1048576 "${float[@]}" \
    --out "$out/stopped" -q --resume
echo "resume exit $?"

echo "## 2. paced against full chunks"
echo "| run | chunk | integration s | run s | valid |"
echo "|---|---|---|---|---|"
run() { # label dir args...
    local label="$1" dir="$2"
    shift 2
    rm -rf "$dir"
    timeout 100 "$build/nhvk" run -q --backend cuda --out "$dir" "$@" || { echo "| $label | failed |"; return; }
    python3 - "$dir/summary.json" "$label" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = s["timing"]
print(f"| {sys.argv[2]} | {s['config']['run']['chunk']} | {t['integration_seconds']:.3f} | {t['seconds']:.3f} | "
      f"{s['trajectories']['valid']} |")
PY
}
run "DOPRI5 bench 1e7" "$out/b1" "$here/bench/configs/nh_particle_bench.toml" --trajectories 10000000
run "DOPRI5 bench 1e7" "$out/b2" "$here/bench/configs/nh_particle_bench.toml" --trajectories 10000000 --chunk 1048576
run "ball float 1e6" "$out/ball" "$ball" --trajectories 1000000 --chunk 1048576 "${float[@]}"
cmp -s "$out/ball/stats.csv" "$out/stopped/stats.csv" && echo "stats.csv of the stopped and resumed run: identical" ||
    echo "stats.csv of the stopped and resumed run: DIFFERS"
run "ball double 1e6" "$out/ball_d" "$ball" --trajectories 1000000
