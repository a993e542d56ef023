// SPDX-License-Identifier: MIT
/** @file
 *  @brief What the derivation of a model hands to the emitter: node ids of one `sym::Graph` for every part the
 *         dynamics need, independent of how the model was written (a C++ model traced here, or — later — expression
 *         strings from a config parsed into the same graph).
 */
#pragma once

#include <string>
#include <vector>

#include "nhvk/sym/expr.hpp"

namespace nhvk::sym {

/** @brief The saddle-point parts of one dynamics: `[Wt −Jᵀ; J 0][a; m] = [−bt; γ]` (row-major node ids). */
struct SaddleParts {
    std::vector<int> W; ///< n·n: W (nonholonomic) or W − Σ μ H (vakonomic)
    std::vector<int> b; ///< n:   b (nonholonomic) or b − Σ μ c (vakonomic)
};

/** @brief Every part of one variant of a model (one combination of its boolean parameters). */
struct DerivedVariant {
    SaddleParts nh, vk;
    std::vector<int> phi;   ///< k: φ
    std::vector<int> J;     ///< k·n: ∂φ/∂v
    std::vector<int> gamma; ///< k: −(φ_q·v + φ_t)
    int energy = -1;        ///< E = v·L_v − L
};

/** @brief A derived model: sizes, parameter names (in `visit_params` order), its variants, and where it came from. */
struct DerivedModel {
    std::string cpp_type; ///< e.g. "nhvk::models::NhParticle"
    std::string header;   ///< e.g. "nhvk/models/nh_particle.hpp"
    int n = 0, k = 0;
    std::vector<std::string> params;
    std::vector<int> bool_params; ///< indices into `params` of the boolean ones (variant bit i = bool_params[i])
    std::vector<DerivedVariant> variants; ///< 2^(bool_params.size()) entries
};

} // namespace nhvk::sym
