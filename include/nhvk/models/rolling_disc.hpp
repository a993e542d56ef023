// SPDX-License-Identifier: MIT
/** @file
 *  @brief The vertical rolling disc (a coin rolling without slipping) on a plane inclined by α.
 *
 *  Source: Bloch, "Nonholonomic Mechanics and Control", §1.4 (vertical rolling disc); Lemos 2022 on the vakonomic
 *  motions that coincide with it; docs/models.md. Coordinates x, y (contact point), θ (angle, rolling), φ (angle,
 *  heading). L = ½m(ẋ²+ẏ²) + ½I θ̇² + ½J φ̇² + m g sin α · x with I = mR²/2, J = mR²/4;
 *  φ = (ẋ − R θ̇ cos φ, ẏ − R θ̇ sin φ). Linear, degree 1, non-integrable.
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct RollingDisc : ModelBase {
    static constexpr int n = 4, k = 2;
    static constexpr const char* name = "rolling_disc";
    static constexpr const char* description = "vertical disc rolling without slipping on a plane inclined by alpha";
    static constexpr const char* coord_names[n] = {"x", "y", "theta", "phi"};
    static constexpr bool angles[n] = {false, false, true, true};

    Param m = 1.0;
    Param R = 0.5;
    Param alpha = 0.0;
    Param g = 9.81;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m", m, ParamDomain::positive);
        visit("R", R, ParamDomain::positive);
        visit("alpha", alpha, ParamDomain::any);
        visit("g", g, ParamDomain::any);
    }

    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        const Param I = 0.5 * m * R * R, J = 0.25 * m * R * R;
        return S(0.5 * m) * (v[0] * v[0] + v[1] * v[1]) + S(0.5 * I) * v[2] * v[2] + S(0.5 * J) * v[3] * v[3] +
               S(m * g * sin(alpha)) * q[0];
    }
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[0] - S(R) * v[2] * cos(q[3]);
        phi[1] = v[1] - S(R) * v[2] * sin(q[3]);
    }
};

} // namespace nhvk::models
