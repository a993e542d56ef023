#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed core is usable on its own (issue 9 item 2): install the `core` component of a configured nhvk build
# into an empty prefix, then configure, build and run tests/consumer/ against it with find_package(nhvk) and
# CMAKE_PREFIX_PATH only. Fails when the install lacks a header or an include path nhvk::core needs, when the consumer
# found nhvk anywhere but that prefix or compiled anything from the source tree, or when its physics check fails.
# Then the engine: every component installed into a second prefix, and a program against nhvk::engine (libnhvk.so)
# built, checked to load the installed library, and run.
# Usage: check_consumer.sh SOURCE_DIR BUILD_DIR WORK_DIR VERSION CXX_COMPILER [COMPILER_LAUNCHER]
set -euo pipefail
src="$1"
build="$2"
work="$3"
version="$4"
cxx="$5"
launcher="${6:-}"

rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" --component core >"$work/install.log"
if [ -e "$work/prefix/bin" ]; then
    echo "the core component installed a binary: $(ls "$work/prefix/bin")" >&2
    exit 1
fi
cmake -S "$src/tests/consumer" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} -DCMAKE_PREFIX_PATH="$work/prefix" -DNHVK_EXPECTED_VERSION="$version" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log"
found="$(sed -n 's/^nhvk_DIR:PATH=//p' "$work/build/CMakeCache.txt")"
case "$found" in
"$work/prefix/"*) ;;
*)
    echo "find_package(nhvk) found $found, not the install in $work/prefix" >&2
    exit 1
    ;;
esac
for dir in include host kernels; do
    if grep -q -- "$src/$dir" "$work/build/compile_commands.json"; then
        echo "the consumer compiles with $src/$dir on its include path, not the install:" >&2
        cat "$work/build/compile_commands.json" >&2
        exit 1
    fi
done
cmake --build "$work/build"
# The Thrust compiled is the one nhvk was configured with (a Thrust on the compiler's default path must not stand in
# for an include path that nhvk::core failed to carry).
cccl="$(sed -n 's/^NHVK_CCCL_INCLUDE:PATH=//p' "$build/CMakeCache.txt")"
if ! grep -q -- "$cccl/thrust/version.h" "$work/build/CMakeFiles/nhvk_consumer.dir/main.cpp.o.d"; then
    echo "the consumer did not compile $cccl/thrust/version.h (nhvk's NHVK_CCCL_INCLUDE):" >&2
    grep -o '[^ ]*thrust/version.h' "$work/build/CMakeFiles/nhvk_consumer.dir/main.cpp.o.d" >&2 || true
    exit 1
fi
"$work/build/nhvk_consumer"

# The engine: every component installed into another prefix, then the consumer of nhvk::engine built against it and
# run (it links libnhvk.so from that prefix, not from the build tree).
cmake --install "$build" --prefix "$work/full" >"$work/install-full.log"
cmake -S "$src/tests/consumer" -B "$work/build-engine" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} -DCMAKE_PREFIX_PATH="$work/full" -DNHVK_EXPECTED_VERSION="$version" \
    -DNHVK_ENGINE=ON -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure-engine.log"
for dir in include host kernels; do
    if grep -q -- "$src/$dir" "$work/build-engine/compile_commands.json"; then
        echo "the engine's consumer compiles with $src/$dir on its include path, not the install:" >&2
        exit 1
    fi
done
cmake --build "$work/build-engine" --target nhvk_engine_consumer
linked="$(ldd "$work/build-engine/nhvk_engine_consumer" | awk '$1 == "libnhvk.so" { print $3 }')"
case "$linked" in
"$work/full/"*) ;;
*)
    echo "the engine's consumer loads libnhvk.so from '$linked', not from the install in $work/full" >&2
    exit 1
    ;;
esac
"$work/build-engine/nhvk_engine_consumer"
