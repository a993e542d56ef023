// SPDX-License-Identifier: MIT
/** @file
 *  @brief The Chaplygin sleigh: a rigid body on a horizontal plane supported by a blade at (x, y) that forbids
 *         sideways motion of the blade point, with the centre of mass at distance a ahead of the blade.
 *
 *  Source: Chaplygin (1911); Bloch, "Nonholonomic Mechanics and Control", §1.7; docs/models.md (`chaplygin_sleigh`).
 *  Coordinates x, y (blade point), θ (angle, heading). Centre of mass at (x + a cos θ, y + a sin θ);
 *  L = ½m|v_cm|² + ½I θ̇² with v_cm = (ẋ − a θ̇ sin θ, ẏ + a θ̇ cos θ); φ = −ẋ sin θ + ẏ cos θ: linear,
 *  homogeneous of degree 1, non-integrable. Energy is conserved.
 *  Closed form (nonholonomic): with u = ẋ cos θ + ẏ sin θ, ω = θ̇ and J = I + m a²: u̇ = a ω², J ω̇ = −m a u ω;
 *  E = ½m u² + ½J ω², u = U tanh(κt + s0) with U = √(2E/m), κ = m a U/J, s0 = atanh(u0/U), ω ∝ sech(κt + s0).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct ChaplyginSleigh : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "chaplygin_sleigh";
    static constexpr const char* description =
        "Chaplygin sleigh: blade forbids sideways motion (linear, non-integrable)";
    static constexpr const char* coord_names[n] = {"x", "y", "theta"};
    static constexpr bool angles[n] = {false, false, true};

    Param m = 1.0;
    Param a = 0.5;
    Param I = 0.1;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m", m, ParamDomain::positive);
        visit("a", a, ParamDomain::any);
        visit("I", I, ParamDomain::positive);
    }

    // L = ½m|v_cm|² + ½I θ̇², v_cm = (ẋ − a θ̇ sin θ, ẏ + a θ̇ cos θ)
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        const S c = cos(q[2]), s = sin(q[2]);
        const S vx = v[0] - S(a) * v[2] * s;
        const S vy = v[1] + S(a) * v[2] * c;
        return S(0.5 * m) * (vx * vx + vy * vy) + S(0.5 * I) * v[2] * v[2];
    }
    // φ = −ẋ sin θ + ẏ cos θ
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = -v[0] * sin(q[2]) + v[1] * cos(q[2]);
    }
};

} // namespace nhvk::models
