// SPDX-License-Identifier: MIT
/** @file
 *  @brief The list of built-in models. Adding a model = one header in this folder + one entry in `BuiltinModels`.
 */
#pragma once

#include "nhvk/models/nh_particle.hpp"

namespace nhvk {

/** @brief A compile-time list of model types. */
template <class... Ms> struct ModelList {};

/** @brief Every model the CLI, the configs and the kernels know, in the order `nhvk models` lists them. */
using BuiltinModels = ModelList<models::NhParticle>;

} // namespace nhvk
