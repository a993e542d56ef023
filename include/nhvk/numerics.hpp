// SPDX-License-Identifier: MIT
/** @file
 *  @brief Run-time choices of the numerics shared by the core, the backends and the config: method and precision.
 */
#pragma once

#include <cstdint>

namespace nhvk {

/** @brief Integration method (`integrator.method`), dispatched to a stepper template (`MethodStepper`,
 *         nhvk/steppers.hpp); each has its row of `method_table`, in this order. */
enum class Method : std::uint8_t { dopri5 = 0, rk4 = 1, tsit5 = 2, dop853 = 3, rodas5p = 4, midpoint = 5 };

/** @brief The description of one integration method. Every path that names, parses, dispatches or documents a method
 *         reads it from here: the config and `nhvk trajectory --method`, `nhvk compile --method`, the dispatch to the
 *         stepper templates, a model file's units and the CUDA kernels' names, summary.json and the README (whose
 *         table tests/host/test_method_table.cpp checks against this one). Adding a method adds a row here, its
 *         stepper's file and its `MethodStepper`. */
struct MethodInfo {
    Method id;
    const char* name;    ///< `integrator.method`, `--method`, and the enumerator's name
    const char* stepper; ///< its stepper template as C++ spells it (a model file's units, NVRTC's kernel names)
    int order;           ///< the order of the solution it advances
    int error_order;     ///< the order of its embedded error estimate; 0: a fixed step, no estimate
    int stages;          ///< right-hand sides per step, the first included
    bool fsal;           ///< the last stage of a step is the first of the next (one right-hand side saved per step)
    bool dense_output;   ///< output times reached by interpolation (else every step is clipped to land on them)
    /// solves equations in every step (a linear system, or a Newton iteration): the Butcher barriers of the explicit
    /// methods (stages ≥ order) do not bind it
    bool implicit;
    const char* summary; ///< one line for the README's table
};

inline constexpr MethodInfo method_table[] = {
    {Method::dopri5, "dopri5", "nhvk::Dopri5", 5, 4, 7, true, false, false,
     "Dormand–Prince 5(4): adaptive step (rtol, atol), the standard controller, steps clipped to land on each output "
     "time"},
    {Method::rk4, "rk4", "nhvk::Rk4", 4, 0, 4, false, false, false,
     "classical Runge–Kutta: fixed step dt, shortened uniformly to land on each output time"},
    {Method::tsit5, "tsit5", "nhvk::Tsit5", 5, 4, 7, true, true, false,
     "Tsitouras 5(4): adaptive step (rtol, atol), the standard controller, output times by its free 4th-order "
     "interpolant (no step shortened for them)"},
    {Method::dop853, "dop853", "nhvk::Dop853", 8, 7, 13, true, true, false,
     "Dormand–Prince 8(5,3): adaptive step for tight tolerances, output times by its 7th-order interpolant (3 more "
     "right-hand sides in a step that contains one)"},
    {Method::rodas5p, "rodas5p", "nhvk::Rodas5p", 5, 4, 8, false, false, true,
     "Rodas5P (Steinebach), linearly implicit and L-stable, for stiff models: the exact Jacobian of the equations "
     "once per step (one forward tangent per state component), eight solves with it, steps clipped to land on each "
     "output time"},
    {Method::midpoint, "midpoint", "nhvk::Midpoint", 2, 0, 1, false, false, true,
     "symmetric midpoint integrators of each dynamics' mechanics for long runs: a discrete Lagrange–d'Alembert "
     "midpoint (nonholonomic) and the variational midpoint of L − μ·φ (vakonomic); fixed step dt, a Newton solve per "
     "step, the constraint held to rounding"},
};
inline constexpr int method_count = static_cast<int>(sizeof(method_table) / sizeof(method_table[0]));

/** @brief The row of `m`. */
constexpr const MethodInfo& method_info(Method m) { return method_table[static_cast<int>(m)]; }
/** @brief True for a method with step-size control (an embedded error estimate): it takes rtol and atol, and dt is
 *         its first step; false for a fixed step dt. */
constexpr bool adaptive_method(Method m) { return method_info(m).error_order > 0; }

namespace detail {
constexpr bool methods_in_enum_order() {
    for (int i = 0; i < method_count; ++i)
        if (static_cast<int>(method_table[i].id) != i) return false;
    return true;
}
} // namespace detail
static_assert(detail::methods_in_enum_order(), "method_table in the order of Method");
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
    static constexpr double rk4_dt = 1e-3;    ///< a fixed-step method's step (rk4's)
    static constexpr double min_step = 1e-14; ///< dopri5: a proposed step below this is a step-size underflow
};

} // namespace nhvk
