// SPDX-License-Identifier: MIT
/** @file
 *  @brief A free particle in space under one Pfaffian constraint a q̇1 + b q̇2 + c q̇3 = 0 (Deressa's Example 2),
 *         with (a, b, c) = (−q2, β q1, 1): a one-parameter family that is non-integrable for β ≠ −1 and
 *         integrable (holonomic in disguise) at β = −1.
 *
 *  Source: Deressa, §4, Example 2, eqs. (4.9)–(4.16): "a particle is moving in the space, subject to
 *  the constraint a q̇1 + b q̇2 + c q̇3 = 0" with a, b, c C¹ functions of (q1, q2, q3) admitting no integrating factor.
 *  NOTE: the paper keeps a, b, c generic and writes no Lagrangian; the concrete choices here are ours:
 *  L = ½m|q̇|² (a free particle) and (a, b, c) = (−q2, β q1, 1). Deressa's integrability expression (4.16),
 *  a(∂c/∂q2 − ∂b/∂q3) + b(∂a/∂q3 − ∂c/∂q1) + c(∂b/∂q1 − ∂a/∂q2) = 1 + β, vanishes only at β = −1, where
 *  φ = d(q3 − q1 q2)/dt and both dynamics coincide (Cronström–Raita eqs. (29), (33); docs/physics.md §4.7).
 *  β = 0 is the nonholonomic particle (`nh_particle`); β = 1 the contact form of the Heisenberg group. The default
 *  β = 0.5 is a generic non-integrable member.
 *  Coordinates q1, q2, q3 (no angles). φ = −q2 q̇1 + β q1 q̇2 + q̇3: linear, homogeneous of degree 1, so the energy is
 *  conserved; J = (−q2, β q1, 1) never vanishes (no singular set).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct PfaffianParticle : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "pfaffian_particle";
    static constexpr const char* description =
        "free particle, Pfaffian -q2 q1' + beta q1 q2' + q3' = 0 (Deressa Ex. 2; integrable only at beta = -1)";
    static constexpr const char* coord_names[n] = {"q1", "q2", "q3"};
    static constexpr bool angles[n] = {false, false, false};

    Param m = 1.0;
    Param beta = 0.5;
    template <class V> NHVK_HD void visit_params(V&& visit) {
        visit("m", m, ParamDomain::positive);
        visit("beta", beta, ParamDomain::any);
    }

    // L = ½m|q̇|²
    template <class S> NHVK_HD S lagrangian(const S*, const S* v, const S&) const {
        return S(0.5 * m) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    // φ = a q̇1 + b q̇2 + c q̇3 with (a, b, c) = (−q2, β q1, 1)   (Deressa eq. (4.10))
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = -q[1] * v[0] + S(beta) * q[0] * v[1] + v[2];
    }
};

} // namespace nhvk::models
