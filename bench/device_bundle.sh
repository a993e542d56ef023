#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs a build of this machine for a GPU machine that has the CUDA toolkit and a driver but none of the build's
# Debian packages (the project's lent H100/H200 machines; a cluster's compute node): `nhvk`, `libnhvk.so`,
# `libnhvk_interp.so` and the named test binaries behind wrappers that set the library path, every shared library they
# load that is not glibc's, libstdc++ or CUDA's own (netCDF, HDF5, toml++, OpenMPI's, …), the generated equation headers
# and Random123's headers that NVRTC and the model-file compiler read, and optionally an NVRTC cache filled here
# (`nhvk compile MODEL --arch sm_90 …`: the keys hash the headers, so the kernels are found there if the tree is the
# same). The build's paths are absolute, so the tree must sit at the same path there (a link will do).
# Usage: bench/device_bundle.sh BUILD OUT.tar.xz [CACHE-DIR] [test binaries…]     (default: nhvk_kernels_tests)
# There, in the repository's root at the path the build was made in:
#   tar xJf OUT.tar.xz build gpu-libs && tar xJf OUT.tar.xz -C / usr
#   NHVK_CACHE_DIR=$PWD/build/model_cache build/nhvk run …
# (bench/results/2026-11-30-h200-kernels.md ran so; a wrapper adds gpu-libs and /usr/local/cuda/lib64 to
# LD_LIBRARY_PATH for its binary alone, so the machine's own tools keep their libraries.)
set -euo pipefail
build="$(cd "${1:?usage: bench/device_bundle.sh BUILD OUT.tar.xz [CACHE-DIR] [test binaries…]}" && pwd)"
out="$(realpath -m "${2:?usage: bench/device_bundle.sh BUILD OUT.tar.xz [CACHE-DIR] [test binaries…]}")"
cache="${3:-}"
shift $(($# < 3 ? $# : 3))
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(nhvk_kernels_tests)
root="$(cd "$build/.." && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
rel="$(realpath --relative-to="$root" "$build")"
mkdir -p "$stage/$rel/lib" "$stage/$rel/tests" "$stage/gpu-libs" "$stage/usr/include"
wrap() { # BINARY-PATH: the binary moves to PATH.bin, a wrapper takes its place
    mv "$1" "$1.bin"
    printf '#!/bin/sh\nexport LD_LIBRARY_PATH=%s/gpu-libs:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\nexec "$0.bin" "$@"\n' \
        "$root" >"$1"
    chmod +x "$1"
}
bins=("$build/nhvk" "$build"/lib/libnhvk*.so)
cp "$build/nhvk" "$stage/$rel/nhvk"
wrap "$stage/$rel/nhvk"
cp "$build"/lib/libnhvk*.so "$stage/$rel/lib/"
for t in "${tests[@]}"; do
    cp "$build/tests/$t" "$stage/$rel/tests/$t"
    wrap "$stage/$rel/tests/$t"
    bins+=("$build/tests/$t")
done
# NOTE: glibc's libraries, the C++ runtime and CUDA's are the machine's own: a copy of the older ones here would
# shadow them for every program the wrappers start (the C++ compiler, NVRTC)
ldd "${bins[@]}" 2>/dev/null | awk '/=> \// { print $1, $3 }' | sort -u | while read -r name path; do
    case "$name" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | libutil.so.* | \
        libstdc++.so.* | libgcc_s.so.* | libcuda.so.* | libcudart.so.* | libnvrtc*.so.* | libnhvk*.so) ;;
    *) cp -L "$path" "$stage/gpu-libs/$name" ;;
    esac
done
mkdir -p "$stage/$rel/gen"
cp -a "$build/gen/include" "$build/gen/version" "$stage/$rel/gen/"
r123="$(grep -m1 '^NHVK_RANDOM123_INCLUDE:' "$build/CMakeCache.txt" | cut -d= -f2)"
cp -a "${r123:-/usr/include}/Random123" "$stage/usr/include/"
if [ -n "$cache" ]; then
    mkdir -p "$stage/$rel/model_cache"
    cp -a "$cache/." "$stage/$rel/model_cache/"
    find "$stage/$rel/model_cache" -name '*.lock' -delete
fi
(cd "$stage" && tar cf - "$rel" gpu-libs usr | xz -T0 -6 >"$out")
echo "$out: $(du -h "$out" | cut -f1) ($(ls "$stage/gpu-libs" | wc -l) libraries; tests: ${tests[*]})"
