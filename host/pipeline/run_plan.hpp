// SPDX-License-Identifier: MIT
/** @file
 *  @brief A run's configuration as the backend interface reads it: chunk sizes, common settings and sampling plan.
 */
#pragma once

#include "config.hpp"
#include "nhvk/backend/backend.hpp"

namespace nhvk {

/** @brief The layout and common settings of a run (pointers in `common` point into `cfg`, which must outlive it). */
struct RunPlan {
    ChunkLayout layout;
    ChunkCommon common;
};

/** @brief The divergence metric of `cfg` (its coordinates, weights, angles and metric). */
DivergenceSpec divergence_spec(const RunConfig& cfg);

/** @brief The plan of `cfg` with chunks of `capacity` members (the run uses min(run.chunk, trajectories)). */
RunPlan make_run_plan(const RunConfig& cfg, long long capacity);

} // namespace nhvk
