// SPDX-License-Identifier: MIT
/** @file
 *  @brief The Appell–Hamel system: a heavy particle whose vertical velocity is tied to its horizontal speed,
 *         ż = a √(ẋ² + ẏ²) — the classical example of a nonlinear nonholonomic constraint.
 *
 *  Source: Appell (1911), Hamel (1938); Talamucci 2025 §1 and §4 (nonlinear constraints, the Četaev rule);
 *  docs/models.md (`appell_hamel`). Coordinates x, y, z (no angles). L = ½m|v|² − m g z; φ = ż − a √(ẋ² + ẏ²):
 *  nonlinear, positively homogeneous of degree 1 (so J·v = φ and the energy is conserved), and singular where
 *  ẋ = ẏ = 0 (the square root is not differentiable there, and the nonholonomic motion reaches it in finite time).
 *  The velocity chart is ẋ² + ẏ² > (`velocity_chart_margin` · max(1, |v|∞))²: outside it the engine ends the
 *  trajectory with `Status::chart_singular` instead of stepping into the kink (before, a DOPRI5 integration crossed
 *  it with a wrong state and then ground through 10^7 ever smaller steps to `step_limit`).
 *  Closed form (nonholonomic): λ = m g/(1 + a²), the horizontal direction of motion is fixed and the horizontal
 *  speed s decreases at the rate a g/(1 + a²), so the model reaches its singular set at t = s0(1 + a²)/(a g).
 *  Vakonomic: with L̃ = L − μφ, m s + μ a and m ż − μ + m g t are conserved, which gives the same s(t) for every μ0:
 *  a nonlinear control case where both dynamics coincide (the vakonomic W̃ is singular only at μ = −m s/a).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct AppellHamel : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "appell_hamel";
    static constexpr const char* description =
        "Appell-Hamel particle z' = a |(x', y')| (nonlinear, degree 1; singular at x' = y' = 0)";
    static constexpr const char* coord_names[n] = {"x", "y", "z"};
    static constexpr bool angles[n] = {false, false, false};
    static constexpr bool has_velocity_chart = true;

    Param m = 1.0;
    Param a = 0.5;
    Param g = 9.81;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m", m, ParamDomain::positive);
        visit("a", a, ParamDomain::any);
        visit("g", g, ParamDomain::any);
    }

    // L = ½m|v|² − m g z
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        return S(0.5 * m) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - S(m * g) * q[2];
    }
    // φ = ż − a √(ẋ² + ẏ²)
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = v[2] - S(a) * sqrt(v[0] * v[0] + v[1] * v[1]);
    }
    /** @brief The horizontal speed is not (numerically) zero. */
    template <class T> NHVK_HD bool in_velocity_chart(const T*, const T* v) const {
        const T floor = velocity_chart_floor<n>(v);
        return !(v[0] * v[0] + v[1] * v[1] <= floor * floor);
    }
};

} // namespace nhvk::models
