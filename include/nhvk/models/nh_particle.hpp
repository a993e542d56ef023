// SPDX-License-Identifier: MIT
/** @file
 *  @brief The nonholonomic particle: a free unit-mass particle with the non-integrable constraint ż = y ẋ.
 *
 *  Source: Bloch, "Nonholonomic Mechanics and Control", §1.4 (the nonholonomic particle); used as the running example
 *  of Cronström & Raita 2009 and Talamucci 2025. Coordinates x, y, z (no angles).
 *  Closed form (nonholonomic): ÿ = 0, C = ẋ √(1 + y²) constant (docs/models.md).
 */
#pragma once

#include "nhvk/dynamics.hpp"

namespace nhvk::models {

struct NhParticle : ModelBase {
    static constexpr int n = 3, k = 1;
    static constexpr const char* name = "nh_particle";
    static constexpr const char* description = "free particle with the constraint z' = y x' (linear, non-integrable)";
    static constexpr const char* coord_names[n] = {"x", "y", "z"};
    static constexpr bool angles[n] = {false, false, false};

    // L = ½|v|²
    template <class S> NHVK_HD S lagrangian(const S*, const S* v, const S&) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    // φ = ż − y ẋ
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[2] - q[1] * v[0];
    }
};

} // namespace nhvk::models
