// SPDX-License-Identifier: MIT
// Shared helpers of the core tests: small models defined here (with hand-derived derivatives in the tests that use
// them), the nh_particle closed form of docs/models.md, and a few numeric utilities. Nothing here calls the engine's
// derivative code; expected values are computed independently.
#pragma once

#include "loglog_slope.hpp"
#include <gtest/gtest.h>
#include <nhvk/dual.hpp>
#include <nhvk/dynamics.hpp>
#include <nhvk/member.hpp>
#include <nhvk/status.hpp>
#include <nhvk/steppers.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace nhvk_test {

/** The bits of `x`: equal for equal doubles, NaN included, and unequal for 0 and −0. */
inline std::uint64_t bits(double x) {
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

/**
 * A 2-dof test model with non-trivial q-, v- and t-dependence everywhere (AD test and energy balance):
 *   L = ½(1+q0²)v0² + sin(q1)v0v1 + ½v1² − cos(q0) + t·q1 + t²·q0·v1
 *   φ = v0² + q0 v0 v1 + q1 v1 + t q0 v1 − t            (nonlinear, affine-in-t, not homogeneous)
 *   F = (−c v0 + 0.5 q1, 0.2 sin t)                      (only when with_force)
 */
template <bool WithForce> struct ModelA : nhvk::ModelBase {
    static constexpr int n = 2, k = 1;
    static constexpr bool has_force = WithForce;
    static constexpr bool lagrangian_depends_on_t = true;
    double c = 0.3;
    template <class S> S lagrangian(const S* q, const S* v, const S& t) const {
        using nhvk::cos;
        using nhvk::sin;
        return S(0.5) * (S(1) + q[0] * q[0]) * v[0] * v[0] + sin(q[1]) * v[0] * v[1] + S(0.5) * v[1] * v[1] -
               cos(q[0]) + t * q[1] + t * t * q[0] * v[1];
    }
    template <class S> void constraints(const S* q, const S* v, const S& t, S* phi) const {
        phi[0] = v[0] * v[0] + q[0] * v[0] * v[1] + q[1] * v[1] + t * q[0] * v[1] - t;
    }
    template <class S> void force(const S* q, const S* v, const S& t, S* F) const {
        using nhvk::sin;
        F[0] = -S(c) * v[0] + S(0.5) * q[1];
        F[1] = S(0.2) * sin(t);
    }
};

/** Hand-derived quantities of ModelA (see the derivation in test_ad_parts.cpp). */
struct ModelAHand {
    double W[2][2], Lv[2], b[2], phi, J[2], gamma, H[2][2], c[2], E, Lt, F[2];
    ModelAHand(const double* q, const double* v, double t, bool with_force, double cf = 0.3) {
        const double q0 = q[0], q1 = q[1], v0 = v[0], v1 = v[1];
        W[0][0] = 1 + q0 * q0;
        W[0][1] = W[1][0] = std::sin(q1);
        W[1][1] = 1;
        Lv[0] = (1 + q0 * q0) * v0 + std::sin(q1) * v1;
        Lv[1] = std::sin(q1) * v0 + v1 + t * t * q0;
        F[0] = with_force ? -cf * v0 + 0.5 * q1 : 0.0;
        F[1] = with_force ? 0.2 * std::sin(t) : 0.0;
        // b = (∂L_v/∂q)·v + ∂L_v/∂t − L_q − F
        b[0] = q0 * v0 * v0 + std::cos(q1) * v1 * v1 - std::sin(q0) - t * t * v1 - F[0];
        b[1] = -t + t * t * v0 + 2 * t * q0 - F[1];
        phi = v0 * v0 + q0 * v0 * v1 + q1 * v1 + t * q0 * v1 - t;
        J[0] = 2 * v0 + q0 * v1;
        J[1] = q0 * v0 + q1 + t * q0;
        gamma = -(v0 * (v0 * v1 + t * v1) + v1 * v1 + (q0 * v1 - 1));
        H[0][0] = 2;
        H[0][1] = H[1][0] = q0;
        H[1][1] = 0;
        c[0] = -t * v1;
        c[1] = v0 * v0 + t * v0 + q0;
        const double L = 0.5 * (1 + q0 * q0) * v0 * v0 + std::sin(q1) * v0 * v1 + 0.5 * v1 * v1 - std::cos(q0) +
                         t * q1 + t * t * q0 * v1;
        E = v0 * Lv[0] + v1 * Lv[1] - L;
        Lt = q1 + 2 * t * q0 * v1; // ∂L/∂t
    }
};

/**
 * An autonomous affine (not homogeneous) constraint in a potential, for the vakonomic energy (§4 item 4):
 *   L = ½|v|² − ½κ(q0² + q1²),  φ = v2 − q1 v0 + ω q0.
 * Along the vakonomic motion E − μ·(J·v) is conserved while E itself changes.
 */
struct AffineModel : nhvk::ModelBase {
    static constexpr int n = 3, k = 1;
    double kappa = 1.0, omega = 1.5;
    template <class S> S lagrangian(const S* q, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - S(0.5 * kappa) * (q[0] * q[0] + q[1] * q[1]);
    }
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[2] - q[1] * v[0] + S(omega) * q[0];
    }
};

/** Heisenberg with the sub-Riemannian L = ½(ẋ²+ẏ²) (W singular), φ = ż − ½(x ẏ − y ẋ). */
struct HeisenbergSR : nhvk::ModelBase {
    static constexpr int n = 3, k = 1;
    template <class S> S lagrangian(const S*, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1]);
    }
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[2] - S(0.5) * (q[0] * v[1] - q[1] * v[0]);
    }
};

/** φ = v0² − v1² (degree 2): J = (2v0, −2v1) vanishes at v = 0, where the saddle-point matrix is singular. */
struct DegenerateModel : nhvk::ModelBase {
    static constexpr int n = 2, k = 1;
    // NOTE: run_chunk_member → make_model needs visit_params even without parameters (ModelBase has no default).
    template <class V> void visit_params(V&&) {}
    template <class S> S lagrangian(const S*, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1]);
    }
    template <class S> void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = v[0] * v[0] - v[1] * v[1];
    }
};

/** A plain ODE system for the steppers: the harmonic oscillator y'' = −ω²y, y(0) = 1, y'(0) = 0. */
template <class T> struct HarmonicSys {
    static constexpr int dim = 2;
    T omega = T(1);
    /// the same oscillator in the scalar S (the Jacobian of the linearly implicit steppers, nhvk/jacobian.hpp)
    template <class S> using rebind = HarmonicSys<S>;
    HarmonicSys() = default;
    template <class U> explicit HarmonicSys(const HarmonicSys<U>& o) : omega(T(o.omega)) {}
    const HarmonicSys& model() const { return *this; }
    nhvk::Status rhs(T, const T* y, T* dy) const {
        dy[0] = y[1];
        dy[1] = -omega * omega * y[0];
        return nhvk::Status::ok;
    }
    nhvk::Status project(T, T*) const { return nhvk::Status::ok; }
};

/** nh_particle closed form (docs/models.md, nonholonomic): position at t from (q0, v0) at t = 0, in long double. */
inline void nh_particle_exact(const double* q0, const double* v0, double t, double* q) {
    using LD = long double;
    const LD x0 = q0[0], y0 = q0[1], z0 = q0[2], vx = v0[0], vy = v0[1];
    const LD y = y0 + vy * LD(t);
    const LD C = vx * std::sqrt(1 + y0 * y0);
    q[1] = double(y);
    if (std::fabs(double(vy)) > 0) {
        q[0] = double(x0 + C / vy * (std::asinh(y) - std::asinh(y0)));
        q[2] = double(z0 + C / vy * (std::sqrt(1 + y * y) - std::sqrt(1 + y0 * y0)));
    } else { // ẏ0 = 0: y constant, ẋ constant
        q[0] = double(x0 + vx * LD(t));
        q[2] = double(z0 + y0 * vx * LD(t));
    }
}

/** Random nh_particle initial state on the constraint set (v_z = y0 v_x). */
inline void nh_particle_random_state(std::mt19937_64& rng, double* q0, double* v0) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int j = 0; j < 3; ++j) q0[j] = u(rng);
    v0[0] = u(rng);
    v0[1] = 0.2 + 0.8 * std::fabs(u(rng)) * (u(rng) < 0 ? -1 : 1); // |ẏ0| ≥ 0.2
    v0[2] = q0[1] * v0[0];
}

/** Geometric grid of `count` points from a to b. */
inline std::vector<double> geom_grid(double a, double b, int count) {
    std::vector<double> g(count);
    for (int i = 0; i < count; ++i) g[i] = a * std::pow(b / a, double(i) / double(count - 1));
    return g;
}

/** @brief The observer's metrics of one member of `model` integrated by fixed-step RK4 (step `dt`, no projection: the
 *         residuals are the integration's drift) to the output times 0.5, 1 and 2, its status expected ok: the layout
 * of metric_rows(3). Fixed steps make every operation of a scaled model scale exactly. */
template <class M>
std::vector<double> rk4_member_metrics(const M& model, const double* q0, const double* v0, const double* mu0,
                                       double dt) {
    const std::vector<double> times = {0.5, 1.0, 2.0};
    const int nt = int(times.size());
    nhvk::StepControl ctl;
    ctl.dt = dt;
    std::vector<double> metrics(std::size_t(nhvk::metric_rows(nt)), 0.0);
    nhvk::DivergenceObserver<M, double> obs{model, nhvk::DivergenceSpec{}, nt, metrics.data(), 1, 1e-3};
    const nhvk::MemberOutcome out =
        nhvk::integrate_member<nhvk::Rk4>(model, q0, v0, mu0, 0.0, times.data(), nt, ctl, obs);
    EXPECT_EQ(out.status, nhvk::Status::ok);
    return metrics;
}

} // namespace nhvk_test
