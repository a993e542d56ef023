// SPDX-License-Identifier: MIT
/** @file
 *  @brief The stepper of the explicit embedded Runge–Kutta pairs that reach output times by their dense output
 *         (`DenseRk<Sys, T, Tableau>`): the stages, the step control, the interpolation to each output time and the
 *         clip of the last step are here; a method's file holds its tableau, its error norm and its interpolant.
 *
 *  A tableau class provides `method`, `order`, `error_order`, `stages` (the stage derivatives of a step, the last one
 *  `f(t + h, y_new)`: its input is the new solution, so the pair is FSAL), `dense_stages` (stages added after an
 *  accepted step when an output time falls in it), `dense_terms` (the interpolant's stored vectors), and
 *  `c(i)`, `a(i, j)` for `i < stages + dense_stages`, `error_norm`, `build_dense` and `interpolate`.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/status.hpp"
#include "nhvk/step_control.hpp"

namespace nhvk {
namespace rk {

/**
 * @brief `Σ_{j ∈ [J, N)} W::at(j) · K[j][c]` summed left to right (after `acc` when `Started`), the zero weights left
 *        out at compile time: the sum a hand-written stage would spell, with each weight a constant in the code (no
 *        coefficient table in memory on the device). 0 when every weight is 0.
 */
template <class W, int J, int N, bool Started, class T, int D>
NHVK_HD NHVK_FORCEINLINE T weighted_sum(const T (*K)[D], int c, T acc) {
    if constexpr (J == N) {
        return Started ? acc : T(0);
    } else {
        constexpr double w = W::at(J);
        if constexpr (w == 0.0) return weighted_sum<W, J + 1, N, Started>(K, c, acc);
        else if constexpr (Started) return weighted_sum<W, J + 1, N, true>(K, c, acc + T(w) * K[J][c]);
        else return weighted_sum<W, J + 1, N, true>(K, c, T(w) * K[J][c]);
    }
}

/** @brief `Σ_{j < N} W::at(j) · K[j][c]`. */
template <class W, int N, class T, int D> NHVK_HD NHVK_FORCEINLINE T weighted(const T (*K)[D], int c) {
    return weighted_sum<W, 0, N, false>(K, c, T(0));
}

/** @brief Row `I` of a tableau's `a` as weights. */
template <class Tab, int I> struct StageRow {
    NHVK_HD static constexpr double at(int j) { return Tab::a(I, j); }
};

} // namespace rk

/**
 * @brief An explicit embedded Runge–Kutta pair with per-trajectory step control (`StepController` of the tableau's
 *        estimate order, Hairer's starting step) that does not shorten its steps to land on output times: an output
 *        time inside a step is reached by the method's interpolant, built only for steps that contain one.
 *
 * `t` and `y` are the last output time reached and the state there; the integration itself goes on from the end of
 * the last step. `land_last_on(t_end)` makes the step that would pass `t_end` end on it, so that nothing past the last
 * output time is evaluated (`integrate_member` sets it). With `StepControl::project`, both the state at each step's
 * end and each interpolated output state are projected onto `φ = 0`.
 */
template <class Sys, class T, class Tab> class DenseRk {
public:
    static constexpr Method method = Tab::method;
    static constexpr int order = Tab::order;
    static constexpr int dim = Sys::dim;
    static constexpr int err_dim = detail::ErrDim<Sys>::value;
    static constexpr bool fixed_step = false;
    static constexpr bool dense = true; ///< output times by interpolation (`land_last_on`)
    T t;
    T y[dim];
    long long steps = 0;    ///< attempted steps
    long long rejected = 0; ///< rejected steps

    NHVK_HD NHVK_FORCEINLINE Status init(const Sys& sys, T t0, const T* y0, const StepControl& c) {
        ctl_ = c;
        t = ts_ = t0;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i) ys_[i] = y0[i];
        steps = rejected = 0;
        Status s = Status::ok;
        if (c.project && (s = sys.project(ts_, ys_)) != Status::ok) return s;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i) y[i] = ys_[i];
        if ((s = rhs(sys, ts_, ys_, f_)) != Status::ok) return s;
        return first_step<order, err_dim>(sys, ctl_, ts_, ys_, f_, h_);
    }

    /** @brief No step ends past `t_end` (the last output time): the one that would is shortened to end on it. A target
     *         beyond `t_end` is still reached, by steps from `t_end` on. */
    NHVK_HD void land_last_on(T t_end) {
        t_last_ = t_end;
        clip_last_ = true;
    }

    /** @brief Advance to the output time `t_target` (≥ t): step until a step ends at or past it, then interpolate. */
    NHVK_HD NHVK_FORCEINLINE Status advance_to(const Sys& sys, T t_target) {
        if (!(t < t_target)) return Status::ok;
        Status s = Status::ok;
        // NOTE: the interpolant in store belongs to the last step taken: a target at or before its end lies after the
        // previous target, which was inside it, so the dense output of that step is the one to use.
        while (ts_ < t_target)
            if ((s = step(sys, t_target)) != Status::ok) return s;
        t = t_target;
        if (t_target == ts_) {
            NHVK_UNROLL
            for (int i = 0; i < dim; ++i) y[i] = ys_[i];
            return Status::ok;
        }
        Tab::template interpolate<T, dim>((t_target - t_old_) / h_old_, h_old_, y_old_, F_, y);
        return ctl_.project ? sys.project(t, y) : Status::ok;
    }

private:
    static constexpr int stages = Tab::stages;
    static constexpr int all_stages = Tab::stages + Tab::dense_stages;
    using Controller = StepController<T, Tab::error_order>;
    StepControl ctl_;
    T h_ = T(0);
    T ts_ = T(0);                     ///< the end of the last step: where the integration goes on from
    T ys_[dim] = {};                  ///< the state there
    T f_[dim] = {};                   ///< f(ts_, ys_): the first stage of the next step (FSAL)
    T t_old_ = T(0), h_old_ = T(0);   ///< the start and length of the step whose interpolant is stored
    T y_old_[dim] = {};               ///< the state at its start
    T F_[Tab::dense_terms][dim] = {}; ///< its interpolant's vectors (the tableau's form)
    T t_last_ = T(0);
    bool clip_last_ = false;

    /** @brief `sys.rhs`: on the host one out-of-line copy per system, called from every stage, instead of the
     *         equations inlined into each of them (see NHVK_STEP_INLINE); inlined on the device. */
    NHVK_HD NHVK_STEP_INLINE static Status rhs(const Sys& sys, T t, const T* y, T* dy) { return sys.rhs(t, y, dy); }

    /** @brief Stages `I … End − 1` of a step of `h` from `(ts_, ys_)`; the last regular stage's input is the new
     *         solution, written to `y_new`, and its time is `t_new` exactly. */
    template <int I, int End>
    NHVK_HD NHVK_FORCEINLINE Status stages_from(const Sys& sys, T (*K)[dim], T h, T t_new, T* y_new) const {
        if constexpr (I == End) {
            return Status::ok;
        } else {
            T tmp[dim];
            T* in = I == stages - 1 ? y_new : tmp;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j)
                in[j] = ys_[j] + h * rk::weighted<rk::StageRow<Tab, I>, I>(static_cast<const T(*)[dim]>(K), j);
            constexpr double ci = Tab::c(I);
            const T ti = I == stages - 1 ? t_new : ts_ + T(ci) * h;
            const Status s = rhs(sys, ti, in, K[I]);
            if (s != Status::ok) return s;
            return stages_from<I + 1, End>(sys, K, h, t_new, y_new);
        }
    }

    /** @brief One accepted step from `(ts_, ys_)` (rejected attempts retried with a smaller step); its interpolant is
     *         built when it ends at or past `t_target`. */
    NHVK_HD NHVK_STEP_INLINE Status step(const Sys& sys, T t_target) {
        // NOTE: zero-initialized only because g++ cannot always prove that a stage is read after its right-hand side
        // succeeded (-Wmaybe-uninitialized); every element is written before it is read.
        T K[all_stages][dim] = {}, y_new[dim] = {};
        bool last_rejected = false;
        for (;;) {
            if (const Status a = attempt_status(steps, h_, ctl_); a != Status::ok) return a;
            T h = h_;
            bool clipped = false;
            // NOTE: as dopri5 does at every output time; a remainder below 1e-10 h would leave a sliver step. A step
            // that starts on the last output time is not clipped: a later target is reached by ordinary steps.
            if (clip_last_ && ts_ < t_last_ && ts_ + h * T(1 + 1e-10) >= t_last_) {
                h = t_last_ - ts_;
                clipped = true;
            }
            const T t_new = clipped ? t_last_ : ts_ + h;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) K[0][j] = f_[j];
            Status s = stages_from<1, stages>(sys, K, h, t_new, y_new);
            if (s != Status::ok) return s;
            ++steps;
            const T err =
                Tab::template error_norm<T, dim, err_dim>(static_cast<const T(*)[dim]>(K), h, ys_, y_new, ctl_);
            if (!is_finite(err)) return Status::non_finite;
            if (!Controller::accept(err, h, clipped, h_, last_rejected, rejected)) continue;
            if (t_target <= t_new) {
                if ((s = stages_from<stages, all_stages>(sys, K, h, t_new, y_new)) != Status::ok) return s;
                Tab::template build_dense<T, dim>(static_cast<const T(*)[dim]>(K), h, ys_, y_new, F_);
                t_old_ = ts_;
                h_old_ = h;
                NHVK_UNROLL
                for (int j = 0; j < dim; ++j) y_old_[j] = ys_[j];
            }
            ts_ = t_new;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) {
                ys_[j] = y_new[j];
                f_[j] = K[stages - 1][j];
            }
            if (ctl_.project) {
                if ((s = sys.project(ts_, ys_)) != Status::ok) return s;
                if ((s = rhs(sys, ts_, ys_, f_)) != Status::ok) return s;
            }
            return Status::ok;
        }
    }
};

} // namespace nhvk
