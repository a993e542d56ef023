// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose velocities must stay perpendicular: ṗ1 · ṗ2 = 0.
 *
 *  Source: Talamucci 2025, Example 2 (ii); docs/models.md. Coordinates x1, y1, z1, x2, y2, z2 (no angles).
 *  L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)². Nonlinear, homogeneous of degree 2 in the velocities, so the
 *  nonholonomic energy is conserved (Talamucci §4, Proposition 1). The spring is singular where p1 = p2.
 */
#pragma once

#include "nhvk/models/spring_pair.hpp"

namespace nhvk::models {

struct PerpendicularVelocities : SpringPair {
    static constexpr int k = 1;
    static constexpr const char* name = "perpendicular_velocities";
    static constexpr const char* description = "two particles and a spring, velocities kept perpendicular (degree 2)";

    // L: the spring pair (spring_pair.hpp).
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = v[0] * v[3] + v[1] * v[4] + v[2] * v[5];
    }
};

} // namespace nhvk::models
