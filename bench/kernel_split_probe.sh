#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What one thread needs for one dynamics alone (no GPU needed): the registers, stack frame and spills of a probe
# kernel that integrates only the nonholonomic or only the vakonomic system of a member with a model's generated
# equations, beside the ensemble kernel that integrates both in one thread. A layout with the two dynamics of a member
# in two threads (or two warps) holds one dynamics per thread; it fits more members on a multiprocessor only if one
# dynamics needs less than half the registers of both. The probe is a measurement, not a product kernel.
# Usage: bench/kernel_split_probe.sh [build-dir] [arch]    (default: build, sm_90; CASES="Model:precision:Method ...",
#        default "RollingDisc:double:Dopri5 RollingDisc:double:Rk4 BallOnTurntable:double:Dopri5
#        BallOnTurntable:double:Rk4 BallOnTurntable:float:Dopri5 NhParticle:double:Rk4"; ENSEMBLE_ONLY=1: the ensemble
#        kernels alone, a quicker table of the CASES than kernel_resources.sh's of every method; CUBIN=path: keep the
#        probe's machine code there)
# Prints: registers stack_bytes spill_bytes kernel
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
arch="${2:-sm_90}"
cases="${CASES:-RollingDisc:double:Dopri5 RollingDisc:double:Rk4 BallOnTurntable:double:Dopri5 BallOnTurntable:double:Rk4 BallOnTurntable:float:Dopri5 NhParticle:double:Rk4}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[ -d "$build/gen/include/nhvk/generated" ] || cmake --build "$build" --target nhvk_generated >/dev/null
r123="$(dirname "$(dirname "$(find /usr/include /usr/local/include -name philox.h -path '*Random123*' 2>/dev/null | head -1)")")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
{
    echo '#include "nhvk/generated/all.hpp"'
    echo '#include "kernel_templates.cuh"'
    cat <<'EOF'
namespace nhvk::cuda_detail {
template <class M, class T, template <class, class> class St, bool Vk>
__global__ void __launch_bounds__(block_size) one_dynamics_kernel(ChunkArgs a) {
    const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= a.m) return;
    using Eq = GenEquations<M, T>;
    using Sys = std::conditional_t<Vk, VakonomicSystem<M, T, Eq>, BalancedNonholonomicSystem<M, T, Eq>>;
    const M model{};
    const Sys sys{model};
    T y[Sys::dim];
    for (int c = 0; c < Sys::dim; ++c) y[c] = c < 2 * M::n ? T(a.q0[c * a.ld + j]) : T(0);
    St<Sys, T> s;
    Status st = s.init(sys, T(a.t0), y, a.ctl);
    if constexpr (dense_stepper<St<Sys, T>>) s.land_last_on(T(a.times[a.nt - 1]));
    for (int i = 0; i < a.nt && st == Status::ok; ++i) {
        st = s.advance_to(sys, T(a.times[i]));
        for (int c = 0; c < Sys::dim; ++c) a.metrics[(c * a.nt + i) * a.ld + j] = double(s.y[c]);
    }
    a.status[j] = static_cast<std::uint8_t>(st);
}
EOF
    for c in $cases; do
        IFS=: read -r model prec method <<<"$c"
        if [ -z "${ENSEMBLE_ONLY:-}" ]; then
            for vk in false true; do
                echo "template __global__ void one_dynamics_kernel<models::$model, $prec, $method, $vk>(ChunkArgs);"
            done
        fi
        echo "template __global__ void ensemble_chunk_kernel<models::$model, $prec, $method>(ChunkArgs);"
    done
    echo '}'
} >"$tmp/probe.cu"
# CUBIN=path keeps the machine code (bench/step_loop_sass.sh reads its loops)
"$nvcc" -std=c++17 -O3 --expt-relaxed-constexpr -diag-suppress=20012 -arch="$arch" -Xptxas -v -cubin "$tmp/probe.cu" \
    -o "${CUBIN:-$tmp/probe.cubin}" -I"$here/include" -I"$here/host" -I"$here/kernels" -I"$build/gen/include" ${r123:+-I"$r123"} \
    2>"$tmp/ptxas.txt" || { cat "$tmp/ptxas.txt" >&2; exit 1; }
echo "registers stack_bytes spill_bytes kernel"
awk '/Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
     /bytes stack frame/ { stack = $1; spill = $5 }
     /Used [0-9]+ registers/ { for (i = 1; i <= NF; ++i) if ($i == "Used") regs = $(i + 1); print regs, stack, spill, name }' \
    "$tmp/ptxas.txt" | while read -r r st sp nm; do
    echo "$r $st $sp $(echo "$nm" | "${CXXFILT:-c++filt}" | sed 's/^void nhvk::cuda_detail:://; s/(nhvk::ChunkArgs)//; s/nhvk::models:://; s/nhvk:://g')"
done | sort -k4
