// SPDX-License-Identifier: MIT
/** @file
 *  @brief Control case: two heavy points at a constant distance, the holonomic constraint |p1 − p2| = ℓ written in
 *         velocity form (p1 − p2)·(ṗ1 − ṗ2) = 0. Integrable, so the nonholonomic and vakonomic motions coincide
 *         for every μ0.
 *
 *  Source: Talamucci 2025, §4, Example 1 (two points P1, P2 at a constant distance ℓ, the geometric
 *  constraint converted by derivation into a constraint homogeneous of degree 1 in the velocities).
 *  NOTE: the printed derivative, Σ (q_i − q_{i+3})²(q̇_i − q̇_{i+3}) (the arXiv draft of the paper prints it with
 *  "+" in place of the product), is a typo: d/dt ½|p1 − p2|² = (p1 − p2)·(ṗ1 − ṗ2), which is what is used here.
 *  Coordinates x1, y1, z1, x2, y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − g (m1 z1 + m2 z2) (a dumbbell in
 *  uniform gravity: the centre of mass falls freely, the relative vector turns uniformly at fixed length).
 *  φ = (p1 − p2)·(ṗ1 − ṗ2): linear, homogeneous of degree 1, integrable (M_AB = 0); singular only where p1 = p2.
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct RigidPair : ModelBase {
    static constexpr int n = 6, k = 1;
    static constexpr const char* name = "rigid_pair";
    static constexpr const char* description =
        "control: two points at constant distance, (p1-p2).(p1'-p2') = 0 (integrable: both agree)";
    static constexpr const char* coord_names[n] = {"x1", "y1", "z1", "x2", "y2", "z2"};
    static constexpr bool angles[n] = {false, false, false, false, false, false};

    Param m1 = 1.0;
    Param m2 = 1.0;
    Param g = 9.81;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m1", m1, ParamDomain::positive);
        visit("m2", m2, ParamDomain::positive);
        visit("g", g, ParamDomain::any);
    }

    // L = ½m1|ṗ1|² + ½m2|ṗ2|² − g (m1 z1 + m2 z2)
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        const S T1 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        const S T2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
        return S(0.5 * m1) * T1 + S(0.5 * m2) * T2 - S(g * m1) * q[2] - S(g * m2) * q[5];
    }
    // φ = (p1 − p2)·(ṗ1 − ṗ2)
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = (q[0] - q[3]) * (v[0] - v[3]) + (q[1] - q[4]) * (v[1] - v[4]) + (q[2] - q[5]) * (v[2] - v[5]);
    }
};

} // namespace nhvk::models
