// SPDX-License-Identifier: MIT
/** @file
 *  @brief The elementary functions, in one table: for each one its name (the `sym::Op`, the function of namespace
 *         nhvk, the name in a model file's expressions), its value on `double` and `float`, its derivative for the
 *         dual numbers and its spelling in the generated C++ (host and device).
 *
 *  Everything about `sin` is one row below, as heyoka keeps everything about `sin` in one file. Each user expands
 *  the lists with a macro of its own:
 *  - `nhvk/dual.hpp`: the plain functions `nhvk::sin(double)`, `nhvk::sin(float)` and `nhvk::sin(Dual)`;
 *  - `nhvk/sym/expr.hpp`: the enum `sym::Op`, `sym::function_ops` (name, spelling, arity of each), the evaluation
 *    and constant folding of `sym::Graph` (`nhvk::detail::apply_function`), `sym::sin(Expr)`;
 *  - `host/sym/emit.cpp`: the spelling in the generated headers;
 *  - `host/sym/parse.cpp`: the names and arities of the expression language.
 *
 *  Not in the table: the arithmetic operators `+ − · /`, unary `−` and `pow` with a constant exponent. They are the
 *  grammar's operators, the dual numbers' own operators and the graph's folding rules (`sym::Graph::binary`), which
 *  differ operator by operator.
 *
 *  `abs`, `min` and `max` are differentiated without a branch, through `sign` (−1, 0, +1), so that a derivative
 *  traced with the recording scalar (which cannot branch) is the one the dual numbers compute: `abs' = sign(x)`,
 *  `∂min(u, w)/∂u = (1 − sign(u − w))/2`. Away from a tie that is the derivative of the selected branch; at a tie
 *  (`x = 0`, `u = w`) it is the mean of the two branches' (0 for `abs`), a subgradient.
 */
#pragma once

#include "nhvk/config.hpp"

namespace nhvk::detail {

/** @brief −1, 0 or +1 by the sign of `x`; ±0 and NaN are returned as they are. */
template <class P> NHVK_HD NHVK_FORCEINLINE P sign_value(P x) { return x > P(0) ? P(1) : x < P(0) ? P(-1) : x; }
/** @brief The smaller of `u`, `w`; NaN when either is NaN (a NaN is not hidden from the integrator's checks). */
template <class P> NHVK_HD NHVK_FORCEINLINE P min_value(P u, P w) { return u < w || u != u ? u : w; }
/** @brief The larger of `u`, `w`; NaN when either is NaN. */
template <class P> NHVK_HD NHVK_FORCEINLINE P max_value(P u, P w) { return u > w || u != u ? u : w; }

} // namespace nhvk::detail

// clang-format off

/** @brief The unary functions: `X(name, spelling, on_double, on_float, reads, derivative)`.
 *  - `name`: the enum `sym::Op::name`, the functions `nhvk::name` and `sym::name`, the name in expressions;
 *  - `spelling`: the function the generated headers call (in namespace nhvk, for T = double and float);
 *  - `on_double`, `on_float`: the function that computes it on a plain `double`, `float` (the C library's mostly);
 *  - `derivative`: f'(x) as an expression of `x` (type `T`: double, float, a dual, `sym::Expr`) and, where `reads`
 *    is `f`, of the value `f = f(x)` (cheaper: tan' = 1 + f²). */
#define NHVK_UNARY_FUNCTIONS(X)                                                     \
    /* NOTE: sin and cos are spelled through nhvk/trig.hpp: on the device an */     \
    /* argument reduction without local memory. */                                 \
    X(sin,   trig_sin, ::sin,   ::sinf,   x, cos(x))                                \
    X(cos,   trig_cos, ::cos,   ::cosf,   x, -sin(x))                               \
    X(tan,   tan,      ::tan,   ::tanf,   f, T(1) + f * f)                          \
    X(asin,  asin,     ::asin,  ::asinf,  x, T(1) / sqrt(T(1) - x * x))             \
    X(acos,  acos,     ::acos,  ::acosf,  x, T(-1) / sqrt(T(1) - x * x))            \
    X(atan,  atan,     ::atan,  ::atanf,  x, T(1) / (T(1) + x * x))                 \
    X(sinh,  sinh,     ::sinh,  ::sinhf,  x, cosh(x))                               \
    X(cosh,  cosh,     ::cosh,  ::coshf,  x, sinh(x))                               \
    X(tanh,  tanh,     ::tanh,  ::tanhf,  f, T(1) - f * f)                          \
    X(asinh, asinh,    ::asinh, ::asinhf, x, T(1) / sqrt(T(1) + x * x))             \
    X(exp,   exp,      ::exp,   ::expf,   f, f)                                     \
    X(log,   log,      ::log,   ::logf,   x, T(1) / x)                              \
    /* NOTE: sqrt' is infinite at 0; models with a √ of a norm (appell_hamel, */    \
    /* equal_speeds) are singular there, and the engine reports such a */           \
    /* trajectory as non-finite rather than hiding it. */                           \
    X(sqrt,  sqrt,     ::sqrt,  ::sqrtf,  f, T(0.5) / f)                            \
    X(abs,   abs,      ::fabs,  ::fabsf,  x, sign(x))                               \
    X(sign,  sign,     detail::sign_value, detail::sign_value, x, T(0))

/** @brief The binary functions: `X(name, spelling, on_double, on_float, d_first, d_second)`, with the partial
 *         derivatives `d_first` = ∂f/∂u and `d_second` = ∂f/∂w as expressions of the arguments `u`, `w` (type `T`).
 *         `atan2(u, w)` is the angle of the point (w, u), as in the C library. */
#define NHVK_BINARY_FUNCTIONS(X)                                                                              \
    X(atan2, atan2, ::atan2, ::atan2f, w / (u * u + w * w), -u / (u * u + w * w))                           \
    X(min,   min,   detail::min_value, detail::min_value, T(0.5) * (T(1) - sign(u - w)), T(0.5) * (T(1) + sign(u - w))) \
    X(max,   max,   detail::max_value, detail::max_value, T(0.5) * (T(1) + sign(u - w)), T(0.5) * (T(1) - sign(u - w)))

// clang-format on
