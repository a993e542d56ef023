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

} // namespace nhvk
