// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose velocities must stay parallel, ṗ1 × ṗ2 = 0, written as two
 *         independent equations: the components of ṗ2 along a frame orthogonal to ṗ1 built from the vertical.
 *
 *  Source: Talamucci 2025, Example 2 (i); docs/models.md.
 *  Coordinates x1, y1, z1, x2, y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)² (as
 *  `perpendicular_velocities`).
 *
 *  Dependent constraints. Talamucci's three equations u × w = 0 (u = ṗ1, w = ṗ2) have rank 2 on the constraint set
 *  (its codimension is 2: u = a d, w = b d with d a unit vector), so their 3×6 Jacobian never has rank 3 there and
 *  the engine's saddle-point matrix, which needs k independent equations, would always be singular. So we impose
 *  two of them. The set (3×2 matrices [u w] of rank ≤ 1) is not cut out by two polynomial equations globally, and
 *  every two-equation form we tried degenerates on part of the set; the choice is where. We use the frame
 *  e1 = ẑ × u, e2 = u × e1 = |u|² ẑ − u_z u, orthogonal to u:
 *      φ1 = e1 · w = (u × w)_z = u_x w_y − u_y w_x            (bilinear, homogeneous of degree 2)
 *      φ2 = e2 · w = |u|² w_z − u_z (u · w)                    (homogeneous of degree 3)
 *  For u ≠ 0 not vertical, (u, e1, e2) is an orthogonal basis, so φ1 = φ2 = 0 ⇔ w ∥ u ⇔ u × w = 0, and on the set
 *  the Jacobian has rank 2: the chart is "ṗ1 ≠ 0 and not vertical". Its rows span the same space as the three rows
 *  of the full Jacobian of u × w, so the Četaev reactions, hence the nonholonomic motion, are those of the full
 *  system; and where two formulations are both valid, ψ = N(v) φ with N invertible, so along a motion (φ = 0) a
 *  vakonomic multiplier μ of one is the multiplier Nᵀμ of the other: the same extremals (tests/models compare this
 *  form with the (x, y)-component one, both dynamics, to ~1e-13).
 *  Measured chart exits (200 random states: positions about ℓ apart, ṗ1 uniform in [−1, 1]³, ṗ2 = s ṗ1 with
 *  s ∈ [−1.5, 1.5], μ0 = 0; DOPRI5 rtol 1e-10, atol 1e-12, min_step 1e-14; tests/models/test_parallel_velocities.cpp):
 *  - this form: nonholonomic 0/200 by t = 2 and by t = 10; vakonomic 5/200 by t = 2 and 28/200 by t = 10, all
 *    where the vakonomic motion brings particle 1 to rest (|ṗ1| → 0): φ2's gradient in w is O(|ṗ1|²) there and its
 *    multiplier grows like 1/|ṗ1| until the step size underflows (`Status::step_underflow`, or `singular` when the
 *    LU notices first). This is an artefact of the form: the equivalent multipliers of the (x, y)-component form,
 *    Nᵀμ, stay O(1) there (tested). Such a trajectory is counted, never dropped.
 *  - two components, (u × w)_x = (u × w)_y = 0 (valid where u_z ≠ 0): nonholonomic 28/200 singular by t = 2 and
 *    40/200 by t = 10 (the common direction turns through the horizontal, a codimension-1 event), vakonomic worse.
 *    Rejected.
 *  - frames from w, u + w or u − w instead of u: more nonholonomic or more vakonomic exits than the one above.
 *  Both constraints are positively homogeneous (degrees 2 and 3: Talamucci eq. (46) allows one degree per equation),
 *  so J·v = (2φ1, 3φ2) = 0 on the set and the nonholonomic energy is conserved (Proposition 1). The chart lives in
 *  velocity space: `in_velocity_chart` is false where |ṗ1_h| ≤ 10^-4 |ṗ1| (10^-3 in float; ṗ1 vertical, where
 *  φ1 = φ2 = 0 for every ṗ2) or |ṗ1_h| ≤ `velocity_chart_margin` · max(1, |v|∞); the engine then reports
 *  `Status::chart_singular` (before, a vertical ṗ1 with a perpendicular ṗ2 was accepted with residual 0). The
 *  source's constraint ṗ1 × ṗ2 = 0 is checked as `source_residual` (all three components) at sampling, at t0 and
 *  at each output time.
 */
#pragma once

#include "nhvk/models/spring_pair.hpp"

namespace nhvk::models {

struct ParallelVelocities : SpringPair {
    static constexpr int k = 2;
    static constexpr const char* name = "parallel_velocities";
    static constexpr const char* description = "two particles and a spring, velocities kept parallel (nonlinear, "
                                               "degrees 2 and 3; chart: p1' nonzero, not vertical)";

    // L: the spring pair (spring_pair.hpp).
    // φ1 = (ẑ × u)·w = u_x w_y − u_y w_x,  φ2 = (|u|² ẑ − u_z u)·w = |u|² w_z − u_z (u·w)   (u = ṗ1, w = ṗ2)
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        const S uu = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        const S uw = v[0] * v[3] + v[1] * v[4] + v[2] * v[5];
        phi[0] = v[0] * v[4] - v[1] * v[3];
        phi[1] = uu * v[5] - v[2] * uw;
    }

    static constexpr bool has_velocity_chart = true;
    static constexpr bool has_source_constraints = true;
    /** @brief sin of the angle of ṗ1 from the vertical below which the chart counts as singular (as
     *         ball_on_turntable's |cos θ| margin). */
    template <class T> NHVK_HD static constexpr T vertical_margin() { return sizeof(T) >= 8 ? T(1e-4) : T(1e-3); }
    /** @brief ṗ1 is neither (numerically) zero nor within `vertical_margin` of the vertical. */
    template <class T> NHVK_HD bool in_velocity_chart(const T*, const T* v) const {
        const T h2 = v[0] * v[0] + v[1] * v[1], u2 = h2 + v[2] * v[2], f = velocity_chart_floor<n>(v);
        const T d = vertical_margin<T>();
        return !(h2 <= f * f) && !(h2 <= d * d * u2);
    }
    /** @brief The source's ṗ1 × ṗ2 = 0 (all three components): max_i |(u × w)_i| / max(1, |u| |w|). */
    template <class T> NHVK_HD T source_residual(const T*, const T* v, const T&) const {
        const T c0 = v[1] * v[5] - v[2] * v[4], c1 = v[2] * v[3] - v[0] * v[5], c2 = v[0] * v[4] - v[1] * v[3];
        const T uu = v[0] * v[0] + v[1] * v[1] + v[2] * v[2], ww = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
        T r = abs(c0) > abs(c1) ? abs(c0) : abs(c1);
        r = abs(c2) > r ? abs(c2) : r;
        const T scale = sqrt(uu * ww);
        return r / (scale > T(1) ? scale : T(1));
    }
};

} // namespace nhvk::models
