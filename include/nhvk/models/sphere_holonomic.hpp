// SPDX-License-Identifier: MIT
/** @file
 *  @brief Control case: a heavy particle on a sphere, the holonomic constraint |q| = const written in velocity form
 *         q · v = 0. Integrable, so the nonholonomic and vakonomic motions coincide for every μ0.
 *
 *  Source: Cronström & Raita 2009 §2; Deressa §3; docs/models.md. Coordinates x, y, z (no angles).
 *  L = ½|v|² − g z, φ = x ẋ + y ẏ + z ż. Linear, degree 1, integrable (M_AB = 0).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct SphereHolonomic : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "sphere_holonomic";
    static constexpr const char* description = "control: particle on a sphere, q.v = 0 (integrable: both agree)";
    static constexpr const char* coord_names[n] = {"x", "y", "z"};
    static constexpr bool angles[n] = {false, false, false};

    Param g = 9.81;
    template <class V> NHVK_HD void visit_params(V&& visit) { visit("g", g, ParamDomain::any); }

    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - S(g) * q[2];
    }
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = q[0] * v[0] + q[1] * v[1] + q[2] * v[2];
    }
};

} // namespace nhvk::models
