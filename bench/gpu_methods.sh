#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The integration methods' throughput on a backend (issue 43: "the GPU throughput of each new method is measured in
# the bench/ GPU script"): configs/rolling_disc.toml and configs/ball_on_turntable.toml at N members with each adaptive
# method at rtol 1e-10 (the default) and 1e-12, in double, and at the float defaults; one Markdown row per run with
# the run's integration seconds, its whole time and the members that failed. The kernels of every combination are
# compiled first, in parallel (`nhvk compile`, one process per combination, into the run's cache), so the timed runs
# compile nothing; each run has a 150 s limit. Then the stiff configuration (configs/stiff_spring_pair.toml, a model
# file) at N/100 members with dopri5 and rodas5p at rtol 1e-6 and 1e-8; and the fixed-step methods rk4 and midpoint
# (the structure-preserving one) at dt = 1e-3 on both models, at N/10 members.
# Usage: bench/gpu_methods.sh [build-dir] [N]      (defaults: build, 1000000; BACKEND=cuda|cpu|auto, default cuda;
#        THREADS for --threads)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-1000000}"
backend="${BACKEND:-cuda}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
threads=()
[ -z "${THREADS:-}" ] || threads=(--threads "$THREADS")
[ -x "$build/nhvk" ] || { echo "gpu_methods.sh: no $build/nhvk (build it first)" >&2; exit 2; }

if [ "$backend" != cpu ]; then
    echo "gpu_methods.sh: compiling the kernels of 22 combinations in parallel" >&2
    for model in rolling_disc ball_on_turntable; do
        for method in dopri5 tsit5 dop853 rk4 midpoint; do
            for precision in double float; do
                "$build/nhvk" compile "$model" --method "$method" --precision "$precision" --no-cpu >/dev/null &
            done
        done
    done
    for method in dopri5 rodas5p; do
        "$build/nhvk" compile "$here/models/damped_spring_pair.toml" --method "$method" --precision double >/dev/null &
    done
    wait
fi

# One run and its table row: row LABEL CONFIG MEMBERS METHOD PRECISION RTOL [--set ...]
row() {
    local label="$1" config="$2" members="$3" method="$4" precision="$5" rtol="$6"
    shift 6
    local atol
    atol=$(python3 -c "print($rtol / 100)")
    rm -rf "$work/run"
    if ! timeout 150 "$build/nhvk" run "$config" --backend "$backend" --trajectories "$members" -q --out "$work/run" \
        "${threads[@]}" --set "integrator.method=\"$method\"" --set "integrator.precision=\"$precision\"" \
        --set "integrator.rtol=$rtol" --set "integrator.atol=$atol" "$@" >"$work/log" 2>&1; then
        echo "| $label | $method | $precision | $rtol | failed: $(tail -n 1 "$work/log") | | |"
        return
    fi
    python3 - "$work/run/summary.json" "$label" "$method" "$precision" "$rtol" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["timing"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {t['integration_seconds']:.3f} | "
      f"{t['seconds']:.3f} | {s['trajectories']['failed']['total']} |")
PY
}

echo "| model | method | precision | rtol | integration s | run s | failed |"
echo "|---|---|---|---|---|---|---|"
for model in rolling_disc ball_on_turntable; do
    for method in dopri5 tsit5 dop853; do
        for setting in "double 1e-10" "double 1e-12" "float 1e-6"; do
            read -r precision rtol <<<"$setting"
            row "$model" "$here/configs/$model.toml" "$n" "$method" "$precision" "$rtol"
        done
    done
done

# The stiff configuration: a model file, dopri5 held to its stability bound (about 1.8e5 steps per dynamics, past the
# default step budget of its 40 output times).
stiff_n=$((n / 100 > 1000 ? n / 100 : 1000))
for method in dopri5 rodas5p; do
    for rtol in 1e-6 1e-8; do
        row "stiff_spring_pair ($stiff_n)" "$here/configs/stiff_spring_pair.toml" "$stiff_n" "$method" double "$rtol" \
            --set integrator.max_steps=10000000
    done
done

# The fixed-step methods at dt = 1e-3 (rtol is not used by them): midpoint solves its implicit step by Newton with a
# matrix of forward tangents, rk4 is the explicit comparison at the same step.
fixed_n=$((n / 10 > 1000 ? n / 10 : 1000))
for model in rolling_disc ball_on_turntable; do
    for method in rk4 midpoint; do
        for precision in double float; do
            row "$model ($fixed_n, dt 1e-3)" "$here/configs/$model.toml" "$fixed_n" "$method" "$precision" 1e-6 \
                --set integrator.dt=0.001
        done
    done
done
