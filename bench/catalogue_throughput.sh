#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of nhvk on the catalogue (issue 39's throughput target: every catalogue model through the default path
# within 3 % of the build before it): `nhvk run configs/MODEL.toml` with build A and with build B, N trajectories,
# each REPEATS times in turn (A, B, A, B, ...), on BACKEND (cpu or cuda). Prints each run's integration time (from
# summary.json) and, per model, the ratio of the medians B/A. On the CPU: A a static build (-DNHVK_SHARED_ENGINE=OFF),
# B the default (libnhvk.so). On a GPU: A a build with -DNHVK_AOT_MODELS=all (kernels compiled ahead of time), B the
# default (kernels compiled at run time by NVRTC; the cache is filled before the first timed run, so compiles are not
# timed: they are reported by `nhvk compile`).
# Usage: [BACKEND=cpu|cuda] bench/catalogue_throughput.sh BUILD_A BUILD_B [N] [threads] [repeats] [models...]
#        (default: cpu, 20000, 2, 3, every model with a configs/MODEL.toml of the catalogue)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
a="$1"
b="$2"
n="${3:-20000}"
threads="${4:-2}"
repeats="${5:-3}"
backend="${BACKEND:-cpu}"
shift $(($# < 5 ? $# : 5))
models=("$@")
if [[ ${#models[@]} -eq 0 ]]; then
    models=($("$b/nhvk" models | awk '/^[a-z]/ { print $1 }'))
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export NHVK_CACHE_DIR="$out/cache"
echo "backend: $backend; A = $a; B = $b; N = $n; threads = $threads"
echo "| model | build | repeat | integration s | run s |"
echo "|---|---|---|---|---|"
for model in "${models[@]}"; do
    cfg="$here/configs/$model.toml"
    [[ -f $cfg ]] || { echo "no $cfg" >&2; continue; }
    if [[ $backend == cuda ]]; then
        "$b/nhvk" compile "$model" --method all --precision all >/dev/null
    fi
    for r in $(seq 1 "$repeats"); do
        for build in A B; do
            bin="$a/nhvk"
            [[ $build == B ]] && bin="$b/nhvk"
            rm -rf "$out/run"
            "$bin" run "$cfg" -q --trajectories "$n" --threads "$threads" --backend "$backend" --out "$out/run"
            python3 - "$out/run/summary.json" "$model" "$build" "$r" <<'PY' | tee -a "$out/rows"
import json, sys
s = json.load(open(sys.argv[1])); t = s["timing"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {t['integration_seconds']:.3f} | {t['seconds']:.3f} |")
PY
        done
    done
done
echo
python3 - "$out/rows" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    r = [c.strip() for c in line.strip().strip("|").split("|")]
    by.setdefault((r[0], r[1]), []).append(float(r[3]))
print("| model | median integration s, A | median, B | B / A |")
print("|---|---|---|---|")
worst = 0.0
for model in dict.fromkeys(m for m, _ in by):
    ma, mb = statistics.median(by[(model, "A")]), statistics.median(by[(model, "B")])
    worst = max(worst, mb / ma)
    print(f"| {model} | {ma:.3f} | {mb:.3f} | {mb / ma:.3f} |")
print(f"\nlargest B / A: {worst:.3f}")
PY
