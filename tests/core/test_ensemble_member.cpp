// SPDX-License-Identifier: MIT
// Ensemble member i equals the same trajectory integrated alone (heyoka's ensemble test): a structure-of-arrays chunk
// built by hand, run with run_chunk_member (include/nhvk/ensemble_chunk.hpp) in forward order, reverse order and
// from an OpenMP loop, against integrate_member + DivergenceObserver on that member alone, bit for bit. Also the
// observer's metrics against values recomputed from the recorded states.
#include "core_test_util.hpp"

#include <nhvk/ensemble_chunk.hpp>
#include <nhvk/member.hpp>
#include <nhvk/models/nh_particle.hpp>
#include <nhvk/models/perpendicular_velocities.hpp>
#include <nhvk/models/pfaffian_particle.hpp>
#include <nhvk/models/rolling_disc.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using nhvk::ChunkArgs;
using nhvk::Dopri5;
using nhvk::Status;
using nhvk::models::PerpendicularVelocities;
using nhvk::models::RollingDisc;

/** Only the coordinates in `mask` (bit j: coordinate j), weight 1; `angles` the angle coordinates. */
nhvk::DivergenceSpec divergence_over(unsigned mask, unsigned angles) {
    nhvk::DivergenceSpec d;
    for (int j = 0; j < nhvk::max_divergence_coords; ++j) d.weight[j] = ((mask >> j) & 1u) ? 1.0 : 0.0;
    d.angle_mask = angles;
    return d;
}

constexpr double sentinel = -12345.0;

using nhvk_test::bits;

/** The chunk's input arrays and one set of output arrays. */
struct Chunk {
    long long m, ld;
    std::vector<double> times, q0, v0, mu0, params, metrics;
    std::vector<std::uint8_t> status, failed;
    std::vector<std::int32_t> fail_index, onset;
    ChunkArgs args;

    void reset_outputs() {
        metrics.assign(std::size_t(nhvk::metric_rows(int(times.size()))) * ld, sentinel);
        status.assign(ld, 0xEE);
        failed.assign(ld, 0xEE);
        fail_index.assign(ld, -77);
        onset.assign(ld, -77);
        args.metrics = metrics.data();
        args.status = status.data();
        args.failed = failed.data();
        args.fail_index = fail_index.data();
        args.onset = onset.data();
    }
    void bind_inputs(int n_params) {
        args.m = m;
        args.ld = ld;
        args.nt = int(times.size());
        args.times = times.data();
        args.q0 = q0.data();
        args.v0 = v0.data();
        args.mu0 = mu0.data();
        args.params = n_params ? params.data() : nullptr;
        args.params_ld = n_params ? ld : 0;
        args.n_params = n_params;
    }
};

/** Outputs of one member run alone. */
struct Alone {
    std::vector<double> metrics; // metric_count · nt, stride 1
    nhvk::MemberOutcome outcome;
    int onset;
};

template <class M> Alone run_alone(const M& model, const Chunk& c, long long j) {
    constexpr int n = M::n, k = M::k;
    const ChunkArgs& a = c.args;
    double q0[n], v0[n], mu0[k];
    for (int i = 0; i < n; ++i) {
        q0[i] = c.q0[i * c.ld + j];
        v0[i] = c.v0[i * c.ld + j];
    }
    for (int i = 0; i < k; ++i) mu0[i] = c.mu0[i * c.ld + j];
    Alone r;
    r.metrics.assign(std::size_t(nhvk::metric_rows(a.nt)), sentinel);
    nhvk::DivergenceObserver<M, double> obs{model, a.divergence, a.nt, r.metrics.data(), 1, a.onset_threshold};
    r.outcome = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, a.t0, a.times, a.nt, a.ctl, obs);
    r.onset = obs.onset_index;
    r.metrics[std::size_t(nhvk::member_series_row(a.nt, nhvk::member_onset_time))] =
        nhvk::onset_time_of<double>(r.metrics.data(), 1, a.nt, a.times, a.t0, obs.onset_index, a.onset_threshold);
    return r;
}

/** Compare every member of the chunk's outputs with its lone run, bit for bit; padding columns stay untouched.
 *  The chunk and the lone run step the same integrator: the *ChunkEqualsMembersAlone / *ChunkWithFailingMember tests
 *  are indexing tests of the chunk layout (ld, padding, per-member parameters, statuses), not validations of the
 *  values, which DivergenceObserverMetricsFromRecordedStates and the physics tests check. */
void expect_chunk_equals_alone(const Chunk& c, const std::vector<Alone>& alone, const char* label) {
    SCOPED_TRACE(label);
    const int nt = c.args.nt;
    for (long long j = 0; j < c.ld; ++j) {
        if (j >= c.m) { // padding: nothing written
            EXPECT_EQ(c.status[j], 0xEE);
            for (int q = 0; q < nhvk::metric_rows(nt); ++q) EXPECT_EQ(c.metrics[q * c.ld + j], sentinel);
            continue;
        }
        const Alone& r = alone[j];
        EXPECT_EQ(c.status[j], std::uint8_t(r.outcome.status)) << "member " << j;
        EXPECT_EQ(c.failed[j], std::uint8_t(r.outcome.failed)) << "member " << j;
        EXPECT_EQ(c.fail_index[j], r.outcome.time_index) << "member " << j;
        EXPECT_EQ(c.onset[j], r.onset) << "member " << j;
        for (int q = 0; q < nhvk::metric_rows(nt); ++q)
            ASSERT_EQ(bits(c.metrics[q * c.ld + j]), bits(r.metrics[q])) << "member " << j << " metric slot " << q;
    }
}

template <class M> void run_all_orders(Chunk& c, const std::vector<Alone>& alone) {
    c.reset_outputs();
    for (long long j = 0; j < c.m; ++j) nhvk::run_chunk_member<M, double, Dopri5>(c.args, j);
    expect_chunk_equals_alone(c, alone, "forward order");

    c.reset_outputs();
    for (long long j = c.m - 1; j >= 0; --j) nhvk::run_chunk_member<M, double, Dopri5>(c.args, j);
    expect_chunk_equals_alone(c, alone, "reverse order");

    c.reset_outputs();
    const ChunkArgs args = c.args;
#pragma omp parallel for schedule(dynamic, 1) num_threads(4)
    for (long long j = 0; j < c.m; ++j) nhvk::run_chunk_member<M, double, Dopri5>(args, j);
    expect_chunk_equals_alone(c, alone, "OpenMP loop");
}

// rolling_disc with per-member parameters (params_ld = ld), μ0 ≠ 0, angles wrapped, a divergence subset
// (x, y, θ), and one NaN-marked member.
TEST(EnsembleMember, RollingDiscChunkEqualsMembersAlone) {
    Chunk c;
    c.m = 37;
    c.ld = 40;
    c.times = {0.1, 0.3, 0.7, 1.2, 2.0, 3.0};
    const int n = 4, k = 2, np = 4;
    c.q0.assign(n * c.ld, 0.0);
    c.v0.assign(n * c.ld, 0.0);
    c.mu0.assign(k * c.ld, 0.0);
    c.params.assign(np * c.ld, 0.0);
    std::mt19937_64 rng(77);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<RollingDisc> models(c.m);
    for (long long j = 0; j < c.m; ++j) {
        RollingDisc& md = models[j];
        md.m = 1.0 + 0.5 * u(rng);
        md.R = 0.5 + 0.2 * u(rng);
        md.alpha = 0.3 * u(rng);
        md.g = 9.81;
        // make_model assigns params in visit_params order: m, R, alpha, g
        c.params[0 * c.ld + j] = md.m;
        c.params[1 * c.ld + j] = md.R;
        c.params[2 * c.ld + j] = md.alpha;
        c.params[3 * c.ld + j] = md.g;
        const double phi = 3.0 * u(rng), th = 2.0 * u(rng);
        c.q0[0 * c.ld + j] = u(rng);
        c.q0[1 * c.ld + j] = u(rng);
        c.q0[2 * c.ld + j] = 3.0 * u(rng);
        c.q0[3 * c.ld + j] = phi;
        c.v0[0 * c.ld + j] = md.R * th * std::cos(phi);
        c.v0[1 * c.ld + j] = md.R * th * std::sin(phi);
        c.v0[2 * c.ld + j] = th;
        c.v0[3 * c.ld + j] = 1.5 * u(rng);
        c.mu0[0 * c.ld + j] = 0.5 * u(rng);
        c.mu0[1 * c.ld + j] = 0.5 * u(rng);
    }
    const long long skipped = 17;
    c.q0[0 * c.ld + skipped] = std::numeric_limits<double>::quiet_NaN();
    c.bind_inputs(np);
    c.args.t0 = 0.0;
    c.args.ctl.rtol = 1e-10;
    c.args.ctl.atol = 1e-12;
    c.args.ctl.dt = 0.0;
    c.args.divergence = divergence_over(0b0111u, 0b1100u);
    c.args.onset_threshold = 1e-2;

    std::vector<Alone> alone(c.m);
    int crossed = 0;
    for (long long j = 0; j < c.m; ++j) {
        if (j == skipped) continue;
        alone[j] = run_alone(models[j], c, j);
        ASSERT_EQ(alone[j].outcome.status, Status::ok) << "member " << j;
        crossed += alone[j].onset >= 0;
    }
    EXPECT_GT(crossed, 0); // onset indices are exercised
    // the NaN-marked member: skipped with status non_finite and nothing else written
    alone[skipped].metrics.assign(std::size_t(nhvk::metric_rows(int(c.times.size()))), sentinel);
    alone[skipped].outcome.status = Status::non_finite;
    alone[skipped].outcome.failed = nhvk::Dynamics::none;
    alone[skipped].outcome.time_index = -1;
    alone[skipped].onset = nhvk::stats::onset_never;
    alone[skipped].metrics[std::size_t(nhvk::member_series_row(int(c.times.size()), nhvk::member_onset_time))] =
        std::numeric_limits<double>::quiet_NaN(); // no onset

    run_all_orders<RollingDisc>(c, alone);
}

// One shared parameter set (params_ld = 0, the layout host/chunk_buffers.hpp uses when parameters are not swept):
// every member must see params[p] for parameter p, as the ChunkArgs documentation says.
// A regression test: ensemble_chunk.hpp once read a.params[i * a.params_ld + (a.params_ld ? j : 0)], which is
// params[0] for every i when params_ld = 0, so rolling_disc got m = R = α = g = params[0]. It now reads params[i]
// then, and this test passes; it fails if that comes back.
TEST(EnsembleMember, SharedParameterSetReachesEveryMember) {
    Chunk c;
    c.m = 5;
    c.ld = 8;
    c.times = {0.5, 1.0};
    const int n = 4, k = 2;
    c.q0.assign(n * c.ld, 0.0);
    c.v0.assign(n * c.ld, 0.0);
    c.mu0.assign(k * c.ld, 0.0);
    RollingDisc md;
    md.m = 1.3;
    md.R = 0.4;
    md.alpha = 0.25;
    md.g = 9.81;
    c.params = {md.m, md.R, md.alpha, md.g}; // visit_params order
    for (long long j = 0; j < c.m; ++j) {
        const double phi = 0.3 * double(j), th = 1.0 + 0.2 * double(j);
        c.q0[3 * c.ld + j] = phi;
        c.v0[0 * c.ld + j] = md.R * th * std::cos(phi);
        c.v0[1 * c.ld + j] = md.R * th * std::sin(phi);
        c.v0[2 * c.ld + j] = th;
        c.v0[3 * c.ld + j] = 0.5;
        c.mu0[j] = 0.2;
    }
    c.bind_inputs(4);
    c.args.params_ld = 0; // shared
    c.args.ctl.dt = 0.0;
    std::vector<Alone> alone(c.m);
    for (long long j = 0; j < c.m; ++j) alone[j] = run_alone(md, c, j);
    c.reset_outputs();
    for (long long j = 0; j < c.m; ++j) nhvk::run_chunk_member<RollingDisc, double, Dopri5>(c.args, j);
    expect_chunk_equals_alone(c, alone, "shared parameters");
}

// perpendicular_velocities with shared default parameters (m1 = m2 = 1): the member with μ0 = 1 has a singular
// W − μH, so its vakonomic run fails at t0; the chunk reports exactly what the lone run reports.
TEST(EnsembleMember, PerpendicularVelocitiesChunkWithFailingMember) {
    Chunk c;
    c.m = 13;
    c.ld = 16;
    c.times = {0.25, 0.5, 1.0};
    const int n = 6;
    c.q0.assign(n * c.ld, 0.0);
    c.v0.assign(n * c.ld, 0.0);
    c.mu0.assign(c.ld, 0.0);
    std::mt19937_64 rng(99);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (long long j = 0; j < c.m; ++j) {
        double q[6], v[6];
        for (int i = 0; i < 6; ++i) {
            q[i] = u(rng) + (i == 3 ? 1.5 : 0.0);
            v[i] = u(rng);
        }
        const double p = (v[0] * v[3] + v[1] * v[4] + v[2] * v[5]) / (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int i = 0; i < 3; ++i) v[3 + i] -= p * v[i]; // ṗ2 ⟂ ṗ1
        for (int i = 0; i < 6; ++i) {
            c.q0[i * c.ld + j] = q[i];
            c.v0[i * c.ld + j] = v[i];
        }
        c.mu0[j] = 0.3 * u(rng);
    }
    const long long bad = 5;
    c.mu0[bad] = 1.0;
    c.bind_inputs(0);
    c.args.ctl.rtol = 1e-9;
    c.args.ctl.atol = 1e-11;
    c.args.ctl.dt = 0.0;

    const PerpendicularVelocities model{};
    std::vector<Alone> alone(c.m);
    for (long long j = 0; j < c.m; ++j) alone[j] = run_alone(model, c, j);
    EXPECT_EQ(alone[bad].outcome.status, Status::singular);
    EXPECT_EQ(alone[bad].outcome.failed, nhvk::Dynamics::vakonomic);
    EXPECT_EQ(alone[bad].outcome.time_index, -1);
    run_all_orders<PerpendicularVelocities>(c, alone);
    // the failing member's per-time metrics are left unwritten (no NaN ever reaches the statistics); its onset time
    // is NaN, which the reduction reads as "no onset"
    for (int q = 0; q < nhvk::metric_count * c.args.nt; ++q) EXPECT_EQ(c.metrics[q * c.ld + bad], sentinel);
    EXPECT_TRUE(std::isnan(c.metrics[nhvk::member_series_row(c.args.nt, nhvk::member_onset_time) * c.ld + bad]));
}

// The observer's metrics recomputed from the recorded states: d_q over the mask with angles wrapped, d_v, residuals
// and energy drifts (hand formulas for rolling_disc).
TEST(EnsembleMember, DivergenceObserverMetricsFromRecordedStates) {
    RollingDisc model;
    model.alpha = 0.2;
    const double R = model.R, m = model.m, I = 0.5 * m * R * R, Jm = 0.25 * m * R * R;
    const double phi0 = 0.4, th = 3.0;
    const double q0[4] = {0.1, -0.2, 0.5, phi0}, v0[4] = {R * th * std::cos(phi0), R * th * std::sin(phi0), th, 2.5};
    const double mu0[2] = {1.5, -2.0};
    const std::vector<double> times = {0.5, 1.0, 2.0, 4.0, 8.0};
    const int nt = int(times.size());
    nhvk::StepControl ctl;
    ctl.dt = 0.0;
    std::vector<double> metrics(std::size_t(nhvk::metric_rows(nt)), sentinel);
    nhvk::DivergenceObserver<RollingDisc, double> obs{model, divergence_over(0b1101u, 0b1100u), nt, metrics.data(), 1,
                                                      0.1};
    ASSERT_EQ(nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times.data(), nt, ctl, obs).status, Status::ok);
    std::vector<double> rows((nt + 1) * 18);
    nhvk::StateRecorder<RollingDisc, double> rec{rows.data()};
    ASSERT_EQ(nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times.data(), nt, ctl, rec).status, Status::ok);
    const double pi = std::acos(-1.0);
    auto E = [&](const double* q, const double* v) {
        return 0.5 * m * (v[0] * v[0] + v[1] * v[1]) + 0.5 * I * v[2] * v[2] + 0.5 * Jm * v[3] * v[3] -
               m * model.g * std::sin(0.2) * q[0];
    };
    // each constraint divided by the norm of its gradient in v, (1, 0, −R cos φ, 0) and (0, 1, −R sin φ, 0)
    auto res = [&](const double* q, const double* v) {
        const double c = std::cos(q[3]), s = std::sin(q[3]);
        return std::max(std::fabs(v[0] - R * v[2] * c) / std::sqrt(1.0 + R * R * c * c),
                        std::fabs(v[1] - R * v[2] * s) / std::sqrt(1.0 + R * R * s * s));
    };
    // linear constraints: J·v = φ, so Ẽ = E − μ·φ
    auto Evk = [&](const double* q, const double* v, const double* mu) {
        return E(q, v) - mu[0] * (v[0] - R * v[2] * std::cos(q[3])) - mu[1] * (v[1] - R * v[2] * std::sin(q[3]));
    };
    const double* r0 = rows.data();
    const double E0nh = E(r0, r0 + 4), E0vk = Evk(r0 + 8, r0 + 12, r0 + 16);
    bool wrapped_somewhere = false;
    int onset = -1;
    for (int i = 0; i < nt; ++i) {
        const double* r = rows.data() + (i + 1) * 18;
        const double *qn = r, *vn = r + 4, *qk = r + 8, *vk = r + 12, *mu = r + 16;
        double dq2 = 0, dv2 = 0;
        for (int j : {0, 2, 3}) { // mask 0b1101
            double d = qn[j] - qk[j];
            if (j >= 2) {
                const double raw = d;
                d = std::remainder(d, 2 * pi); // in [−π, π]
                if (d == -pi) d = pi;
                wrapped_somewhere = wrapped_somewhere || std::fabs(raw - d) > 1.0;
            }
            dq2 += d * d;
            dv2 += (vn[j] - vk[j]) * (vn[j] - vk[j]);
        }
        const double tol = 1e-12;
        EXPECT_NEAR(metrics[nhvk::metric_dq * nt + i], std::sqrt(dq2), tol) << "t = " << times[i];
        EXPECT_NEAR(metrics[nhvk::metric_dv * nt + i], std::sqrt(dv2), tol);
        EXPECT_NEAR(metrics[nhvk::metric_res_nh * nt + i], res(qn, vn), tol);
        EXPECT_NEAR(metrics[nhvk::metric_res_vk * nt + i], res(qk, vk), tol);
        EXPECT_NEAR(metrics[nhvk::metric_energy_nh * nt + i], std::fabs(E(qn, vn) - E0nh), 1e-9);
        EXPECT_NEAR(metrics[nhvk::metric_energy_vk * nt + i], std::fabs(Evk(qk, vk, mu) - E0vk), 1e-9);
        if (onset < 0 && std::sqrt(dq2) > 0.1) onset = i;
    }
    EXPECT_TRUE(wrapped_somewhere) << "choose a state whose angle difference leaves (−π, π]";
    EXPECT_EQ(obs.onset_index, onset);
    // the interpolated onset lies in the bracketing interval of output times
    ASSERT_GE(onset, 0);
    const double onset_time =
        nhvk::onset_time_of<double>(metrics.data(), 1, nt, times.data(), 0.0, obs.onset_index, 0.1);
    EXPECT_GT(onset_time, onset > 0 ? times[onset - 1] : 0.0);
    EXPECT_LE(onset_time, times[onset]);
    // relative drifts: divided by s = max(|E0|, T0), T0 the kinetic energy at t0 (by hand)
    const double T0 = 0.5 * m * (v0[0] * v0[0] + v0[1] * v0[1]) + 0.5 * I * v0[2] * v0[2] + 0.5 * Jm * v0[3] * v0[3];
    const double s = std::max(std::fabs(E0nh), T0);
    for (int i = 0; i < nt; ++i) {
        const double* r = rows.data() + (i + 1) * 18;
        EXPECT_NEAR(metrics[nhvk::metric_energy_rel_nh * nt + i], std::fabs(E(r, r + 4) - E0nh) / s, 1e-12);
        EXPECT_NEAR(metrics[nhvk::metric_energy_rel_vk * nt + i], std::fabs(Evk(r + 8, r + 12, r + 16) - E0vk) / s,
                    1e-12);
        // linear homogeneous constraints (J·v = φ = 0) on an incline (a potential, L autonomous): the reactions do
        // no work and E is conserved, so both the reaction work and the balance residual stay at tolerance
        EXPECT_LT(std::fabs(metrics[nhvk::metric_work_nh * nt + i]), 1e-9) << "t = " << times[i];
        EXPECT_LT(metrics[nhvk::metric_balance_nh * nt + i], 1e-9) << "t = " << times[i];
    }
}

// The energy balance on a model whose L depends on t explicitly (t q1 + t² q0 v1), with a non-conservative force
// and a nonlinear, non-homogeneous, time-dependent constraint (ModelA, core_test_util.hpp): E itself changes by
// O(1), but E(t) − E(t0) − ∫(λ·(J·v) + F·v − ∂L/∂t) dt stays at integration tolerance, with and without the force.
// Without lagrangian_depends_on_t (∂L/∂t left out) or with F's sign flipped the residual would be O(1).
template <class M> void expect_balanced(const M& model) {
    const double q0[2] = {0.2, 0.7}, v0[2] = {0.5, -0.25 / 0.8}; // φ = v0² + q0 v0 v1 + q1 v1 = 0 at t = 0
    const double mu0[1] = {0.0};
    const std::vector<double> times = {0.1, 0.2, 0.4};
    const int nt = int(times.size());
    nhvk::StepControl ctl;
    ctl.dt = 0.0;
    ctl.rtol = 1e-11;
    ctl.atol = 1e-13;
    std::vector<double> metrics(std::size_t(nhvk::metric_rows(nt)), sentinel);
    nhvk::DivergenceObserver<M, double> obs{model, nhvk::DivergenceSpec{}, nt, metrics.data(), 1, 1e-3};
    const nhvk::MemberOutcome out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times.data(), nt, ctl, obs);
    // the vakonomic motion may fail (its W − μH is not guaranteed regular here); the nonholonomic metrics of the
    // output times reached are what this test reads
    const int reached = out.status == Status::ok ? nt : out.time_index;
    ASSERT_GT(reached, 0) << nhvk::status_name(out.status);
    for (int i = 0; i < reached; ++i) {
        EXPECT_GT(metrics[nhvk::metric_energy_rel_nh * nt + i], 1e-3) << "E changes: t = " << times[i];
        EXPECT_LT(metrics[nhvk::metric_balance_nh * nt + i], 1e-8) << "t = " << times[i];
    }
}

TEST(EnsembleMember, EnergyBalanceHoldsWithTimeDependentLagrangianAndForce) {
    expect_balanced(nhvk_test::ModelA<false>{});
    expect_balanced(nhvk_test::ModelA<true>{});
}

// The onset time interpolated between output times is exact for a divergence growing like a power of t − t0 (linear
// in log d against log(t − t0)), and linear where the earlier value is 0.
TEST(EnsembleMember, OnsetInterpolationExactForPowerLaws) {
    const double t0 = 0.5, c = 3.0, p = 2.5, thr = 1e-3;
    auto d = [&](double t) { return c * std::pow(t - t0, p); };
    const double exact = t0 + std::pow(thr / c, 1.0 / p);
    const double ta = t0 + 0.5 * (exact - t0), tb = t0 + 3.0 * (exact - t0);
    EXPECT_NEAR(nhvk::interpolate_onset(t0, ta, d(ta), tb, d(tb), thr), exact, 1e-14 * exact);
    // from t0 (d = 0): linear
    EXPECT_DOUBLE_EQ(nhvk::interpolate_onset(t0, t0, 0.0, 1.5, 4e-3, thr), t0 + 0.25);
}

// On the CPU integrate_member steps the two fixed-step (RK4) integrations in lockstep; that is a schedule, not a
// different method: every recorded state equals, bit for bit, each system advanced alone with Rk4::advance_to (what
// the device runs), and a step limit fails the same dynamics at the same output time. An indexing test of the
// schedule, not a validation of the physics.
TEST(EnsembleMember, Rk4LockstepEqualsEachDynamicsAlone) {
    using NH = nhvk::NonholonomicSystem<RollingDisc, double>;
    using VK = nhvk::VakonomicSystem<RollingDisc, double>;
    RollingDisc model;
    model.alpha = 0.2;
    const double R = model.R, phi0 = 0.4, th = 3.0;
    const double q0[4] = {0.1, -0.2, 0.5, phi0}, v0[4] = {R * th * std::cos(phi0), R * th * std::sin(phi0), th, 2.5};
    const double mu0[2] = {1.5, -2.0};
    const std::vector<double> times = {0.05, 0.3, 0.31, 1.0};
    const int nt = int(times.size());
    nhvk::StepControl ctl;
    ctl.dt = 7e-3; // not a divisor of the intervals: each is shortened uniformly
    std::vector<double> rows((nt + 1) * 18, sentinel);
    nhvk::StateRecorder<RollingDisc, double> rec{rows.data()};
    ASSERT_EQ(nhvk::integrate_member<nhvk::Rk4>(model, q0, v0, mu0, 0.0, times.data(), nt, ctl, rec).status,
              Status::ok);
    const NH nh{model};
    const VK vk{model};
    double y_nh[8], y_vk[10];
    for (int j = 0; j < 4; ++j) {
        y_nh[j] = y_vk[j] = q0[j];
        y_nh[4 + j] = y_vk[4 + j] = v0[j];
    }
    y_vk[8] = mu0[0];
    y_vk[9] = mu0[1];
    nhvk::Rk4<NH, double> a;
    nhvk::Rk4<VK, double> b;
    ASSERT_EQ(a.init(nh, 0.0, y_nh, ctl), Status::ok);
    ASSERT_EQ(b.init(vk, 0.0, y_vk, ctl), Status::ok);
    for (int i = 0; i < nt; ++i) {
        ASSERT_EQ(a.advance_to(nh, times[i]), Status::ok);
        ASSERT_EQ(b.advance_to(vk, times[i]), Status::ok);
        const double* row = rows.data() + (i + 1) * 18;
        for (int j = 0; j < 8; ++j)
            EXPECT_EQ(bits(row[j]), bits(a.y[j])) << "nonholonomic, time " << i << ", component " << j;
        for (int j = 0; j < 10; ++j)
            EXPECT_EQ(bits(row[8 + j]), bits(b.y[j])) << "vakonomic, time " << i << ", component " << j;
    }
    EXPECT_NE(bits(rows[(nt)*18 + 0]), bits(rows[(nt)*18 + 8])) << "the two motions must differ here";
    // A step limit reached in the third interval: the nonholonomic motion is reported, at output index 2.
    const long long needed = (long long)std::ceil(0.05 / 7e-3) + (long long)std::ceil(0.25 / 7e-3);
    ctl.max_steps = needed; // room for two intervals exactly
    std::vector<double> rows2((nt + 1) * 18, sentinel);
    nhvk::StateRecorder<RollingDisc, double> rec2{rows2.data()};
    const nhvk::MemberOutcome o =
        nhvk::integrate_member<nhvk::Rk4>(model, q0, v0, mu0, 0.0, times.data(), nt, ctl, rec2);
    EXPECT_EQ(o.status, Status::step_limit);
    EXPECT_EQ(o.failed, nhvk::Dynamics::nonholonomic);
    EXPECT_EQ(o.time_index, 2);
}

/** Test-only: nh_particle with a stand-in "source constraint" x = 0 (residual |x|), so that the check of integrated
 *  states at each output time can be seen to fire: a motion with ẋ ≠ 0 breaks it at the first output time, and
 *  a motion with ẋ = 0 keeps it. */
struct SourceXZero : nhvk::models::NhParticle {
    static constexpr bool has_source_constraints = true;
    template <class T> T source_residual(const T* q, const T*, const T&) const { return std::fabs(q[0]); }
};

TEST(EnsembleMember, IntegratedStatesOffTheSourceConstraintsAreChartSingular) {
    const std::vector<double> times = {0.1, 0.2};
    nhvk::StepControl ctl;
    ctl.dt = 0.0;
    using Recorder = nhvk::StateRecorder<SourceXZero, double>;
    std::vector<double> rows(3 * Recorder::row_size(), sentinel);
    Recorder rec{rows.data()};
    const double q0[3] = {0, 0, 0}, moving[3] = {1, 0.5, 0}, still[3] = {0, 0.5, 0}, mu0[1] = {0};
    const nhvk::MemberOutcome o =
        nhvk::integrate_member<Dopri5>(SourceXZero{}, q0, moving, mu0, 0.0, times.data(), 2, ctl, rec);
    EXPECT_EQ(o.status, Status::chart_singular) << nhvk::status_name(o.status);
    EXPECT_EQ(o.failed, nhvk::Dynamics::nonholonomic);
    EXPECT_EQ(o.time_index, 0);
    EXPECT_EQ(rows[Recorder::row_size()], sentinel) << "no row past the failure";
    const nhvk::MemberOutcome ok =
        nhvk::integrate_member<Dopri5>(SourceXZero{}, q0, still, mu0, 0.0, times.data(), 2, ctl, rec);
    EXPECT_EQ(ok.status, Status::ok) << nhvk::status_name(ok.status);
    // Off the source at t0 already: refused before the first step.
    const double q_off[3] = {0.5, 0, 0};
    const nhvk::MemberOutcome t0 =
        nhvk::integrate_member<Dopri5>(SourceXZero{}, q_off, still, mu0, 0.0, times.data(), 2, ctl, rec);
    EXPECT_EQ(t0.status, Status::chart_singular);
    EXPECT_EQ(t0.time_index, -1);
}

/** The two steppers of the two-pass test, with whether each takes a fixed step. */
struct AdaptiveDopri5 {
    static constexpr bool fixed = false;
    template <class S, class T> using tmpl = nhvk::Dopri5<S, T>;
};
struct FixedRk4 {
    static constexpr bool fixed = true;
    template <class S, class T> using tmpl = nhvk::Rk4<S, T>;
};

// The device's two passes (the nonholonomic motion through every output time, then the vakonomic one) end a member
// as integrating both at once does, with the same precedence at an output time: a failed nonholonomic step, a failed
// vakonomic one, the nonholonomic state off the source constraints, the vakonomic one. Starts on and off x = 0, at
// rest in x (where only the vakonomic motion, driven by μ, leaves it) or moving, and step limits that end the runs
// early; the observer's metrics at the output times reached agree bit for bit.
TEST(EnsembleMember, TwoPassesEndMembersAsIntegratingBothAtOnce) {
    const std::vector<double> times = {0.1, 0.2, 0.4};
    const int nt = int(times.size());
    std::set<std::tuple<Status, nhvk::Dynamics, int>> seen;
    const auto both = [&](auto method, const double* q0, const double* v0, const double* mu0, long long max_steps) {
        using Method = decltype(method);
        nhvk::StepControl ctl;
        ctl.dt = Method::fixed ? 0.05 : 0.0;
        ctl.max_steps = max_steps;
        const long long rows = nhvk::metric_rows(nt);
        std::vector<double> one(rows, sentinel), two(rows, sentinel), stash(nhvk::stash_values(3, nt), sentinel);
        nhvk::DivergenceObserver<SourceXZero, double> a{SourceXZero{}, nhvk::DivergenceSpec{}, nt, one.data(), 1, 1e-3};
        nhvk::DivergenceObserver<SourceXZero, double> b{SourceXZero{}, nhvk::DivergenceSpec{}, nt, two.data(), 1, 1e-3};
        const nhvk::MemberOutcome o1 =
            nhvk::integrate_member<Method::template tmpl>(SourceXZero{}, q0, v0, mu0, 0.0, times.data(), nt, ctl, a);
        const nhvk::MemberOutcome o2 = nhvk::integrate_member_in_two_passes<Method::template tmpl>(
            SourceXZero{}, q0, v0, mu0, 0.0, times.data(), nt, ctl, b, nhvk::StateStash{stash.data(), 1, nt});
        EXPECT_EQ(o2.status, o1.status) << nhvk::status_name(o2.status) << " against " << nhvk::status_name(o1.status);
        EXPECT_EQ(o2.failed, o1.failed);
        EXPECT_EQ(o2.time_index, o1.time_index);
        EXPECT_EQ(b.onset_index, a.onset_index);
        const int reached = o1.status == Status::ok ? nt : std::max(0, o1.time_index);
        for (int r = 0; r < nhvk::metric_count; ++r)
            for (int i = 0; i < reached; ++i)
                EXPECT_EQ(bits(two[r * nt + i]), bits(one[r * nt + i])) << "metric " << r << ", time " << i;
        seen.insert({o1.status, o1.failed, o1.time_index});
    };
    const double on[3] = {0, 0.5, 0}, off[3] = {0.5, 0.5, 0};
    const double moving[3] = {1, 0.5, 0}, still[3] = {0, 1, 0.5}, no_mu[1] = {0}, mu[1] = {1.5};
    for (const double* q0 : {on, off})
        for (const double* v0 : {moving, still})
            for (const double* mu0 : {no_mu, mu})
                for (const long long max_steps : {nhvk::StepControl{}.max_steps, 3LL, 5LL}) {
                    SCOPED_TRACE(::testing::Message()
                                 << "q0 " << (q0 == on ? "on" : "off") << ", v0 " << (v0 == moving ? "moving" : "still")
                                 << ", mu0 " << mu0[0] << ", max_steps " << max_steps);
                    both(AdaptiveDopri5{}, q0, v0, mu0, max_steps);
                    both(FixedRk4{}, q0, v0, mu0, max_steps);
                }
    using D = nhvk::Dynamics;
    // the cases must have reached each kind of end the precedence orders
    EXPECT_TRUE(seen.count({Status::ok, D::none, -1}));
    EXPECT_TRUE(seen.count({Status::chart_singular, D::nonholonomic, -1}));
    EXPECT_TRUE(seen.count({Status::chart_singular, D::nonholonomic, 0}));
    EXPECT_TRUE(seen.count({Status::chart_singular, D::vakonomic, 0}));
    EXPECT_TRUE(seen.count({Status::step_limit, D::nonholonomic, 1}) ||
                seen.count({Status::step_limit, D::nonholonomic, 2}));
}

TEST(EnsembleMember, WrapAngle) {
    const double pi = std::acos(-1.0);
    EXPECT_NEAR(nhvk::wrap_angle(1.5 * pi), -0.5 * pi, 1e-15);
    EXPECT_NEAR(nhvk::wrap_angle(-1.5 * pi), 0.5 * pi, 1e-15);
    EXPECT_NEAR(nhvk::wrap_angle(7.0 * pi + 0.25), -pi + 0.25, 1e-13);
    EXPECT_NEAR(nhvk::wrap_angle(0.3), 0.3, 1e-16);
    EXPECT_NEAR(nhvk::wrap_angle(-0.3), -0.3, 1e-15);
    EXPECT_NEAR(nhvk::wrap_angle(-pi), pi, 1e-15); // (−π, π]
    EXPECT_NEAR(nhvk::wrap_angle(pi), pi, 1e-15);
    EXPECT_NEAR(nhvk::wrap_angle(-2.0 * pi), 0.0, 1e-15);
}

// d_q and d_v are finite and accurate whenever they are representable (issue 25 item 4): squares of huge differences,
// weights or masses overflow and squares of tiny ones underflow, a norm scaled by its largest component does neither.
TEST(DivergenceMetric, NormsNeitherOverflowNorUnderflow) {
    nhvk::models::PfaffianParticle model;
    model.m = 1e300;
    const nhvk::AdEquations<nhvk::models::PfaffianParticle, double> eq(model);
    const auto between = [&](const nhvk::DivergenceSpec& spec, double scale) {
        const double nh[6] = {0.0, 0.0, 1.0, 0.0, 0.0, 1.0};
        const double vk[6] = {3.0 * scale, -4.0 * scale, 1.0, 4.0 * scale, 3.0 * scale, 1.0};
        double dq = -1.0, dv = -1.0;
        nhvk::divergence_between(eq, nhvk::DivergenceMetric<3>(spec), nh, vk, 0.0, dq, dv);
        return std::pair<double, double>(dq, dv);
    };
    nhvk::DivergenceSpec euclid;
    for (const double scale : {1e160, 1e-200, 1.0}) {
        const auto [dq, dv] = between(euclid, scale);
        EXPECT_NEAR(dq / (5.0 * scale), 1.0, 1e-15) << scale;
        EXPECT_NEAR(dv / (5.0 * scale), 1.0, 1e-15) << scale;
    }
    nhvk::DivergenceSpec weighted; // weights of 1e200 on differences of 1e100
    for (int j = 0; j < 3; ++j) weighted.weight[j] = 1e200;
    EXPECT_NEAR(between(weighted, 1e100).first / 5e300, 1.0, 1e-15);
    nhvk::DivergenceSpec kinetic; // |Δ|_W with W = m I, m = 1e300: sqrt(m) · 5 · 1e10
    kinetic.kinetic = true;
    const auto [dq, dv] = between(kinetic, 1e10);
    EXPECT_NEAR(dq / 5e160, 1.0, 1e-14);
    EXPECT_NEAR(dv / 5e160, 1.0, 1e-14);
    EXPECT_EQ(between(kinetic, 0.0).first, 0.0);
}

} // namespace
