// SPDX-License-Identifier: MIT
/** @file
 *  @brief Two particles joined by a spring whose midpoint moves perpendicular to the joining line:
 *         Ḃ · (p1 − p2) = 0, B = ½(p1 + p2).
 *
 *  Source: Talamucci 2025, Example 2 (v); docs/models.md. Coordinates x1, y1,
 *  z1, x2, y2, z2 (no angles). L = ½m1|ṗ1|² + ½m2|ṗ2|² − ½κ(|p1 − p2| − ℓ)² (as `perpendicular_velocities`).
 *  With d = p1 − p2: φ = d · (ṗ1 + ṗ2) (= 2 Ḃ · d). Class: linear, homogeneous of degree 1, so the nonholonomic
 *  energy is conserved (Talamucci §4, Proposition 1); non-integrable: ω = d · d(p1 + p2) = 2 d · dB has
 *  ω ∧ dω = 4 Σ_{i≠j} d_j dB_j ∧ dd_i ∧ dB_i ≠ 0 wherever d ≠ 0 (no integrating factor either).
 *  Exact laws (derived in tests/models/test_midpoint_perpendicular.cpp): the reactions λd on both particles are
 *  along d, as is the spring's force, so along the nonholonomic motion both accelerations are ∥ d: d × ḋ is
 *  conserved, and so is |Ḃ| (B̈ ∥ d ⊥ Ḃ), for any masses. L̃ = L − μφ is invariant under translations and
 *  rotations, so along the vakonomic motion m1ṗ1 + m2ṗ2 − 2μd and Σ pᵢ × (mᵢṗᵢ − μd) are conserved.
 *  J = (d, d) has rank 1 wherever d ≠ 0; the spring is singular where p1 = p2.
 */
#pragma once

#include "nhvk/models/spring_pair.hpp"

namespace nhvk::models {

struct MidpointPerpendicular : SpringPair {
    static constexpr int k = 1;
    static constexpr const char* name = "midpoint_perpendicular";
    static constexpr const char* description =
        "two particles and a spring, midpoint velocity perpendicular to p1 - p2 (linear, non-integrable)";

    // L: the spring pair (spring_pair.hpp).
    // φ = (p1 − p2) · (ṗ1 + ṗ2)
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = (q[0] - q[3]) * (v[0] + v[3]) + (q[1] - q[4]) * (v[1] + v[4]) + (q[2] - q[5]) * (v[2] + v[5]);
    }
};

} // namespace nhvk::models
