// SPDX-License-Identifier: MIT
/** @file
 *  @brief The mechanical part shared by Talamucci's Example 2 systems: two particles p1, p2 joined by a spring,
 *         L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)². A model derives from it and adds its constraints.
 *
 *  Source: Talamucci 2025, Example 2; docs/models.md. Coordinates x1, y1, z1, x2, y2, z2 (no angles);
 *  parameters m1, m2, kappa, ell (defaults 1). The spring is singular where p1 = p2.
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct SpringPair : ModelBase {
    static constexpr int n = 6;
    static constexpr const char* coord_names[n] = {"x1", "y1", "z1", "x2", "y2", "z2"};
    static constexpr bool angles[n] = {false, false, false, false, false, false};

    Param m1 = 1.0;
    Param m2 = 1.0;
    Param kappa = 1.0;
    Param ell = 1.0;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m1", m1, ParamDomain::positive);
        visit("m2", m2, ParamDomain::positive);
        visit("kappa", kappa, ParamDomain::non_negative);
        visit("ell", ell, ParamDomain::non_negative);
    }

    // L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)²
    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S&) const {
        const S T1 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        const S T2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
        const S dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const S stretch = sqrt(dx * dx + dy * dy + dz * dz) - S(ell);
        return S(0.5 * m1) * T1 + S(0.5 * m2) * T2 - S(0.5 * kappa) * stretch * stretch;
    }
};

} // namespace nhvk::models
