// SPDX-License-Identifier: MIT
// Per-trajectory status (include/nhvk/status.hpp): singular saddle points, non-finite states, step limits and step
// underflow are reported as such — by the steppers, by integrate_member (with the dynamics and output index that
// failed) and by run_chunk_member — and never turn into NaN metrics.
#include "core_test_util.hpp"

#include <nhvk/ensemble_chunk.hpp>
#include <nhvk/member.hpp>
#include <nhvk/models/nh_particle.hpp>
#include <nhvk/models/perpendicular_velocities.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

namespace {

using nhvk::Dopri5;
using nhvk::Dynamics;
using nhvk::MemberOutcome;
using nhvk::Rk4;
using nhvk::Status;
using nhvk::StepControl;
using nhvk::models::NhParticle;

/** Counts observer calls and checks every state it sees is finite (model M: 2n and 2n + k values). */
template <class M> struct CountingObserver {
    int calls = 0;
    bool all_finite = true;
    template <class T> void operator()(int, T, const T* a, const T* b) {
        ++calls;
        for (int j = 0; j < 2 * M::n; ++j) all_finite = all_finite && std::isfinite(double(a[j]));
        for (int j = 0; j < 2 * M::n + M::k; ++j) all_finite = all_finite && std::isfinite(double(b[j]));
    }
};

/**
 * A motion that blows up in finite time: L = ½(v0² + v1²) + q0⁴/4 (so q̈0 = q0³), φ = v1 (trivially satisfied with
 * v1 = 0). From q0 = 1, v0 = 1/√2 the energy ½v0² − q0⁴/4 is 0, so v0 = q0²/√2 and q0 = 1/(1 − t/√2): it reaches
 * infinity at t = √2 ≈ 1.414.
 */
struct BlowUpModel : nhvk::ModelBase {
    static constexpr int n = 2, k = 1;
    template <class V> void visit_params(V&&) {}
    template <class S> S lagrangian(const S* q, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1]) + S(0.25) * q[0] * q[0] * q[0] * q[0];
    }
    template <class S> void constraints(const S*, const S* v, const S&, S* phi) const { phi[0] = v[1]; }
};

/** DegenerateModel from v = 0, where J = 0: stepper `S` reports `singular` in the nonholonomic dynamics at t0 (output
 *  index −1), before anything is observed. */
template <template <class, class> class S> void expect_singular_at_t0(const char* stepper) {
    SCOPED_TRACE(stepper);
    const nhvk_test::DegenerateModel model;
    const double q0[2] = {0.3, 0.1}, v0[2] = {0.0, 0.0}, mu0[1] = {0.0}, times[2] = {0.5, 1.0};
    CountingObserver<nhvk_test::DegenerateModel> obs;
    const MemberOutcome out = nhvk::integrate_member<S>(model, q0, v0, mu0, 0.0, times, 2, StepControl{}, obs);
    EXPECT_EQ(out.status, Status::singular);
    EXPECT_EQ(out.failed, Dynamics::nonholonomic);
    EXPECT_EQ(out.time_index, -1);
    EXPECT_EQ(obs.calls, 0);
    EXPECT_TRUE(obs.all_finite);
}

TEST(Status, VanishingConstraintJacobianIsSingularNotNaN) {
    expect_singular_at_t0<Dopri5>("dopri5");
    // the same with RK4: Rk4::init evaluates the right-hand side at t0 like Dopri5::init, so the failure is reported
    // at t0 (index −1) before anything is observed.
    expect_singular_at_t0<Rk4>("rk4");
}

TEST(Status, VakonomicOnlySingularity) {
    // perpendicular_velocities with m1 = m2 = 1: W − μH = [[I, −μI], [−μI, I]] is singular at μ = 1, the nonholonomic
    // saddle point is regular.
    const nhvk::models::PerpendicularVelocities model;
    const double q0[6] = {0, 0, 0, 1.2, 0.3, -0.1}, v0[6] = {0.4, -0.2, 0.3, 0.2, 0.1, -0.2}, mu0[1] = {1.0};
    const double times[1] = {1.0};
    CountingObserver<nhvk::models::PerpendicularVelocities> obs;
    const MemberOutcome out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times, 1, StepControl{}, obs);
    EXPECT_EQ(out.status, Status::singular);
    EXPECT_EQ(out.failed, Dynamics::vakonomic);
    EXPECT_EQ(out.time_index, -1);
}

TEST(Status, NonFiniteInitialVelocity) {
    const NhParticle model;
    const double q0[3] = {0.1, 0.2, 0.3}, v0[3] = {std::numeric_limits<double>::quiet_NaN(), 0.5, 0.1};
    const double mu0[1] = {0.0}, times[1] = {1.0};
    CountingObserver<NhParticle> obs;
    const MemberOutcome out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times, 1, StepControl{}, obs);
    EXPECT_TRUE(out.status == Status::non_finite || out.status == Status::singular) << nhvk::status_name(out.status);
    EXPECT_NE(out.status, Status::ok);
    EXPECT_EQ(obs.calls, 0);
}

TEST(Status, StepLimit) {
    const NhParticle model;
    const double q0[3] = {0.1, 0.2, 0.3}, v0[3] = {1.0, 0.5, 0.2}, mu0[1] = {0.0}, times[3] = {0.001, 5.0, 10.0};
    StepControl ctl;
    ctl.max_steps = 20;
    ctl.rtol = 1e-12;
    ctl.atol = 1e-14;
    CountingObserver<NhParticle> obs;
    const MemberOutcome out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times, 3, ctl, obs);
    EXPECT_EQ(out.status, Status::step_limit);
    EXPECT_EQ(out.failed, Dynamics::nonholonomic);
    EXPECT_EQ(out.time_index, 1);
    EXPECT_EQ(obs.calls, 2); // t0 and the first output time
    EXPECT_TRUE(obs.all_finite);

    StepControl ctl4;
    ctl4.dt = 0.01;
    ctl4.max_steps = 50; // 0.001 takes 1 step, 5.0 would need 500
    CountingObserver<NhParticle> obs4;
    const MemberOutcome out4 = nhvk::integrate_member<Rk4>(model, q0, v0, mu0, 0.0, times, 3, ctl4, obs4);
    EXPECT_EQ(out4.status, Status::step_limit);
    EXPECT_EQ(out4.time_index, 1);
}

TEST(Status, ImpossibleMinStepUnderflows) {
    const NhParticle model;
    const double q0[3] = {0.1, 0.2, 0.3}, v0[3] = {1.0, 0.5, 0.2}, mu0[1] = {0.0}, times[1] = {1.0};
    StepControl ctl;
    ctl.dt = 1e-3;
    ctl.min_step = 0.5; // the first step is already below it
    CountingObserver<NhParticle> obs;
    const MemberOutcome out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times, 1, ctl, obs);
    EXPECT_EQ(out.status, Status::step_underflow);
    EXPECT_EQ(out.failed, Dynamics::nonholonomic);
    EXPECT_EQ(out.time_index, 0);
}

TEST(Status, FiniteTimeBlowUpUnderflowsAtTheRightOutputTime) {
    const BlowUpModel model;
    const double q0[2] = {1.0, 0.0}, v0[2] = {1.0 / std::sqrt(2.0), 0.0}, mu0[1] = {0.0};
    const double times[4] = {0.5, 1.0, 1.5, 2.0}; // blow-up at √2: between the 2nd and 3rd output
    StepControl ctl;
    ctl.rtol = 1e-10;
    ctl.atol = 1e-12;
    ctl.dt = 0.0;
    ctl.min_step = 1e-9;
    CountingObserver<BlowUpModel> obs;
    const MemberOutcome out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times, 4, ctl, obs);
    EXPECT_EQ(out.status, Status::step_underflow) << nhvk::status_name(out.status);
    EXPECT_EQ(out.failed, Dynamics::nonholonomic);
    EXPECT_EQ(out.time_index, 2);
    EXPECT_EQ(obs.calls, 3);
    EXPECT_TRUE(obs.all_finite);
}

// Through the chunk: failed members get their status, and their metrics are either unwritten or finite.
TEST(Status, ChunkMembersReportFailuresWithoutNaNMetrics) {
    const int nt = 4;
    const long long m = 3, ld = 4;
    const double times[nt] = {0.5, 1.0, 1.5, 2.0};
    // member 0: regular; member 1: blows up before t = 1.5; member 2: J = 0 at t0 (singular)
    // BlowUpModel and DegenerateModel differ, so run the same layout twice with one model each.
    auto run = [&](auto model, const std::vector<double>& q0, const std::vector<double>& v0) {
        using M = decltype(model);
        std::vector<double> mu0(M::k * ld, 0.0), metrics(std::size_t(nhvk::metric_rows(nt)) * ld, -1.0);
        std::vector<std::uint8_t> status(ld, 0xEE), failed(ld, 0xEE);
        std::vector<std::int32_t> fail_index(ld, -77), onset(ld, -77);
        nhvk::ChunkArgs a;
        a.m = m;
        a.ld = ld;
        a.nt = nt;
        a.times = times;
        a.q0 = q0.data();
        a.v0 = v0.data();
        a.mu0 = mu0.data();
        a.ctl.dt = 0.0;
        a.ctl.min_step = 1e-9;
        a.metrics = metrics.data();
        a.status = status.data();
        a.failed = failed.data();
        a.fail_index = fail_index.data();
        a.onset = onset.data();
        for (long long j = 0; j < m; ++j) nhvk::run_chunk_member<M, double, Dopri5>(a, j);
        // the per-time metrics are finite or unwritten; the onset-time row is NaN where d_q never crossed
        for (std::size_t i = 0; i < std::size_t(nhvk::metric_count) * nt * ld; ++i)
            EXPECT_TRUE(std::isfinite(metrics[i]));
        return std::make_tuple(status, failed, fail_index, onset, metrics);
    };
    {
        // BlowUpModel: member 0 at rest (regular), member 1 the blow-up, member 2 slower blow-up (t = 2√2, regular)
        const double s = 1.0 / std::sqrt(2.0);
        const std::vector<double> q0 = {0.0, 1.0, 0.5, 0, /**/ 0, 0, 0, 0};
        const std::vector<double> v0 = {0.0, s, s * 0.25, 0, /**/ 0, 0, 0, 0};
        auto [status, failed, fail_index, onset, metrics] = run(BlowUpModel{}, q0, v0);
        EXPECT_EQ(status[0], std::uint8_t(Status::ok));
        EXPECT_EQ(status[1], std::uint8_t(Status::step_underflow));
        EXPECT_EQ(failed[1], std::uint8_t(Dynamics::nonholonomic));
        EXPECT_EQ(fail_index[1], 2);
        EXPECT_LT(onset[1], 2); // an onset only among the output times it reached
        EXPECT_EQ(status[2], std::uint8_t(Status::ok));
        // member 1: outputs 0 and 1 written, 2 and 3 untouched
        EXPECT_NE(metrics[(nhvk::metric_res_nh * nt + 1) * ld + 1], -1.0);
        EXPECT_EQ(metrics[(nhvk::metric_res_nh * nt + 2) * ld + 1], -1.0);
    }
    {
        const std::vector<double> q0 = {0.1, 0.2, 0.3, 0, /**/ 0, 0, 0, 0};
        const std::vector<double> v0 = {0.5, 0.0, 0.7, 0, /**/ 0.5, 0.0, -0.7, 0};
        auto [status, failed, fail_index, onset, metrics] = run(nhvk_test::DegenerateModel{}, q0, v0);
        EXPECT_EQ(status[0], std::uint8_t(Status::ok));
        EXPECT_EQ(status[1], std::uint8_t(Status::singular));
        EXPECT_EQ(failed[1], std::uint8_t(Dynamics::nonholonomic));
        EXPECT_EQ(fail_index[1], -1);
        EXPECT_EQ(status[2], std::uint8_t(Status::ok));
        for (int q = 0; q < nhvk::metric_count * nt; ++q) EXPECT_EQ(metrics[q * ld + 1], -1.0);
        EXPECT_EQ(status[3], 0xEE); // padding untouched
    }
}

TEST(Status, Names) {
    EXPECT_STREQ(nhvk::status_name(Status::ok), "ok");
    EXPECT_STREQ(nhvk::status_name(Status::singular), "singular");
    EXPECT_STREQ(nhvk::status_name(Status::non_finite), "non_finite");
    EXPECT_STREQ(nhvk::status_name(Status::step_underflow), "step_underflow");
    EXPECT_STREQ(nhvk::status_name(Status::step_limit), "step_limit");
    EXPECT_STREQ(nhvk::status_name(Status::chart_singular), "chart_singular");
}

} // namespace
