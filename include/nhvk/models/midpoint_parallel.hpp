// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose midpoint moves along the joining line, Ḃ × (p1 − p2) = 0
 *         (B = ½(p1 + p2)), written as two independent equations: the components of ṗ1 + ṗ2 along a frame
 *         orthogonal to d = p1 − p2 built from the vertical.
 *
 *  Source: Talamucci 2025, Example 2 (iv); docs/models.md.
 *  Coordinates x1, y1, z1, x2, y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)² (as
 *  `perpendicular_velocities`).
 *
 *  Dependent constraints. Talamucci's three equations s × d = 0 (s = ṗ1 + ṗ2 = 2Ḃ) are linear in the velocities
 *  but have rank 2 (d · (s × d) ≡ 0), so as in `parallel_velocities` the engine's saddle-point matrix, which needs k
 *  independent equations, would always be singular; we impose two. With the frame e1 = ẑ × d, e2 = d × e1 =
 *  |d|² ẑ − d_z d, orthogonal to d:
 *      φ1 = e1 · s = (d × s)_z = d_x s_y − d_y s_x
 *      φ2 = e2 · s = |d_h|² s_z − d_z (d_h · s_h)        (h: the horizontal part; = |d|² s_z − d_z (d · s))
 *  For d not vertical (d_h ≠ 0), (d, e1, e2) is an orthogonal basis, so φ1 = φ2 = 0 ⇔ s ∥ d ⇔ s × d = 0, and the
 *  rows (e1, e1), (e2, e2) of J are independent everywhere in the chart (not only on the set). Their span is that
 *  of the three rows of the full Jacobian of s × d, so the Četaev reactions, hence the nonholonomic motion, are the
 *  full system's; and where two formulations are both valid, ψ = N(q) φ with N invertible, so a vakonomic
 *  multiplier μ of one is the multiplier Nᵀμ of the other along a motion: the same extremals (tests/models compare
 *  this form with the (x, y)-component one, both dynamics). Unlike `parallel_velocities` the frame depends on the
 *  positions only, so the constraints stay linear (and W̃ = W − μH = W: the vakonomic system is never singular).
 *  Class: linear, homogeneous of degree 1 (J·v = φ = 0 on the set, the nonholonomic energy is conserved, Talamucci
 *  §4, Proposition 1); non-integrable, with no integrable combination: in (B, d) the set is Ḃ = a d with ḋ free,
 *  and the brackets of ∂/∂d_j with d · ∂/∂B give every ∂/∂B_j (a function constant along it is constant).
 *  Exact laws (derived in tests/models/test_midpoint_parallel.cpp): the reactions R on both particles are equal and
 *  ⊥ d, so for m1 = m2 the relative motion d(t) is the free spring's (d̈ = −(2κ/m)(|d| − ℓ) d/|d|: d × ḋ conserved)
 *  and |Ḃ| is conserved. Along the vakonomic motion, with g = Σμ_ν e_ν: m1ṗ1 + m2ṗ2 − 2g is conserved (L̃ = L − μ·φ
 *  is invariant under translations), and so is Σ pᵢ × (mᵢṗᵢ − g), although L̃ is invariant only under rotations
 *  about ẑ (its time derivative is −a d × (g + (∂g/∂d)ᵀ d) on s = a d, and d·g ≡ 0 makes the bracket vanish).
 *  The chart lives in configuration space: `in_chart` is false where |d_h| ≤ `vertical_margin` · |d| (10^-4,
 *  10^-3 in float: d vertical, where e1 = e2 = 0 and φ1 = φ2 = 0 for every velocity; also d = 0, where the spring
 *  is singular); the engine then reports `Status::chart_singular`. A motion leaves it only when d passes within
 *  that angle of the vertical, a codimension-2 event: from 200 random states like the config's (DOPRI5 rtol 1e-10,
 *  atol 1e-12; tests/models/test_midpoint_parallel.cpp) no nonholonomic and no vakonomic motion left it by t = 10,
 *  and a motion built to pass exactly through the vertical ends there with `chart_singular`. The source's
 *  s × d = 0 is checked as `source_residual` (all three components) at sampling, at t0 and at each output time.
 */
#pragma once

#include "nhvk/models/spring_pair.hpp"

namespace nhvk::models {

struct MidpointParallel : SpringPair {
    static constexpr int k = 2;
    static constexpr const char* name = "midpoint_parallel";
    static constexpr const char* description = "two particles and a spring, midpoint velocity parallel to p1 - p2 "
                                               "(linear, non-integrable; chart: p1 - p2 not vertical)";

    // L: the spring pair (spring_pair.hpp).
    // φ1 = (ẑ × d)·s = d_x s_y − d_y s_x,  φ2 = (|d|² ẑ − d_z d)·s = |d_h|² s_z − d_z (d_h·s_h)
    // (d = p1 − p2, s = ṗ1 + ṗ2)
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        const S dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const S sx = v[0] + v[3], sy = v[1] + v[4], sz = v[2] + v[5];
        phi[0] = dx * sy - dy * sx;
        phi[1] = (dx * dx + dy * dy) * sz - dz * (dx * sx + dy * sy);
    }

    static constexpr bool has_chart = true;
    static constexpr bool has_source_constraints = true;
    /** @brief sin of the angle of d from the vertical below which the chart counts as singular (as
     *         parallel_velocities' margin for ṗ1). */
    template <class T> NHVK_HD static constexpr T vertical_margin() { return sizeof(T) >= 8 ? T(1e-4) : T(1e-3); }
    /** @brief d = p1 − p2 is neither zero nor within `vertical_margin` of the vertical. */
    template <class T> NHVK_HD bool in_chart(const T* q) const {
        const T dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const T h2 = dx * dx + dy * dy, m = vertical_margin<T>();
        return h2 > m * m * (h2 + dz * dz);
    }
    /** @brief The source's Ḃ × (p1 − p2) = 0 (all three components, with 2Ḃ = s):
     *         max_i |(s × d)_i| / max(1, |s| |d|). */
    template <class T> NHVK_HD T source_residual(const T* q, const T* v, const T&) const {
        const T dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const T sx = v[0] + v[3], sy = v[1] + v[4], sz = v[2] + v[5];
        const T c0 = sy * dz - sz * dy, c1 = sz * dx - sx * dz, c2 = sx * dy - sy * dx;
        T r = abs(c0) > abs(c1) ? abs(c0) : abs(c1);
        r = abs(c2) > r ? abs(c2) : r;
        const T scale = sqrt((sx * sx + sy * sy + sz * sz) * (dx * dx + dy * dy + dz * dz));
        return r / (scale > T(1) ? scale : T(1));
    }
};

} // namespace nhvk::models
