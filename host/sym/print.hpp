// SPDX-License-Identifier: MIT
/** @file
 *  @brief Print a lowered model (lower.hpp) as C++: one text for the host compiler and nvcc alike, since the
 *         generated functions are templates marked `NHVK_HD` (nhvk/generated.hpp) that each compiler reads in its own
 *         way. The pieces are separate so that another frame (a source handed to NVRTC, say) prints the same
 *         `Generated<M>` around a different preamble.
 */
#pragma once

#include <string>

#include "lower.hpp"
#include "nhvk/sym/expr.hpp"

namespace nhvk::sym {

/** @brief `x` as a C++ literal that reads back as the same double (`%.17g`). */
std::string number(double x);

/** @brief The C++ of node `nd` given its arguments' names `a`, `b`: constants of the exponent wrapped as `scalar(c)`.
 *         `header`: the generated headers' form (the spelling of nhvk/ops.hpp's table, `trig_sin`, for `T` = double
 *         or float); otherwise the function's name, for code that also runs on the dual numbers (a model file's
 *         struct). */
std::string node_code(const Node& nd, const std::string& a, const std::string& b, const std::string& scalar,
                      bool header);

/** @brief The lines of `body`, each after `indent`, in scalar type `T`. */
std::string print_statements(const Statements& body, const std::string& indent);

/** @brief One member function of `Generated<M>`: with several variants, variant i's statements under
 *         `if (K.variant == i)`, the last variant's as the else branch. */
std::string print_function(const LoweredModel& m, const Function& f);

/** @brief `template <> struct Generated<M> { … };`: the sizes, the solves chosen, `Consts<T>` and the functions. */
std::string print_generated(const LoweredModel& m);

/** @brief The generated header: `print_generated` in namespace nhvk, after the includes it needs. */
std::string print_header(const LoweredModel& m);

} // namespace nhvk::sym
