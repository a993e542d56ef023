// SPDX-License-Identifier: MIT
// A constraint φ and c·φ are one model (issue 38 item 7): the sampled initial states, the sampler's statuses and the
// observer's constraint residuals must not depend on c. With c a power of two the sampler's normalized rows are those
// of φ bit for bit, so the samples must be identical; with c = 1e8 or 1e-8 (not exact in binary) equal to rounding.
#include "core_test_util.hpp"

#include <nhvk/member.hpp>
#include <nhvk/sample_member.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

/** nh_particle (L = ½|v|², φ = ż − y ẋ) with its constraint written as `Scale::value · φ`. */
template <class Scale> struct ScaledParticle : nhvk::ModelBase {
    static constexpr int n = 3, k = 1;
    template <class V> void visit_params(V&&) {}
    template <class S> S lagrangian(const S*, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = S(Scale::value) * (v[2] - q[1] * v[0]);
    }
};

struct One {
    static constexpr double value = 1.0;
};
struct Pow2Big { // 2^27 ≈ 1.3e8
    static constexpr double value = 134217728.0;
};
struct Pow2Small {
    static constexpr double value = 1.0 / 134217728.0;
};
struct Big {
    static constexpr double value = 1e8;
};
struct Small {
    static constexpr double value = 1e-8;
};

struct Sample {
    nhvk::SampleStatus status;
    double q[3], v[3];
};

/** Members [0, N) of the ensemble (q0 uniform in [−1, 1]³, v0 standard normal), optionally on the energy
 *  shell E0 = 1.5. */
template <class Scale> std::vector<Sample> samples(int N, bool shell) {
    using M = ScaledParticle<Scale>;
    nhvk::SampleSpec<M> spec;
    spec.seed = 1;
    spec.has_energy = shell;
    spec.energy = 1.5;
    for (int j = 0; j < 3; ++j) {
        spec.q0[j] = nhvk::make_uniform(-1.0, 1.0);
        spec.v0[j] = nhvk::make_normal(0.0, 1.0);
    }
    spec.mu0[0] = nhvk::make_fixed(0.0);
    std::vector<Sample> out(static_cast<std::size_t>(N));
    for (int g = 0; g < N; ++g) {
        double p[1], mu[1];
        Sample& s = out[static_cast<std::size_t>(g)];
        s.status =
            nhvk::sample_member<M, nhvk::AdEquations<M, double>>(spec, static_cast<std::uint64_t>(g), p, s.q, s.v, mu);
    }
    return out;
}

/** Compares the samples of `Scale` with those of c = 1: every status ok, q equal, v within `rel` of max(1, |v|). */
template <class Scale> void expect_same_samples(bool shell, double rel) {
    constexpr int N = 200;
    const std::vector<Sample> ref = samples<One>(N, shell), got = samples<Scale>(N, shell);
    int failed = 0;
    double worst = 0.0;
    for (int g = 0; g < N; ++g) {
        const Sample &a = ref[static_cast<std::size_t>(g)], &b = got[static_cast<std::size_t>(g)];
        ASSERT_EQ(a.status, nhvk::SampleStatus::ok) << "member " << g << " with c = 1";
        if (b.status != nhvk::SampleStatus::ok) {
            ++failed;
            continue;
        }
        for (int j = 0; j < 3; ++j) {
            EXPECT_EQ(a.q[j], b.q[j]) << "member " << g;
            worst = std::max(worst, std::fabs(a.v[j] - b.v[j]) / std::max(1.0, std::fabs(a.v[j])));
        }
    }
    EXPECT_EQ(failed, 0) << "members not placed with the constraint times " << Scale::value
                         << (shell ? " on the energy shell" : "");
    if (rel == 0.0) EXPECT_EQ(worst, 0.0) << "c = " << Scale::value;
    else EXPECT_LE(worst, rel) << "c = " << Scale::value;
}

TEST(ConstraintScale, SamplesAreThoseOfTheUnscaledConstraint) {
    expect_same_samples<Pow2Big>(false, 0.0);
    expect_same_samples<Pow2Small>(false, 0.0);
    expect_same_samples<Big>(false, 1e-14);
    expect_same_samples<Small>(false, 1e-14);
}

TEST(ConstraintScale, SamplesOnTheEnergyShellAreThoseOfTheUnscaledConstraint) {
    expect_same_samples<Pow2Big>(true, 0.0);
    expect_same_samples<Pow2Small>(true, 0.0);
    expect_same_samples<Big>(true, 1e-14);
    expect_same_samples<Small>(true, 1e-14);
}

/** The observer's metrics of one member (fixed-step RK4, no projection: the residuals are the integration's drift),
 *  with μ0 = 0.25 / c (the multiplier of c·φ is μ/c). */
template <class Scale> std::vector<double> metrics_of() {
    using M = ScaledParticle<Scale>;
    const M model;
    const double q0[3] = {0.3, -0.7, 0.1}, v0[3] = {0.8, 0.4, -0.7 * 0.8}, mu0[1] = {0.25 / Scale::value};
    return nhvk_test::rk4_member_metrics(model, q0, v0, mu0, 1.0 / 16);
}

TEST(ConstraintScale, TheObserversResidualsAreThoseOfTheUnscaledConstraint) {
    const std::vector<double> ref = metrics_of<One>(), big = metrics_of<Pow2Big>(), small = metrics_of<Pow2Small>();
    const int nt = 3;
    for (int m = 0; m < nhvk::metric_count; ++m) {
        const nhvk::MetricInfo& d = nhvk::metric_info(m);
        for (int i = 0; i < nt; ++i) {
            const double x = ref[std::size_t(m * nt + i)];
            if (m == nhvk::metric_res_nh || m == nhvk::metric_res_vk)
                EXPECT_GT(x, 0.0) << d.name << " at t[" << i << "]: the test needs a residual that is not 0";
            // NOTE: the motion's solves see c·J (their pivoting and rounding differ in the last bits), so the metrics
            // agree to rounding: relative 1e-9, or 1e-14 absolute for the drifts and residuals near rounding (the
            // state's values are of order 1).
            for (const std::vector<double>* other : {&big, &small}) {
                const double y = (*other)[std::size_t(m * nt + i)];
                EXPECT_LE(std::fabs(y - x), 1e-9 * std::fabs(x) + 1e-14)
                    << d.name << " at t[" << i << "]: " << y << " with φ times " << (other == &big ? "2^27" : "2^-27")
                    << ", " << x << " with φ";
            }
        }
    }
}

// The residual is in velocity units: for this linear constraint |φ| / |∂φ/∂v| is the distance of v from the plane
// φ = 0, computed here by hand.
TEST(ConstraintScale, TheResidualIsTheDistanceFromTheConstraintSet) {
    using M = ScaledParticle<Big>;
    const nhvk::AdEquations<M, double> eq{M{}};
    const double q[3] = {0.2, -1.5, 0.0}, v[3] = {0.5, 0.25, 2.0};
    const double phi = v[2] - q[1] * v[0], grad = std::sqrt(q[1] * q[1] + 1.0);
    const double r = nhvk::diagnose_with(eq, q, v, 0.0).residual;
    EXPECT_NEAR(r, std::fabs(phi) / grad, 1e-15 * std::fabs(phi) / grad);
}

} // namespace
