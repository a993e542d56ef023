#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ensemble kernels' minimum blocks per multiprocessor (`ensemble_min_blocks`, kernels/kernel_templates.cuh) on a
# CUDA device, in under five minutes on an H200 with the default settings: for each model's `configs/MODEL.toml`, the
# integration time with the kernels as nhvk compiles them (its table) and with NHVK_CUDA_MIN_BLOCKS=B for each B
# (`__launch_bounds__(128, B)`: at most 65536 / (128·B) registers a thread, the rest spilled). The kernels are compiled
# by NVRTC first, in parallel, into the script's own cache. Prints a Markdown table; the fastest B of a model is what
# its entry in the table should be (bench/results/2026-11-30-h200-kernels.md measured two).
# Usage: bench/gpu_min_blocks.sh [build-dir] [out-dir]        (default: build, gpu_min_blocks)
# Environment: MODELS (default: every built-in model with a configs/MODEL.toml), BLOCKS (default "1 2 3 4"),
# N (members a run, default 200000), PRECISION (default double), METHOD (default: each config's), ARCH (default: the
# device's, from nvidia-smi).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="${2:-gpu_min_blocks}"
n="${N:-200000}"
precision="${PRECISION:-double}"
blocks="${BLOCKS:-1 2 3 4}"
[ -x "$build/nhvk" ] || { echo "gpu_min_blocks: no $build/nhvk (build first: bench/README.md step 1)" >&2; exit 2; }
mkdir -p "$out"
export NHVK_CACHE_DIR="$out/cache"
unset NHVK_CUDA_MIN_BLOCKS
models=(${MODELS:-})
if [ ${#models[@]} -eq 0 ]; then
    mapfile -t models < <("$build/nhvk" models 2>/dev/null | awk '/^[a-z_]+ +n=/ { print $1 }')
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
git -C "$here" rev-parse --short HEAD 2>/dev/null || true
# the device's architecture, for `nhvk compile` (ARCH to name another)
arch="${ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')}"
set_args=(--set "integrator.precision=\"$precision\"")
[ -n "${METHOD:-}" ] && set_args+=(--set "integrator.method=\"$METHOD\"")
method_of() { # MODEL: the method its runs use
    if [ -n "${METHOD:-}" ]; then echo "$METHOD"; else
        awk -F'"' '/^method *=/ { m = $2; exit } END { print (m == "" ? "dopri5" : m) }' "$here/configs/$1.toml"; fi
}

# 1. every kernel the runs use, NVRTC in parallel: "table" is nhvk's own choice, a number NHVK_CUDA_MIN_BLOCKS
start=$(date +%s)
for m in "${models[@]}"; do
    [ -f "$here/configs/$m.toml" ] || continue
    for b in table $blocks; do echo "$b $m $(method_of "$m")"; done
done | xargs -P "$(nproc)" -n 3 sh -c '
    if [ "$1" = table ]; then unset NHVK_CUDA_MIN_BLOCKS; else export NHVK_CUDA_MIN_BLOCKS="$1"; fi
    "$0" compile "$2" --arch "'"$arch"'" --precision "'"$precision"'" --method "$3" >/dev/null 2>&1 ||
        echo "compile failed: $2, B = $1, $3"
' "$build/nhvk"
echo "compiled in $(($(date +%s) - start)) s"

# integration seconds of one run (B: table or a number), or "failed"
integration() {
    local b="$1" m="$2"
    rm -rf "$out/run"
    if [ "$b" = table ]; then unset NHVK_CUDA_MIN_BLOCKS; else export NHVK_CUDA_MIN_BLOCKS="$b"; fi
    if timeout 120 "$build/nhvk" run "$here/configs/$m.toml" --backend cuda -q --trajectories "$n" "${set_args[@]}" \
        --out "$out/run" >"$out/run.log" 2>&1; then
        python3 -c 'import json, sys; print(f"{json.load(open(sys.argv[1]))[\"timing\"][\"integration_seconds\"]:.3f}")' \
            "$out/run/summary.json"
    else
        echo failed
    fi
    unset NHVK_CUDA_MIN_BLOCKS
}
# NOTE: a first run, so that the driver's compile of the backend's own kernels is not in the first model's time
integration table nh_particle >/dev/null

# 2. the runs
header="| model | method | table |"
rule="|---|---|---|"
for b in $blocks; do header+=" B = $b |"; rule+="---|"; done
echo "$header fastest |"
echo "$rule---|"
for m in "${models[@]}"; do
    [ -f "$here/configs/$m.toml" ] || continue
    line="| $m | $(method_of "$m") |"
    best="table"
    best_s="$(integration table "$m")"
    line+=" $best_s |"
    for b in $blocks; do
        s="$(integration "$b" "$m")"
        line+=" $s |"
        if [ "$s" != failed ] && { [ "$best_s" = failed ] || python3 -c "import sys; sys.exit(0 if $s < $best_s else 1)"; }; then
            best="$b"
            best_s="$s"
        fi
    done
    [ "$best_s" = failed ] && best="none ran"
    echo "$line $best |"
done
echo "(N = $n, $precision; integration seconds of the device, summed over the two streams)"
