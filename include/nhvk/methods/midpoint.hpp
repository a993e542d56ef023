// SPDX-License-Identifier: MIT
/** @file
 *  @brief The structure-preserving fixed-step method `Midpoint<Sys, T>`: the implicit midpoint rule in momentum form,
 *         applied to the mechanics of each dynamics rather than to its ODE (docs/numerics.md §2.7).
 *
 *  - Nonholonomic side, a discrete Lagrange–d'Alembert midpoint: with `p = ∂L/∂v`,
 *    `q₁ = q₀ + h v_m`, `q_m = q₀ + (h/2) v_m`,
 *    `∂L/∂v(q_m, v_m) = p₀ + (h/2) G + J_mᵀ ν`, `φ(q_m, v_m) = 0`, `∂L/∂v(q₁, v₁) = p₀ + h G`, `φ(q₁, v₁) = 0`,
 *    `G = ∂L/∂q + F + J_mᵀ λ` at the midpoint (`J_m = ∂φ/∂v` there): the reaction of the Četaev rule at the midpoint,
 *    the constraint imposed at the midpoint (the discrete constraint, with its own multiplier ν, which also makes the
 *    step regular where `∂²L/∂v²` is singular but the constrained system is not, as in the sub-Riemannian
 *    Heisenberg model) and at the step's end.
 *  - Vakonomic side, the variational midpoint of `L̃ = L − μ·φ` with μ a discrete variable: the discrete Lagrangian
 *    `h L̃(q_m, (q₁ − q₀)/h, μ_m)`, whose stationarity in `q` and `μ_m` gives
 *    `∂L̃/∂v(q_m, v_m, μ_m) = p₀ + (h/2) (∂L̃/∂q + F)`, `φ(q_m, v_m) = 0`, `p₁ = p₀ + h (∂L̃/∂q + F)`; the node
 *    values `(v₁, μ₁)` from `∂L̃/∂v(q₁, v₁, μ₁) = p₁`, `φ(q₁, v₁) = 0`. This is the implicit midpoint rule of the
 *    vakonomic Hamiltonian system, symplectic and symmetric.
 *
 *  Both maps are symmetric (the adjoint step solves the same equations), so on a model whose dynamics is reversible
 *  (`(q, v) → (q, −v)`: `L` even in `v`, `φ` odd, no force) the method is reversible, and the energy error stays
 *  bounded over long times where it is also integrable (Modin & Verdier 2020). The constraint holds at every step
 *  to the Newton iteration's tolerance, a few ulps. Of order 2. Each step solves its `2n + 2k` equations by a
 * simplified Newton iteration whose matrix comes from forward tangents (one per unknown) through the same residual; the
 * equations are the model's `L`, `φ` and `F` by dual numbers, so the generated and the dual-number equations give this
 * method the same steps.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/linalg.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/status.hpp"
#include "nhvk/step_control.hpp"

namespace nhvk {

namespace detail {

/** @brief `∂L̃/∂q` and `∂L̃/∂v` of `L̃ = L − μ·φ` (plain `L` when `mu == nullptr`) at `(q, v, t)`, by one forward pass
 *         in `Dual<S, 2n>`. */
template <class M, class S>
NHVK_HD void lagrangian_gradients(const M& model, const S* q, const S* v, const S& t, const S* mu, S* Lq, S* Lv) {
    constexpr int n = M::n;
    using D = Dual<S, 2 * n>;
    D qq[n], vv[n];
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        qq[j] = D(q[j]);
        qq[j].d[j] = S(1);
        vv[j] = D(v[j]);
        vv[j].d[n + j] = S(1);
    }
    const D L = augmented_lagrangian(model, qq, vv, D(t), mu);
    NHVK_UNROLL
    for (int i = 0; i < n; ++i) {
        Lq[i] = L.d[i];
        Lv[i] = L.d[n + i];
    }
}

/** @brief `J = ∂φ/∂v` at `(q, v, t)` by one forward pass in `Dual<S, n>`. */
template <class M, class S>
NHVK_HD void constraint_velocity_jacobian(const M& model, const S* q, const S* v, const S& t, S (*J)[M::n],
                                          S* phi = nullptr) {
    constexpr int n = M::n, k = M::k;
    using D = Dual<S, n>;
    D qq[n], vv[n], ph[k > 0 ? k : 1];
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        qq[j] = D(q[j]);
        vv[j] = D(v[j]);
        vv[j].d[j] = S(1);
    }
    model.constraints(qq, vv, D(t), ph);
    NHVK_UNROLL
    for (int a = 0; a < k; ++a) {
        if (phi) phi[a] = ph[a].val;
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) J[a][j] = ph[a].d[j];
    }
}

/** @brief Whether a midpoint step of `N` unknowns runs its residual, Newton matrix and step out of line on the
 *         device (`Outlined`): from 12 unknowns (n + k ≥ 6), the step's working set (nested dual numbers, the matrix,
 *         its factors) does not fit in registers beside the rest of the ensemble kernel; allocated apart, the pieces
 *         spill little. Smaller steps spill less inlined (bench/results/2026-11-29-midpoint-outlined-resources.txt). */
template <int N> inline constexpr bool midpoint_outlined = N >= 12;

/** @brief f(), inlined (`Outline` false), or on the device in a function of its own (true), whose registers ptxas
 *         allocates apart from the caller's; the same code on the host either way. */
template <bool Outline> struct Outlined {
    template <class F> NHVK_HD NHVK_FORCEINLINE static decltype(auto) call(const F& f) { return f(); }
};
template <> struct Outlined<true> {
    template <class F> NHVK_HD NHVK_NOINLINE static decltype(auto) call(const F& f) { return f(); }
};

/** @brief The applied force `F(q, v, t)` in `F` (zeros for a model without one). */
template <class M, class S>
NHVK_HD NHVK_FORCEINLINE void applied_force(const M& model, const S* q, const S* v, const S& t, S* F) {
    NHVK_UNROLL
    for (int i = 0; i < M::n; ++i) F[i] = S(0);
    if constexpr (M::has_force) model.force(q, v, t, F);
}

/**
 * @brief The equations of one midpoint step from `(q₀, p₀)` at `t₀` over `h`, as a residual `r(x)` of the unknowns
 *        in any scalar `S` (plain, or a tangent for the Newton matrix).
 *
 * Nonholonomic (`Vk = false`): `x = (v_m, Λ, v₁, ν)`, `Λ = h λ` the reactions' impulse over the step (a quantity
 * the size of a momentum change, so that the matrix's columns are of one scale as `h → 0`). Vakonomic:
 * `x = (v_m, μ_m, v₁, μ₁)`. The rows: the midpoint's momenta, its constraints, the end's momenta, its constraints.
 */
template <class M, class T, bool Vk> struct MidpointEquations {
    static constexpr int n = M::n, k = M::k;
    static constexpr int size = 2 * (n + k);
    M model;
    T q0[n], p0[n], t0, h;

    /** @brief residual_body, out of line on the device for the larger systems (midpoint_outlined). */
    template <class S> NHVK_HD NHVK_FORCEINLINE void residual(const S* x, S* r) const {
        Outlined<midpoint_outlined<size>>::call([&] { residual_body(x, r); });
    }

    template <class S> NHVK_HD void residual_body(const S* x, S* r) const {
        const T hh = T(0.5) * h;
        const S* vm = x;
        const S* v1 = x + n + k;
        S qm[n], q1[n], Lq[n], Lv[n], F[n];
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) {
            qm[i] = q0[i] + hh * vm[i];
            q1[i] = q0[i] + h * vm[i];
        }
        const S tm = S(t0 + hh), t1 = S(t0 + h);
        S G[n]; // h·(the generalized force of the step): p₁ − p₀
        applied_force(model, qm, vm, tm, F);
        if constexpr (Vk) {
            const S* mum = x + n;
            lagrangian_gradients(model, qm, vm, tm, mum, Lq, Lv);
            NHVK_UNROLL
            for (int i = 0; i < n; ++i) {
                G[i] = h * (Lq[i] + F[i]);
                r[i] = Lv[i] - p0[i] - T(0.5) * G[i];
            }
            S ph[k > 0 ? k : 1];
            model.constraints(qm, vm, tm, ph);
            NHVK_UNROLL
            for (int a = 0; a < k; ++a) r[n + a] = ph[a];
        } else {
            const S* impulse = x + n;
            const S* nu = x + 2 * n + k;
            lagrangian_gradients(model, qm, vm, tm, static_cast<const S*>(nullptr), Lq, Lv);
            S J[k > 0 ? k : 1][n];
            S ph[k > 0 ? k : 1];
            constraint_velocity_jacobian(model, qm, vm, tm, J, ph);
            NHVK_UNROLL
            for (int i = 0; i < n; ++i) {
                S g = h * (Lq[i] + F[i]), c = S(0);
                NHVK_UNROLL
                for (int a = 0; a < k; ++a) {
                    g += J[a][i] * impulse[a];
                    c += J[a][i] * nu[a];
                }
                G[i] = g;
                r[i] = Lv[i] - p0[i] - T(0.5) * g - c;
            }
            NHVK_UNROLL
            for (int a = 0; a < k; ++a) r[n + a] = ph[a];
        }
        const S* mu1 = x + 2 * n + k;
        if constexpr (Vk) lagrangian_gradients(model, q1, v1, t1, mu1, Lq, Lv);
        else lagrangian_gradients(model, q1, v1, t1, static_cast<const S*>(nullptr), Lq, Lv);
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) r[n + k + i] = Lv[i] - p0[i] - G[i];
        S ph[k > 0 ? k : 1];
        model.constraints(q1, v1, t1, ph);
        NHVK_UNROLL
        for (int a = 0; a < k; ++a) r[2 * n + k + a] = ph[a];
    }
};

/** @brief The Newton matrix `∂r/∂x` at `x`: one `Dual<T, 1>` tangent per column through the residual (a run-time
 *         column loop, one copy of the equations, as `rhs_jacobian`). */
template <class E, class T> NHVK_HD void midpoint_matrix_body(const E& eq, const T* x, T (*A)[E::size]) {
    constexpr int N = E::size;
    using D = Dual<T, 1>;
    D xd[N], rd[N];
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int c = 0; c < N; ++c) {
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) {
            xd[j] = D(x[j]);
            xd[j].d[0] = j == c ? T(1) : T(0);
        }
        eq.residual(xd, rd);
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) A[i][c] = rd[i].d[0];
    }
}

/** @brief midpoint_matrix_body, out of line on the device for the larger systems (midpoint_outlined). */
template <class E, class T> NHVK_HD void midpoint_matrix(const E& eq, const T* x, T (*A)[E::size]) {
    Outlined<midpoint_outlined<E::size>>::call([&] { midpoint_matrix_body(eq, x, A); });
}

} // namespace detail

/**
 * @brief The midpoint integrators of both dynamics (see the file's description) with a fixed step `dt`, shortened
 *        uniformly to land on each output time, as RK4's (and, as RK4's, in intervals of `plan`, `step` and `finish`,
 *        so that the CPU backend steps the two dynamics in lockstep). The Newton iteration starts from an explicit
 * Euler predictor (one right-hand side of the system's ODE per step, which also reports a singular or non-finite state
 * as the other methods do) and keeps its matrix while it contracts; a step whose iteration does not converge with three
 * matrices is `Status::singular` (its implicit equations have no solution near the start: take a smaller dt).
 */
template <class Sys, class T> class Midpoint : public FixedStep<Midpoint<Sys, T>, Sys, T> {
    using Base = FixedStep<Midpoint<Sys, T>, Sys, T>;
    using M = typename Sys::Model;
    static constexpr bool vk = Sys::dynamics == Dynamics::vakonomic;
    static constexpr int n = M::n, k = M::k;
    using Eq = detail::MidpointEquations<M, T, vk>;
    static constexpr int N = Eq::size;

public:
    static constexpr Method method = Method::midpoint;
    static constexpr int order = 2;
    using Base::dim;
    using typename Base::Interval;
    static_assert(vk ? dim == 2 * n + k : (dim >= 2 * n && dim <= 2 * n + 2),
                  "state (q, v, μ) or (q, v[, the energy balance's integrals])");

    NHVK_HD NHVK_FORCEINLINE Status init(const Sys& sys, T t0, const T* y0, const StepControl& c) {
        this->start(t0, y0, c);
        Status s = Status::ok;
        if (c.project && (s = sys.project(this->t, this->y)) != Status::ok) return s;
        T dy[dim], rate[k > 0 ? k : 1];
        return predict(sys, this->t, this->y, dy, rate);
    }

    /** @brief Step `i` of the interval on the state `x` (a local copy of `y`); on failure `x` keeps the last completed
     *         step. */
    NHVK_HD NHVK_STEP_INLINE Status step(const Sys& sys, T* x, const Interval& iv, long long i) {
        const Status s = implicit_step(sys, Base::time_at(iv, i), x, iv.h);
        if (s != Status::ok) return s;
        return this->land(sys, x, iv, i);
    }

private:
    LuFactors<N, T> lu_; ///< the Newton matrix's factors, kept from step to step while they serve
    T lu_h_ = T(0);      ///< the step they belong to (0: none)

    /** @brief The system's right-hand side at `(t, y)` into `dy`, and λ (nonholonomic) or μ̇ (vakonomic) into `rate`:
     *         the predictor, and the state check the other methods make. */
    NHVK_HD static Status predict(const Sys& sys, T t, const T* y, T* dy, T* rate) {
        const Status s = sys.rhs(t, y, dy, rate);
        if (s != Status::ok) return s;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i)
            if (!is_finite(dy[i])) return Status::non_finite;
        return Status::ok;
    }

    /** @brief One step of `h` from `(t, y)`, `y` replaced by its result (kept on failure). */
    NHVK_HD NHVK_FORCEINLINE Status implicit_step(const Sys& sys, T t, T* y, T h) {
        return detail::Outlined<detail::midpoint_outlined<N>>::call([&] { return implicit_step_body(sys, t, y, h); });
    }

    NHVK_HD Status implicit_step_body(const Sys& sys, T t, T* y, T h) {
        T dy[dim], rate[k > 0 ? k : 1];
        Status s = predict(sys, t, y, dy, rate);
        if (s != Status::ok) return s;
        Eq eq{sys.model(), {}, {}, t, h};
        const T* q0 = y;
        const T* v0 = y + n;
        T Lq[n];
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) eq.q0[i] = q0[i];
        if constexpr (vk) detail::lagrangian_gradients(eq.model, q0, v0, t, y + 2 * n, Lq, eq.p0);
        else detail::lagrangian_gradients(eq.model, q0, v0, t, static_cast<const T*>(nullptr), Lq, eq.p0);
        // Euler predictor: v at the midpoint and the end, the multipliers (the impulse hλ, or μ) likewise
        T x[N];
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) {
            x[i] = v0[i] + T(0.5) * h * dy[n + i];
            x[n + k + i] = v0[i] + h * dy[n + i];
        }
        NHVK_UNROLL
        for (int a = 0; a < k; ++a) {
            if constexpr (vk) {
                x[n + a] = y[2 * n + a] + T(0.5) * h * rate[a];
                x[2 * n + k + a] = y[2 * n + a] + h * rate[a];
            } else {
                x[n + a] = h * rate[a];
                x[2 * n + k + a] = T(0);
            }
        }
        if ((s = newton(eq, x)) != Status::ok) return detail::classify_failure<N>(s, x);
        const T tm = t + T(0.5) * h;
        T qm[n], y_new[dim];
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) qm[i] = q0[i] + T(0.5) * h * x[i];
        if (!in_charts(eq.model, qm, x)) return Status::chart_singular;
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) {
            y_new[i] = q0[i] + h * x[i];
            y_new[n + i] = x[n + k + i];
        }
        if constexpr (vk) {
            NHVK_UNROLL
            for (int a = 0; a < k; ++a) y_new[2 * n + a] = x[2 * n + k + a];
        } else if constexpr (dim > 2 * n) {
            // the energy balance's integrals by the midpoint rule: the reactions' work Λ·(J v_m), and the applied
            // power (F·v − ∂L/∂t) h
            T J[k > 0 ? k : 1][n];
            detail::constraint_velocity_jacobian(eq.model, qm, x, tm, J);
            y_new[2 * n] = y[2 * n] + multiplier_power(J, x, x + n);
            if constexpr (dim > 2 * n + 1) y_new[2 * n + 1] = y[2 * n + 1] + h * applied_power(eq.model, qm, x, tm);
        }
        if (!detail::all_finite<dim>(y_new)) return Status::non_finite;
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) y[j] = y_new[j];
        return Status::ok;
    }

    /** @brief The simplified Newton iteration on `eq`'s residual from `x`, with the factors `lu_` of an earlier step's
     *         matrix while they serve (a step of about the same `h`): the matrix is evaluated afresh (at the current
     *         iterate) when an iteration contracts too slowly (by less than 10 with a kept matrix, 2 with a fresh
     *         one), or diverges (then from the predictor again), at most three times a step. Converged when the largest
     * correction is within `16ε` of `max(1, |x_i|)`, or stalls below `1024ε` (the residual's rounding). */
    NHVK_HD static void restart(T* x, const T* x0) {
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) x[i] = x0[i];
    }

    NHVK_HD Status newton(const Eq& eq, T* x) {
        const T eps = NumericLimits<T>::epsilon();
        T x0[N];
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) x0[i] = x[i];
        int matrices = 0;
        bool refresh = !(abs(eq.h - lu_h_) <= T(0.01) * abs(eq.h));
        T d_prev = T(0);
        for (int it = 0; it < 32; ++it) {
            if (refresh) {
                if (matrices == 3) return Status::singular;
                detail::midpoint_matrix(eq, x, lu_.a);
                ++matrices;
                lu_h_ = T(0);
                if (!lu_factor(lu_)) return Status::singular;
                lu_h_ = eq.h;
                refresh = false;
                d_prev = T(0);
            }
            // NOTE: zero-initialized only because g++ cannot always prove that the residual writes every entry.
            T r[N] = {};
            eq.residual(x, r);
            lu_substitute(lu_, r);
            T d = T(0);
            NHVK_UNROLL
            for (int i = 0; i < N; ++i) {
                const T ax = abs(x[i]);
                const T di = abs(r[i]) / (ax > T(1) ? ax : T(1));
                d = di > d ? di : d;
                x[i] -= r[i];
            }
            if (!is_finite(d)) {
                if (matrices == 3) return Status::non_finite;
                restart(x, x0);
                refresh = true;
                continue;
            }
            if (d <= T(16) * eps) return Status::ok;
            // NOTE: an earlier step's matrix must contract by 10 a step to be worth its keep (one residual an
            // iteration against the N of a fresh matrix, which contracts by far more); a fresh one by 2
            if (d_prev > T(0) && d > (matrices > 0 ? T(0.5) : T(0.1)) * d_prev) {
                if (d <= T(1024) * eps && d_prev <= T(1024) * eps) return Status::ok;
                // diverging: from the predictor again, with the matrix there; contracting too slowly: on from here
                if (d > T(2) * d_prev) restart(x, x0);
                refresh = true;
            }
            d_prev = d;
        }
        return Status::singular;
    }
};

template <> struct MethodStepper<Method::midpoint> { template <class Sys, class T> using tmpl = Midpoint<Sys, T>; };

} // namespace nhvk
