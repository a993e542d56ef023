// SPDX-License-Identifier: MIT
/** @file
 *  @brief The list of built-in models. Adding a model = one header in this folder + one entry in `BuiltinModels`.
 *
 *  NOTE: CMake counts the entries of `BuiltinModels` (one comma-separated list, no nested templates) to generate one
 *  host and one CUDA translation unit per model; keep the list in this form (CMake's regex needs the declaration's
 *  head on one line, hence the clang-format guard).
 */
#pragma once

#include "nhvk/model_list.hpp"
#include "nhvk/models/appell_hamel.hpp"
#include "nhvk/models/ball_on_turntable.hpp"
#include "nhvk/models/both_perpendicular.hpp"
#include "nhvk/models/chaplygin_sleigh.hpp"
#include "nhvk/models/equal_speeds.hpp"
#include "nhvk/models/heisenberg.hpp"
#include "nhvk/models/knife_edge.hpp"
#include "nhvk/models/midpoint_parallel.hpp"
#include "nhvk/models/midpoint_perpendicular.hpp"
#include "nhvk/models/nh_particle.hpp"
#include "nhvk/models/parallel_velocities.hpp"
#include "nhvk/models/perpendicular_velocities.hpp"
#include "nhvk/models/pfaffian_particle.hpp"
#include "nhvk/models/rigid_pair.hpp"
#include "nhvk/models/rolling_disc.hpp"
#include "nhvk/models/sphere_holonomic.hpp"

namespace nhvk {

/** @brief Every model the CLI, the configs and the kernels know, in the order `nhvk models` lists them: the
 *         original catalogue first, then further systems from the papers (docs/models.md). */
// clang-format off
using BuiltinModels = ModelList<models::NhParticle,
                                models::Heisenberg,
                                models::RollingDisc,
                                models::KnifeEdge,
                                models::ChaplyginSleigh,
                                models::BallOnTurntable,
                                models::AppellHamel,
                                models::PerpendicularVelocities,
                                models::EqualSpeeds,
                                models::SphereHolonomic,
                                models::PfaffianParticle,
                                models::RigidPair,
                                models::ParallelVelocities,
                                models::MidpointParallel,
                                models::MidpointPerpendicular,
                                models::BothPerpendicular>;
// clang-format on

} // namespace nhvk
