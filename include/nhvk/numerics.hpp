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

} // namespace nhvk
