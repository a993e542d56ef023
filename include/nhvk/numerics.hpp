// SPDX-License-Identifier: MIT
/** @file
 *  @brief Run-time choices of the numerics shared by the core, the backends and the config: method and precision.
 */
#pragma once

#include <cstdint>

namespace nhvk {

/** @brief Integration method (`integrator.method`), dispatched to a stepper template. */
enum class Method : std::uint8_t { dopri5 = 0, rk4 = 1 };
/** @brief Scalar type of the integration (`integrator.precision`: "double" = f64, "float" = f32). */
enum class Precision : std::uint8_t { f64 = 0, f32 = 1 };
/** @brief How the right-hand sides are derived (`integrator.equations`): the code generated at build time from the
 *         model (`GenEquations`, the default) or nested dual numbers at every evaluation (`AdEquations`, the
 *         reference; CPU only). */
enum class EquationsKind : std::uint8_t { generated = 0, ad = 1 };

/** @brief The step-control defaults, spelled once: `StepControl`'s member initializers (nhvk/steppers.hpp) and the
 *         config's `[integrator]` defaults (host/config.cpp) both read them. */
struct StepDefaults {
    static constexpr double rtol = 1e-10;      ///< dopri5's relative tolerance in double
    static constexpr double rtol_float = 1e-6; ///< in float (what the precision reaches)
    static constexpr double atol = 1e-12;      ///< dopri5's absolute tolerance
    /// in float: rtol_float / 100, as atol is rtol / 100 in double. Far below it, the step control chases the
    /// rounding noise of the error estimate of a component near zero: steps shrink until the step limit.
    static constexpr double atol_float = 1e-8;
    static constexpr double rk4_dt = 1e-3;    ///< rk4's step
    static constexpr double min_step = 1e-14; ///< dopri5: a proposed step below this is a step-size underflow
};

} // namespace nhvk
