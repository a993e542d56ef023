// SPDX-License-Identifier: MIT
/** @file
 *  @brief Run-time choice of scalar type and stepper, dispatched to the templates (host and CUDA sources alike).
 */
#pragma once

#include <type_traits>
#include <utility>

#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/generated.hpp"
#include "nhvk/steppers.hpp"

namespace nhvk {

/** @brief Carries a stepper template through a generic lambda: `typename decltype(tag)::template tmpl<Sys, T>`. */
template <template <class, class> class S> struct StepperTag { template <class Sys, class T> using tmpl = S<Sys, T>; };

/** @brief Calls `f(std::integral_constant<Method, M>{})` for every method M of `method_table`, in its order. */
template <class F, std::size_t... I> void for_each_method_impl(F&& f, std::index_sequence<I...>) {
    (f(std::integral_constant<Method, method_table[I].id>{}), ...);
}
template <class F> void for_each_method(F&& f) {
    for_each_method_impl(f, std::make_index_sequence<static_cast<std::size_t>(method_count)>{});
}

/** @brief Call `f(T{}, StepperTag<S>{})` for the scalar type and stepper chosen at run time. */
template <class F> void dispatch_numeric(Method method, Precision precision, F&& f) {
    for_each_method([&](auto id) {
        if (decltype(id)::value != method) return;
        using Tag = StepperTag<MethodStepper<decltype(id)::value>::template tmpl>;
        if (precision == Precision::f64) f(double{}, Tag{});
        else f(float{}, Tag{});
    });
}

/** @brief Carries an equations template (`AdEquations`, `GenEquations`) through a generic lambda. */
template <template <class, class> class E> struct EquationsTag { template <class M, class T> using tmpl = E<M, T>; };

} // namespace nhvk
