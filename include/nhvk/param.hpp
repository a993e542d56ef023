// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk::Param`, the type of a model's numeric parameters: a `double` in every ordinary build, and a
 *         symbol (`sym::Expr`) inside the build-time code generator (`NHVK_SYMBOLIC_PARAMS`), so that the generated
 *         equations take the parameters as run-time inputs (parameter sweeps draw them per trajectory).
 *
 *  A model declares `Param m = 1.0;` and computes with parameters only through `Param` or the scalar `S` (write
 *  `const Param I = 0.5 * m * R * R;`, not `const double I = …`). Boolean parameters stay `bool`: they select a
 *  variant of the model, and the generator emits one variant per value.
 */
#pragma once

#if defined(NHVK_SYMBOLIC_PARAMS)
#include "nhvk/sym/expr.hpp"
namespace nhvk {
using Param = sym::Expr;
} // namespace nhvk
#else
namespace nhvk {
using Param = double;
} // namespace nhvk
#endif
