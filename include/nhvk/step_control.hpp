// SPDX-License-Identifier: MIT
/** @file
 *  @brief What every stepper shares: the step-control settings (`StepControl`), the error norm and step-size
 *         controller of the adaptive methods, Hairer's starting step, and `MethodStepper`, the stepper template of each
 *         row of `method_table` (specialized in the file of each method's stepper).
 *
 *  A system provides `static constexpr int dim`, `Status rhs(T t, const T* y, T* dy) const` and
 *  `Status project(T t, T* y) const`; optionally `static constexpr int err_dim` (< dim): only the first `err_dim`
 *  components enter the adaptive error norm (the rest are integrals carried along, e.g. an energy balance).
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"
#include "nhvk/linalg.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/status.hpp"

namespace nhvk {

namespace detail {
template <class Sys, class = void> struct ErrDim { static constexpr int value = Sys::dim; };
template <class Sys> struct ErrDim<Sys, decltype(void(Sys::err_dim))> { static constexpr int value = Sys::err_dim; };
} // namespace detail

/** @brief Integrator settings shared by every stepper (doubles also for float runs). */
struct StepControl {
    double rtol = StepDefaults::rtol; ///< an adaptive method's relative tolerance
    double atol = StepDefaults::atol; ///< an adaptive method's absolute tolerance
    /// rk4: the step; an adaptive method: the first step (0 = automatic, the config's default for them)
    double dt = StepDefaults::rk4_dt;
    double min_step = StepDefaults::min_step; ///< adaptive: a proposed step below this is a step-size underflow
    /// attempted steps per trajectory and dynamics (a config's default is `default_max_steps` of its output times)
    long long max_steps = 10000000;
    bool project = false; ///< project `v` onto `φ = 0` after each accepted step
};

/**
 * @brief The error norm of an embedded pair: ‖e / (atol + rtol · max(|y|, |y_new|))‖_RMS, in the precision of the run,
 *        summed component by component as the estimate comes.
 *
 * NOTE: each finite ratio is capped at 1e10 so that a float sum of squares cannot overflow on a bad step (any error
 * above ~2e3 gives the controller's smallest factor, so the cap changes no decision); ±∞ and NaN pass it, and make
 * the trajectory non-finite.
 */
template <class T> class ErrorNorm {
public:
    NHVK_HD explicit ErrorNorm(const StepControl& c) : atol_(T(c.atol)), rtol_(T(c.rtol)) {}
    /** @brief Adds component `e` of the estimate, for the state components `y` (before) and `y_new` (after). */
    NHVK_HD NHVK_FORCEINLINE void add(T e, T y, T y_new) {
        const T ay = abs(y), ay_new = abs(y_new), cap = T(1e10);
        const T sc = atol_ + rtol_ * (ay > ay_new ? ay : ay_new);
        T r = abs(e / sc);
        r = (r > cap && is_finite(r)) ? cap : r;
        sum_ += r * r;
    }
    /** @brief The norm over `n` components. */
    NHVK_HD NHVK_FORCEINLINE T value(int n) const { return sqrt(sum_ / T(n)); }
    /** @brief The sum of the squared scaled components (for norms that combine two estimates, as DOP853's does). */
    NHVK_HD NHVK_FORCEINLINE T sum() const { return sum_; }

private:
    T atol_, rtol_, sum_ = T(0);
};

/**
 * @brief The step-size controller of a method whose error estimate has order `EstimateOrder` (HNW I, §II.4): the
 *        factor `clamp(0.9 · err^(−1/(EstimateOrder + 1)), 0.2, 10)` (the standard, integral controller; no growth
 *        right after a rejection is the stepper's).
 */
template <class T, int EstimateOrder> struct StepController {
    static constexpr double exponent = 1.0 / (EstimateOrder + 1);
    /** @brief The factor of the next step from the norm `err` of this one's error (accepted when err <= 1). */
    NHVK_HD NHVK_FORCEINLINE static T factor(T err) {
        T fac = err > T(0) ? T(0.9) * pow(err, T(-exponent)) : T(10);
        return fac < T(0.2) ? T(0.2) : (fac > T(10) ? T(10) : fac);
    }
    /**
     * @brief The decision after an attempted step of `h` whose error norm is `err` (finite): true when it is accepted
     *        (`err <= 1`). `h_next` becomes the next step: shrunk (never grown) after a rejection, which `rejected`
     * counts and `last_rejected` remembers; not grown right after a rejection; and a step shortened to land on an
     * output time (`clipped`) does not shrink the one proposed before it.
     */
    NHVK_HD NHVK_FORCEINLINE static bool accept(T err, T h, bool clipped, T& h_next, bool& last_rejected,
                                                long long& rejected) {
        T fac = factor(err);
        if (!(err <= T(1))) {
            ++rejected;
            h_next = h * (fac < T(1) ? fac : T(1));
            last_rejected = true;
            return false;
        }
        if (last_rejected && fac > T(1)) fac = T(1);
        const T grown = h * fac;
        h_next = clipped ? (grown > h_next ? grown : h_next) : grown;
        last_rejected = false;
        return true;
    }
};

/** @brief Before an adaptive step's attempt: `step_limit` when `steps` reached `max_steps`, `step_underflow` when the
 *         proposed step `h` fell below `min_step` (or is NaN), else `ok`. */
template <class T> NHVK_HD NHVK_FORCEINLINE Status attempt_status(long long steps, T h, const StepControl& c) {
    if (steps >= c.max_steps) return Status::step_limit;
    if (!(h >= T(c.min_step))) return Status::step_underflow;
    return Status::ok;
}

namespace detail {
/** @brief ‖x / (atol + rtol · |ref|)‖_RMS over the first `N` components, in double (the starting step's probes). */
template <int N, class T> NHVK_HD double scaled_rms(const T* x, const T* ref, const StepControl& c) {
    double s = 0.0;
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) {
        const double r = double(x[j]) / (c.atol + c.rtol * double(abs(ref[j])));
        s += r * r;
    }
    return sqrt(s / N);
}
} // namespace detail

/**
 * @brief Hairer's starting step (HNW I, §II.4) for a method of order `Order`: an Euler probe of the second derivative
 *        from `(t, y)` with `k1 = f(t, y)`; the norms cover the first `ErrDim` components.
 */
template <int Order, int ErrDim, class Sys, class T>
NHVK_HD T hairer_initial_step(const Sys& sys, const StepControl& c, T t, const T* y, const T* k1) {
    constexpr int dim = Sys::dim;
    const double d0 = detail::scaled_rms<ErrDim>(y, y, c), d1 = detail::scaled_rms<ErrDim>(k1, y, c);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    T y1[dim], f1[dim], diff[dim];
    NHVK_UNROLL
    for (int j = 0; j < dim; ++j) y1[j] = y[j] + T(h0) * k1[j];
    if (sys.rhs(t + T(h0), y1, f1) != Status::ok) return T(h0);
    NHVK_UNROLL
    for (int j = 0; j < dim; ++j) diff[j] = f1[j] - k1[j];
    const double d2 = detail::scaled_rms<ErrDim>(diff, y, c) / h0;
    const double dm = d1 > d2 ? d1 : d2;
    const double h1 = dm <= 1e-15 ? (h0 * 1e-3 > 1e-6 ? h0 * 1e-3 : 1e-6) : pow(0.01 / dm, 1.0 / Order);
    const double h = 100.0 * h0 < h1 ? 100.0 * h0 : h1;
    return T(h);
}

/** @brief An adaptive method's first step from `f = f(t, y)` (its init's first right-hand side): `non_finite` when `f`
 *         is not finite; else `h` is `c.dt` when given (> 0), Hairer's starting step for the method's `Order`
 *         otherwise, and `non_finite` when that is not finite. */
template <int Order, int ErrDim, class Sys, class T>
NHVK_HD NHVK_FORCEINLINE Status first_step(const Sys& sys, const StepControl& c, T t, const T* y, const T* f, T& h) {
    NHVK_UNROLL
    for (int i = 0; i < Sys::dim; ++i)
        if (!is_finite(f[i])) return Status::non_finite;
    h = T(c.dt);
    if (!(c.dt > 0.0)) h = hairer_initial_step<Order, ErrDim>(sys, c, t, y, f);
    return is_finite(h) ? Status::ok : Status::non_finite;
}

/** @brief The equal steps of a fixed-step method from `t` to `t_target`: `m = ⌈(t_target − t)/dt⌉` steps of
 *         `h = (t_target − t)/m` (m = 0 when `t_target ≤ t`); `step_limit` when `steps + m` would exceed
 *         `max_steps`. */
template <class T>
NHVK_HD NHVK_FORCEINLINE Status plan_equal_steps(T t, T t_target, const StepControl& c, long long steps, long long& m,
                                                 T& h) {
    m = 0;
    const double span = double(t_target - t);
    if (!(span > 0.0)) return Status::ok;
    const double ratio = span / c.dt;
    // NOTE: compared in double before the conversion: a count beyond the budget (or beyond long long, where the
    // conversion is undefined and used to wrap to one step) is step_limit.
    if (!(ratio < double(c.max_steps - steps) + 1.0)) return Status::step_limit;
    long long count = (long long)ratio;
    if (double(count) * c.dt < span * (1.0 - 1e-12)) ++count;
    if (count < 1) count = 1;
    if (steps + count > c.max_steps) return Status::step_limit;
    m = count;
    h = T(span / double(count));
    return Status::ok;
}

/** @brief A fixed-step stepper's `advance_to` (`t_target` ≥ its t), from its `plan`, `step` and `finish`: the state is
 *         a local copy during the steps (registers on the device, no aliasing with the stepper). */
template <class St, class Sys, class T>
NHVK_HD NHVK_FORCEINLINE Status advance_in_equal_steps(St& st, const Sys& sys, T t_target) {
    typename St::Interval iv;
    Status s = st.plan(t_target, iv);
    if (s != Status::ok || iv.m == 0) return s;
    T x[St::dim];
    NHVK_UNROLL
    for (int j = 0; j < St::dim; ++j) x[j] = st.y[j];
    long long i = 0;
    for (; i < iv.m; ++i)
        if ((s = st.step(sys, x, iv, i)) != Status::ok) break;
    st.settle(iv, i);
    return st.finish(x, s);
}

/**
 * @brief What the fixed-step steppers (RK4, the midpoint rule) share, as a base of `Derived`: the state `y` at `t`,
 *        the step count, the plan of an output interval into equal steps, the tail of a step (its time from the
 *        interval's start, the count, the projection) and `advance_to`. `Derived` adds `init` (from `start`) and `step`
 *        (ending in `land`) and, if it checks more, its own `finish`.
 */
template <class Derived, class Sys, class T> class FixedStep {
public:
    static constexpr int dim = Sys::dim;
    static constexpr bool fixed_step = true; ///< plan/step/finish: two systems can be stepped in lockstep
    T t;
    T y[dim];
    long long steps = 0;

    /** @brief An output interval: `m` equal steps of `h` from `t_start` to `t_target` (m = 0: nothing to do), with
     *         h/2 and h/6 worked out once (RK4's stage weights). */
    struct Interval {
        long long m = 0;
        T t_start = T(0), t_target = T(0), h = T(0), h2 = T(0), h6 = T(0);
    };

    /** @brief Plan the steps to `t_target` (≥ t): `⌈(t_target − t)/dt⌉` equal steps; `step_limit` when they would
     *         exceed `max_steps`. */
    NHVK_HD NHVK_FORCEINLINE Status plan(T t_target, Interval& iv) const {
        long long m = 0;
        T h = T(0);
        const Status s = plan_equal_steps(t, t_target, ctl_, steps, m, h);
        iv.m = m;
        if (s != Status::ok || m == 0) return s;
        iv.t_start = t;
        iv.t_target = t_target;
        iv.h = h;
        iv.h2 = T(0.5) * iv.h;
        iv.h6 = iv.h / T(6);
        return Status::ok;
    }

    /** @brief End an interval: `y` takes the local state `x`. */
    NHVK_HD NHVK_FORCEINLINE Status finish(const T* x, Status s) {
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) y[j] = x[j];
        return s;
    }

    /** @brief Advance to `t_target` (≥ t) in `⌈(t_target − t)/dt⌉` equal steps. */
    NHVK_HD NHVK_FORCEINLINE Status advance_to(const Sys& sys, T t_target) {
        return advance_in_equal_steps(static_cast<Derived&>(*this), sys, t_target);
    }

protected:
    StepControl ctl_;

    /** @brief `init`'s start: the control and the state at `t0`, no steps. The projection stays in each `init`, in
     *         the same `if` as its other failures: a status passed back through here costs the largest models' RK4
     *         kernels spills on the device. */
    NHVK_HD NHVK_FORCEINLINE void start(T t0, const T* y0, const StepControl& c) {
        ctl_ = c;
        t = t0;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i) y[i] = y0[i];
        steps = 0;
        projection_failed_ = false;
    }

    /** @brief The time at which step `i` of `iv` starts (`i = iv.m`: where the last ends). */
    NHVK_HD NHVK_FORCEINLINE static T time_at(const Interval& iv, long long i) {
        // NOTE: from the start of the interval, not accumulated, so the last step lands on t_target exactly.
        return i == iv.m ? iv.t_target : (i == 0 ? iv.t_start : iv.t_start + T(i) * iv.h);
    }

    /** @brief The tail of step `i` of the interval on `x`: the projection where asked. The time and the count are
     *         not kept step by step: `settle` sets them once after the steps. */
    NHVK_HD NHVK_FORCEINLINE Status land(const Sys& sys, T* x, const Interval& iv, long long i) {
        // NOTE: setting them here would put an int-to-double conversion, a multiply-add and 64-bit arithmetic in
        // every step on the device, for values of which only the last is read.
        if (!ctl_.project) return Status::ok;
        const Status s = sys.project(time_at(iv, i + 1), x);
        if (s != Status::ok) projection_failed_ = true; // the step counts as taken: its state is x
        return s;
    }

public:
    /** @brief The time and the count after `done` completed steps of `iv` (and the step whose projection failed,
     *         if one did): what keeping them step by step gave. */
    NHVK_HD NHVK_FORCEINLINE void settle(const Interval& iv, long long done) {
        if (projection_failed_) ++done;
        projection_failed_ = false;
        if (done <= 0) return;
        t = time_at(iv, done);
        steps += done;
    }

private:
    bool projection_failed_ = false;
};

namespace detail {
template <class S, class = void> struct IsDense { static constexpr bool value = false; };
template <class S> struct IsDense<S, decltype(void(S::dense))> { static constexpr bool value = S::dense; };
} // namespace detail
/** @brief True for a stepper that reaches output times by interpolation (`DenseRk`): it takes the last output time
 *         (`land_last_on`) so that no step goes past it. */
template <class S> constexpr bool dense_stepper = detail::IsDense<S>::value;

/** @brief The stepper template of method `M` (a row of `method_table`): `MethodStepper<M>::tmpl<Sys, T>`, specialized
 *         beside each stepper. */
template <Method M> struct MethodStepper;

} // namespace nhvk
