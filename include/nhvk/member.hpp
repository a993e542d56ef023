// SPDX-License-Identifier: MIT
/** @file
 *  @brief One ensemble member: integrate the nonholonomic and the vakonomic dynamics from the same `(q0, v0)` (and
 *         `μ0`) to each output time in turn, and hand both states to an observer. This is the per-trajectory code
 *         that the CPU backend, the CUDA kernel and `nhvk trajectory` all run.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/metrics.hpp"
#include "nhvk/stats/onset.hpp"
#include "nhvk/status.hpp"
#include "nhvk/steppers.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

namespace nhvk {

/** @brief How one member ended: the status, which dynamics failed, and before which output time. */
struct MemberOutcome {
    Status status = Status::ok;
    Dynamics failed = Dynamics::none;
    int time_index = -1; ///< index of the output time that could not be reached (-1: failed at t0)
};

/** @brief The per-member series stored after the `metric_count · nt` per-time ones: the onset time, interpolated
 *         between the output times that bracket the threshold crossing (NaN: d_q never crossed it). */
enum MemberSeries : int { member_onset_time = 0, member_series_count = 1 };

/** @brief Rows of one chunk's metrics array: the per-time metrics, then the per-member series. */
NHVK_HD constexpr long long metric_rows(int nt) {
    return static_cast<long long>(metric_count) * nt + member_series_count;
}
/** @brief Rows that replica groups repeat (statistics.replicas): the divergences d_q and d_v at every output time, the
 *         first rows of the metrics array. */
NHVK_HD constexpr std::size_t replicated_rows(int nt) { return 2u * static_cast<std::size_t>(nt); }
static_assert(metric_dq == 0 && metric_dv == 1, "replica groups repeat the first 2·nt rows: d_q and d_v");
/** @brief The row of per-member series `s` in a chunk's metrics array (after the `metric_count · nt` per-time rows). */
NHVK_HD constexpr long long member_series_row(int nt, MemberSeries s) {
    return static_cast<long long>(metric_count) * nt + s;
}

/** @brief Most coordinates a divergence metric weighs (the masks are 32-bit). */
constexpr int max_divergence_coords = 32;

/**
 * @brief How d_q and d_v measure the difference of the two states: each coordinate's difference (angles wrapped)
 *        times its weight (0: not in the metric), summed in squares (`kinetic == false`) or in the kinetic metric
 *        `W(q_NH)` of the plain Lagrangian (`Δᵀ W Δ`, so d_v² / 2 is the kinetic energy of the velocity difference).
 */
struct DivergenceSpec {
    double weight[max_divergence_coords];
    unsigned angle_mask = 0u; ///< bit j set: coordinate j is an angle (its difference is wrapped)
    bool kinetic = false;
    NHVK_HD DivergenceSpec() {
        for (int j = 0; j < max_divergence_coords; ++j) weight[j] = 1.0;
    }
};

/** @brief Wrap an angle difference to (−π, π]. */
template <class T> NHVK_HD T wrap_angle(T d) {
    const T two_pi = T(6.283185307179586476925286766559);
    const T pi = T(3.141592653589793238462643383279);
    d = d - two_pi * T(::floor(double(d) / double(two_pi)));
    // now d ∈ [0, 2π)
    return d > pi ? d - two_pi : d;
}

/** @brief Whether state `y` breaks the model's source constraints (`check_model_state`). Only models with
 *         `has_source_constraints` evaluate anything. */
template <class M, class T> NHVK_HD NHVK_FORCEINLINE bool breaks_source(const M& model, const T* y, T t) {
    if constexpr (M::has_source_constraints) return model.source_residual(y, y + M::n, t) > source_tolerance<T>();
    return false;
}
/** @brief Which dynamics' state breaks the model's source constraints (`none`: both hold). */
template <class M, class T>
NHVK_HD NHVK_FORCEINLINE Dynamics source_breach(const M& model, const T* y_nh, const T* y_vk, T t) {
    if (breaks_source(model, y_nh, t)) return Dynamics::nonholonomic;
    if (breaks_source(model, y_vk, t)) return Dynamics::vakonomic;
    return Dynamics::none;
}

/** @brief Whether an observer asks to stop the member (a `stop` member that is true: `DivergenceObserver` past
 *         `divergence.stop_at`); observers without one never do. */
template <class O, class = void> struct ObserverStops {
    NHVK_HD static constexpr bool get(const O&) { return false; }
};
template <class O> struct ObserverStops<O, std::void_t<decltype(std::declval<const O&>().stop)>> {
    NHVK_HD static bool get(const O& o) { return o.stop; }
};

/** @brief Whether an observer counts the steps (`tally(nh_steps, nh_rejected, vk_steps, vk_rejected)`, called before
 *         each output time's call with the totals so far: `nhvk trajectory --steps`); the ensemble's observers do not,
 *         and cost nothing for it. */
template <class O, class = void> struct ObserverTallies : std::false_type {};
template <class O>
struct ObserverTallies<O, std::void_t<decltype(std::declval<O&>().tally(0LL, 0LL, 0LL, 0LL))>> : std::true_type {};

/** @brief A stepper's rejected steps (0 for a fixed-step one, which rejects none). */
template <class S, class = void> struct RejectedSteps {
    NHVK_HD static long long of(const S&) { return 0; }
};
template <class S> struct RejectedSteps<S, std::void_t<decltype(std::declval<const S&>().rejected)>> {
    NHVK_HD static long long of(const S& s) { return s.rejected; }
};
template <class O, class A, class B> NHVK_HD NHVK_FORCEINLINE void tally_steps(O& obs, const A& a, const B& b) {
    if constexpr (ObserverTallies<O>::value)
        obs.tally(a.steps, RejectedSteps<A>::of(a), b.steps, RejectedSteps<B>::of(b));
}

/** @brief A system's state at t0: `y = (q0, v0, rest)`, `rest` filling components `2n … dim − 1` (the vakonomic
 *         multipliers μ0), or zeros where it is nullptr (the nonholonomic energy-balance integrals start at 0, as the
 *         multipliers do without μ0). */
template <int n, int dim, class T>
NHVK_HD NHVK_FORCEINLINE void start_state(T* y, const T* q0, const T* v0, const T* rest = nullptr) {
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        y[j] = q0[j];
        y[n + j] = v0[j];
    }
    NHVK_UNROLL
    for (int j = 2 * n; j < dim; ++j) y[j] = rest ? rest[j - 2 * n] : T(0);
}

/**
 * @brief Integrate both dynamics of one member to `times[0..nt)` and call `obs(i, t_i, y_nh, y_vk)` at each.
 *
 * `times` is strictly increasing and > t0 (double also for float runs). `Stepper` is a stepper template (`Rk4`,
 * `Dopri5`, `Tsit5`, `Dop853`, `Rodas5p`); `Equations` the derivation of the right-hand sides (`AdEquations`, the
 * dual-number reference, or `GenEquations`, the generated code). The observer is called with `i = -1` at `t0` first
 * (after the optional projection). The two dynamics are advanced independently, each with its own adaptive steps. An
 * observer that asks to stop at an output time before the last (ObserverStops) ends the member there with
 * `Status::diverged` and `time_index` the number of output times it reached.
 */
template <template <class, class> class Stepper, template <class, class> class Equations = AdEquations, class M,
          class T, class Observer>
NHVK_HD NHVK_FORCEINLINE MemberOutcome integrate_member(const M& model, const T* q0, const T* v0, const T* mu0, T t0,
                                                        const double* times, int nt, const StepControl& ctl,
                                                        Observer& obs) {
    constexpr int n = M::n;
    using NH = BalancedNonholonomicSystem<M, T, Equations<M, T>>;
    using VK = VakonomicSystem<M, T, Equations<M, T>>;
    const NH nh{model};
    const VK vk{model};
    T y_nh[NH::dim], y_vk[VK::dim];
    start_state<n, NH::dim>(y_nh, q0, v0);
    start_state<n, VK::dim>(y_vk, q0, v0, mu0);

    MemberOutcome out;
    Stepper<NH, T> a;
    Stepper<VK, T> b;
    // NOTE: the failure tails below stay spelled out. Folded into one MemberOutcome helper (same logic), together
    // with trig.hpp's sin_cw/cos_cw folded into one quadrant switch, they cost every double kernel 2 registers and
    // rolling_disc's double DOPRI5 ensemble kernel (254 of 255 registers) a 48-byte stack frame (nvcc 13, sm_90).
    Status s = a.init(nh, t0, y_nh, ctl);
    if (s != Status::ok) {
        out.status = s;
        out.failed = Dynamics::nonholonomic;
        return out;
    }
    s = b.init(vk, t0, y_vk, ctl);
    if (s != Status::ok) {
        out.status = s;
        out.failed = Dynamics::vakonomic;
        return out;
    }
    if ((out.failed = source_breach(model, a.y, b.y, t0)) != Dynamics::none) {
        out.status = Status::chart_singular;
        return out;
    }
    if constexpr (dense_stepper<Stepper<NH, T>>) {
        // NOTE: a step past the last output time would evaluate the dynamics where the run does not ask for them
        // (and could fail there); interpolating steppers end their last step on it.
        if (nt > 0) {
            a.land_last_on(T(times[nt - 1]));
            b.land_last_on(T(times[nt - 1]));
        }
    }
    obs(-1, t0, a.y, b.y);
    for (int i = 0; i < nt; ++i) {
        const T ti = T(times[i]); // NOTE: the grid is double; a float run lands on its float rounding
#if !defined(__CUDA_ARCH__)
        if constexpr (Stepper<NH, T>::fixed_step) {
            // NOTE: on the CPU the two fixed-step integrations advance in lockstep, one step of each per iteration:
            // two independent dependency chains (each step waits on its divisions) that the core overlaps, about a
            // third faster than one after the other. Each system's arithmetic is the same as in advance_to, so the
            // results are bit-identical to it (and to the device, which integrates one motion after the other for
            // its registers: integrate_member_in_two_passes); so are the outcomes: a failure of the nonholonomic motion
            // in an interval is reported whatever the vakonomic one did there, as when it is integrated first.
            typename Stepper<NH, T>::Interval ia;
            typename Stepper<VK, T>::Interval ib;
            Status sa = a.plan(ti, ia), sb = b.plan(ti, ib);
            if (sa != Status::ok) ia.m = 0;
            if (sb != Status::ok) ib.m = 0;
            T xa[NH::dim], xb[VK::dim];
            NHVK_UNROLL
            for (int j = 0; j < NH::dim; ++j) xa[j] = a.y[j];
            NHVK_UNROLL
            for (int j = 0; j < VK::dim; ++j) xb[j] = b.y[j];
            const long long n_steps = ia.m > ib.m ? ia.m : ib.m;
            long long done_a = 0, done_b = 0; // the steps each completed
            for (long long st = 0; st < n_steps; ++st) {
                if (st < ia.m && sa == Status::ok && (sa = a.step(nh, xa, ia, st)) == Status::ok) done_a = st + 1;
                if (st < ib.m && sb == Status::ok && (sb = b.step(vk, xb, ib, st)) == Status::ok) done_b = st + 1;
                if (sa != Status::ok) break;
            }
            a.settle(ia, done_a);
            b.settle(ib, done_b);
            if ((s = a.finish(xa, sa)) != Status::ok) {
                out.status = s;
                out.failed = Dynamics::nonholonomic;
                out.time_index = i;
                return out;
            }
            // NOTE: the vakonomic interval may be unfinished only if the nonholonomic one failed (returned above).
            if ((s = b.finish(xb, sb)) != Status::ok) {
                out.status = s;
                out.failed = Dynamics::vakonomic;
                out.time_index = i;
                return out;
            }
            if ((out.failed = source_breach(model, a.y, b.y, ti)) != Dynamics::none) {
                out.status = Status::chart_singular;
                out.time_index = i;
                return out;
            }
            tally_steps(obs, a, b);
            obs(i, ti, a.y, b.y);
            if (i + 1 < nt && ObserverStops<Observer>::get(obs)) {
                out.status = Status::diverged;
                out.time_index = i + 1;
                return out;
            }
            continue;
        }
#endif
        s = a.advance_to(nh, ti);
        if (s != Status::ok) {
            out.status = s;
            out.failed = Dynamics::nonholonomic;
            out.time_index = i;
            return out;
        }
        s = b.advance_to(vk, ti);
        if (s != Status::ok) {
            out.status = s;
            out.failed = Dynamics::vakonomic;
            out.time_index = i;
            return out;
        }
        if ((out.failed = source_breach(model, a.y, b.y, ti)) != Dynamics::none) {
            out.status = Status::chart_singular;
            out.time_index = i;
            return out;
        }
        tally_steps(obs, a, b);
        obs(i, ti, a.y, b.y);
        if (i + 1 < nt && ObserverStops<Observer>::get(obs)) {
            out.status = Status::diverged;
            out.time_index = i + 1;
            return out;
        }
    }
    return out;
}

/** @brief Whether the device integrates a member of method `m` in two passes (`integrate_member_in_two_passes`): the
 *         explicit methods. An implicit method's step keeps its Newton or Jacobian work in local memory whatever else
 *         the thread holds, so the idle motion's registers are not what it lacks, and its kernels spill more in two
 *         passes than at once (bench/results/2026-11-29-two-pass-resources.md). */
NHVK_HD constexpr bool two_passes_on_device(Method m) { return !method_info(m).implicit; }

/** @brief Where `integrate_member_in_two_passes` keeps the nonholonomic state `(q, v)` at each output time for the
 *         vakonomic pass: component `c` at output time `i` at `p[(c * nt + i) * ld]` (the caller offsets `p` by the
 *         member's column, as for the metrics). Double also in a float run: the round trip is exact. */
struct StateStash {
    double* p;
    long long ld;
    int nt;
    NHVK_HD double& at(int c, int i) const { return p[(static_cast<long long>(c) * nt + i) * ld]; }
};

/** @brief Values of `StateStash` per member: `2n` components at each of `nt` output times. */
NHVK_HD constexpr long long stash_values(int n, int nt) { return 2LL * n * nt; }

/**
 * @brief `integrate_member` in two passes, for the device: the nonholonomic motion through every output time first,
 *        its `(q, v)` stashed at each (`StateStash`), then the vakonomic one, whose observer reads them back. The
 *        observer is split accordingly (`nh_part(i, t, y_nh)`, then `vk_part(i, t, y_vk, y_nh)`, as
 *        `DivergenceObserver`). The outcome, the observer's calls at every output time the member reaches, and
 *        every value they see equal `integrate_member`'s, bit for bit; past the output time where the member ends,
 *        the nonholonomic pass may have written metrics that no output time reached reads.
 *
 * NOTE: a thread that integrates both motions at once keeps the idle one's state and step control in registers while
 * the other steps, and the larger models' right-hand sides then spill; one motion at a time, each pass holds one
 * (bench/results/2026-11-29-two-pass-resources.md). The precedence of the failures is `integrate_member`'s: at an
 * output time, a failed nonholonomic step, then a failed vakonomic one, then the nonholonomic state off the source
 * constraints, then the vakonomic one.
 */
template <template <class, class> class Stepper, template <class, class> class Equations = AdEquations, class M,
          class T, class Observer>
NHVK_HD NHVK_FORCEINLINE MemberOutcome integrate_member_in_two_passes(const M& model, const T* q0, const T* v0,
                                                                      const T* mu0, T t0, const double* times, int nt,
                                                                      const StepControl& ctl, Observer& obs,
                                                                      StateStash stash) {
    static_assert(!ObserverTallies<Observer>::value, "a tally needs both step counts at each output time");
    constexpr int n = M::n;
    using NH = BalancedNonholonomicSystem<M, T, Equations<M, T>>;
    using VK = VakonomicSystem<M, T, Equations<M, T>>;
    MemberOutcome out;
    // The output index where the nonholonomic motion ended (nt: it reached every one; -1: at t0), and how: a failed
    // step (nh_status) or a state off the source constraints (nh_off), which ranks below a failed vakonomic step.
    int nh_end = nt;
    Status nh_status = Status::ok;
    bool nh_off = false;
    {
        const NH nh{model};
        T y[NH::dim];
        start_state<n, NH::dim>(y, q0, v0);
        Stepper<NH, T> a;
        const Status s = a.init(nh, t0, y, ctl);
        if (s != Status::ok) {
            out.status = s;
            out.failed = Dynamics::nonholonomic;
            return out;
        }
        if (breaks_source(model, a.y, t0)) {
            nh_end = -1;
            nh_off = true;
        } else {
            obs.nh_part(-1, t0, a.y);
            if constexpr (dense_stepper<Stepper<NH, T>>) {
                if (nt > 0) a.land_last_on(T(times[nt - 1]));
            }
            for (int i = 0; i < nt; ++i) {
                const T ti = T(times[i]);
                if ((nh_status = a.advance_to(nh, ti)) != Status::ok || (nh_off = breaks_source(model, a.y, ti))) {
                    nh_end = i;
                    break;
                }
                obs.nh_part(i, ti, a.y);
                NHVK_UNROLL
                for (int c = 0; c < 2 * n; ++c) stash.at(c, i) = double(a.y[c]);
            }
        }
    }
    const VK vk{model};
    T y[VK::dim];
    start_state<n, VK::dim>(y, q0, v0, mu0);
    Stepper<VK, T> b;
    // How the member ends: the status, the dynamics that failed, and the output index (-1: t0, as the loop's start).
    Status s = b.init(vk, t0, y, ctl);
    Dynamics failed = Dynamics::none;
    int i = -1;
    if (s != Status::ok) failed = Dynamics::vakonomic;
    else if (nh_off && nh_end < 0) s = Status::chart_singular, failed = Dynamics::nonholonomic;
    else if (breaks_source(model, b.y, t0)) s = Status::chart_singular, failed = Dynamics::vakonomic;
    else {
        obs.vk_part(-1, t0, b.y, static_cast<const T*>(nullptr));
        if constexpr (dense_stepper<Stepper<VK, T>>) {
            if (nt > 0) b.land_last_on(T(times[nt - 1]));
        }
        for (i = 0; i < nt; ++i) {
            if (i == nh_end && !nh_off) {
                s = nh_status, failed = Dynamics::nonholonomic;
                break;
            }
            const T ti = T(times[i]);
            if ((s = b.advance_to(vk, ti)) != Status::ok) {
                failed = Dynamics::vakonomic;
                break;
            }
            if (i == nh_end || breaks_source(model, b.y, ti)) {
                s = Status::chart_singular, failed = i == nh_end ? Dynamics::nonholonomic : Dynamics::vakonomic;
                break;
            }
            T y_nh[2 * n];
            NHVK_UNROLL
            for (int c = 0; c < 2 * n; ++c) y_nh[c] = T(stash.at(c, i));
            obs.vk_part(i, ti, b.y, static_cast<const T*>(y_nh));
            if (i + 1 < nt && ObserverStops<Observer>::get(obs)) {
                s = Status::diverged, ++i;
                break;
            }
        }
    }
    if (s != Status::ok) {
        out.status = s;
        out.failed = failed;
        out.time_index = i;
    }
    return out;
}

/** @brief A `DivergenceSpec` cut to a model's `N` coordinates (what one member keeps: `N` weights, not 32). */
template <int N> struct DivergenceMetric {
    double weight[N];
    unsigned angle_mask;
    bool kinetic;
    NHVK_HD NHVK_FORCEINLINE DivergenceMetric(const DivergenceSpec& s) : angle_mask(s.angle_mask), kinetic(s.kinetic) {
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) weight[j] = s.weight[j];
    }
};

/** @brief The largest `|x_j|` of `x[0..N)` (0 for none; a NaN is skipped here and shows in the scaled sums). */
template <int N> NHVK_HD NHVK_FORCEINLINE double largest_magnitude(const double* x) {
    double s = 0.0;
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) s = fabs(x[j]) > s ? fabs(x[j]) : s;
    return s;
}

/**
 * @brief `sqrt(xᵀ x)` (`W == nullptr`) or `sqrt(xᵀ W x)` for a positive semi-definite `W`, without overflow or
 *        underflow of the squares: `x` is divided by its largest `|x_j|` and `W` by its largest `|W_ij|` first
 *        (hypot-style), so the result is finite whenever it is representable.
 */
template <int N, class T> NHVK_HD NHVK_FORCEINLINE double scaled_norm(const double* x, const T (*W)[N]) {
    const double s = largest_magnitude<N>(x);
    if (!(s > 0.0) || !(s <= 1.7976931348623157e308)) return s == 0.0 ? 0.0 : s; // 0, inf (NaN skipped below)
    double xs[N];
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) xs[j] = x[j] / s;
    double sum = 0.0, w = 1.0;
    if (!W) {
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) sum += xs[j] * xs[j];
    } else {
        w = 0.0;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) NHVK_UNROLL
        for (int j = 0; j < N; ++j) w = fabs(double(W[i][j])) > w ? fabs(double(W[i][j])) : w;
        if (!(w > 0.0)) return 0.0;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) NHVK_UNROLL
        for (int j = 0; j < N; ++j) sum += xs[i] * (double(W[i][j]) / w) * xs[j];
        // NOTE: W is positive semi-definite; a rounding-level negative sum of a tiny difference is 0.
        sum = sum > 0.0 ? sum : 0.0;
    }
    return s * sqrt(w) * sqrt(sum);
}

/**
 * @brief `d_q` and `d_v` of two states `(q, v)` in the metric `d` (`DivergenceSpec` or `DivergenceMetric`); `eq`
 *        gives `W` for the kinetic metric. Scaled norms (`scaled_norm`): no d_q or d_v overflows while it is
 *        representable, however large the coordinates, weights or masses.
 */
template <class Eq, class T, class Metric>
NHVK_HD NHVK_FORCEINLINE void divergence_between(const Eq& eq, const Metric& d, const T* y_nh, const T* y_vk, T t,
                                                 double& dq, double& dv) {
    constexpr int n = Eq::n;
    double eq_[n], ev[n];
    NHVK_UNROLL
    for (int j = 0; j < n; ++j) {
        T e = y_nh[j] - y_vk[j];
        if ((d.angle_mask >> j) & 1u) e = wrap_angle(e);
        eq_[j] = d.weight[j] * double(e);
        ev[j] = d.weight[j] * double(y_nh[n + j] - y_vk[n + j]);
    }
    if (!d.kinetic) {
        dq = scaled_norm<n, T>(eq_, nullptr);
        dv = scaled_norm<n, T>(ev, nullptr);
    } else {
        T W[n][n];
        eq.kinetic_metric(y_nh, y_nh + n, t, W);
        dq = scaled_norm<n, T>(eq_, W);
        dv = scaled_norm<n, T>(ev, W);
    }
}

/**
 * @brief The energy scale of a state, for relative energy measures: `s = max(|E|, T)` with `T = ½ vᵀ W v` the kinetic
 *        energy of the plain Lagrangian's quadratic part, or 1 where both are 0 (a member at rest with E = 0).
 */
template <class Eq, class T> NHVK_HD T energy_scale(const Eq& eq, const T* q, const T* v, T t, T energy) {
    constexpr int n = Eq::n;
    T W[n][n];
    eq.kinetic_metric(q, v, t, W);
    T kin = T(0);
    NHVK_UNROLL
    for (int i = 0; i < n; ++i) NHVK_UNROLL
    for (int j = 0; j < n; ++j) kin += v[i] * W[i][j] * v[j];
    kin = T(0.5) * kin;
    const T e = abs(energy);
    const T s = e > kin ? e : kin;
    return s > T(0) ? s : T(1);
}

/**
 * @brief The onset time where d rises through `thr` between output times `(t_a, d_a)` and `(t_b, d_b)`, `d_a <= thr
 *        < d_b`: linear in `log d` against `log(t − t0)` (a divergence growing like a power of `t − t0` is matched
 *        exactly), linear in `d` against `t` where `d_a = 0` or `t_a = t0`.
 */
NHVK_HD inline double interpolate_onset(double t0, double ta, double da, double tb, double db, double thr) {
    if (da > 0.0 && ta > t0) {
        const double la = log(da), lb = log(db);
        if (lb > la) {
            const double f = (log(thr) - la) / (lb - la);
            return t0 + exp(log(ta - t0) + f * (log(tb - t0) - log(ta - t0)));
        }
    }
    return ta + (thr - da) / (db - da) * (tb - ta);
}

/**
 * @brief The interpolated onset time of a member (NaN for `onset_never`) from the d_q that its observer wrote
 *        (`metrics`, `stride`, `nt` as for `DivergenceObserver`): between output time `onset_index` and the one
 *        before it (or t0 with d_q = 0), each time as a run in `T` lands on it.
 */
template <class T>
NHVK_HD double onset_time_of(const double* metrics, long long stride, int nt, const double* times, double t0,
                             std::int32_t onset_index, double threshold) {
    if (onset_index == stats::onset_never) return NumericLimits<double>::quiet_NaN();
    const int i = onset_index;
    const double ts = double(T(t0));
    const double ta = i > 0 ? double(T(times[i - 1])) : ts, tb = double(T(times[i]));
    const double da = i > 0 ? metrics[(metric_dq * nt + i - 1) * stride] : 0.0;
    return interpolate_onset(ts, ta, da, tb, metrics[(metric_dq * nt + i) * stride], threshold);
}

/**
 * @brief The ensemble observer: at each output time computes the `Metric`s from both states without storing the
 *        trajectory, writing `metrics[(m * nt + i) * stride]` (structure of arrays: the caller offsets `metrics` by
 *        the member's column and passes the chunk size as `stride`), and keeps the index of the output time where
 *        d_q first exceeds the threshold (`onset_time_of` interpolates the onset time after the integration, from
 *        what was written: nothing for it is carried through the integration, registers on the device). The
 *        nonholonomic state carries the two energy-balance integrals after `(q, v)` (`BalancedNonholonomicSystem`).
 */
template <class M, class T, class Eq = AdEquations<M, T>> struct DivergenceObserver {
    Eq eq;
    DivergenceMetric<M::n> div;
    int nt;
    double* metrics;
    long long stride;
    double onset_threshold;
    double stop_at = NumericLimits<double>::infinity(); ///< divergence.stop_at (inf: never)
    std::int32_t onset_index = stats::onset_never;      ///< first output index with d_q > threshold
    bool stop = false;                                  ///< d_q passed stop_at at the last output time seen
    T e0_nh = T(0), e0_vk = T(0), scale = T(1);

    /** @brief Both states at output time `i` (`-1`: t0, which sets the reference energies and the energy scale). */
    NHVK_HD NHVK_FORCEINLINE void operator()(int i, T t, const T* y_nh, const T* y_vk) {
        nh_part(i, t, y_nh);
        vk_part(i, t, y_vk, y_nh);
    }

    /** @brief What the nonholonomic state alone gives: at t0 its energy and the energy scale, at output time `i` its
     *         residual, energy drift and energy balance. */
    NHVK_HD NHVK_FORCEINLINE void nh_part(int i, T t, const T* y_nh) {
        constexpr int n = M::n;
        const StateDiagnostics<T> dn = diagnose_with(eq, y_nh, y_nh + n, t);
        if (i < 0) {
            e0_nh = dn.energy;
            scale = energy_scale(eq, y_nh, y_nh + n, t, dn.energy);
            return;
        }
        const T de_nh = dn.energy - e0_nh;
        const T work = y_nh[2 * n];
        T applied = T(0);
        if constexpr (2 * n + 1 < BalancedNonholonomicSystem<M, T, Eq>::dim) applied = y_nh[2 * n + 1];
        metrics[(metric_res_nh * nt + i) * stride] = double(dn.residual);
        metrics[(metric_energy_nh * nt + i) * stride] = abs(double(de_nh));
        metrics[(metric_energy_rel_nh * nt + i) * stride] = abs(double(de_nh / scale));
        metrics[(metric_balance_nh * nt + i) * stride] = abs(double((de_nh - work - applied) / scale));
        metrics[(metric_work_nh * nt + i) * stride] = double(work);
    }

    /** @brief The rest, after `nh_part` at the same time: the vakonomic state's energy at t0; at output time `i` the
     *         divergences from the nonholonomic `(q, v)` in `y_nh`, the vakonomic residual and energy drift, the
     *         onset and the stop. */
    NHVK_HD NHVK_FORCEINLINE void vk_part(int i, T t, const T* y_vk, const T* y_nh) {
        constexpr int n = M::n;
        const StateDiagnostics<T> dk = diagnose_with(eq, y_vk, y_vk + n, t, y_vk + 2 * n);
        if (i < 0) {
            e0_vk = dk.vk_energy;
            return;
        }
        double dq = 0.0, dv = 0.0;
        divergence_between(eq, div, y_nh, y_vk, t, dq, dv);
        const T de_vk = dk.vk_energy - e0_vk;
        metrics[(metric_dq * nt + i) * stride] = dq;
        metrics[(metric_dv * nt + i) * stride] = dv;
        metrics[(metric_res_vk * nt + i) * stride] = double(dk.residual);
        metrics[(metric_energy_vk * nt + i) * stride] = abs(double(de_vk));
        metrics[(metric_energy_rel_vk * nt + i) * stride] = abs(double(de_vk / scale));
        if (onset_index == stats::onset_never && dq > onset_threshold) onset_index = i;
        stop = dq > stop_at;
    }
};

/**
 * @brief Observer that records both full states at t0 and each output time: row `i + 1` of `out` holds
 *        `(q_NH, v_NH, q_VK, v_VK, μ)`, `row_size() = 4n + k` values (used by `nhvk trajectory` and
 *        `--save-trajectories`).
 */
template <class M, class T> struct StateRecorder {
    T* out;
    static constexpr int row_size() { return 4 * M::n + M::k; }
    NHVK_HD void operator()(int i, T, const T* y_nh, const T* y_vk) {
        T* row = out + (i + 1) * row_size();
        for (int j = 0; j < 2 * M::n; ++j) row[j] = y_nh[j];
        for (int j = 0; j < 2 * M::n + M::k; ++j) row[2 * M::n + j] = y_vk[j];
    }
};

} // namespace nhvk
