// SPDX-License-Identifier: MIT
// pfaffian_particle (Deressa Example 2): Deressa's integrability expression (4.16) computed from the model by AD,
// the integrable member β = −1 as a control case (both dynamics coincide), the generic members' divergence laws,
// energies, and β = 0 reproducing nh_particle.
#include "model_testing.hpp"
#include "nhvk/models/nh_particle.hpp"
#include "nhvk/models/pfaffian_particle.hpp"

namespace nhvk::testing {
namespace {

using M = models::PfaffianParticle;

M with_beta(double beta) {
    M m;
    m.beta = beta;
    return m;
}

/** @brief Deressa eq. (4.16), a(∂c/∂q2 − ∂b/∂q3) + b(∂a/∂q3 − ∂c/∂q1) + c(∂b/∂q1 − ∂a/∂q2), with (a, b, c)(q) = ∂φ/∂v
 *         read from the model by forward AD in q (φ is linear: a_A(q) = φ(q, e_A)). */
double deressa_416(const M& m, const double* q) {
    using S = Dual<double, 3>;
    S qq[3], A[3];
    for (int j = 0; j < 3; ++j) {
        qq[j] = S(q[j]);
        qq[j].d[j] = 1.0;
    }
    for (int c = 0; c < 3; ++c) {
        S e[3] = {S(0.0), S(0.0), S(0.0)}, ph[1];
        e[c] = S(1.0);
        m.constraints(qq, e, S(0.0), ph);
        A[c] = ph[0];
    }
    // A[c].d[j] = ∂a_c/∂q_j
    return A[0].val * (A[2].d[1] - A[1].d[2]) + A[1].val * (A[0].d[2] - A[2].d[0]) + A[2].val * (A[1].d[0] - A[0].d[1]);
}

/** @brief Random (q0, v0) on φ = 0: q̇3 = q2 q̇1 − β q1 q̇2. */
auto sampler(double beta) {
    return [beta](Draw& d, std::array<double, 3>& q, std::array<double, 3>& v) {
        q = {d(-1, 1), d(-1, 1), d(-1, 1)};
        v = {d(-1, 1), d(-1, 1), 0.0};
        v[2] = q[1] * v[0] - beta * q[0] * v[1];
    };
}

TEST(PfaffianParticle, DeressaIntegrabilityExpressionIsOnePlusBeta) {
    Draw d(1001);
    double worst = 0.0;
    for (double beta : {0.5, -1.0, 0.0, 2.0}) {
        for (int s = 0; s < 4; ++s) {
            const double q[3] = {d(-2, 2), d(-2, 2), d(-2, 2)};
            worst = std::max(worst, std::fabs(deressa_416(with_beta(beta), q) - (1.0 + beta)));
        }
    }
    EXPECT_LT(worst, 1e-14);
    const double q[3] = {0.3, -0.4, 0.5};
    EXPECT_EQ(deressa_416(with_beta(-1.0), q), 0.0);
    EXPECT_NEAR(deressa_416(M{}, q), 1.5, 1e-15); // the default β = 0.5 is non-integrable
}

TEST(PfaffianParticle, IntegrableMemberIsAControlCase) {
    // β = −1: φ = d(q3 − q1 q2)/dt, holonomic in disguise: both dynamics coincide for every μ0.
    check_coincide(with_beta(-1.0), sampler(-1.0), 1002, {-2.0, -0.3, 0.0, 0.6, 2.0}, 3.0, 1e-10, 3);
}

TEST(PfaffianParticle, DivergenceLawsDefault) { check_divergence_laws(M{}, sampler(M{}.beta), 1003); }

TEST(PfaffianParticle, DivergenceLawsBetaTwo) { check_divergence_laws(with_beta(2.0), sampler(2.0), 1004); }

TEST(PfaffianParticle, Conservation) { check_conservation(M{}, sampler(M{}.beta), 1005, true, 3.0); }

TEST(PfaffianParticle, BetaZeroIsTheNonholonomicParticle) {
    Draw d(1006);
    std::array<double, 3> q0, v0;
    sampler(0.0)(d, q0, v0);
    const Recorded<M> a = run_member(with_beta(0.0), q0, v0, {0.4}, linear_times(2.0, 10));
    const Recorded<models::NhParticle> b = run_member(models::NhParticle{}, q0, v0, {0.4}, linear_times(2.0, 10));
    ASSERT_EQ(a.outcome.status, Status::ok);
    ASSERT_EQ(b.outcome.status, Status::ok);
    for (std::size_t i = 0; i < a.data.size(); ++i) EXPECT_NEAR(a.data[i], b.data[i], 1e-12) << i;
}

} // namespace
} // namespace nhvk::testing
