// SPDX-License-Identifier: MIT
/** @file
 *  @brief The nonholonomic (Talamucci eq. (19)) and vakonomic (Kozlov) equations of motion, derived automatically
 *         from a model's `L`, `φ` and `F` by forward-mode AD (docs/physics.md §1–3), for host and device.
 *
 *  A model is a small trivially copyable struct deriving from `ModelBase`:
 *  @code
 *  struct MyModel : nhvk::ModelBase {
 *      static constexpr int n = 3, k = 1;
 *      Param m = 1.0;                                                         // parameters are members
 *      template <class V> NHVK_HD void visit_params(V&& visit) {              // listed once, in order, each
 *          visit("m", m, ParamDomain::positive);                              //   with its range (param.hpp)
 *      }
 *      template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S& t) const;
 *      template <class S> NHVK_HD void constraints(const S* q, const S* v, const S& t, S* phi) const;
 *      // optional: static constexpr bool has_force = true;  template <class S> NHVK_HD void force(q, v, t, S* F)
 * const;
 *      // optional: static constexpr bool lagrangian_depends_on_t = true;   (L depends on t explicitly)
 *      // optional: static constexpr bool has_chart = true;  template <class T> NHVK_HD bool in_chart(const T* q)
 * const;
 *      // optional: static constexpr bool has_velocity_chart = true;
 *      //           template <class T> NHVK_HD bool in_velocity_chart(const T* q, const T* v) const;
 *      // optional: static constexpr bool has_source_constraints = true;
 *      //           template <class T> NHVK_HD T source_residual(const T* q, const T* v, const T& t) const;
 *  };
 *
 *  Charts and source constraints. `φ` is what the engine integrates; where a model's `φ` is a chart of the constraints
 *  as its source states them (fewer equations, a parametrization, a formula singular somewhere), the model says
 *  where the chart holds (`in_chart` in configuration space, `in_velocity_chart` in velocity space) and may give
 *  `source_residual`, a dimensionless residual of the source's own equations (each model documents its scaling).
 *  A state outside a chart, or with `source_residual > source_tolerance<T>()`, is `Status::chart_singular`
 *  (`check_model_state`): the charts at every right-hand-side evaluation, the source residual at t0 and at each
 *  output time, both at sampling.
 *  @endcode
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"
#include "nhvk/linalg.hpp"
#include "nhvk/model_params.hpp"
#include "nhvk/param.hpp"
#include "nhvk/status.hpp"

namespace nhvk {

/** @brief Defaults for the optional parts of a model: no non-potential force, no chart restriction. */
struct ModelBase {
    static constexpr bool has_force = false;
    /// `L` depends on `t` explicitly: the energy balance then integrates `∂L/∂t` (by AD of `L`); a model that does
    /// not declare it gets `∂L/∂t = 0` there, so an undeclared dependence shows as a flagged balance residual
    static constexpr bool lagrangian_depends_on_t = false;
    static constexpr bool has_chart = false;
    static constexpr bool has_velocity_chart = false;
    static constexpr bool has_source_constraints = false;
    template <class S> NHVK_HD void force(const S*, const S*, const S&, S*) const {}
    template <class T> NHVK_HD bool in_chart(const T*) const { return true; }
    template <class T> NHVK_HD bool in_velocity_chart(const T*, const T*) const { return true; }
    template <class T> NHVK_HD T source_residual(const T*, const T*, const T&) const { return T(0); }
    /** @brief A model without parameters lists none. */
    template <class V> NHVK_HD void visit_params(V&&) {}
};

/** @brief Below this a velocity quantity that a velocity chart needs nonzero counts as zero, relative to
 *         `max(1, max_j |v_j|)` (the scale of the engine's constraint tolerances): √ε of `T` (1.5e-8 in double,
 *         3.5e-4 in float), where a direction computed from the quantity (a Jacobian row `v/|v|`) keeps fewer than
 *         half the digits of `T`. */
template <class T> NHVK_HD constexpr T velocity_chart_margin() {
    return sizeof(T) >= 8 ? T(1.4901161193847656e-8) : T(3.4526698e-4);
}

/** @brief `velocity_chart_margin<T>() · max(1, max_j |v_j|)` over the `N` velocities `v`. */
template <int N, class T> NHVK_HD T velocity_chart_floor(const T* v) {
    T s = T(1);
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) s = abs(v[j]) > s ? abs(v[j]) : s;
    return velocity_chart_margin<T>() * s;
}

/** @brief Largest `source_residual` of an accepted state: ε^(1/3) of `T` (6e-6 in double, 5e-3 in float). A test
 *         for states that satisfy the chart but not the source (residual O(1)), loose enough for the chart's
 *         integration drift (rtol-sized) amplified by a chart near its margin. */
template <class T> NHVK_HD constexpr T source_tolerance() {
    return sizeof(T) >= 8 ? T(6.0554544523933395e-6) : T(4.9e-3);
}

/** @brief Whether `(q, v)` lies in the model's chart and its velocity chart (true for a model without them): the one
 *         chart test of the right-hand sides, the sampler and `check_model_state`. */
template <class M, class T> NHVK_HD NHVK_FORCEINLINE bool in_charts(const M& model, const T* q, const T* v) {
    if constexpr (M::has_chart)
        if (!model.in_chart(q)) return false;
    if constexpr (M::has_velocity_chart)
        if (!model.in_velocity_chart(q, v)) return false;
    return true;
}

/** @brief `Status::chart_singular` when `(q, v)` is outside a chart of the model or breaks its source constraints
 *         by more than `source_tolerance<T>()`; `Status::ok` otherwise (also for NaN, which the callers classify). */
template <class M, class T> NHVK_HD Status check_model_state(const M& model, const T* q, const T* v, T t) {
    if (!in_charts(model, q, v)) return Status::chart_singular;
    if constexpr (M::has_source_constraints)
        if (model.source_residual(q, v, t) > source_tolerance<T>()) return Status::chart_singular;
    return Status::ok;
}

/** @brief `W = ∂²L̃/∂v²` and `b = (∂L̃_v/∂q)·v + ∂L̃_v/∂t − L̃_q − F` for `L̃ = L − μ·φ` (μ held constant;
 *         `mu == nullptr` gives plain `L`). Also `L_v` of `L̃`. */
template <class M, class T> struct LagrangianParts {
    T W[M::n][M::n];
    T b[M::n];
    T Lv[M::n];
};

/** @brief `φ`, `J = ∂φ/∂v` and `γ = −(φ_q·v + φ_t)` at one point. */
template <class M, class T> struct ConstraintParts {
    T phi[M::k];
    T J[M::k][M::n];
    T gamma[M::k];
};

/** @brief `L̃ = L − μ·φ` at (dual) arguments of any scalar type `S` (plain `L` when `mu == nullptr`), `μ` frozen. */
template <class M, class S, class T>
NHVK_HD NHVK_FORCEINLINE S augmented_lagrangian(const M& model, const S* q, const S* v, const S& t, const T* mu) {
    S L = model.lagrangian(q, v, t);
    if (mu) {
        S ph[M::k];
        model.constraints(q, v, t, ph);
        // NOTE: where T is itself a dual number (a Jacobian's tangent, nhvk/jacobian.hpp), S nests around it and
        // does not mix with it implicitly: μ is lifted to S. A plain μ multiplies as a scalar, as it always has (the
        // symbolic layer's traces, hence the generated headers, follow these operations).
        NHVK_UNROLL
        for (int a = 0; a < M::k; ++a) {
            if constexpr (is_scalar<T>::value) L -= mu[a] * ph[a];
            else L -= lift<S>(mu[a]) * ph[a];
        }
    }
    return L;
}

/**
 * @brief Second-order Lagrangian terms by nested forward AD.
 *
 * Pass 1: `S2 = Dual<Dual<T, n>, n+1>`; inner tangents seed `v`, outer tangents `i < n` seed `v_i` and outer tangent
 * `n` seeds the direction `(δq, δv, δt) = (v, 0, 1)`. Then `L.val.d[i] = L_v_i`, `L.d[i].d[j] = W_ij`,
 * `L.d[n].d[i] = (∂L_v/∂q·v + ∂L_v/∂t)_i`. Pass 2: `Dual<T, n>` seeded on `q` gives `L_q`.
 */
template <class M, class T>
NHVK_HD LagrangianParts<M, T> lagrangian_parts(const M& model, const T* q, const T* v, T t, const T* mu) {
    constexpr int n = M::n;
    LagrangianParts<M, T> out;
    T dLv[n];
    {
        using S1 = Dual<T, n>;
        using S2 = Dual<S1, n + 1>;
        S2 qq[n], vv[n];
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) {
            qq[j] = S2(S1(q[j]));
            qq[j].d[n] = S1(v[j]);
            vv[j] = S2(S1(v[j]));
            vv[j].val.d[j] = T(1);
            vv[j].d[j] = S1(T(1));
        }
        S2 tt = S2(S1(t));
        tt.d[n] = S1(T(1));
        const S2 L = augmented_lagrangian(model, qq, vv, tt, mu);
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) {
            out.Lv[i] = L.val.d[i];
            dLv[i] = L.d[n].d[i];
            NHVK_UNROLL
            for (int j = 0; j < n; ++j) out.W[i][j] = L.d[i].d[j];
        }
    }
    {
        using S = Dual<T, n>;
        S qq[n], vv[n];
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) {
            qq[j] = S(q[j]);
            qq[j].d[j] = T(1);
            vv[j] = S(v[j]);
        }
        const S tt = S(t);
        const S L = augmented_lagrangian(model, qq, vv, tt, mu);
        T F[n];
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) F[i] = T(0);
        if constexpr (M::has_force) model.force(q, v, t, F);
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) out.b[i] = dLv[i] - L.d[i] - F[i];
    }
    return out;
}

/** @brief `φ`, `J` and `γ` with one `Dual<T, n+1>` pass: tangents `j < n` seed `v_j`, tangent `n` the direction
 *         `(v, 0, 1)`, so `φ.d[n] = φ_q·v + φ_t = −γ`. */
template <class M, class T>
NHVK_HD ConstraintParts<M, T> constraint_parts(const M& model, const T* q, const T* v, T t) {
    constexpr int n = M::n, k = M::k;
    using S = Dual<T, n + 1>;
    S qq[n], vv[n];
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        qq[j] = S(q[j]);
        qq[j].d[n] = v[j];
        vv[j] = S(v[j]);
        vv[j].d[j] = T(1);
    }
    S tt = S(t);
    tt.d[n] = T(1);
    S ph[k];
    model.constraints(qq, vv, tt, ph);
    ConstraintParts<M, T> out;
    NHVK_UNROLL
    for (int a = 0; a < k; ++a) {
        out.phi[a] = ph[a].val;
        out.gamma[a] = -ph[a].d[n];
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) out.J[a][j] = ph[a].d[j];
    }
    return out;
}

/** @brief Energy `E = v·L_v − L` of the plain Lagrangian. */
template <class M, class T> NHVK_HD T energy(const M& model, const T* q, const T* v, T t) {
    constexpr int n = M::n;
    using S = Dual<T, n>;
    S qq[n], vv[n];
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        qq[j] = S(q[j]);
        vv[j] = S(v[j]);
        vv[j].d[j] = T(1);
    }
    const S L = model.lagrangian(qq, vv, S(t));
    T E = -L.val;
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) E += v[j] * L.d[j];
    return E;
}

/** @brief Solution of one saddle-point system `[Wt −Jᵀ; J 0][a; m] = [−b; γ]`. */
template <class M, class T> struct SaddleSolution {
    T a[M::n] = {};
    T mult[M::k] = {};
    Status status = Status::ok;
};

/** @brief `Σ_c m_c (J·v)_c`: with the multipliers `λ` the power of the reactions, with `μ` the vakonomic energy's
 *         correction (`E − μ·(J·v)`). */
template <int N, int K, class T>
NHVK_HD NHVK_FORCEINLINE T multiplier_power(const T (&J)[K][N], const T* v, const T* m) {
    T p = T(0);
    NHVK_UNROLL
    for (int c = 0; c < K; ++c) {
        T jv = T(0);
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) jv += J[c][j] * v[j];
        p += m[c] * jv;
    }
    return p;
}

/** @brief Assemble and solve `[Wt −Jᵀ; J 0][a; m] = [−b; γ]` (eq. (19), or §3 with `Wt = W − Σμ H`). */
template <class M, class T>
NHVK_HD SaddleSolution<M, T> solve_saddle(const LagrangianParts<M, T>& lp, const ConstraintParts<M, T>& cp) {
    constexpr int n = M::n, k = M::k, m = n + k;
    T A[m][m], r[m];
    motion_system(lp.W, cp.J, lp.b, cp.gamma, A, r);
    SaddleSolution<M, T> s;
    if (!lu_solve(A, r).ok) {
        s.status = Status::singular;
        return s;
    }
    NHVK_UNROLL
    for (int i = 0; i < n; ++i) s.a[i] = r[i];
    NHVK_UNROLL
    for (int a = 0; a < k; ++a) s.mult[a] = r[n + a];
    return s;
}

namespace detail {
template <int N, class T> NHVK_HD NHVK_FORCEINLINE bool all_finite(const T* x) {
    bool ok = true;
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) ok = ok && is_finite(x[i]);
    return ok;
}

/** @brief `sqrt(Σ_j x_j²)` without overflow or underflow of the squares (`x` divided by its largest `|x_j|` first). */
template <int N, class T> NHVK_HD NHVK_FORCEINLINE T euclidean_norm(const T* x) {
    T s = T(0);
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) s = abs(x[j]) > s ? abs(x[j]) : s;
    if (!(s > T(0)) || !is_finite(s)) return s;
    T sum = T(0);
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) sum += (x[j] / s) * (x[j] / s);
    return s * sqrt(sum);
}
} // namespace detail

/**
 * @brief The factor that puts constraint `ν` in velocity units: `1 / |∂φ_ν/∂v|` (the Euclidean norm of row ν of `J`),
 *        1 where that row is 0 or not finite. `φ_ν / |J_ν|` is, to first order, the distance of `v` from the set
 *        `φ_ν = 0`: the same for `φ_ν` and `c·φ_ν`, so no tolerance or diagnostic depends on how a constraint is
 *        scaled (a model file's `1e8*(z' - y*x')` and `z' - y*x'` are one model).
 */
template <int N, int K, class T> NHVK_HD NHVK_FORCEINLINE void constraint_row_scales(const T (&J)[K][N], T* s) {
    NHVK_UNROLL
    for (int a = 0; a < K; ++a) {
        const T norm = detail::euclidean_norm<N>(J[a]);
        // NOTE: a zero row (the constraint is singular here) keeps φ as it is: the projection's solve reports it.
        s[a] = norm > T(0) && is_finite(norm) ? T(1) / norm : T(1);
    }
}

/** @brief `max_ν |φ_ν| / |J_ν|`, the constraint residual in velocity units (`constraint_row_scales`); the first
 *         non-finite term instead if there is one, as `max_abs_residual`. */
template <int N, int K, class T>
NHVK_HD NHVK_FORCEINLINE T scaled_constraint_residual(const T (&phi)[K], const T (&J)[K][N]) {
    T s[K > 0 ? K : 1], r[K > 0 ? K : 1];
    constraint_row_scales<N, K>(J, s);
    NHVK_UNROLL
    for (int a = 0; a < K; ++a) r[a] = phi[a] * s[a];
    return max_abs_residual<K>(r);
}

namespace detail {
/** @brief How a projection onto the constraint set ended. */
enum class ProjectionResult : std::uint8_t { converged, not_converged, singular, non_finite };

/**
 * @brief Project `v` onto `φ(q, v, t) = 0` in the kinetic metric: Newton steps on
 *        `[W Jᵀ; J 0][Δv; ν] = [−W(v − ṽ); −φ]`, the Gauss–Newton iteration for `min |v − ṽ|_W` on the set, exact in
 *        one step for linear constraints. Without an `anchor` ṽ the first block of the right-hand side is 0 (each
 *        step the least `|Δv|_W`: the integrator's projection, docs/physics.md §5); with one, `v` must enter equal
 *        to it (the sampler's projection of a trial velocity, §6). Converged: `max_ν |φ_ν| / |J_ν| ≤ tol · max(1,
 *        |v|∞)`, each constraint in velocity units (`constraint_row_scales`).
 *        `eq` supplies `constraint_parts` and `kinetic_metric` (AD or generated equations alike). This is the one
 *        assembly of the projection's saddle-point system, for the integrator and the sampler alike.
 */
template <class Eq, class T>
NHVK_HD ProjectionResult project_onto_constraints(const Eq& eq, const T* q, T* v, T t, T tol, int max_iter,
                                                  const T* anchor = nullptr) {
    constexpr int n = Eq::n, k = Eq::k, m = n + k;
    for (int it = 0; it <= max_iter; ++it) {
        auto cp = eq.constraint_parts(q, v, t);
        // NOTE: each row of (φ, J) divided by |J_ν| (`constraint_row_scales`): the test below is then in velocity
        // units and the saddle system the same whatever factor a constraint is written with (the steps are those
        // of the unscaled rows in exact arithmetic; the pivoting no longer sees rows of 1e8 beside W).
        T s[k > 0 ? k : 1];
        constraint_row_scales<n, k>(cp.J, s);
        NHVK_UNROLL
        for (int a = 0; a < k; ++a) {
            cp.phi[a] *= s[a];
            NHVK_UNROLL
            for (int j = 0; j < n; ++j) cp.J[a][j] *= s[a];
        }
        T vmax = T(1);
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) vmax = abs(v[j]) > vmax ? abs(v[j]) : vmax;
        const T rmax = max_abs_residual<k>(cp.phi);
        if (!is_finite(rmax) || !is_finite(vmax)) return ProjectionResult::non_finite;
        if (rmax <= tol * vmax) return ProjectionResult::converged;
        if (it == max_iter) break;
        T A[m][m], r[m];
        T W[n][n];
        eq.kinetic_metric(q, v, t, W);
        saddle_matrix<1>(W, cp.J, A);
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) {
            T wd = T(0);
            if (anchor) {
                NHVK_UNROLL
                for (int j = 0; j < n; ++j) wd += W[i][j] * (v[j] - anchor[j]);
            }
            r[i] = -wd;
        }
        NHVK_UNROLL
        for (int a = 0; a < k; ++a) r[n + a] = -cp.phi[a];
        if (!lu_solve(A, r).ok) {
            NHVK_UNROLL
            for (int i = 0; i < m; ++i) NHVK_UNROLL
            for (int j = 0; j < m; ++j)
                if (!is_finite(A[i][j])) return ProjectionResult::non_finite;
            return ProjectionResult::singular;
        }
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) v[j] += r[j];
    }
    return ProjectionResult::not_converged;
}

/** @brief The integrator's projection: at most 8 Newton steps to `4ε·max(1, |v|)`; not converging is not an error
 *         here (the residual is measured and reported by the observer). */
template <class Eq, class T> NHVK_HD Status project_velocity(const Eq& eq, const T* q, T* v, T t) {
    switch (project_onto_constraints(eq, q, v, t, T(4) * NumericLimits<T>::epsilon(), 8)) {
    case ProjectionResult::singular:
        return Status::singular;
    case ProjectionResult::non_finite:
        return Status::non_finite;
    default:
        return Status::ok;
    }
}
} // namespace detail

/**
 * @brief The equations of a model derived by nested dual numbers at every evaluation: the reference that every
 *        generated model (`GenEquations`, nhvk/generated.hpp) is tested against, and what `integrator.equations =
 *        "ad"` runs on the CPU.
 *
 *  Both kinds of equations offer the same interface: `nh_accel` (eq. (19): `a`, `λ` and optionally the reaction
 *  power `λ·(J·v)`), `vk_accel` (§3: `a` and
 *  `μ̇`), `constraint_parts` (`φ`, `J`, `γ`), `kinetic_metric` (`W` of the plain `L`) and `energy`;
 *  the chart tests are the model's own (`in_charts`), read through the `model` member.
 */
template <class M, class T> struct AdEquations {
    using Model = M;
    static constexpr int n = M::n, k = M::k;
    /// NOTE: the reference checks every right-hand side for NaN/∞ (the generated path leaves that to the steppers).
    static constexpr bool checks_every_rhs = true;
    static constexpr int param_slots = max_params; ///< parameters read per member (an upper bound here)
    M model;

    NHVK_HD AdEquations(const M& m) : model(m) {}
    /** @brief `[W −Jᵀ; J 0][a; λ] = [−b; γ]`, eq. (19); with `power`, also `λ·(J·v)`. */
    NHVK_HD NHVK_NOINLINE Status nh_accel(T t, const T* q, const T* v, T* a, T* lambda, T* power = nullptr) const {
        const Status s =
            solve_into(lagrangian_parts(model, q, v, t, static_cast<const T*>(nullptr)), q, v, t, a, lambda);
        if (power && s == Status::ok) {
            *power = multiplier_power(::nhvk::constraint_parts(model, q, v, t).J, v, lambda);
        }
        return s;
    }
    /** @brief `[W − Σμ H  −Jᵀ; J 0][a; μ̇] = [−b + Σ μ c; γ]` (§3), as the saddle system of `L − μ·φ`, μ frozen. */
    NHVK_HD NHVK_NOINLINE Status vk_accel(T t, const T* q, const T* v, const T* mu, T* a, T* mudot) const {
        return solve_into(lagrangian_parts(model, q, v, t, mu), q, v, t, a, mudot);
    }
    NHVK_HD ConstraintParts<M, T> constraint_parts(const T* q, const T* v, T t) const {
        return ::nhvk::constraint_parts(model, q, v, t);
    }
    NHVK_HD void kinetic_metric(const T* q, const T* v, T t, T (&W)[n][n]) const {
        const LagrangianParts<M, T> lp = lagrangian_parts(model, q, v, t, static_cast<const T*>(nullptr));
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) NHVK_UNROLL
        for (int j = 0; j < n; ++j) W[i][j] = lp.W[i][j];
    }
    NHVK_HD T energy(const T* q, const T* v, T t) const { return ::nhvk::energy(model, q, v, t); }

private:
    NHVK_HD Status solve_into(const LagrangianParts<M, T>& lp, const T* q, const T* v, T t, T* a, T* mult) const {
        const SaddleSolution<M, T> s = solve_saddle(lp, ::nhvk::constraint_parts(model, q, v, t));
        // NOTE: the outputs are written on failure too (zeros, never read): compilers cannot always prove that a
        // caller reads them only after a success, and warn.
        const bool ok = s.status == Status::ok;
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) a[i] = ok ? s.a[i] : T(0);
        NHVK_UNROLL
        for (int c = 0; c < k; ++c) mult[c] = ok ? s.mult[c] : T(0);
        return s.status;
    }
};

namespace detail {
/** @brief A failed solve at a state that is itself not finite is a non-finite trajectory, not a singular matrix. */
template <int N, class T> NHVK_HD Status classify_failure(Status s, const T* y) {
    return (s == Status::singular && !all_finite<N>(y)) ? Status::non_finite : s;
}
} // namespace detail

/** @brief The equations `Eq` (`AdEquations<M, T>` or `GenEquations<M, T>`) in the scalar `S`. */
template <class Eq, class S> struct RebindEquations;
template <template <class, class> class E, class M, class T, class S> struct RebindEquations<E<M, T>, S> {
    using type = E<M, S>;
};

/** @brief Nonholonomic system (eq. (19)): state `y = (q, v)`, `q̇ = v`, `v̇ = a`, multiplier `λ` an output. */
template <class M, class T, class Eq = AdEquations<M, T>> struct NonholonomicSystem {
    static constexpr int n = M::n, k = M::k, dim = 2 * M::n;
    /// which equations of motion (a stepper that integrates the mechanics rather than the ODE needs to know)
    static constexpr Dynamics dynamics = Dynamics::nonholonomic;
    using Model = M;
    /// the same system in the scalar `S` (dual numbers: its Jacobian, nhvk/jacobian.hpp)
    template <class S> using rebind = NonholonomicSystem<M, S, typename RebindEquations<Eq, S>::type>;
    Eq eq;

    NHVK_HD NonholonomicSystem(const M& model = M{}) : eq(model) {}
    NHVK_HD const M& model() const { return eq.model; }

    /** @brief `dy = f(t, y)`; `lambda` (size k) receives the multipliers and `power` the reaction power `λ·(J·v)`
     *         when non-null. */
    NHVK_HD NHVK_FORCEINLINE Status rhs(T t, const T* y, T* dy, T* lambda = nullptr, T* power = nullptr) const {
        const T* q = y;
        const T* v = y + n;
        if (!in_charts(eq.model, q, v)) return Status::chart_singular;
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) dy[i] = v[i];
        T mult[k > 0 ? k : 1];
        const Status s = eq.nh_accel(t, q, v, dy + n, mult, power);
        if (s != Status::ok) return detail::classify_failure<dim>(s, y);
        if (lambda) NHVK_UNROLL
        for (int a = 0; a < k; ++a) lambda[a] = mult[a];
        if constexpr (Eq::checks_every_rhs) return detail::all_finite<dim>(dy) ? Status::ok : Status::non_finite;
        return Status::ok;
    }
    /** @brief Project `v` back onto `φ = 0` (docs/physics.md §5). */
    NHVK_HD Status project(T t, T* y) const { return detail::project_velocity(eq, y, y + n, t); }
};

/** @brief `∂L/∂t` by one forward-mode tangent on `t`. */
template <class M, class T> NHVK_HD T lagrangian_time_derivative(const M& model, const T* q, const T* v, T t) {
    constexpr int n = M::n;
    using S = Dual<T, 1>;
    S qq[n], vv[n];
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        qq[j] = S(q[j]);
        vv[j] = S(v[j]);
    }
    S tt(t);
    tt.d[0] = T(1);
    return model.lagrangian(qq, vv, tt).d[0];
}

/** @brief The power of the applied terms, `F·v − ∂L/∂t` (`∂L/∂t` by one forward-mode tangent on `t`, only for a
 *         model that declares `lagrangian_depends_on_t`; 0 for the others without a force, at no cost). */
template <class M, class T> NHVK_HD NHVK_FORCEINLINE T applied_power(const M& model, const T* q, const T* v, T t) {
    constexpr int n = M::n;
    T p = T(0);
    if constexpr (M::lagrangian_depends_on_t) p = -lagrangian_time_derivative(model, q, v, t);
    if constexpr (M::has_force) {
        T F[n];
        model.force(q, v, t, F);
        NHVK_UNROLL
        for (int j = 0; j < n; ++j) p += F[j] * v[j];
    }
    return p;
}

/**
 * @brief The nonholonomic system with its energy balance: state `y = (q, v, w_λ[, w_F])`, the motion of
 *        `NonholonomicSystem` and the integrals `w_λ = ∫ λ·(J·v) dt` (the work of the reaction forces) and
 *        `w_F = ∫ (F·v − ∂L/∂t) dt`, integrated by the same steps. Along an exact solution of eq. (19)
 *        `dE/dt = λ·(J·v) + F·v − ∂L/∂t`, so `E(t) − E(t0) − w_λ − w_F` measures the integration error (and what a
 *        projection changed); for constraints homogeneous in `v` (Talamucci eq. (40)) `J·v = σ φ = 0` on the
 *        constraint set and `w_λ` stays 0. `w_F` is carried only for a model with a force or a time-dependent `L`
 *        (`applied`; otherwise it is 0). The integrals do not enter the adaptive error norm (`err_dim`), so the
 *        steps, hence `(q, v)`, are those of `NonholonomicSystem` bit for bit.
 */
template <class M, class T, class Eq = AdEquations<M, T>> struct BalancedNonholonomicSystem {
    /// whether `F·v − ∂L/∂t` can be nonzero: only then is `w_F` carried (a component fewer in every stage otherwise)
    static constexpr bool applied = M::has_force || M::lagrangian_depends_on_t;
    static constexpr int n = M::n, k = M::k, dim = 2 * M::n + 1 + (applied ? 1 : 0), err_dim = 2 * M::n;
    static constexpr Dynamics dynamics = Dynamics::nonholonomic;
    using Model = M;
    template <class S> using rebind = BalancedNonholonomicSystem<M, S, typename RebindEquations<Eq, S>::type>;
    NonholonomicSystem<M, T, Eq> base;

    NHVK_HD BalancedNonholonomicSystem(const M& model = M{}) : base(model) {}
    NHVK_HD const M& model() const { return base.eq.model; }

    NHVK_HD NHVK_FORCEINLINE Status rhs(T t, const T* y, T* dy, T* lambda = nullptr) const {
        // NOTE: the reaction power comes from the equations' own solve (the generated code shares the
        // trigonometry of J with the acceleration's): a second evaluation of J per right-hand side cost rolling_disc's
        // DOPRI5 kernels a stack frame.
        // NOTE: written whatever the status (a caller reads no stage that failed): kept apart from the failure's
        // branch, the device does not select the component at every stage.
        T power = T(0);
        const Status s = base.rhs(t, y, dy, lambda, &power);
        dy[2 * n] = power;
        if (s != Status::ok) return s;
        if constexpr (applied) dy[2 * n + 1] = applied_power(base.eq.model, y, y + n, t);
        return Status::ok;
    }
    NHVK_HD Status project(T t, T* y) const { return base.project(t, y); }
};

/** @brief Vakonomic system (§3): state `y = (q, v, μ)`, `[W − Σμ H  −Jᵀ; J 0][a; μ̇] = [−b + Σ μ c; γ]`. */
template <class M, class T, class Eq = AdEquations<M, T>> struct VakonomicSystem {
    static constexpr int n = M::n, k = M::k, dim = 2 * M::n + M::k;
    static constexpr Dynamics dynamics = Dynamics::vakonomic;
    using Model = M;
    template <class S> using rebind = VakonomicSystem<M, S, typename RebindEquations<Eq, S>::type>;
    Eq eq;

    NHVK_HD VakonomicSystem(const M& model = M{}) : eq(model) {}
    NHVK_HD const M& model() const { return eq.model; }

    NHVK_HD NHVK_FORCEINLINE Status rhs(T t, const T* y, T* dy, T* mudot = nullptr) const {
        const T* q = y;
        const T* v = y + n;
        const T* mu = y + 2 * n;
        if (!in_charts(eq.model, q, v)) return Status::chart_singular;
        NHVK_UNROLL
        for (int i = 0; i < n; ++i) dy[i] = v[i];
        const Status s = eq.vk_accel(t, q, v, mu, dy + n, dy + 2 * n);
        if (s != Status::ok) return detail::classify_failure<dim>(s, y);
        if (mudot) NHVK_UNROLL
        for (int a = 0; a < k; ++a) mudot[a] = dy[2 * n + a];
        if constexpr (Eq::checks_every_rhs) return detail::all_finite<dim>(dy) ? Status::ok : Status::non_finite;
        return Status::ok;
    }
    NHVK_HD Status project(T t, T* y) const { return detail::project_velocity(eq, y, y + n, t); }
};

/** @brief Diagnostics of one state: `max_ν |φ_ν| / |J_ν|`, the energy `E`, and (vakonomic) `E − μ·(J·v)`. */
template <class T> struct StateDiagnostics {
    T residual;  ///< max_ν |φ_ν(q, v, t)| / |∂φ_ν/∂v|: velocity units, whatever a constraint's scale
    T energy;    ///< E = v·L_v − L
    T vk_energy; ///< E − μ·(J·v); equals E when no μ is given
};

/** @brief The diagnostics of one state from equations `eq` (AD or generated). */
template <class Eq, class T>
NHVK_HD NHVK_FORCEINLINE StateDiagnostics<T> diagnose_with(const Eq& eq, const T* q, const T* v, T t,
                                                           const T* mu = nullptr) {
    StateDiagnostics<T> d;
    const auto cp = eq.constraint_parts(q, v, t);
    d.residual = scaled_constraint_residual<Eq::n, Eq::k>(cp.phi, cp.J);
    d.energy = eq.energy(q, v, t);
    d.vk_energy = d.energy;
    if (mu) d.vk_energy -= multiplier_power(cp.J, v, mu);
    return d;
}

} // namespace nhvk
