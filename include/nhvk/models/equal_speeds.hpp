// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose speeds must stay equal: |ṗ1| − |ṗ2| = 0.
 *
 *  Source: Talamucci 2025 (seeds/001), Example 2 (iii); MODELS.md (`equal_speeds`). Coordinates x1, y1, z1, x2,
 *  y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)² (as `perpendicular_velocities`).
 *  φ = |ṗ1| − |ṗ2|: nonlinear, positively homogeneous of degree 1, so J·v = φ = 0 on the constraint set and the
 *  nonholonomic energy is conserved (Talamucci §4, Proposition 1). Singular where ṗ1 = 0 or ṗ2 = 0 (a norm is not
 *  differentiable at 0), and the spring where p1 = p2. The vakonomic W̃ = W − μH loses rank where
 *  m1 = μ/|ṗ1| or m2 = −μ/|ṗ2|.
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct EqualSpeeds : ModelBase {
    static constexpr int n = 6, k = 1;
    static constexpr const char* name = "equal_speeds";
    static constexpr const char* description = "two particles and a spring, speeds kept equal (nonlinear, degree 1)";
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

    // L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)²
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        const S T1 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        const S T2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
        const S dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const S stretch = sqrt(dx * dx + dy * dy + dz * dz) - S(ell);
        return S(0.5 * m1) * T1 + S(0.5 * m2) * T2 - S(0.5 * kappa) * stretch * stretch;
    }
    // φ = |ṗ1| − |ṗ2|
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    }
};

} // namespace nhvk::models
