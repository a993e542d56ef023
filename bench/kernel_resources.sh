#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Registers, stack frame and spills of every ensemble kernel, from `nvcc -Xptxas -v` (no GPU needed).
# Usage: bench/kernel_resources.sh [build-dir] [arch]     (default: build, sm_90; MODELS="rolling_disc ..." for some
#        models only)
# The build dir must have been configured (its gen/ folder holds the generated equations and the per-model .cu units;
# `cmake --build BUILD --target nhvk_generated` makes them). Prints one line per kernel:
#   model precision method registers stack_bytes spill_bytes
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
arch="${2:-sm_90}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[ -x "$nvcc" ] || { echo "kernel_resources.sh: nvcc not found (set NVCC)" >&2; exit 1; }
ls "$build"/gen/cuda_model_*.cu >/dev/null 2>&1 || { echo "kernel_resources.sh: no $build/gen/cuda_model_*.cu (configure first)" >&2; exit 1; }
[ -d "$build/gen/include/nhvk/generated" ] || cmake --build "$build" --target nhvk_generated >/dev/null
r123="$(dirname "$(dirname "$(find /usr/include /usr/local/include -name philox.h -path '*Random123*' 2>/dev/null | head -1)")")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "model precision method registers stack_bytes spill_bytes"
units=()
if [ -n "${MODELS:-}" ]; then
    for m in $MODELS; do units+=("$build/gen/cuda_model_$m.cu"); done
else
    units=("$build"/gen/cuda_model_*.cu)
fi
for cu in "${units[@]}"; do
    "$nvcc" -std=c++17 -O3 --expt-relaxed-constexpr -diag-suppress=20012 -arch="$arch" -Xptxas -v -c "$cu" \
        -o "$tmp/unit.o" -I"$here/include" -I"$here/host" -I"$here/kernels" -I"$build/gen/include" \
        ${r123:+-I"$r123"} 2>"$tmp/ptxas.txt" || { cat "$tmp/ptxas.txt" >&2; exit 1; }
    # ptxas prints, per kernel: "Compiling entry function 'NAME'", then "N bytes stack frame, N bytes spill stores,
    # N bytes spill loads" and "Used N registers".
    awk -v filt="${CXXFILT:-c++filt}" '
        /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
        /bytes stack frame/ { stack = $1; spill = $5 }
        /Used [0-9]+ registers/ && name ~ /ensemble_chunk_kernel/ {
            for (i = 1; i <= NF; ++i) if ($i == "Used") regs = $(i + 1)
            cmd = filt " " name; cmd | getline pretty; close(cmd)
            # nhvk::cuda_detail::ensemble_chunk_kernel<nhvk::models::NhParticle, double, nhvk::Dopri5>(nhvk::ChunkArgs)
            sub(/.*ensemble_chunk_kernel</, "", pretty); sub(/>\(.*/, "", pretty)
            split(pretty, parts, ", ")
            model = parts[1]; sub(/.*::/, "", model)
            method = parts[3]; sub(/.*::/, "", method)
            print model, parts[2], tolower(method), regs, stack, spill
            name = ""
        }' "$tmp/ptxas.txt"
done
