// SPDX-License-Identifier: MIT
/** @file
 *  @brief The equations of a model as straight-line code, derived once at build time (`nhvk-codegen`, see
 *         host/sym/) instead of by dual numbers at every evaluation. `GenEquations<M, T>` has the interface of
 *         `AdEquations<M, T>` (nhvk/dynamics.hpp) and is what both backends integrate by default.
 *
 *  The build emits, for each model `M` of the catalogue, a header `nhvk/generated/<model>.hpp` that specializes
 *  `Generated<M>` with:
 *  - `n`, `k`, `n_params`, `n_variants` (one per combination of the model's boolean parameters), `nh_solve` and
 *    `vk_solve` (`"schur_diagonal"`, `"schur_blocks"` or `"lu"`: the saddle-point solve chosen from its structure);
 *  - `Consts<T>` and `consts<T>(p)`: every subexpression that depends on the parameters alone, evaluated once per
 *    trajectory (masses, `1/W_ii`, `m g sin α`, …);
 *  - `nh_accel`, `vk_accel`, `constraint_parts`, `kinetic_metric`, `energy`, each a function of `(q, v, [μ,] t)`;
 *    `nh_accel` also gives the reaction power `λ·(J·v)` when asked (from the temporaries of the solve).
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/linalg.hpp"
#include "nhvk/model_params.hpp"
#include "nhvk/status.hpp"
#include "nhvk/trig.hpp"

namespace nhvk {

/** @brief Specialized by the headers that nhvk-codegen emits (one per model). */
template <class M> struct Generated;

/** @brief The generated equations of model `M` in scalar `T`; the parameter-only constants are evaluated once, when
 *         the equations are made from a model (per trajectory). */
template <class M, class T> struct GenEquations {
    using Model = M;
    using G = Generated<M>;
    static constexpr int n = M::n, k = M::k;
    /// NOTE: NaN/∞ is caught by the steppers (after each step, in the error norm, at t0) and a failed solve at a
    /// non-finite state is classified `non_finite`, so the right-hand side itself does not test every component.
    static constexpr bool checks_every_rhs = false;
    static constexpr int param_slots = G::n_params; ///< exact: the chunk kernel reads this many per member
    static_assert(G::n == M::n && G::k == M::k, "generated header does not match the model (rebuild)");

    M model;
    typename G::template Consts<T> K;

    NHVK_HD NHVK_FORCEINLINE GenEquations(const M& m) : model(m) {
        double p[G::n_params > 0 ? G::n_params : 1];
        get_params(m, p);
        K = G::template consts<T>(p);
    }
    NHVK_HD NHVK_FORCEINLINE Status nh_accel(T t, const T* q, const T* v, T* a, T* lambda, T* power = nullptr) const {
        return G::nh_accel(K, q, v, t, a, lambda, power);
    }
    NHVK_HD NHVK_FORCEINLINE Status vk_accel(T t, const T* q, const T* v, const T* mu, T* a, T* mudot) const {
        return G::vk_accel(K, q, v, mu, t, a, mudot);
    }
    NHVK_HD NHVK_FORCEINLINE ConstraintParts<M, T> constraint_parts(const T* q, const T* v, T t) const {
        ConstraintParts<M, T> cp;
        G::constraint_parts(K, q, v, t, cp.phi, cp.J, cp.gamma);
        return cp;
    }
    NHVK_HD NHVK_FORCEINLINE void kinetic_metric(const T* q, const T* v, T t, T (&W)[n][n]) const {
        G::kinetic_metric(K, q, v, t, W);
    }
    NHVK_HD NHVK_FORCEINLINE T energy(const T* q, const T* v, T t) const { return G::energy(K, q, v, t); }
};

} // namespace nhvk
