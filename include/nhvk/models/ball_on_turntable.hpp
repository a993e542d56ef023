// SPDX-License-Identifier: MIT
/** @file
 *  @brief A ball rolling without slipping on a turntable that rotates with constant angular velocity Ω.
 *
 *  Source: Deressa, Example 1, eqs. (2.12)–(2.21); Lewis & Murray 1995 (the vakonomic comparison);
 *  docs/models.md (`ball_on_turntable`). Coordinates x, y (centre of the ball), ψ, θ, ϕ (angles; spelled psi, theta,
 *  phi in configs): the orientation is
 *  Rz(ψ)·Ry(θ)·Rx(ϕ), so the spatial angular velocity is
 *      ω = (ϕ̇ cos ψ cos θ − θ̇ sin ψ,  ϕ̇ sin ψ cos θ + θ̇ cos ψ,  ψ̇ − ϕ̇ sin θ).
 *  L = ½m(ẋ² + ẏ²) + ½m k² |ω|²; rolling on the table (contact point moving with the table, Ω ẑ × r):
 *      φ1 = ẋ − a ω_y + Ω y,   φ2 = ẏ + a ω_x − Ω x      (Deressa eq. (2.12)).
 *  Class: affine in v (not homogeneous, so the energy is not conserved), non-integrable.
 *  Closed form (nonholonomic): ω_z is constant and ẍ = −ν ẏ, ÿ = ν ẋ with ν = k²Ω/(k² + a²) (2Ω/7 for a solid
 *  sphere): the centre runs on a circle at angular rate ν, in the same sense as the table.
 *  NOTE: Deressa's eq. (2.17) prints ẋ = ν y, ẏ = −ν x, i.e. the opposite sense; differentiating (2.12) with
 *  m r̈ = F, m k² ω̇ = (−a ẑ) × F gives ẍ = −ν ẏ, ÿ = ν ẋ (same sense as Ω), which the tests confirm numerically.
 *
 *  Chart: Euler angles are singular (gimbal lock) at cos θ = 0, where ψ̇ and ϕ̇ both turn about ẑ, W loses rank
 *  and ψ̇, ϕ̇ ~ |ω|/cos θ. `in_chart` is false when |cos θ| ≤ `chart_margin<T>()` (1e-4 in double, 1e-3 in float),
 *  checked at every right-hand-side evaluation, and the engine ends such a trajectory with `Status::chart_singular`.
 *  Why these margins (measured on near misses of the pole on a table at rest, the setting of the chart tests in
 *  tests/models/test_ball_on_turntable.cpp): the LU (rcond threshold 1e3·ε) only notices the singularity at
 *  |cos θ| ≈ 1e-13 in double and ≈ 1e-4 in float (the generated equations' closed-form inverse of the angle block,
 *  whose determinant over its permanent is cos²θ/(1 + sin²θ), at |cos θ| ≈ √(2ε): 2e-8 and 5e-4; measured in
 *  bench/results/2026-11-24-schur-blocks.md), and before that the rounding of θ makes the rates' relative error,
 *  ≈ 1.6ε/|cos θ|, exceed the step control's tolerance. In double a pass at |cos θ| ≈ 1e-5 costs ~7·10³ DOPRI5
 *  steps at rtol 1e-10 and hits a 2·10⁵ step limit at rtol 1e-12; one at 1e-6 costs ~1.5·10⁵ steps at rtol 1e-10.
 *  In float (rtol 1e-6) passes closer than ~4e-4 end as `singular`, and a pass at 1e-3 already leaves |φ| ≈ 1e-4,
 *  ten times the float baseline. A generic motion (the body x-axis passing near the vertical, a codimension-2 event
 *  in SO(3)) comes within the margin with a probability proportional to the margin, so few trajectories are flagged,
 *  and at rtol ≥ 1e-10 none spends more than ~10⁴ steps on a pass (at rtol 1e-12 a pass at 3e-4 costs ~7·10⁴).
 *  NOTE: a motion that is smooth in these coordinates through cos θ = 0 (e.g. ψ = const, ϕ = const, θ = θ0 + t,
 *  which has ψ̇ = ϕ̇ = 0) may be stepped over when no stage lands inside the margin; that is harmless (the
 *  coordinates stay valid on the other side, θ > π/2).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct BallOnTurntable : ModelBase {
    static constexpr int n = 5, k = 2;
    static constexpr bool has_chart = true;
    static constexpr const char* name = "ball_on_turntable";
    static constexpr const char* description =
        "ball rolling on a turntable rotating at Omega (affine, non-integrable; Euler-angle chart)";
    static constexpr const char* coord_names[n] = {"x", "y", "psi", "theta", "phi"};
    static constexpr bool angles[n] = {false, false, true, true, true};

    Param m = 1.0;
    Param a = 1.0;
    Param k2 = 0.4;
    Param Omega = 1.0;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m", m, ParamDomain::positive);
        visit("a", a, ParamDomain::positive);
        visit("k2", k2, ParamDomain::positive);
        visit("Omega", Omega, ParamDomain::any);
    }

    /** @brief Spatial angular velocity of Rz(ψ)·Ry(θ)·Rx(ϕ): ω = ψ̇ ẑ + θ̇ Rz(ψ)ŷ + ϕ̇ Rz(ψ)Ry(θ)x̂. */
    template <class S> NHVK_HD static void angular_velocity(const S* q, const S* v, S* w) {
        const S cps = cos(q[2]), sps = sin(q[2]), cth = cos(q[3]), sth = sin(q[3]);
        w[0] = v[4] * cps * cth - v[3] * sps;
        w[1] = v[4] * sps * cth + v[3] * cps;
        w[2] = v[2] - v[4] * sth;
    }

    // L = ½m(ẋ² + ẏ²) + ½m k² |ω|²
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        S w[3];
        angular_velocity(q, v, w);
        return S(0.5 * m) * (v[0] * v[0] + v[1] * v[1]) + S(0.5 * m * k2) * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    }
    // φ1 = ẋ − a ω_y + Ω y,  φ2 = ẏ + a ω_x − Ω x   (Deressa eq. (2.12))
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        S w[3];
        angular_velocity(q, v, w);
        phi[0] = v[0] - S(a) * w[1] + S(Omega) * q[1];
        phi[1] = v[1] + S(a) * w[0] - S(Omega) * q[0];
    }

    /** @brief |cos θ| below which the Euler-angle chart counts as singular (see the file comment). */
    template <class T> NHVK_HD static constexpr T chart_margin() { return sizeof(T) >= 8 ? T(1e-4) : T(1e-3); }
    template <class T> NHVK_HD bool in_chart(const T* q) const { return abs(cos(q[3])) > chart_margin<T>(); }
};

} // namespace nhvk::models
