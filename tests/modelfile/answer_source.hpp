// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support for the compile cache: the smallest source worth compiling (an exported `answer()`), and
 *         calling it from a compiled entry.
 */
#pragma once

#include <string>

#include "modelfile/runtime_compile.hpp"

namespace nhvk_test {

/** @brief A unit exporting `int answer()` that returns `answer`: each value is a new cache key. */
inline std::string answer_source(int answer) {
    return "extern \"C\" __attribute__((visibility(\"default\"))) int answer() { return " + std::to_string(answer) +
           "; }\n";
}

/** @brief `answer()` of the compiled entry `a`, loaded (and its identity checked) by `load_symbol`. */
inline int call_answer(const nhvk::jit::Artefact& a) {
    using Fn = int (*)();
    return reinterpret_cast<Fn>(nhvk::jit::load_symbol(a, "answer"))();
}

} // namespace nhvk_test
