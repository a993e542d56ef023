// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose velocities must stay perpendicular: ṗ1 · ṗ2 = 0.
 *
 *  Source: Talamucci 2025 (seeds/001), Example 2 (ii); MODELS.md. Coordinates x1, y1, z1, x2, y2, z2 (no angles).
 *  L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)². Nonlinear, homogeneous of degree 2 in the velocities, so the
 *  nonholonomic energy is conserved (Talamucci §4, Proposition 1). The spring is singular where p1 = p2.
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct PerpendicularVelocities : ModelBase {
    static constexpr int n = 6, k = 1;
    static constexpr const char* name = "perpendicular_velocities";
    static constexpr const char* description = "two particles and a spring, velocities kept perpendicular (degree 2)";
    static constexpr const char* coord_names[n] = {"x1", "y1", "z1", "x2", "y2", "z2"};
    static constexpr bool angles[n] = {false, false, false, false, false, false};

    double m1 = 1.0;
    double m2 = 1.0;
    double kappa = 1.0;
    double ell = 1.0;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m1", m1);
        visit("m2", m2);
        visit("kappa", kappa);
        visit("ell", ell);
    }

    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        const S T1 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        const S T2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
        const S dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const S stretch = sqrt(dx * dx + dy * dy + dz * dz) - S(ell);
        return S(0.5 * m1) * T1 + S(0.5 * m2) * T2 - S(0.5 * kappa) * stretch * stretch;
    }
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = v[0] * v[3] + v[1] * v[4] + v[2] * v[5];
    }
};

} // namespace nhvk::models
