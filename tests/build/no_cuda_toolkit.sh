#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Everything but the CUDA backend builds without the CUDA toolkit (issue 7 item 7), checked in seconds: configure
# nhvk with the toolkit hidden and its default options, then compile the host units that use Thrust (the only
# dependency the toolkit could have supplied) against the Thrust that configure found (Debian's libthrust-dev).
# Usage: no_cuda_toolkit.sh SOURCE_DIR WORK_DIR
# Hiding: the toolkit's folders are covered by an empty tmpfs in a private mount namespace (`unshare`), so its
# symlinks elsewhere (/usr/local/include/cccl, an nvcc wrapper) dangle too; where no namespace can be made, the
# folders are dropped from PATH and ignored by CMake's find commands instead. Either way the check then fails when
# the configured cache or any compiled unit's dependency file names a file inside the toolkit.
set -euo pipefail
src="$1"
work="$2"

if [ "${NHVK_HIDDEN_TOOLKIT:-}" = "" ]; then
    # The toolkit's real roots: where each nvcc on PATH lives, /usr/local/cuda*, the CUDA environment variables.
    roots=()
    names=() # the roots as named, links included (CMake's find commands compare names)
    add_root() { if [ -n "$1" ] && [ -e "$1" ]; then roots+=("$(realpath "$1")") names+=("$1"); fi; }
    while read -r nvcc; do
        # NOTE: a wrapper script (`exec /usr/local/cuda-X/bin/nvcc`) names the real one.
        real="$(realpath "$nvcc")"
        wrapped="$(head -c 4096 "$real" | sed -n 's|^exec \([^ ]*/bin/nvcc\) .*|\1|p' 2>/dev/null | head -n 1)"
        add_root "$(dirname "$(dirname "$(realpath "${wrapped:-$real}")")")"
    done < <(type -ap nvcc || true)
    for d in /usr/local/cuda /usr/local/cuda-* "${CUDA_PATH:-}" "${CUDA_HOME:-}" "${CUDAToolkit_ROOT:-}"; do
        add_root "$d"
    done
    mapfile -t roots < <(printf '%s\n' "${roots[@]}" | sort -u | grep -v -x -e /usr -e / || true)
    # PATH without the folders that hold an nvcc.
    path=""
    IFS=: read -ra dirs <<<"$PATH"
    for d in "${dirs[@]}"; do [ -x "$d/nvcc" ] || path="${path:+$path:}$d"; done
    export NHVK_HIDDEN_TOOLKIT="${roots[*]}" NHVK_TOOLKIT_NAMES="${names[*]} ${roots[*]}" PATH="$path"
    unset CUDACXX CUDA_PATH CUDA_HOME CUDAToolkit_ROOT CUDAARCHS CPATH CPLUS_INCLUDE_PATH C_INCLUDE_PATH
    if ((${#roots[@]})) && unshare --mount --map-root-user mount -t tmpfs nhvk-probe "${roots[0]}" 2>/dev/null; then
        mounts=""
        for r in "${roots[@]}"; do mounts+="mount -t tmpfs nhvk-hidden '$r' && "; done
        exec unshare --mount --map-root-user bash -c "${mounts}NHVK_HIDE_MODE=namespace exec bash '$0' '$src' '$work'"
    fi
    export NHVK_HIDE_MODE=ignore-paths
fi

read -ra roots <<<"$NHVK_HIDDEN_TOOLKIT"
echo "toolkit roots hidden (${NHVK_HIDE_MODE}): ${roots[*]:-none found}"
ignore=()
read -ra names <<<"$NHVK_TOOLKIT_NAMES"
for r in "${names[@]}"; do ignore+=("$r/bin" "$r/include" "$r/include/cccl"); done
for d in /usr/local/bin /usr/local/include/cccl; do # where toolkit installers leave links
    if [ -e "$d/nvcc" ] || [ -e "$d/thrust/version.h" ]; then ignore+=("$d"); fi
done
ignore_list="$(IFS=';' && echo "${ignore[*]}")"

rm -rf "$work"
# Default options on purpose: the CUDA backend must turn itself off. -O0: this compiles, it does not benchmark.
cmake -S "$src" -B "$work" -DNHVK_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
    "-DCMAKE_IGNORE_PATH=$ignore_list" >"$work.configure.log" 2>&1 || {
    cat "$work.configure.log"
    echo "FAIL: configure without the CUDA toolkit failed" >&2
    exit 1
}
grep -E "Thrust|CUDA" "$work.configure.log" || true
grep -qx "NHVK_ENABLE_CUDA:BOOL=OFF" "$work/CMakeCache.txt" || {
    echo "FAIL: the CUDA backend is enabled although the toolkit is hidden" >&2
    exit 1
}
cmake --build "$work" --target nhvk_thrust_units -j 2

fail=0
deps="$(find "$work" -name '*.o.d')"
[ -n "$deps" ] || {
    echo "FAIL: no unit compiled" >&2
    exit 1
}
grep -q "/thrust/" $deps || {
    echo "FAIL: no compiled unit includes Thrust" >&2
    fail=1
}
echo "compiled: $(grep -l . $deps | wc -l) units"
# Every file the configure recorded and every header a unit read, resolved, lies outside the toolkit.
used="$(grep -v '^CMAKE_IGNORE_PATH' "$work/CMakeCache.txt"; cat $deps | tr ' \\' '\n\n' | grep '^/' | sort -u |
    xargs -r realpath -q -- 2>/dev/null || true)"
for r in "${roots[@]}"; do
    hits="$(grep -F -- "$r" <<<"$used" || true)"
    if [ -n "$hits" ]; then
        head -n 3 <<<"$hits"
        echo "FAIL: the toolkit-free build used the toolkit at $r (above)" >&2
        fail=1
    fi
done
exit "$fail"
