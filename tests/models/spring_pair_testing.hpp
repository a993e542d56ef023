// SPDX-License-Identifier: MIT
/** @file
 *  @brief Helpers for the tests of Talamucci's Example 2 systems on the spring pair (spring_pair.hpp): the vectors
 *         d = p1 − p2, s = ṗ1 + ṗ2, random states and the mechanical quantities whose conservation the tests check.
 */
#pragma once

#include "model_testing.hpp"
#include "nhvk/models/spring_pair.hpp"

namespace nhvk::testing {

using Vec3 = std::array<double, 3>;

inline Vec3 operator+(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vec3 operator-(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3 operator*(double c, const Vec3& a) { return {c * a[0], c * a[1], c * a[2]}; }
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/** @brief Particle 1 (q or v[0..2]) and particle 2 (q or v[3..5]). */
inline Vec3 first(const double* x) { return {x[0], x[1], x[2]}; }
inline Vec3 second(const double* x) { return {x[3], x[4], x[5]}; }
/** @brief d = p1 − p2 (from q) or ḋ = ṗ1 − ṗ2 (from v). */
inline Vec3 separation(const double* x) { return first(x) - second(x); }

/** @brief Total momentum m1ṗ1 + m2ṗ2. */
inline Vec3 momentum(const models::SpringPair& m, const double* v) {
    return double(m.m1) * first(v) + double(m.m2) * second(v);
}
/** @brief Σ pᵢ × gᵢ for per-particle vectors g1, g2 (angular momentum about the origin when gᵢ = mᵢṗᵢ). */
inline Vec3 moment(const double* q, const Vec3& g1, const Vec3& g2) {
    return cross(first(q), g1) + cross(second(q), g2);
}

/** @brief Random positions about ℓ apart (p1 near the origin, p2 near x̂) and velocities uniform in [−1, 1]. */
inline void random_spring_pair(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    q = {d(-0.2, 0.2), d(-0.2, 0.2), d(-0.2, 0.2), d(0.8, 1.4), d(-0.3, 0.3), d(-0.3, 0.3)};
    for (double& x : v) x = d(-1, 1);
}

/** @brief max over rows i and components of |f(i) − f(0)| for a vector quantity f(i). */
template <class F> double max_vec_change(int rows, F f) {
    const Vec3 f0 = f(0);
    double m = 0.0;
    for (int i = 1; i < rows; ++i) m = std::max(m, norm(f(i) - f0));
    return m;
}

/** @brief The model with unequal masses (m1 = 1.3, m2 = 0.7) and κ = 2, so that no law holds by symmetry. */
template <class M> M unequal_masses() {
    M m;
    m.m1 = 1.3;
    m.m2 = 0.7;
    m.kappa = 2.0;
    return m;
}

/** @brief Every φ_ν is linear in v at an off-manifold point: positively homogeneous of degree 1 and odd. */
template <class M> void expect_linear_of_degree_one() {
    const double q[6] = {0.1, -0.2, 0.3, 1, 0.2, -0.1}, v[6] = {0.5, 0.1, -0.4, 0.2, 0.3, 0.9};
    const double w[6] = {-0.5, -0.1, 0.4, -0.2, -0.3, -0.9};
    const auto s = homogeneity_degree(M{}, q, v);
    double a[M::k], b[M::k];
    M{}.constraints(q, v, 0.0, a);
    M{}.constraints(q, w, 0.0, b);
    for (int nu = 0; nu < M::k; ++nu) {
        EXPECT_NEAR(s[nu], 1.0, 1e-12) << "constraint " << nu;
        EXPECT_NEAR(a[nu], -b[nu], 1e-15) << "constraint " << nu;
    }
}

/** @brief max change over a recorded run of d × ḋ along the nonholonomic motion. */
template <class R> double max_change_relative_angular_momentum(const R& r) {
    return max_vec_change(r.rows(), [&](int i) { return cross(separation(r.q_nh(i)), separation(r.v_nh(i))); });
}

/**
 * @brief Noether momenta of L̃ = L − μ·φ along vakonomic motions from `samples` random states (μ0 from
 *        `draw_mu(Draw&)`, unequal masses): with πᵢ = mᵢṗᵢ − gᵢ(r, i), gᵢ the constraint part of ∂L̃/∂ṗᵢ at row i,
 *        the changes of π1 + π2 and of p1 × π1 + p2 × π2 over t ∈ [0, 3] must stay below 1e-9, while both are
 *        nonzero (> 1e-2) and the motion moves (Recorded::least_motion > 1e-2).
 */
template <class M, class Sampler, class DrawMu, class G>
void check_vakonomic_momenta(Sampler sample, std::uint64_t seed, DrawMu draw_mu, G g, int samples = 3) {
    Draw d(seed);
    const M m = unequal_masses<M>();
    double worst_p = 0.0, worst_l = 0.0, least_p = 1e300, least_l = 1e300, least_motion = 1e300;
    for (int s = 0; s < samples; ++s) {
        std::array<double, 6> q0, v0;
        sample(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, draw_mu(d), linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status) << " sample " << s;
        auto pi1 = [&](int i) { return double(m.m1) * first(r.v_vk(i)) - g(r, i, 1); };
        auto pi2 = [&](int i) { return double(m.m2) * second(r.v_vk(i)) - g(r, i, 2); };
        worst_p = std::max(worst_p, max_vec_change(r.rows(), [&](int i) { return pi1(i) + pi2(i); }));
        worst_l = std::max(worst_l, max_vec_change(r.rows(), [&](int i) { return moment(r.q_vk(i), pi1(i), pi2(i)); }));
        // Not vacuous: both momenta are nonzero and the motion moves and accelerates.
        least_p = std::min(least_p, norm(pi1(0) + pi2(0)));
        least_l = std::min(least_l, norm(moment(r.q_vk(0), pi1(0), pi2(0))));
        least_motion = std::min(least_motion, r.least_motion());
    }
    EXPECT_LT(worst_p, 1e-9);
    EXPECT_LT(worst_l, 1e-9);
    EXPECT_GT(least_p, 1e-2) << "the momentum checked for conservation is 0";
    EXPECT_GT(least_l, 1e-2) << "the angular momentum checked for conservation is 0";
    expect_moves(least_motion, "its conservation laws would hold trivially");
    measured("max_change_vk_momentum", worst_p);
    measured("max_change_vk_angular_momentum", worst_l);
    measured("min_abs_vk_momentum", least_p);
    measured("min_abs_vk_angular_momentum", least_l);
}

} // namespace nhvk::testing
