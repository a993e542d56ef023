#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Model files against their built-in twins (issue "Your own system without C++"): for each model, `nhvk run
# configs/MODEL.toml` with the built-in model and with `models/MODEL.toml` (the same config, `model.file` instead of
# `model.name`), N trajectories on the CPU backend, each REPEATS times; the first model-file run of each model starts
# from an empty cache (its compile time), the others load the compiled model from the cache. Prints a Markdown table
# (wall, the run's integration time and trajectories per second from summary.json, the compile and derive times) and
# the ratio of the medians of integration time (target: the model file within 10 % of the built-in). Copy it with
# date, machine and commit into bench/results/. BACKEND=cuda runs both on the GPU (the model file's kernels compiled by
# NVRTC; "cuda compile s" is NVRTC's time, the other compile column the host unit's).
# Usage: [BACKEND=cpu|cuda] bench/model_file_throughput.sh [build-dir] [N] [threads] [repeats] [models...]
#        (default: cpu, build, 20000, 2, 3, nh_particle ball_on_turntable rolling_disc)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-20000}"
threads="${3:-2}"
repeats="${4:-3}"
backend="${BACKEND:-cpu}"
shift $(($# < 4 ? $# : 4))
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(nh_particle ball_on_turntable rolling_disc)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export NHVK_CACHE_DIR="$out/cache"
echo "backend: $backend"
echo "| model | kind | repeat | wall s | integration s | traj/s (run) | cached | derive s | compile s | cuda compile s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for model in "${models[@]}"; do
    # The model-file twin of the config: [model] names the file instead of the built-in model.
    sed "s|^name = \"$model\"|file = \"$here/models/$model.toml\"|" "$here/configs/$model.toml" >"$out/$model-file.toml"
    grep -q '^file = ' "$out/$model-file.toml" || { echo "configs/$model.toml: no 'name = \"$model\"' line" >&2; exit 1; }
    for r in $(seq 1 "$repeats"); do
        for kind in builtin file; do
            cfg="$here/configs/$model.toml"
            [[ $kind == file ]] && cfg="$out/$model-file.toml"
            rm -rf "$out/run"
            start=$(date +%s.%N)
            "$build/nhvk" run "$cfg" -q --trajectories "$n" --threads "$threads" --backend "$backend" --out "$out/run"
            end=$(date +%s.%N)
            python3 - "$out/run/summary.json" "$model" "$kind" "$r" "$start" "$end" <<'PY' | tee -a "$out/rows"
import json, sys
s = json.load(open(sys.argv[1])); model, kind, r = sys.argv[2], sys.argv[3], sys.argv[4]
wall = float(sys.argv[6]) - float(sys.argv[5]); tm = s["timing"]; mf = s.get("model_file") or {}
cu = mf.get("cuda") or {}
n = s["trajectories"]["requested"]
print(f"| {model} | {kind} | {r} | {wall:.2f} | {tm['integration_seconds']:.3f} | {n / tm['seconds']:.0f} | "
      f"{mf.get('cached', '')} | {mf.get('derive_seconds', 0):.3f} | {mf.get('compile_seconds', 0):.1f} | "
      f"{cu.get('compile_seconds', 0):.1f} |")
PY
        done
    done
done
python3 - "$out/rows" <<'PY'
import statistics, sys
rows = [l.strip().strip("|").split("|") for l in open(sys.argv[1])]
by = {}
for r in rows:
    model, kind, integ = r[0].strip(), r[1].strip(), float(r[4])
    by.setdefault((model, kind), []).append(integ)
print()
for model in dict.fromkeys(k[0] for k in by):
    b, f = statistics.median(by[(model, "builtin")]), statistics.median(by[(model, "file")])
    print(f"{model}: median integration s, built-in {b:.3f}, model file {f:.3f}: file / built-in = {f / b:.3f}")
PY
