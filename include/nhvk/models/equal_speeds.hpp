// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose speeds must stay equal: |ṗ1| − |ṗ2| = 0.
 *
 *  Source: Talamucci 2025, Example 2 (iii); docs/models.md (`equal_speeds`). Coordinates x1, y1, z1, x2,
 *  y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)² (as `perpendicular_velocities`).
 *  φ = |ṗ1| − |ṗ2|: nonlinear, positively homogeneous of degree 1, so J·v = φ = 0 on the constraint set and the
 *  nonholonomic energy is conserved (Talamucci §4, Proposition 1). Singular where ṗ1 = 0 or ṗ2 = 0 (a norm is not
 *  differentiable at 0), and the spring where p1 = p2. The velocity chart is |ṗ1|, |ṗ2| > `velocity_chart_margin`
 *  · max(1, |v|∞) (`Status::chart_singular` outside it). The vakonomic W̃ = W − μH loses rank where
 *  m1 = μ/|ṗ1| or m2 = −μ/|ṗ2|.
 */
#pragma once

#include "nhvk/models/spring_pair.hpp"

namespace nhvk::models {

struct EqualSpeeds : SpringPair {
    static constexpr int k = 1;
    static constexpr const char* name = "equal_speeds";
    static constexpr const char* description = "two particles and a spring, speeds kept equal (nonlinear, degree 1)";
    static constexpr bool has_velocity_chart = true;

    // L: the spring pair (spring_pair.hpp).
    // φ = |ṗ1| − |ṗ2|
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    }
    /** @brief Neither particle is (numerically) at rest. */
    template <class T> NHVK_HD bool in_velocity_chart(const T*, const T* v) const {
        const T f2 = velocity_chart_floor<n>(v) * velocity_chart_floor<n>(v);
        return !(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] <= f2) && !(v[3] * v[3] + v[4] * v[4] + v[5] * v[5] <= f2);
    }
};

} // namespace nhvk::models
