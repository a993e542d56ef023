#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Double-precision arithmetic left in a float ensemble kernel, by source line (no GPU needed): compiles one
# ensemble_chunk_kernel<MODEL, float, METHOD> to PTX with line information and counts its f64 instructions (add, sub,
# mul, fma, div, sqrt) per source line, most first. A float kernel whose steps did double arithmetic would show lines of
# the steppers, the linear algebra or the generated equations here; per-member and per-output-time work (the first
# step's probes, the divergence metrics) is expected.
# Usage: bench/ptx_f64_audit.sh [build-dir] [Model] [Method] [arch]   (default: build, BallOnTurntable, Dopri5, sm_90;
#        Model as in nhvk::models, Method as the stepper template, e.g. Rk4; the build dir must be configured)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
model="${2:-BallOnTurntable}"
method="${3:-Dopri5}"
arch="${4:-sm_90}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[ -d "$build/gen/include/nhvk/generated" ] || cmake --build "$build" --target nhvk_generated >/dev/null
# the generated header of a model: its file name is the model's snake_case name
header="$(grep -l "struct Generated<nhvk::models::$model>" "$build"/gen/include/nhvk/generated/*.hpp | head -1)"
[ -n "$header" ] || { echo "ptx_f64_audit.sh: no generated equations of $model" >&2; exit 1; }
r123="$(dirname "$(dirname "$(find /usr/include /usr/local/include -name philox.h -path '*Random123*' 2>/dev/null | head -1)")")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/unit.cu" <<EOF
#include "nhvk/generated/$(basename "$header")"
#include "kernel_templates.cuh"
template __global__ void nhvk::cuda_detail::ensemble_chunk_kernel<nhvk::models::$model, float, nhvk::$method>(nhvk::ChunkArgs);
EOF
"$nvcc" -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -diag-suppress=20012 -arch="$arch" -ptx "$tmp/unit.cu" \
    -o "$tmp/unit.ptx" -I"$here/include" -I"$here/host" -I"$here/kernels" -I"$build/gen/include" ${r123:+-I"$r123"}
echo "f64 instructions of ensemble_chunk_kernel<$model, float, $method> ($arch), by source line:"
python3 - "$tmp/unit.ptx" "$here" <<'PY'
import collections, re, sys
lines = open(sys.argv[1]).read().splitlines()
# NOTE: ptxas lists the .file directives after the code that names them
files = {m.group(1): m.group(2).replace(sys.argv[2] + "/", "")
         for m in (re.match(r'\s*\.file\s+(\d+)\s+"([^"]+)"', l) for l in lines) if m}
cur, count = None, collections.Counter()
for line in lines:
    m = re.match(r'\s*\.loc\s+(\d+)\s+(\d+)', line)
    if m:
        cur = f"{files.get(m.group(1), m.group(1))}:{m.group(2)}"
        continue
    m = re.match(r'\s*(add|sub|mul|fma\.rn|div\.rn|sqrt\.rn)\.f64', line)
    if m:
        count[(cur or "?", m.group(1).split(".")[0])] += 1
total = sum(count.values())
print(f"total {total}")
for (where, op), n in sorted(count.items(), key=lambda kv: -kv[1]):
    print(f"{n:6d} {op:5s} {where}")
PY
