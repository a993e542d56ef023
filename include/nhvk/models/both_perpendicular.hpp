// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose velocities are both perpendicular to the joining line:
 *         (p1 − p2) · ṗ1 = 0 and (p1 − p2) · ṗ2 = 0.
 *
 *  Source: Talamucci 2025, Example 2 (vi); docs/models.md. Coordinates x1, y1,
 *  z1, x2, y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)² (as `perpendicular_velocities`).
 *  NOTE: the paper prints (q1 − q2) as the first coefficient of both equations of (vi), where the pattern of the
 *  other two coefficients, (q2 − q5) and (q3 − q6), and the words ("the velocities are perpendicular to the joining
 *  line") mean (q1 − q4); we use d = p1 − p2:
 *      φ1 = d · ṗ1,   φ2 = d · ṗ2.
 *  Class: linear, homogeneous of degree 1 (the nonholonomic energy is conserved, Talamucci §4, Proposition 1);
 *  non-integrable as a pair, with one integrable combination: φ1 − φ2 = d · ḋ = ½ d/dt |d|², so |p1 − p2| is
 *  conserved along both dynamics' motions (the spring keeps its initial length), while d · dB (B = ½(p1 + p2)),
 *  the rest of the pair, is not integrable on |d| = const (the bracket of a rotation of d with a motion of B ⊥ d
 *  has a component of Ḃ along d). Further laws (tests/models/test_both_perpendicular.cpp): the reactions λ1 d,
 *  λ2 d and the spring's force are along d, so along the nonholonomic motion both accelerations are ∥ d: d × ḋ,
 *  hence |ḋ|, is conserved, and so is each particle's speed (ṗᵢ ⊥ d); L̃ = L − μ·φ is invariant under
 *  translations and rotations, so along the vakonomic motion m1ṗ1 + m2ṗ2 − (μ1 + μ2)d and
 *  Σ pᵢ × (mᵢṗᵢ − μᵢd) are conserved. J = [[d, 0], [0, d]] has rank 2 wherever d ≠ 0; the spring is singular
 *  where p1 = p2.
 */
#pragma once

#include "nhvk/models/spring_pair.hpp"

namespace nhvk::models {

struct BothPerpendicular : SpringPair {
    static constexpr int k = 2;
    static constexpr const char* name = "both_perpendicular";
    static constexpr const char* description =
        "two particles and a spring, both velocities perpendicular to p1 - p2 (linear; |p1 - p2| conserved)";

    // L: the spring pair (spring_pair.hpp).
    // φ1 = (p1 − p2) · ṗ1,  φ2 = (p1 − p2) · ṗ2
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        const S dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        phi[0] = dx * v[0] + dy * v[1] + dz * v[2];
        phi[1] = dx * v[3] + dy * v[4] + dz * v[5];
    }
};

} // namespace nhvk::models
