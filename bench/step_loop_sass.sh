#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The step loops of ensemble kernels against the hand-written kernel's, from their machine code (no GPU needed): for
# each kernel, its registers, and each loop (a backward branch) that holds a double division (MUFU.RCP64H) of its own,
# in the order of the code, the instructions in its body but not in the loops inside it, of which double-precision arithmetic (DADD, DMUL,
# DFMA), compares and selects, and branches. The loop of a fixed-step method is one step of one dynamics: the
# instructions the step issues, and the code it branches over (failure paths, the division's slow path), since a count
# of the text is not a count of what runs. The projection's Newton iterations are such loops too.
# The yardstick is nh_particle's double RK4 against
# bench/peers/closed_form_cuda.cu's rk4_kernel (issue "kernels that fill the GPU").
# Usage: bench/step_loop_sass.sh [build-dir] [arch]    (default: build, sm_90; CASES="Model:precision:Method ...",
#        default "NhParticle:double:Rk4")
# Needs nvdisasm, which some toolkit installs leave out: NVDISASM=path, or `pip download --no-deps
# nvidia-cuda-nvdisasm` and unzip the wheel (bench/results/2026-11-30-step-loop-sass.md ran so).
# Prints: kernel_split_probe.sh's table (registers, stack, spills) and the hand-written kernel's registers, then per
# kernel and loop: instructions, f64, compare/select, branch
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
arch="${2:-sm_90}"
cases="${CASES:-NhParticle:double:Rk4}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
nvdisasm="${NVDISASM:-$(command -v nvdisasm || echo "$(dirname "$nvcc")/nvdisasm")}"
[ -x "$nvdisasm" ] || { echo "step_loop_sass: no nvdisasm ($nvdisasm); set NVDISASM (see the comment above)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# the ensemble kernels of the CASES, compiled as bench/kernel_split_probe.sh does (its table: the registers)
ENSEMBLE_ONLY=1 CASES="$cases" CUBIN="$tmp/probe.cubin" bash "$here/bench/kernel_split_probe.sh" "$build" "$arch"
"$nvcc" -std=c++17 -O3 -arch="$arch" -Xptxas -v -cubin "$here/bench/peers/closed_form_cuda.cu" -o "$tmp/peer.cubin" \
    2>"$tmp/ptxas.txt" || { cat "$tmp/ptxas.txt" >&2; exit 1; }
awk '/Compiling entry function/ { on = /rk4_kernel/ } on && /Used [0-9]+ registers/ {
    for (i = 1; i <= NF; ++i) if ($i == "Used") print "rk4_kernel (hand-written): " $(i + 1) " registers"; on = 0 }' \
    "$tmp/ptxas.txt"
for f in probe peer; do "$nvdisasm" "$tmp/$f.cubin" >"$tmp/$f.sass"; done
python3 - "$tmp/probe.sass" "$tmp/peer.sass" <<'PY'
import re, subprocess, sys

def demangle(s):
    try:
        d = subprocess.run(["c++filt", s], capture_output=True, text=True).stdout.strip()
    except OSError:
        return s
    d = re.sub(r"^void |\([^()]*\)$", "", d).replace("(anonymous namespace)::", "")
    return d.replace("nhvk::cuda_detail::", "").replace("nhvk::models::", "").replace("nhvk::", "")

for path in sys.argv[1:]:
    text = open(path).read()
    for chunk in re.split(r"\n\s*\.text\.", text)[1:]:
        fname = chunk.split(":", 1)[0].split()[0].strip('"')
        if not ("ensemble_chunk_kernel" in fname or "rk4_kernel" in fname):
            continue
        ins, labels = [], {}
        for line in chunk.split("\n"):
            m = re.match(r"^(\.L_x_\d+):", line)
            if m:
                labels[m.group(1)] = len(ins)
                continue
            m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
            if m:
                ins.append(m.group(2).strip())
        print(f"{demangle(fname)}:")
        loops = set()
        for i, t in enumerate(ins):
            m = re.search(r"\bBRA\b.*`\((\.L_x_\d+)\)", t)
            if m and m.group(1) in labels and labels[m.group(1)] <= i:
                loops.add((labels[m.group(1)], i))
        for lo, hi in sorted(loops):
            # a loop's own instructions: those of the loops inside it (a step loop with the projection holds the
            # projection's Newton loop) left out
            inner = [(a, b) for a, b in loops if lo <= a <= b <= hi and (a, b) != (lo, hi)]
            own = [ins[i] for i in range(lo, hi + 1) if not any(a <= i <= b for a, b in inner)]
            if not any("MUFU.RCP64H" in t for t in own):
                continue
            op = [re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0] for t in own]
            f64 = sum(o in ("DADD", "DMUL", "DFMA") for o in op)
            cmp = sum(o in ("DSETP", "FSETP", "ISETP", "SEL", "FSEL", "PLOP3") for o in op)
            br = sum(o in ("BRA", "BSSY", "BSYNC", "CALL") for o in op)
            print(f"  loop: {len(own)} instructions, {f64} f64, {cmp} compare/select, {br} branch"
                  + (f" (and {len(inner)} loops inside)" if inner else ""))
PY
