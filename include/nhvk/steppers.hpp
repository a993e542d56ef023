// SPDX-License-Identifier: MIT
/** @file
 *  @brief The steppers, templated on the system and the scalar (the stepper/system separation of Boost.Odeint), one
 *         per row of `method_table`: classical RK4 with a fixed step and Dormand–Prince 5(4) with per-trajectory
 *         adaptive step control here, both landing exactly on every requested output time; Tsitouras 5(4)
 *         (nhvk/methods/tsit5.hpp) and Dormand–Prince 8(5,3) (nhvk/methods/dop853.hpp), which reach output times by
 *         their dense output; Rodas5P (nhvk/methods/rodas5p.hpp), linearly implicit for stiff models, which lands on
 *         them as DOPRI5 does; and the structure-preserving midpoint integrators of the two dynamics' mechanics
 *         (nhvk/methods/midpoint.hpp), with a fixed step as RK4's. Each can project `v` onto `φ = 0` after each step.
 * What they share (the systems' interface, `StepControl`, the error norm and controller) is in nhvk/step_control.hpp.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/methods/dop853.hpp"
#include "nhvk/methods/midpoint.hpp"
#include "nhvk/methods/rodas5p.hpp"
#include "nhvk/methods/tsit5.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/status.hpp"
#include "nhvk/step_control.hpp"

namespace nhvk {

/** @brief Classical 4th-order Runge–Kutta with a fixed step, shortened uniformly to land on output times. */
template <class Sys, class T> class Rk4 : public FixedStep<Rk4<Sys, T>, Sys, T> {
    using Base = FixedStep<Rk4<Sys, T>, Sys, T>;

public:
    static constexpr Method method = Method::rk4;
    static constexpr int order = 4;
    using Base::dim;
    using typename Base::Interval;

    NHVK_HD NHVK_FORCEINLINE Status init(const Sys& sys, T t0, const T* y0, const StepControl& c) {
        this->start(t0, y0, c);
        Status s = Status::ok;
        if (c.project && (s = sys.project(this->t, this->y)) != Status::ok) return s;
        // NOTE: evaluate once at t0, as Dopri5 does, so a singular or non-finite start is reported before the first
        // output time.
        T k[dim];
        if ((s = sys.rhs(this->t, this->y, k)) != Status::ok) return s;
        return detail::all_finite<dim>(k) ? Status::ok : Status::non_finite;
    }

    /** @brief Step `i` of the interval on the state `x` (a local copy of `y`, see `advance_to`); on failure `x` keeps
     *         the last completed step. */
    NHVK_HD NHVK_FORCEINLINE Status step(const Sys& sys, T* x, const Interval& iv, long long i) {
        const T h = iv.h, h2 = iv.h2, h6 = iv.h6, t = Base::time_at(iv, i);
        // y += h/6 ((k1 + 2 k2) + 2 k3 + k4), summed as the stages come, so that only x, the sum, a stage input and a
        // stage vector are live at once (registers on the device).
        T k[dim], acc[dim], tmp[dim];
        Status s = sys.rhs(t, x, k);
        if (s != Status::ok) return s;
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) {
            acc[j] = k[j];
            tmp[j] = x[j] + h2 * k[j];
        }
        if ((s = sys.rhs(t + h2, tmp, k)) != Status::ok) return s;
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) {
            acc[j] += T(2) * k[j];
            tmp[j] = x[j] + h2 * k[j];
        }
        if ((s = sys.rhs(t + h2, tmp, k)) != Status::ok) return s;
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) {
            acc[j] += T(2) * k[j];
            tmp[j] = x[j] + h * k[j];
        }
        if ((s = sys.rhs(t + h, tmp, k)) != Status::ok) return s;
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) x[j] += h6 * (acc[j] + k[j]);
        return this->land(sys, x, iv, i);
    }

    /** @brief End an interval: `y` takes the local state `x`; a completed interval is checked for NaN/∞ once. */
    NHVK_HD NHVK_FORCEINLINE Status finish(const T* x, Status s) {
        // NOTE: checked once per output interval, not per step: a NaN or ∞ state persists to here (and a solve at a
        // non-finite state reports non_finite at once), so the status and the failing output index are the same.
        Base::finish(x, s);
        if (s != Status::ok) return s;
        return detail::all_finite<dim>(this->y) ? Status::ok : Status::non_finite;
    }
};

/**
 * @brief Dormand–Prince 5(4) (Hairer, Nørsett & Wanner, DOPRI5) with FSAL, a PI-free standard controller
 *        (`h ← h · clamp(0.9 · err^(−1/5), 0.2, 10)`, no growth right after a rejection), Hairer's starting-step
 *        heuristic, and steps clipped to land exactly on each output time.
 */
template <class Sys, class T> class Dopri5 {
public:
    static constexpr Method method = Method::dopri5;
    static constexpr int order = 5;
    static constexpr int dim = Sys::dim;
    static constexpr int err_dim = detail::ErrDim<Sys>::value;
    static constexpr bool fixed_step = false;
    T t;
    T y[dim];
    long long steps = 0;    ///< attempted steps
    long long rejected = 0; ///< rejected steps

    NHVK_HD NHVK_FORCEINLINE Status init(const Sys& sys, T t0, const T* y0, const StepControl& c) {
        ctl_ = c;
        t = t0;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i) y[i] = y0[i];
        steps = rejected = 0;
        Status s = Status::ok;
        if (c.project && (s = sys.project(t, y)) != Status::ok) return s;
        T k1[dim];
        if ((s = sys.rhs(t, y, k1)) != Status::ok) return s;
        NHVK_UNROLL
        for (int i = 0; i < dim; ++i)
            if (!is_finite(k1[i])) return Status::non_finite;
        h_ = T(c.dt);
        if (!(c.dt > 0.0)) h_ = hairer_initial_step<order, err_dim>(sys, ctl_, t, y, k1);
        return is_finite(h_) ? Status::ok : Status::non_finite;
    }

    NHVK_HD NHVK_FORCEINLINE Status advance_to(const Sys& sys, T t_target) {
        // Butcher tableau of DOPRI5.
        const T c2 = T(1.0 / 5), c3 = T(3.0 / 10), c4 = T(4.0 / 5), c5 = T(8.0 / 9);
        const T a21 = T(1.0 / 5);
        const T a31 = T(3.0 / 40), a32 = T(9.0 / 40);
        const T a41 = T(44.0 / 45), a42 = T(-56.0 / 15), a43 = T(32.0 / 9);
        const T a51 = T(19372.0 / 6561), a52 = T(-25360.0 / 2187), a53 = T(64448.0 / 6561), a54 = T(-212.0 / 729);
        const T a61 = T(9017.0 / 3168), a62 = T(-355.0 / 33), a63 = T(46732.0 / 5247), a64 = T(49.0 / 176),
                a65 = T(-5103.0 / 18656);
        const T b1 = T(35.0 / 384), b3 = T(500.0 / 1113), b4 = T(125.0 / 192), b5 = T(-2187.0 / 6784),
                b6 = T(11.0 / 84);
        // error coefficients e_i = b_i − b*_i
        const T e1 = T(71.0 / 57600), e3 = T(-71.0 / 16695), e4 = T(71.0 / 1920), e5 = T(-17253.0 / 339200),
                e6 = T(22.0 / 525), e7 = T(-1.0 / 40);

        // NOTE: the first stage f(t, y) is evaluated on entry instead of being kept from the previous call (FSAL
        // across output times): it is the same value, since the last stage of an accepted step is evaluated at the
        // new (t, y), and not keeping it frees registers while the other dynamics is integrated (on the device).
        if (!(t < t_target)) return Status::ok;
        T k1[dim];
        Status s = sys.rhs(t, y, k1);
        if (s != Status::ok) return s;
        bool last_rejected = false;
        while (t < t_target) {
            if (steps >= ctl_.max_steps) return Status::step_limit;
            if (!(h_ >= T(ctl_.min_step))) return Status::step_underflow;
            T h = h_;
            bool clipped = false;
            // NOTE: land exactly on the output time; a remainder below 1e-10 h would leave a sliver step.
            if (t + h * T(1 + 1e-10) >= t_target) {
                h = t_target - t;
                clipped = true;
            }
            const T t_new = clipped ? t_target : t + h;
            // NOTE: zero-initialized only because g++ cannot always prove that a stage is read after its right-hand
            // side succeeded (-Wmaybe-uninitialized); every element is written before it is read.
            T k2[dim] = {}, k3[dim] = {}, k4[dim] = {}, k[dim] = {}, tmp[dim] = {};
            // Running prefixes of the sixth stage's input, the solution and the error (b2 = e2 = 0), each summed
            // left to right as the stages come (the same bits as the whole sums): once the fifth stage's input is
            // formed, k1 … k4 are dead (registers on the device).
            T s6[dim] = {}, sb[dim] = {}, se[dim] = {};
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) tmp[j] = y[j] + h * a21 * k1[j];
            if ((s = sys.rhs(t + c2 * h, tmp, k2)) != Status::ok) return s;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) tmp[j] = y[j] + h * (a31 * k1[j] + a32 * k2[j]);
            if ((s = sys.rhs(t + c3 * h, tmp, k3)) != Status::ok) return s;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) tmp[j] = y[j] + h * (a41 * k1[j] + a42 * k2[j] + a43 * k3[j]);
            if ((s = sys.rhs(t + c4 * h, tmp, k4)) != Status::ok) return s;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) {
                tmp[j] = y[j] + h * (a51 * k1[j] + a52 * k2[j] + a53 * k3[j] + a54 * k4[j]);
                s6[j] = a61 * k1[j] + a62 * k2[j] + a63 * k3[j] + a64 * k4[j];
                sb[j] = b1 * k1[j] + b3 * k3[j] + b4 * k4[j];
                se[j] = e1 * k1[j] + e3 * k3[j] + e4 * k4[j];
            }
            if ((s = sys.rhs(t + c5 * h, tmp, k)) != Status::ok) return s;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) {
                tmp[j] = y[j] + h * (s6[j] + a65 * k[j]);
                sb[j] += b5 * k[j];
                se[j] += e5 * k[j];
            }
            if ((s = sys.rhs(t + h, tmp, k)) != Status::ok) return s;
            NHVK_UNROLL
            for (int j = 0; j < dim; ++j) {
                tmp[j] = y[j] + h * (sb[j] + b6 * k[j]); // the 5th-order solution
                se[j] += e6 * k[j];
            }
            if ((s = sys.rhs(t_new, tmp, k)) != Status::ok) return s;
            ++steps;

            // err = ‖(y5 − y4) / (atol + rtol · max(|y|, |y5|))‖_RMS
            ErrorNorm<T> norm(ctl_);
            NHVK_UNROLL
            for (int j = 0; j < err_dim; ++j) norm.add(h * (se[j] + e7 * k[j]), y[j], tmp[j]);
            const T err = norm.value(err_dim);
            if (!is_finite(err)) return Status::non_finite;
            T fac = Controller::factor(err);
            if (err <= T(1)) {
                t = t_new;
                NHVK_UNROLL
                for (int j = 0; j < dim; ++j) {
                    y[j] = tmp[j];
                    k1[j] = k[j]; // FSAL: the last stage is f(t, y)
                }
                if (last_rejected && fac > T(1)) fac = T(1);
                // NOTE: a step clipped to an output time does not shrink the next one.
                const T h_new = h * fac;
                h_ = clipped ? (h_new > h_ ? h_new : h_) : h_new;
                last_rejected = false;
                if (ctl_.project) {
                    if ((s = sys.project(t, y)) != Status::ok) return s;
                    if ((s = sys.rhs(t, y, k1)) != Status::ok) return s;
                }
            } else {
                ++rejected;
                h_ = h * (fac < T(1) ? fac : T(1));
                last_rejected = true;
                // NOTE: f(t, y) again (the same value) rather than a copy of k1 kept live through the step: fewer
                // registers on the device.
                if ((s = sys.rhs(t, y, k1)) != Status::ok) return s;
            }
        }
        return Status::ok;
    }

private:
    using Controller = StepController<T, 4>; ///< the embedded 4th-order solution's estimate
    StepControl ctl_;
    T h_ = T(0);
};

template <> struct MethodStepper<Method::dopri5> { template <class Sys, class T> using tmpl = Dopri5<Sys, T>; };
template <> struct MethodStepper<Method::rk4> { template <class Sys, class T> using tmpl = Rk4<Sys, T>; };

} // namespace nhvk
