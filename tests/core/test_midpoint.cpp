// SPDX-License-Identifier: MIT
// The structure-preserving midpoint integrators (nhvk/methods/midpoint.hpp): order 2 on both dynamics (against the
// nonholonomic particle's closed form, and the vakonomic particle against a DOP853 run at rtol 1e-13), the
// constraint held to rounding at every step, symmetry (a step back with −h, or with the velocities reversed on a
// reversible model, returns to the start to rounding where RK4 does not), and the long-time energy behaviour: the
// energy error bounded over 10^4 characteristic times on two reversible integrable models (the knife edge on its
// incline and the nonholonomic particle in a harmonic well, a test problem of Modin & Verdier 2020) where DOPRI5's
// grows, and, on a model with no reversing symmetry (a gyroscopic term and a well without reflections), what happens.
#include "stepper_order.hpp"

#include <nhvk/dispatch.hpp>
#include <nhvk/models/knife_edge.hpp>
#include <nhvk/steppers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

using nhvk::Status;
using nhvk::StepControl;

/** The nonholonomic particle in a well: L = ½|v|² − ½(a x² + b y²) + g (x v_y − y v_x) − c (x³ + y³ + x y),
 *  φ = v_z − y v_x. With g = c = 0 and a = b = 1 it is Modin & Verdier's reversible integrable test problem (the
 *  motion is (x, y) in the well, z slaved to it); the gyroscopic term (odd in v) and the cubic (no reflection of x
 *  or y leaves it) remove every linear reversing symmetry. */
struct ParticleInWell : nhvk::ModelBase {
    static constexpr int n = 3, k = 1;
    double a = 1.0, b = 1.0, g = 0.0, c = 0.0;
    template <class S> S lagrangian(const S* q, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - S(0.5) * (S(a) * q[0] * q[0] + S(b) * q[1] * q[1]) +
               S(g) * (q[0] * v[1] - q[1] * v[0]) - S(c) * (q[0] * q[0] * q[0] + q[1] * q[1] * q[1] + q[0] * q[1]);
    }
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const { phi[0] = v[2] - q[1] * v[0]; }
};

template <class M> using Nh = nhvk::NonholonomicSystem<M, double>;
template <class M> using Vk = nhvk::VakonomicSystem<M, double>;

/** A stepper run step by step: `fn(state)` after each step. */
template <template <class, class> class Stepper, class Sys, class Fn>
Status run_steps(const Sys& sys, const double* y0, double h, long long steps, Fn&& fn, double t0 = 0.0) {
    StepControl ctl;
    ctl.dt = h;
    ctl.max_steps = 2 * steps + 10;
    Stepper<Sys, double> st;
    Status s = st.init(sys, t0, y0, ctl);
    if (s != Status::ok) return s;
    for (long long i = 1; i <= steps; ++i) {
        if ((s = st.advance_to(sys, t0 + double(i) * h)) != Status::ok) return s;
        fn(st.y);
    }
    return Status::ok;
}

/** Final state after `steps` fixed steps of `h`. */
template <template <class, class> class Stepper, class Sys>
std::vector<double> run_to(const Sys& sys, const double* y0, double h, long long steps, double t0 = 0.0) {
    std::vector<double> y(y0, y0 + Sys::dim);
    EXPECT_EQ(run_steps<Stepper>(
                  sys, y0, h, steps, [&](const double* x) { y.assign(x, x + Sys::dim); }, t0),
              Status::ok);
    return y;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b, int count) {
    double d = 0.0;
    for (int i = 0; i < count; ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}

/** The vakonomic particle from a state with μ ≠ 0, to t = 2: the error of `steps` midpoint steps against DOP853. */
double vk_particle_error(int steps) {
    using Sys = Vk<nhvk::models::NhParticle>;
    const Sys sys{};
    const double y0[7] = {0.2, -0.4, 0.1, 0.9, 0.7, -0.4 * 0.9, 0.3};
    const double t_end = 2.0;
    StepControl ctl;
    ctl.rtol = ctl.atol = 1e-13;
    ctl.dt = 0.0;
    nhvk::Dop853<Sys, double> ref;
    EXPECT_EQ(ref.init(sys, 0.0, y0, ctl), Status::ok);
    ref.land_last_on(t_end);
    EXPECT_EQ(ref.advance_to(sys, t_end), Status::ok);
    const std::vector<double> y = run_to<nhvk::Midpoint>(sys, y0, t_end / steps, steps);
    return max_abs_diff(y, std::vector<double>(ref.y, ref.y + 7), 7);
}

TEST(Midpoint, SecondOrderOnTheNonholonomicParticle) {
    const auto p =
        nhvk_test::observed_orders([](int n) { return nhvk_test::nh_particle_error<nhvk::Midpoint>(n); }, 20, 4);
    nhvk_test::expect_order(p, 2.0, 0.1);
}

TEST(Midpoint, SecondOrderOnTheVakonomicParticle) {
    const auto p = nhvk_test::observed_orders(vk_particle_error, 20, 4);
    nhvk_test::expect_order(p, 2.0, 0.1);
}

/** φ / |∂φ/∂v| at a state, in units of max(1, |v|∞)·ε. */
template <class M> double residual_in_ulps(const M& model, const double* y) {
    const auto cp = nhvk::constraint_parts(model, y, y + M::n, 0.0);
    double vmax = 1.0;
    for (int j = 0; j < M::n; ++j) vmax = std::max(vmax, std::abs(y[M::n + j]));
    return nhvk::scaled_constraint_residual<M::n, M::k>(cp.phi, cp.J) / (vmax * 2.220446049250313e-16);
}

TEST(Midpoint, TheConstraintHoldsToRoundingAtEveryStep) {
    nhvk::models::KnifeEdge knife;
    const double yk[6] = {0.0, 0.0, 0.3, 0.4 * std::cos(0.3), 0.4 * std::sin(0.3), 2.0};
    ParticleInWell well;
    const double yw[6] = {0.5, 0.2, 0.0, 0.3, -0.4, 0.2 * 0.3};
    double worst[4] = {0, 0, 0, 0};
    auto track = [&](auto model, double* w) {
        return [model, w](const double* y) { *w = std::max(*w, residual_in_ulps(model, y)); };
    };
    EXPECT_EQ(run_steps<nhvk::Midpoint>(Nh<nhvk::models::KnifeEdge>(knife), yk, 0.05, 2000, track(knife, &worst[0])),
              Status::ok);
    EXPECT_EQ(run_steps<nhvk::Midpoint>(Nh<ParticleInWell>(well), yw, 0.1, 2000, track(well, &worst[1])), Status::ok);
    const double ykv[7] = {yk[0], yk[1], yk[2], yk[3], yk[4], yk[5], 0.2};
    const double ywv[7] = {yw[0], yw[1], yw[2], yw[3], yw[4], yw[5], -0.1};
    // NOTE: the vakonomic knife edge spins up (φ̇ from 2 to 11 by t = 17 here): a tenth of the step
    EXPECT_EQ(run_steps<nhvk::Midpoint>(Vk<nhvk::models::KnifeEdge>(knife), ykv, 0.005, 2000, track(knife, &worst[2])),
              Status::ok);
    EXPECT_EQ(run_steps<nhvk::Midpoint>(Vk<ParticleInWell>(well), ywv, 0.1, 2000, track(well, &worst[3])), Status::ok);
    std::printf("    largest |φ|/|J| over 2000 steps, in ulps of max(1, |v|): knife NH %.1f, well NH %.1f, knife VK "
                "%.1f, well VK %.1f\n",
                worst[0], worst[1], worst[2], worst[3]);
    for (double w : worst) EXPECT_LE(w, 16.0);
}

/** `M` run backwards in time: `L_r(q, v) = L(q, −v)`, `φ_r(q, v) = φ(q, −v)` (autonomous, no force). Its step of
 *  `h` from `(q, −v[, μ])` is the step of `−h` of `M` from `(q, v[, μ])`, mirrored: how a stepper that only steps
 *  forward shows its adjoint. */
template <class M> struct TimeReversed : nhvk::ModelBase {
    static constexpr int n = M::n, k = M::k;
    M m;
    template <class S> S lagrangian(const S* q, const S* v, const S& t) const {
        S w[n];
        for (int j = 0; j < n; ++j) w[j] = -v[j];
        return m.lagrangian(q, w, t);
    }
    template <class S> void constraints(const S* q, const S* v, const S& t, S* phi) const {
        S w[n];
        for (int j = 0; j < n; ++j) w[j] = -v[j];
        m.constraints(q, w, t, phi);
    }
};

TEST(Midpoint, TheStepBackIsTheInverseStep) {
    // A symmetric method is its own adjoint: Φ_{−h}(Φ_h(y)) = y, on any model, reversible or not; here the well with
    // the gyroscopic term and the cubic, which has no reversing symmetry.
    ParticleInWell well;
    well.g = 0.3;
    well.c = 0.2;
    const TimeReversed<ParticleInWell> back_model{{}, well};
    const double y0[7] = {0.5, 0.2, 0.0, 0.3, -0.4, 0.2 * 0.3, 0.25};
    for (int vk = 0; vk < 2; ++vk) {
        const int dim = vk ? 7 : 6;
        std::vector<double> y1, y2;
        auto mirror = [](std::vector<double> y) {
            for (int j = 3; j < 6; ++j) y[j] = -y[j];
            return y;
        };
        if (vk) {
            y1 = run_to<nhvk::Midpoint>(Vk<ParticleInWell>(well), y0, 0.2, 1);
            y2 =
                mirror(run_to<nhvk::Midpoint>(Vk<TimeReversed<ParticleInWell>>(back_model), mirror(y1).data(), 0.2, 1));
        } else {
            y1 = run_to<nhvk::Midpoint>(Nh<ParticleInWell>(well), y0, 0.2, 1);
            y2 =
                mirror(run_to<nhvk::Midpoint>(Nh<TimeReversed<ParticleInWell>>(back_model), mirror(y1).data(), 0.2, 1));
        }
        const double moved = max_abs_diff(y1, std::vector<double>(y0, y0 + dim), dim);
        const double back = max_abs_diff(y2, std::vector<double>(y0, y0 + dim), dim);
        std::printf("    %s: one step moved %.3e, the step back missed by %.3e\n", vk ? "VK" : "NH", moved, back);
        EXPECT_GT(moved, 0.01);
        EXPECT_LE(back, 1e-14);
    }
}

TEST(Midpoint, ReversedVelocitiesRetraceTheMotionOnAReversibleModel) {
    // Nonholonomic knife edge (L even in v, φ odd): Φ_h ∘ ρ = ρ ∘ Φ_h⁻¹ with ρ(q, v) = (q, −v). 500 steps out, the
    // velocities reversed, 500 steps on: the start to rounding. RK4 at the same step is not symmetric: it misses by
    // its local errors, which the comparison shows this test can see.
    nhvk::models::KnifeEdge knife;
    const Nh<nhvk::models::KnifeEdge> sys(knife);
    const double y0[6] = {0.0, 0.0, 0.3, 0.4 * std::cos(0.3), 0.4 * std::sin(0.3), 2.0};
    auto miss = [&](auto stepper_tag) {
        using Tag = decltype(stepper_tag);
        std::vector<double> y = run_to<Tag::template tmpl>(sys, y0, 0.05, 500);
        for (int j = 3; j < 6; ++j) y[j] = -y[j];
        std::vector<double> z = run_to<Tag::template tmpl>(sys, y.data(), 0.05, 500, 25.0);
        for (int j = 3; j < 6; ++j) z[j] = -z[j];
        return max_abs_diff(z, std::vector<double>(y0, y0 + 6), 6);
    };
    const double mid = miss(nhvk::StepperTag<nhvk::Midpoint>{});
    const double rk4 = miss(nhvk::StepperTag<nhvk::Rk4>{});
    std::printf("    back at the start within: midpoint %.3e, rk4 %.3e\n", mid, rk4);
    EXPECT_LE(mid, 1e-11);
    EXPECT_GE(rk4, 1000 * mid);
}

/** Largest |E − E₀| over the first tenth of the run and over all of it (E of the plain L; for the vakonomic system
 *  E − μ·(J·v), its conserved energy). */
struct EnergyRecord {
    double first_tenth = 0.0, whole = 0.0, last = 0.0;
};

template <class Sys, class Fn> EnergyRecord energy_record(const Sys& sys, const double* y0, long long steps, Fn&& run) {
    using M = typename Sys::Model;
    constexpr bool vk = Sys::dynamics == nhvk::Dynamics::vakonomic;
    const M& model = sys.model();
    auto energy = [&](const double* y) {
        return nhvk::diagnose_with(sys.eq, y, y + M::n, 0.0, vk ? y + 2 * M::n : nullptr).vk_energy;
    };
    const double e0 = energy(y0);
    EnergyRecord r;
    long long i = 0;
    (void)model;
    run([&](const double* y) {
        const double de = std::abs(energy(y) - e0);
        if (++i <= steps / 10) r.first_tenth = std::max(r.first_tenth, de);
        r.whole = std::max(r.whole, de);
        r.last = de;
    });
    return r;
}

/** DOPRI5 over the same span at `rtol`, sampled at the same times. */
template <class Sys, class Fn>
Status dopri5_run(const Sys& sys, const double* y0, double h, long long steps, double rtol, long long& dopri_steps,
                  Fn&& fn) {
    StepControl ctl;
    ctl.rtol = rtol;
    ctl.atol = rtol * 1e-2;
    ctl.dt = 0.0;
    ctl.project = true; // as a long run would be set up: v back on φ = 0 after every step
    nhvk::Dopri5<Sys, double> st;
    Status s = st.init(sys, 0.0, y0, ctl);
    for (long long i = 1; i <= steps && s == Status::ok; ++i) {
        // NOTE: sampled every 10 steps of the midpoint run: DOPRI5 clips its steps to land on every output time.
        if (i % 10 != 0) continue;
        if ((s = st.advance_to(sys, double(i) * h)) == Status::ok)
            for (int r = 0; r < 10; ++r) fn(st.y);
    }
    dopri_steps = st.steps;
    return s;
}

template <class Sys>
void expect_bounded_energy(const char* name, const Sys& sys, const double* y0, double period, long long per_period,
                           bool with_dopri5) {
    const long long steps = 10000 * per_period; // 10^4 periods
    const double h = period / per_period;
    const EnergyRecord mid = energy_record(
        sys, y0, steps, [&](auto&& fn) { EXPECT_EQ(run_steps<nhvk::Midpoint>(sys, y0, h, steps, fn), Status::ok); });
    std::printf(
        "    %s, 10^4 periods: midpoint (%lld steps) |ΔE| max %.3e over the first tenth, %.3e over all, %.3e at "
        "the end\n",
        name, steps, mid.first_tenth, mid.whole, mid.last);
    // bounded: the whole run's largest error is about that of its first tenth (a drift would make it ~10 times that;
    // the vakonomic particle's error beats slowly, to 2 times its first tenth's). NOTE: the bound is a property of
    // small enough steps: at 20 steps a period the vakonomic particle's rose to 4.3 times its first tenth's.
    EXPECT_LE(mid.whole, 3.0 * mid.first_tenth);
    if (!with_dopri5) return;
    long long dopri_steps = 0;
    const EnergyRecord dp = energy_record(sys, y0, steps, [&](auto&& fn) {
        EXPECT_EQ(dopri5_run(sys, y0, h, steps, 1e-4, dopri_steps, fn), Status::ok);
    });
    std::printf("    DOPRI5 rtol 1e-4, projected (%lld steps): %.3e, %.3e, %.3e\n", dopri_steps, dp.first_tenth,
                dp.whole, dp.last);
    // DOPRI5 drifts: the same measure tells a drift from a bound
    EXPECT_GE(dp.whole, 5.0 * dp.first_tenth);
}

TEST(Midpoint, EnergyStaysBoundedOverTenThousandPeriodsOnTheKnifeEdge) {
    nhvk::models::KnifeEdge knife;
    const double omega = 2.0; // φ̇: x(t) oscillates with period π/ω
    const double y0[6] = {0.0, 0.0, 0.3, 0.4 * std::cos(0.3), 0.4 * std::sin(0.3), omega};
    expect_bounded_energy("knife edge NH", Nh<nhvk::models::KnifeEdge>(knife), y0, M_PI / omega, 20, true);
}

TEST(Midpoint, EnergyStaysBoundedOverTenThousandPeriodsOnTheParticleInAWell) {
    ParticleInWell well;
    const double y0[6] = {0.5, 0.2, 0.0, 0.3, -0.4, 0.2 * 0.3};
    expect_bounded_energy("particle in a well NH", Nh<ParticleInWell>(well), y0, 2 * M_PI, 40, false);
    const double yv[7] = {0.5, 0.2, 0.0, 0.3, -0.4, 0.2 * 0.3, 0.1};
    expect_bounded_energy("particle in a well VK", Vk<ParticleInWell>(well), yv, 2 * M_PI, 40, false);
}

TEST(Midpoint, WithoutAReversingSymmetryTheNonholonomicEnergyDriftsAndTheVakonomicDoesNot) {
    // What happens off the reversible problems (docs/numerics.md §2.7): the well with the gyroscopic term (odd in v)
    // and the cubic (no reflection leaves it) has no linear reversing symmetry. The nonholonomic midpoint, symmetric
    // but not reversible here and not variational, drifts (run on, the error reached 0.1 by 4·10^3 periods and carried
    // the particle over the well's rim); the vakonomic one, variational, stays bounded. 10^3 periods here.
    ParticleInWell well;
    well.g = 0.3;
    well.c = 0.2;
    const long long per_period = 40, steps = 1000 * per_period;
    const double h = 2 * M_PI / per_period;
    const double y0[7] = {0.5, 0.2, 0.0, 0.3, -0.4, 0.2 * 0.3, 0.1};
    const Nh<ParticleInWell> nh(well);
    const Vk<ParticleInWell> vk(well);
    const EnergyRecord a = energy_record(
        nh, y0, steps, [&](auto&& fn) { EXPECT_EQ(run_steps<nhvk::Midpoint>(nh, y0, h, steps, fn), Status::ok); });
    const EnergyRecord b = energy_record(
        vk, y0, steps, [&](auto&& fn) { EXPECT_EQ(run_steps<nhvk::Midpoint>(vk, y0, h, steps, fn), Status::ok); });
    std::printf("    10^3 periods, |ΔE| max over the first tenth and over all: NH %.3e, %.3e; VK %.3e, %.3e\n",
                a.first_tenth, a.whole, b.first_tenth, b.whole);
    EXPECT_GE(a.whole, 5.0 * a.first_tenth);
    EXPECT_LE(b.whole, 3.0 * b.first_tenth);
}

} // namespace
