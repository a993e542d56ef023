// SPDX-License-Identifier: MIT
/** @file
 *  @brief The Heisenberg system (Brockett's nonholonomic integrator): a particle with ż = ½(x ẏ − y ẋ).
 *
 *  Source: the catalogue (docs/models.md); Bloch, "Nonholonomic Mechanics and Control", §1.4 and §7 (the Heisenberg
 *  system as the model of sub-Riemannian geodesics); Kozlov's vakonomic mechanics (docs/physics.md §3).
 *  Coordinates x, y, z (no angles). φ = ż − ½(x ẏ − y ẋ): linear, homogeneous of degree 1, non-integrable
 *  (Cronström–Raita M_AB ≠ 0, a·curl a = 1).
 *
 *  Two Lagrangians, selected by the bool parameter `sub_riemannian` (default false):
 *  - false: L = ½(ẋ² + ẏ² + ż²). Nonholonomic motion is uniform and straight (λ ≡ 0, since γ = 0 on straight
 *    lines), and the vakonomic motion with μ0 = 0 is the same (μ̇ = λ = 0).
 *  - true:  L = ½(ẋ² + ẏ²). Then W = diag(1, 1, 0) is singular, but the saddle-point matrix [W −Jᵀ; J 0] is
 *    regular because J = (y/2, −x/2, 1) has a ż-component. The vakonomic motions are the sub-Riemannian
 *    geodesics: μ is constant (p_z = −μ) and, with ζ = x + i y, ζ(t) = ζ0 + (ζ̇0/(iμ))(1 − e^{−iμt}).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct Heisenberg : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "heisenberg";
    static constexpr const char* description =
        "Heisenberg system z' = (x y' - y x')/2 (linear, non-integrable; sub-Riemannian option)";
    static constexpr const char* coord_names[n] = {"x", "y", "z"};
    static constexpr bool angles[n] = {false, false, false};

    bool sub_riemannian = false;
    template <class V> NHVK_HD void visit_params(V&& visit) { visit("sub_riemannian", sub_riemannian); }

    // L = ½(ẋ² + ẏ² + ż²), or ½(ẋ² + ẏ²) when sub_riemannian
    template <class S> NHVK_HD S lagrangian(const S*, const S* v, const S&) const {
        S L = S(0.5) * (v[0] * v[0] + v[1] * v[1]);
        if (!sub_riemannian) L += S(0.5) * v[2] * v[2];
        return L;
    }
    // φ = ż − ½(x ẏ − y ẋ)
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[2] - S(0.5) * (q[0] * v[1] - q[1] * v[0]);
    }
};

} // namespace nhvk::models
