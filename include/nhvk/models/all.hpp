// SPDX-License-Identifier: MIT
/** @file
 *  @brief The list of built-in models. Adding a model = one header in this folder + one entry in `BuiltinModels`.
 *
 *  NOTE: CMake counts the entries of `BuiltinModels` (one comma-separated list, no nested templates) to generate one
 *  host and one CUDA translation unit per model; keep the list in this form.
 */
#pragma once

#include "nhvk/model_list.hpp"
#include "nhvk/models/nh_particle.hpp"
#include "nhvk/models/perpendicular_velocities.hpp"
#include "nhvk/models/rolling_disc.hpp"
#include "nhvk/models/sphere_holonomic.hpp"

namespace nhvk {

/** @brief Every model the CLI, the configs and the kernels know, in the order `nhvk models` lists them. */
using BuiltinModels = ModelList<models::NhParticle,
                                models::RollingDisc,
                                models::PerpendicularVelocities,
                                models::SphereHolonomic>;

} // namespace nhvk
