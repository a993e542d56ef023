// SPDX-License-Identifier: MIT
/** @file
 *  @brief The linearly implicit (Rosenbrock) stepper for stiff models, `Rosenbrock<Sys, T, Tableau>`, and its method,
 *         Rodas5P (Steinebach 2023): eight stages that each solve with `I/(hγ) − ∂f/∂y` at the step's start, the
 *         Jacobian exact (`rhs_jacobian`, nhvk/jacobian.hpp); L-stable, stiffly accurate, of order 5 with an embedded
 *         4th-order estimate, and built to keep its order on the Prothero–Robinson problem, where Hairer's Rodas4
 *         loses it (docs/numerics.md §2.6). Steps are clipped to land on each output time, as DOPRI5's are.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/jacobian.hpp"
#include "nhvk/linalg.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/status.hpp"
#include "nhvk/step_control.hpp"

namespace nhvk {

/**
 * @brief Rodas5P's coefficients (G. Steinebach, "Construction of Rosenbrock–Wanner method Rodas5P and numerical
 *        benchmarks within the Julia Differential Equations package", BIT 63, 2023; as OrdinaryDiffEq's
 *        `Rodas5PTableau` prints them) in the transformed form of Hairer's rodas.f: for stage `i`,
 *        `U_i = y + Σ_{j<i} a(i, j) K_j` at `t + alpha(i) h`, and
 *        `(I/(hγ) − J) K_i = f(t + alpha(i) h, U_i) + Σ_{j<i} (c(i, j)/h) K_j + h gamma(i) ∂f/∂t`.
 *        Stiffly accurate: the last three stages are at `t + h` and each starts where the one before ended
 *        (`U_{i+1} = U_i + K_i`), `y_new = U_8 + K_8`, and `K_8` is the error estimate.
 */
struct Rodas5pTableau {
    static constexpr Method method = Method::rodas5p;
    static constexpr int order = 5, error_order = 4, stages = 8;
    static constexpr double gamma_diag = 0.21193756319429014;
    NHVK_HD static constexpr double alpha(int i) {
        constexpr double v[8] = {
            0.0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716, 0.4288403609558664, 1.0, 1.0, 1.0};
        return v[i];
    }
    NHVK_HD static constexpr double gamma(int i) {
        constexpr double v[8] = {0.21193756319429014,
                                 -0.42387512638858027,
                                 -0.3384627126235924,
                                 1.8046452872882734,
                                 2.325825639765069,
                                 0.0,
                                 0.0,
                                 0.0};
        return v[i];
    }
    /** @brief Row 6 of `a`: stage 6's input, and (with 1 for each stage after it) the next stages' and `y_new`'s. */
    NHVK_HD static constexpr double a6(int j) {
        constexpr double v[5] = {-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256,
                                 0.030198172008377946};
        return v[j];
    }
    NHVK_HD static constexpr double a(int i, int j) {
        constexpr double v[5][4] = {
            {0, 0, 0, 0},
            {3.0, 0, 0, 0},
            {2.849394379747939, 0.45842242204463923, 0, 0},
            {-6.954028509809101, 2.489845061869568, -10.358996098473584, 0},
            {2.8029986275628964, 0.5072464736228206, -0.3988312541770524, -0.04721187230404641}};
        return i < 5 ? (j < 4 ? v[i][j] : 0.0) : (j < 5 ? a6(j) : (j < i ? 1.0 : 0.0));
    }
    NHVK_HD static constexpr double c(int i, int j) {
        constexpr double v[8][7] = {
            {0, 0, 0, 0, 0, 0, 0},
            {-14.155112264123755, 0, 0, 0, 0, 0, 0},
            {-17.97296035885952, -2.859693295451294, 0, 0, 0, 0, 0},
            {147.12150275711716, -1.41221402718213, 71.68940251302358, 0, 0, 0, 0},
            {165.43517024871676, -0.4592823456491126, 42.90938336958603, -5.961986721573306, 0, 0, 0},
            {24.854864614690072, -3.0009227002832186, 47.4931110020768, 5.5814197821558125, -0.6610691825249471, 0, 0},
            {30.91273214028599, -3.1208243349937974, 77.79954646070892, 34.28646028294783, -19.097331116725623,
             -28.087943162872662, 0},
            {37.80277123390563, -3.2571969029072276, 112.26918849496327, 66.9347231244047, -40.06618937091002,
             -54.66780262877968, -9.48861652309627}};
        return v[i][j];
    }
};

/**
 * @brief A stiffly accurate Rosenbrock method (`Tab`, in rodas.f's transformed form) with per-trajectory step control
 *        (`StepController` of the estimate's order, Hairer's starting step), steps clipped to land exactly on each
 *        output time. The Jacobian and `∂f/∂t` are evaluated once per step at its start and kept through rejected
 *        attempts; the matrix is factored once per attempt. A singular matrix halves the step (a rejection), as
 *        rodas.f does.
 */
template <class Sys, class T, class Tab> class Rosenbrock {
public:
    static constexpr Method method = Tab::method;
    static constexpr int order = Tab::order;
    static constexpr int dim = Sys::dim;
    static constexpr int err_dim = detail::ErrDim<Sys>::value;
    static constexpr bool fixed_step = false;
    static constexpr int stages = Tab::stages;
    T t;
    T y[dim];
    long long steps = 0;    ///< attempted steps
    long long rejected = 0; ///< rejected steps (a singular matrix included)

    NHVK_HD NHVK_FORCEINLINE Status init(const Sys& sys, T t0, const T* y0, const StepControl& ctl) {
        ctl_ = ctl;
        t = t0;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i) y[i] = y0[i];
        steps = rejected = 0;
        Status s = Status::ok;
        if (ctl.project && (s = sys.project(t, y)) != Status::ok) return s;
        if ((s = rhs(sys, t, y, f0_)) != Status::ok) return s;
        return first_step<order, err_dim>(sys, ctl_, t, y, f0_, h_);
    }

    NHVK_HD NHVK_STEP_INLINE Status advance_to(const Sys& sys, T t_target) {
        bool fresh = false; // the Jacobian in store belongs to (t, y)
        bool last_rejected = false;
        Status s = Status::ok;
        while (t < t_target) {
            if ((s = attempt_status(steps, h_, ctl_)) != Status::ok) return s;
            T h = h_;
            bool clipped = false;
            // NOTE: land exactly on the output time; a remainder below 1e-10 h would leave a sliver step.
            if (t + h * T(1 + 1e-10) >= t_target) {
                h = t_target - t;
                clipped = true;
            }
            const T t_new = clipped ? t_target : t + h;
            if (!fresh) {
                if ((s = rhs_jacobian(sys, t, y, J_, ft_)) != Status::ok) return s;
                if ((s = rhs(sys, t, y, f0_)) != Status::ok) return s;
                fresh = true;
            }
            ++steps;
            LuFactors<dim, T> lu;
            const T inv_hg = T(1) / (h * T(Tab::gamma_diag));
            NHVK_UNROLL
            for (int i = 0; i < dim; ++i) NHVK_UNROLL
            for (int j = 0; j < dim; ++j) lu.a[i][j] = (i == j ? inv_hg : T(0)) - J_[i][j];
            if (!lu_factor(lu)) {
                ++rejected;
                h_ = h * T(0.5);
                last_rejected = true;
                continue;
            }
            // NOTE: zero-initialized only because g++ cannot always prove that a stage is written before it is read.
            T K[stages][dim] = {}, y_new[dim] = {};
            if ((s = stages_of(sys, lu, h, K, y_new)) != Status::ok) return s;
            ErrorNorm<T> norm(ctl_);
            NHVK_UNROLL
            for (int j = 0; j < err_dim; ++j) norm.add(K[stages - 1][j], y[j], y_new[j]);
            const T err = norm.value(err_dim);
            if (!is_finite(err)) return Status::non_finite;
            if (!Controller::accept(err, h, clipped, h_, last_rejected, rejected)) continue;
            t = t_new;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) y[j] = y_new[j];
            fresh = false;
            if (ctl_.project && (s = sys.project(t, y)) != Status::ok) return s;
        }
        return Status::ok;
    }

private:
    using Controller = StepController<T, Tab::error_order>;
    StepControl ctl_;
    T h_ = T(0);
    T J_[dim][dim] = {}; ///< ∂f/∂y at the start of the step
    T ft_[dim] = {};     ///< ∂f/∂t there
    T f0_[dim] = {};     ///< f there: the first stage's right-hand side

    /** @brief `sys.rhs`: on the host one out-of-line copy per system, called from every stage, instead of the
     *         equations inlined into each of them, which is most of a model unit's compile time (see
     *         NHVK_STEP_INLINE); inlined on the device. */
    NHVK_HD NHVK_STEP_INLINE static Status rhs(const Sys& sys, T t, const T* y, T* dy) { return sys.rhs(t, y, dy); }
    /** @brief `lu_substitute`, likewise one out-of-line copy on the host for the stages' solves. */
    NHVK_HD NHVK_STEP_INLINE static void solve(const LuFactors<dim, T>& lu, T* b) { lu_substitute(lu, b); }

    /** @brief The stages of a step of `h` from `(t, y)` with the factors of `I/(hγ) − J`; `y_new = U_s + K_s`. */
    NHVK_HD Status stages_of(const Sys& sys, const LuFactors<dim, T>& lu, T h, T (*K)[dim], T* y_new) const {
        const T inv_h = T(1) / h;
        T u[dim];
        NHVK_UNROLL
        for (int i = 0; i < stages; ++i) {
            T r[dim];
            if (i == 0) {
                NHVK_UNROLL
                for (int j = 0; j < dim; ++j) r[j] = f0_[j];
            } else {
                NHVK_UNROLL
                for (int j = 0; j < dim; ++j) {
                    T acc = y[j];
                    NHVK_UNROLL
                    for (int l = 0; l < i; ++l)
                        if (Tab::a(i, l) != 0.0) acc += T(Tab::a(i, l)) * K[l][j];
                    u[j] = acc;
                }
                const T ti = Tab::alpha(i) == 1.0 ? t + h : t + T(Tab::alpha(i)) * h;
                const Status s = rhs(sys, ti, u, r);
                if (s != Status::ok) return s;
            }
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) {
                T acc = r[j];
                if (Tab::gamma(i) != 0.0) acc += h * T(Tab::gamma(i)) * ft_[j];
                NHVK_UNROLL
                for (int l = 0; l < i; ++l) acc += T(Tab::c(i, l)) * inv_h * K[l][j];
                K[i][j] = acc;
            }
            solve(lu, K[i]);
        }
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) y_new[j] = u[j] + K[stages - 1][j];
        return Status::ok;
    }
};

template <class Sys, class T> using Rodas5p = Rosenbrock<Sys, T, Rodas5pTableau>;
template <> struct MethodStepper<Method::rodas5p> { template <class Sys, class T> using tmpl = Rodas5p<Sys, T>; };

} // namespace nhvk
