// SPDX-License-Identifier: MIT
/** @file
 *  @brief Run-time choice of scalar type and stepper, dispatched to the templates (host and CUDA sources alike).
 */
#pragma once

#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/generated.hpp"
#include "nhvk/steppers.hpp"

namespace nhvk {

/** @brief Carries a stepper template through a generic lambda: `typename decltype(tag)::template tmpl<Sys, T>`. */
template <template <class, class> class S> struct StepperTag { template <class Sys, class T> using tmpl = S<Sys, T>; };

/** @brief Call `f(T{}, StepperTag<S>{})` for the scalar type and stepper chosen at run time. */
template <class F> void dispatch_numeric(Method method, Precision precision, F&& f) {
    if (precision == Precision::f64) {
        if (method == Method::dopri5) f(double{}, StepperTag<Dopri5>{});
        else f(double{}, StepperTag<Rk4>{});
    } else {
        if (method == Method::dopri5) f(float{}, StepperTag<Dopri5>{});
        else f(float{}, StepperTag<Rk4>{});
    }
}

/** @brief Carries an equations template (`AdEquations`, `GenEquations`) through a generic lambda. */
template <template <class, class> class E> struct EquationsTag { template <class M, class T> using tmpl = E<M, T>; };

} // namespace nhvk
