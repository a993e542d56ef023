#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An installed nhvk compiles model files from its own install tree (README, "Installing"): `cmake --install` into a
# prefix, the prefix moved elsewhere, then, with the source tree, the build tree and the system's third-party headers
# (Random123, nlohmann-json, the CUDA toolkit's headers) hidden, the installed nhvk runs a config whose model is a
# model file. The run must compile the model (not fall back to interpreting it: summary.json says "compiled"), and
# NVRTC must compile a model file's and a built-in model's CUDA kernels for sm_90 (no device needed).
# The folders are hidden in a private mount namespace (`unshare -m`, root); where that is not allowed, the compile's
# dependency list is checked instead: no header from those folders.
# Usage: installed_model_file.sh SOURCE_DIR BUILD_DIR WORK_DIR HAVE_NVRTC
set -euo pipefail
src="$(cd "$1" && pwd)"
build="$(cd "$2" && pwd)"
work="$3"
have_nvrtc="$4"

case "$work" in "$src"/* | "$build"/*)
    echo "WORK_DIR must be outside the source and build trees (they are hidden)" >&2
    exit 2
    ;;
esac
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
mv "$work/prefix" "$work/moved" # the tree is relocatable: nothing in it names where it was installed
cat >"$work/swapped.toml" <<'TOML'
name = "installed_particle"
description = "particle of mass m with z' = x y' (linear, non-integrable)"
coordinates = ["x", "y", "z"]
lagrangian = "0.5*m*(x'^2 + y'^2 + z'^2)"
constraints = ["z' - x*y'"]
[parameters]
m = { default = 1.0, range = "> 0" }
TOML
cat >"$work/run.toml" <<'TOML'
[model]
file = "swapped.toml"
[initial.q]
x = { dist = "uniform", low = -1.0, high = 1.0 }
y = 0.0
z = 0.0
[initial.v]
x = { dist = "normal", mean = 0.0, std = 1.0 }
y = { dist = "normal", mean = 0.0, std = 1.0 }
z = { dist = "normal", mean = 0.0, std = 1.0 }
[integrator]
method = "rk4"
[times]
t_end = 1.0
count = 5
[run]
trajectories = 50
seed = 1
backend = "cpu"
out = "out"
TOML

cuda_include=""
[ -d /usr/local/cuda/include ] && cuda_include="$(readlink -f /usr/local/cuda/include)"
hidden=("$src" "$build")
for d in /usr/include/Random123 /usr/include/nlohmann "$cuda_include"; do
    [ -n "$d" ] && [ -d "$d" ] && hidden+=("$d")
done

# What runs with those folders hidden (or, without a mount namespace, with the compile's dependencies recorded).
cat >"$work/steps.sh" <<STEPS
set -euo pipefail
cd "$work"
export NHVK_CACHE_DIR="$work/cache"
"$work/moved/bin/nhvk" run run.toml >run.out 2>run.err || { cat run.err >&2; exit 1; }
grep -q '"path": "compiled"' out/summary.json || { echo "the model was not compiled:" >&2; cat run.err >&2; exit 1; }
if [ "$have_nvrtc" = 1 ]; then
    "$work/moved/bin/nhvk" compile swapped.toml --no-cpu --arch sm_90 --precision double --method rk4 >cuda.out 2>&1 ||
        { cat cuda.out >&2; exit 1; }
    "$work/moved/bin/nhvk" compile rolling_disc --arch sm_90 --precision double --method rk4 >>cuda.out 2>&1 ||
        { cat cuda.out >&2; exit 1; }
    [ "\$(grep -c 'compiled in' cuda.out)" = 2 ] || { cat cuda.out >&2; exit 1; }
fi
STEPS

if unshare -m --propagation private true 2>/dev/null; then
    mounts=""
    # NOTE: the deepest first: the build tree may lie inside the source tree, which hides it once mounted over
    while IFS= read -r d; do mounts+="mount -t tmpfs -o size=1m none '$d' && "; done < <(
        for d in "${hidden[@]}"; do echo "${#d} $d"; done | sort -rn | cut -d' ' -f2-)
    unshare -m --propagation private bash -c "${mounts} bash '$work/steps.sh'"
    echo "installed_model_file: compiled from $work/moved with ${hidden[*]} hidden"
else
    echo "installed_model_file: cannot hide folders here (unshare -m not permitted): checking the dependencies"
    NHVK_CXX="c++ -MD -MF $work/deps.d" bash "$work/steps.sh"
    for d in "${hidden[@]}"; do
        if grep -q "$d/" "$work/deps.d"; then
            echo "the compile read headers from $d:" >&2
            grep -o "$d/[^ ]*" "$work/deps.d" | head >&2
            exit 1
        fi
    done
    echo "installed_model_file: compiled from $work/moved, no header from ${hidden[*]}"
fi
