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

namespace nhvk {
/** @brief The documented range of a numeric model parameter, declared where the model lists the parameter
 *         (`visit("m", m, ParamDomain::positive)` in `visit_params`): the config loader and `nhvk trajectory` refuse
 *         values outside it (a sweep whose distribution can draw outside it too). A parameter listed without one
 *         takes any finite value; boolean parameters take none. */
enum class ParamDomain : unsigned char {
    any,          ///< any finite number (a slope, an angle, g, a rotation rate)
    positive,     ///< > 0 (masses, inertias, radii)
    non_negative, ///< >= 0 (a stiffness, a rest length)
};
} // namespace nhvk
