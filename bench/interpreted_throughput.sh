#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Interpreted model files (no C++ compiler: modelfile/interpreted.hpp) against the built-in models: for each model,
# `nhvk run configs/MODEL.toml` with the built-in model and the generated equations (the default), with the built-in
# model and the reference equations (`integrator.equations = "ad"`, what the interpreter integrates), and with
# `models/MODEL.toml` interpreted (NHVK_CXX pointing at no compiler), N trajectories on the CPU, each REPEATS times.
# Prints a Markdown table of the runs' integration times and the ratios of the medians. Copy it with date, machine and
# commit into bench/results/.
# Usage: bench/interpreted_throughput.sh [build-dir] [N] [threads] [repeats] [models...]
#        (default: build, 2000, 2, 3, nh_particle ball_on_turntable rolling_disc both_perpendicular)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-2000}"
threads="${3:-2}"
repeats="${4:-3}"
shift $(($# < 4 ? $# : 4))
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(nh_particle ball_on_turntable rolling_disc both_perpendicular)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export NHVK_CACHE_DIR="$out/cache"
echo "| model | kind | repeat | integration s | traj/s (run) | path | equations |"
echo "|---|---|---|---|---|---|---|"
for model in "${models[@]}"; do
    sed "s|^name = \"$model\"|file = \"$here/models/$model.toml\"|" "$here/configs/$model.toml" >"$out/$model-file.toml"
    grep -q '^file = ' "$out/$model-file.toml" || { echo "configs/$model.toml: no 'name = \"$model\"' line" >&2; exit 1; }
    for r in $(seq 1 "$repeats"); do
        for kind in generated ad interpreted; do
            rm -rf "$out/run"
            args=(run "$here/configs/$model.toml" -q --trajectories "$n" --threads "$threads" --backend cpu --out "$out/run")
            case $kind in
            ad) args+=(--set 'integrator.equations="ad"') ;;
            interpreted) args[1]="$out/$model-file.toml" ;;
            esac
            if [[ $kind == interpreted ]]; then
                NHVK_CXX=/nonexistent/c++ "$build/nhvk" "${args[@]}" 2>/dev/null
            else
                "$build/nhvk" "${args[@]}"
            fi
            python3 - "$out/run/summary.json" "$model" "$kind" "$r" <<'PY' | tee -a "$out/rows"
import json, sys
s = json.load(open(sys.argv[1])); model, kind, r = sys.argv[2], sys.argv[3], sys.argv[4]
tm = s["timing"]; mf = s.get("model_file") or {}
print(f"| {model} | {kind} | {r} | {tm['integration_seconds']:.3f} | {s['trajectories']['requested'] / tm['seconds']:.0f} | "
      f"{mf.get('path', 'built-in')} | {s['equations']} |")
PY
        done
    done
done
python3 - "$out/rows" <<'PY'
import statistics, sys
by = {}
for l in open(sys.argv[1]):
    r = [c.strip() for c in l.strip().strip("|").split("|")]
    by.setdefault((r[0], r[1]), []).append(float(r[3]))
print()
print("| model | generated s (median) | ad s | interpreted s | interpreted / ad | interpreted / generated |")
print("|---|---|---|---|---|---|")
for model in dict.fromkeys(m for m, _ in by):
    g, a, i = (statistics.median(by[(model, k)]) for k in ("generated", "ad", "interpreted"))
    print(f"| {model} | {g:.3f} | {a:.3f} | {i:.3f} | {i / a:.2f} | {i / g:.1f} |")
PY
