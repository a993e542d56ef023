// SPDX-License-Identifier: MIT
/** @file
 *  @brief The knife edge (a skate) on a plane inclined by α: the blade's contact point may only move along the
 *         blade, ẋ sin φ − ẏ cos φ = 0.
 *
 *  Source: Bloch, "Nonholonomic Mechanics and Control", §1.6 (the knife edge on an inclined plane); docs/models.md
 *  (`knife_edge`). Coordinates x, y (contact point; x points down the slope), φ (angle, heading of the blade).
 *  L = ½m(ẋ² + ẏ²) + ½J φ̇² + m g sin α · x; φ = ẋ sin φ − ẏ cos φ: linear, homogeneous of degree 1,
 *  non-integrable. Energy is conserved (homogeneous constraint, F = 0, autonomous).
 *  Closed form (nonholonomic): φ̈ = 0; released from rest at φ = 0 with φ̇ = ω,
 *  x = (g sin α/(2ω²)) sin²(ωt), y = (g sin α/(2ω²))(ωt − ½ sin 2ωt).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct KnifeEdge : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "knife_edge";
    static constexpr const char* description =
        "knife edge (skate) on a plane inclined by alpha (linear, non-integrable)";
    static constexpr const char* coord_names[n] = {"x", "y", "phi"};
    static constexpr bool angles[n] = {false, false, true};

    Param m = 1.0;
    Param J = 1.0;
    Param alpha = 0.3;
    Param g = 9.81;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m", m, ParamDomain::positive);
        visit("J", J, ParamDomain::positive);
        visit("alpha", alpha, ParamDomain::any);
        visit("g", g, ParamDomain::any);
    }

    // L = ½m(ẋ² + ẏ²) + ½J φ̇² + m g sin α · x
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        return S(0.5 * m) * (v[0] * v[0] + v[1] * v[1]) + S(0.5 * J) * v[2] * v[2] + S(m * g * sin(alpha)) * q[0];
    }
    // φ = ẋ sin φ − ẏ cos φ
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[0] * sin(q[2]) - v[1] * cos(q[2]);
    }
};

} // namespace nhvk::models
