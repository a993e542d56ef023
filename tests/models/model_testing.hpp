// SPDX-License-Identifier: MIT
/** @file
 *  @brief Helpers shared by the model tests: integrate one member (both dynamics) and record every output state,
 *         divergence and log-log growth slopes, constraint residuals and energies along a recorded run.
 */
#pragma once

#include "dopri5_control.hpp"
#include "loglog_slope.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "nhvk/dynamics.hpp"
#include "nhvk/member.hpp"
#include "nhvk/steppers.hpp"

namespace nhvk::testing {

/** @brief Print a measured number (so a run's log documents the margins) and record it in the XML report. */
inline void measured(const std::string& what, double value) {
    std::printf("    [measured] %s = %.4g\n", what.c_str(), value);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", value);
    ::testing::Test::RecordProperty(what, buf);
}

/**
 * @brief The guard of every motion test against a vacuous pass: how far its motions went (Recorded::least_motion,
 *        least over the runs) exceeds 1e-2; recorded as min_motion. `trivially`: what would hold for motions at rest.
 */
inline void expect_moves(double least_motion, const std::string& trivially = "its checks would hold trivially") {
    EXPECT_GT(least_motion, 1e-2) << "a motion barely moves: " << trivially;
}

/** @brief Step control for the physics tests: tight tolerances, no projection (so drift is seen, not hidden). */
inline StepControl tight(double rtol = 1e-12, double atol = 1e-14) {
    StepControl c = nhvk_test::dopri5_control(rtol, atol);
    c.min_step = 1e-16;
    c.max_steps = 2000000;
    c.project = false;
    return c;
}

/** @brief Output times: `count` points spaced geometrically from `t_first` to `t_last` (both included). */
inline std::vector<double> log_times(double t_first, double t_last, int count) {
    std::vector<double> t(count);
    for (int i = 0; i < count; ++i) t[i] = t_first * std::pow(t_last / t_first, double(i) / (count - 1));
    return t;
}
/** @brief Output times t_end·i/count, i = 1…count. */
inline std::vector<double> linear_times(double t_end, int count) {
    std::vector<double> t(count);
    for (int i = 0; i < count; ++i) t[i] = t_end * double(i + 1) / count;
    return t;
}

/** @brief Both motions of one member, recorded at t0 (row 0) and at each output time (rows 1…nt). */
template <class M, class T = double> struct Recorded {
    static constexpr int n = M::n, k = M::k, row = 4 * M::n + M::k;
    M model;
    MemberOutcome outcome;
    std::vector<double> t; ///< t0, then the output times
    std::vector<T> data;   ///< rows of (q_NH, v_NH, q_VK, v_VK, μ)
    int rows() const { return static_cast<int>(t.size()); }
    const T* q_nh(int i) const { return &data[std::size_t(i) * row]; }
    const T* v_nh(int i) const { return q_nh(i) + n; }
    const T* q_vk(int i) const { return q_nh(i) + 2 * n; }
    const T* v_vk(int i) const { return q_nh(i) + 3 * n; }
    const T* mu(int i) const { return q_nh(i) + 4 * n; }

    /** @brief |q_NH − q_VK| at row i, angles wrapped to (−π, π]. */
    double dq(int i) const {
        double s = 0.0;
        for (int j = 0; j < n; ++j) {
            T d = q_nh(i)[j] - q_vk(i)[j];
            if (M::angles[j]) d = wrap_angle(d);
            s += double(d) * double(d);
        }
        return std::sqrt(s);
    }
    /** @brief max over rows of dq. */
    double max_dq() const {
        double m = 0.0;
        for (int i = 0; i < rows(); ++i) m = std::max(m, dq(i));
        return m;
    }
    double energy_nh(int i) const { return double(energy(model, q_nh(i), v_nh(i), T(t[i]))); }
    /** @brief E − μ·(J·v) along the vakonomic motion. */
    double vk_energy(int i) const { return double(diagnose_with(ad(), q_vk(i), v_vk(i), T(t[i]), mu(i)).vk_energy); }
    double residual_nh(int i) const { return double(diagnose_with(ad(), q_nh(i), v_nh(i), T(t[i])).residual); }
    double residual_vk(int i) const { return double(diagnose_with(ad(), q_vk(i), v_vk(i), T(t[i])).residual); }
    /** @brief The dual-number reference equations of the model (what the diagnostics above are computed with). */
    AdEquations<M, T> ad() const { return AdEquations<M, T>(model); }
    /** @brief max_i |f(i) − f(0)|. */
    template <class F> double max_change(F f) const {
        const double f0 = f(0);
        double m = 0.0;
        for (int i = 1; i < rows(); ++i) m = std::max(m, std::fabs(f(i) - f0));
        return m;
    }
    /** @brief max over rows of |x(i) − x(0)| (Euclidean, over the n components) for x(i) = pick(i), e.g. q_nh(i). */
    template <class P> double max_state_change(P pick) const {
        double m = 0.0;
        for (int i = 1; i < rows(); ++i) {
            double s = 0.0;
            for (int j = 0; j < n; ++j) {
                const double d = double(pick(i)[j]) - double(pick(0)[j]);
                s += d * d;
            }
            m = std::max(m, std::sqrt(s));
        }
        return m;
    }
    /** @brief How far the motions went: the lesser, over both dynamics, of the largest change of q. A run that never
     *         moves gives 0, and conservation laws checked along it hold trivially. (Not of v: some motions are
     *         uniform, e.g. heisenberg's nonholonomic straight lines.) */
    double least_motion() const {
        return std::min(max_state_change([&](int i) { return q_nh(i); }),
                        max_state_change([&](int i) { return q_vk(i); }));
    }
    /** @brief The larger, over both dynamics, of the largest change of v: 0 when neither motion accelerates. */
    double most_acceleration() const {
        return std::max(max_state_change([&](int i) { return v_nh(i); }),
                        max_state_change([&](int i) { return v_vk(i); }));
    }
    /** @brief max over rows of |f(i)|: the size of a checked quantity (a conserved 0 proves nothing). */
    template <class F> double max_abs(F f) const {
        double m = 0.0;
        for (int i = 0; i < rows(); ++i) m = std::max(m, std::fabs(f(i)));
        return m;
    }
    double max_energy_drift_nh() const {
        return max_change([&](int i) { return energy_nh(i); });
    }
    double max_vk_energy_drift() const {
        return max_change([&](int i) { return vk_energy(i); });
    }
    /** @brief The residual at row i of the nonholonomic motion with v moved off φ = 0 by a fixed δ of size ~0.1: it
     *         must be far from 0, or a small residual along the motion would not show that φ = 0 is kept. */
    double residual_off_manifold(int i) const {
        T v[n];
        for (int j = 0; j < n; ++j) v[j] = v_nh(i)[j] + T(0.1 * (1.0 + 0.37 * j) * (j % 2 ? -1.0 : 1.0));
        return double(diagnose_with(ad(), q_nh(i), v, T(t[i])).residual);
    }
    double max_residual() const {
        double m = 0.0;
        for (int i = 0; i < rows(); ++i) m = std::max({m, residual_nh(i), residual_vk(i)});
        return m;
    }
};

/** @brief Integrate both dynamics of one member with DOPRI5 and record every output state. */
template <class M, class T = double>
Recorded<M, T> run_member(const M& model, const std::array<T, M::n>& q0, const std::array<T, M::n>& v0,
                          const std::array<T, M::k>& mu0, const std::vector<double>& times,
                          const StepControl& ctl = tight(), double t0 = 0.0) {
    Recorded<M, T> r;
    r.model = model;
    r.t.push_back(t0);
    r.t.insert(r.t.end(), times.begin(), times.end());
    r.data.assign(r.t.size() * Recorded<M, T>::row, T(0));
    StateRecorder<M, T> rec{r.data.data()};
    r.outcome = integrate_member<Dopri5>(model, q0.data(), v0.data(), mu0.data(), T(t0), times.data(),
                                         static_cast<int>(times.size()), ctl, rec);
    return r;
}

using nhvk_test::loglog_slope;

/** @brief The small-time growth exponent of |q_NH − q_VK| (docs/physics.md §4.2): the slope over t ∈ [1e-3, 3e-2]. */
template <class M>
double divergence_slope(const M& model, const std::array<double, M::n>& q0, const std::array<double, M::n>& v0,
                        const std::array<double, M::k>& mu0, double* dq_at_end = nullptr) {
    const std::vector<double> times = log_times(1e-3, 3e-2, 12);
    const Recorded<M> r = run_member(model, q0, v0, mu0, times, tight(1e-13, 1e-16));
    EXPECT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status);
    std::vector<double> d;
    for (int i = 1; i < r.rows(); ++i) d.push_back(r.dq(i));
    if (dq_at_end) *dq_at_end = d.back();
    for (double x : d)
        if (!(x > 0.0)) return NAN;
    return loglog_slope(times, d);
}

/** @brief Degree σ of positive homogeneity of each φ_ν in v at (q, v): φ(q, s v) = s^σ φ(q, v) (docs/physics.md §4.6),
 *         estimated from s = 2 at an off-manifold point. */
template <class M> std::array<double, M::k> homogeneity_degree(const M& model, const double* q, const double* v) {
    double p1[M::k], p2[M::k], v2[M::n];
    for (int j = 0; j < M::n; ++j) v2[j] = 2.0 * v[j];
    model.constraints(q, v, 0.0, p1);
    model.constraints(q, v2, 0.0, p2);
    std::array<double, M::k> s;
    for (int a = 0; a < M::k; ++a) s[a] = std::log2(p2[a] / p1[a]);
    return s;
}

/**
 * @brief Both dynamics of one state (μ0 = 0) stepped with DOPRI5 at a config's default step control (StepControl's
 *        defaults, automatic first step) from t = 0 towards `t_end`, until they arrive or fail: `nh_status` and
 *        `vk_status` say which, and each stepper keeps the state it stopped at (the chart-exit tests).
 */
template <class M> struct BothStepped {
    Dopri5<NonholonomicSystem<M, double>, double> nh;
    Dopri5<VakonomicSystem<M, double>, double> vk;
    Status nh_status = Status::ok, vk_status = Status::ok;

    BothStepped(const std::array<double, M::n>& q, const std::array<double, M::n>& v, double t_end) {
        constexpr int n = M::n, k = M::k;
        StepControl ctl; // the defaults of a config: rtol 1e-10, atol 1e-12, min_step 1e-14
        ctl.dt = 0.0;
        double y[2 * n], yk[2 * n + k];
        for (int j = 0; j < n; ++j) {
            yk[j] = y[j] = q[j];
            yk[n + j] = y[n + j] = v[j];
        }
        for (int a = 0; a < k; ++a) yk[2 * n + a] = 0.0;
        const NonholonomicSystem<M, double> nh_sys{M{}};
        const VakonomicSystem<M, double> vk_sys{M{}};
        nh_status = nh.init(nh_sys, 0.0, y, ctl);
        EXPECT_EQ(nh_status, Status::ok) << "nonholonomic start: " << status_name(nh_status);
        if (nh_status == Status::ok) nh_status = nh.advance_to(nh_sys, t_end);
        vk_status = vk.init(vk_sys, 0.0, yk, ctl);
        EXPECT_EQ(vk_status, Status::ok) << "vakonomic start: " << status_name(vk_status);
        if (vk_status == Status::ok) vk_status = vk.advance_to(vk_sys, t_end);
    }
};

/** @brief Uniform draws for random initial states (fixed seeds in each test). */
struct Draw {
    std::mt19937_64 rng;
    explicit Draw(std::uint64_t seed) : rng(seed) {}
    double operator()(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
};

/**
 * @brief docs/physics.md §4.2 on `samples` random states from `sample(draw, q, v)` (which must land on φ = 0): with
 *        μ0 = 0 the slope of log|q_NH − q_VK| against log t over [1e-3, 3e-2] must be 3 ± 0.1, with μ0 ≠ 0
 *        (components uniform in ±[0.2, 1]·mu_scale) 2 ± 0.1. Prints the extreme slopes.
 */
template <class M, class Sampler>
void check_divergence_laws(const M& model, Sampler sample, std::uint64_t seed, int samples = 3, double mu_scale = 1.0,
                           bool expect_t3 = true) {
    Draw d(seed);
    double lo3 = 1e9, hi3 = -1e9, lo2 = 1e9, hi2 = -1e9;
    for (int s = 0; s < samples; ++s) {
        std::array<double, M::n> q0, v0;
        sample(d, q0, v0);
        std::array<double, M::k> zero{}, mu0{};
        for (int a = 0; a < M::k; ++a) mu0[a] = mu_scale * d(0.2, 1.0) * (d(0, 1) < 0.5 ? -1.0 : 1.0);
        if (expect_t3) {
            const double s3 = divergence_slope(model, q0, v0, zero);
            EXPECT_NEAR(s3, 3.0, 0.1) << "sample " << s << " mu0 = 0";
            lo3 = std::min(lo3, s3);
            hi3 = std::max(hi3, s3);
        }
        const double s2 = divergence_slope(model, q0, v0, mu0);
        EXPECT_NEAR(s2, 2.0, 0.1) << "sample " << s << " mu0 != 0";
        lo2 = std::min(lo2, s2);
        hi2 = std::max(hi2, s2);
    }
    if (expect_t3) {
        measured("slope_mu0_zero_min", lo3);
        measured("slope_mu0_zero_max", hi3);
    }
    measured("slope_mu0_nonzero_min", lo2);
    measured("slope_mu0_nonzero_max", hi2);
}

/**
 * @brief Conservation laws on `samples` random states over [0, t_end]: the vakonomic E − μ·(J·v) (docs/physics.md §4.4,
 *        every autonomous model) and, when `nh_energy` is set, the nonholonomic E (§4.3, homogeneous constraints,
 *        F = 0); both motions must keep |φ| small. Tolerances are relative to max(1, |E0|). Guards against a
 *        vacuous pass: each motion must change q by > 1e-2, one of them v by > 1e-4, each checked energy must reach
 *        |E| > 1e-3, and the residual at a velocity moved off φ = 0 must exceed 1e-3.
 */
template <class M, class Sampler>
void check_conservation(const M& model, Sampler sample, std::uint64_t seed, bool nh_energy, double t_end = 2.0,
                        int samples = 4, double mu_scale = 0.5, double tol = 1e-10) {
    Draw d(seed);
    double e_nh = 0.0, e_vk = 0.0, res = 0.0, least_motion = 1e300, least_e_nh = 1e300, least_e_vk = 1e300,
           least_off = 1e300, least_accel = 1e300;
    for (int s = 0; s < samples; ++s) {
        std::array<double, M::n> q0, v0;
        sample(d, q0, v0);
        std::array<double, M::k> mu0{};
        for (int a = 0; a < M::k; ++a) mu0[a] = mu_scale * d(-1, 1);
        const Recorded<M> r = run_member(model, q0, v0, mu0, linear_times(t_end, 20), tight(1e-12, 1e-14));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status) << " sample " << s;
        const double scale_nh = std::max(1.0, std::fabs(r.energy_nh(0)));
        const double scale_vk = std::max(1.0, std::fabs(r.vk_energy(0)));
        e_nh = std::max(e_nh, r.max_energy_drift_nh() / scale_nh);
        e_vk = std::max(e_vk, r.max_vk_energy_drift() / scale_vk);
        res = std::max(res, r.max_residual());
        // Not vacuous: the state moves and accelerates, the conserved quantities are not 0, and φ at a velocity off
        // the manifold is not 0 (a run that never moves, or returns zeros, fails here).
        least_motion = std::min(least_motion, r.least_motion());
        least_accel = std::min(least_accel, r.most_acceleration());
        least_e_nh = std::min(least_e_nh, r.max_abs([&](int i) { return r.energy_nh(i); }));
        least_e_vk = std::min(least_e_vk, r.max_abs([&](int i) { return r.vk_energy(i); }));
        least_off = std::min(least_off, r.residual_off_manifold(r.rows() - 1));
    }
    if (nh_energy) {
        EXPECT_LT(e_nh, tol);
        EXPECT_GT(least_e_nh, 1e-3) << "the nonholonomic energy checked for conservation is 0";
        measured("max_rel_energy_drift_nh", e_nh);
    }
    EXPECT_LT(e_vk, tol);
    EXPECT_LT(res, 1e3 * tol);
    EXPECT_GT(least_e_vk, 1e-3) << "the vakonomic energy checked for conservation is 0";
    expect_moves(least_motion, "its conservation laws would hold trivially");
    EXPECT_GT(least_off, 1e-3) << "the residual does not see a velocity off the constraints";
    EXPECT_GT(least_accel, 1e-4) << "neither motion accelerates";
    measured("max_rel_vk_energy_drift", e_vk);
    measured("max_residual", res);
    measured("min_acceleration", least_accel);
    measured("min_max_abs_energy_nh", least_e_nh);
    measured("min_max_abs_vk_energy", least_e_vk);
    measured("min_residual_off_manifold", least_off);
}

/** @brief Both dynamics coincide (control cases): max |q_NH − q_VK| over [0, t_end] for each μ0 below `tol`, along
 *         motions that move (Recorded::least_motion > 1e-2) and, unless `uniform` (motions that are straight lines
 *         by a closed form), accelerate (Recorded::most_acceleration > 1e-2): two motions at rest, or two
 *         straight lines from the same state, coincide trivially. */
template <class M, class Sampler>
void check_coincide(const M& model, Sampler sample, std::uint64_t seed, const std::vector<double>& mu_values,
                    double t_end, double tol, int samples = 3, bool uniform = false) {
    Draw d(seed);
    double worst = 0.0, least_motion = 1e300, least_accel = 1e300;
    for (int s = 0; s < samples; ++s) {
        std::array<double, M::n> q0, v0;
        sample(d, q0, v0);
        for (double mu : mu_values) {
            std::array<double, M::k> mu0;
            mu0.fill(mu);
            const Recorded<M> r = run_member(model, q0, v0, mu0, linear_times(t_end, 20), tight(1e-12, 1e-14));
            ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status) << " mu0 = " << mu;
            worst = std::max(worst, r.max_dq());
            least_motion = std::min(least_motion, r.least_motion());
            least_accel = std::min(least_accel, r.most_acceleration());
        }
    }
    EXPECT_LT(worst, tol);
    expect_moves(least_motion, "two motions at rest coincide trivially");
    if (!uniform) EXPECT_GT(least_accel, 1e-2) << "neither motion accelerates: two straight lines coincide trivially";
    measured("max_dq_control", worst);
    measured("min_acceleration", least_accel);
}

/**
 * @brief Two formulations A, B of one system give the same motions: from `samples` random states, A started with
 *        multipliers ν uniform in [−0.5, 0.5]^k and B with `map_mu(q0, v0, ν)` (its equivalent multipliers), both
 *        dynamics over t ∈ (0, 0.5]; the largest difference of the coordinates and velocities must stay below 1e-9,
 *        along motions that move and accelerate (Recorded::least_motion, most_acceleration > 1e-2).
 */
template <class A, class B, class Sampler, class MapMu>
void check_same_motions(Sampler sample, std::uint64_t seed, MapMu map_mu, int samples = 3) {
    static_assert(A::n == B::n && A::k == B::k, "one system");
    Draw d(seed);
    double worst_nh = 0.0, worst_vk = 0.0, least_motion = 1e300, least_accel = 1e300;
    for (int s = 0; s < samples; ++s) {
        std::array<double, A::n> q0, v0;
        sample(d, q0, v0);
        std::array<double, A::k> nu;
        for (double& x : nu) x = d(-0.5, 0.5);
        const std::array<double, B::k> mu = map_mu(q0.data(), v0.data(), nu.data());
        const std::vector<double> times = linear_times(0.5, 10);
        const Recorded<A> a = run_member(A{}, q0, v0, nu, times);
        const Recorded<B> b = run_member(B{}, q0, v0, mu, times);
        ASSERT_EQ(a.outcome.status, Status::ok) << status_name(a.outcome.status);
        ASSERT_EQ(b.outcome.status, Status::ok) << status_name(b.outcome.status);
        least_motion = std::min(least_motion, a.least_motion());
        least_accel = std::min(least_accel, a.most_acceleration());
        for (int i = 0; i < a.rows(); ++i)
            for (int j = 0; j < 2 * A::n; ++j) {
                worst_nh = std::max(worst_nh, std::fabs(a.q_nh(i)[j] - b.q_nh(i)[j]));
                worst_vk = std::max(worst_vk, std::fabs(a.q_vk(i)[j] - b.q_vk(i)[j]));
            }
    }
    EXPECT_LT(worst_nh, 1e-9);
    EXPECT_LT(worst_vk, 1e-9);
    expect_moves(least_motion, "two motions at rest agree trivially");
    EXPECT_GT(least_accel, 1e-2) << "neither motion accelerates: two straight lines agree trivially";
    measured("max_diff_nh_between_formulations", worst_nh);
    measured("max_diff_vk_between_formulations", worst_vk);
}

} // namespace nhvk::testing
