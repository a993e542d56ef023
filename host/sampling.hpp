// SPDX-License-Identifier: MIT
/** @file
 *  @brief The sampling stage on the host: the run's sampling plan from its config, and one member drawn as the
 *         backends draw it (nhvk/sample_member.hpp has the per-member code and `SampleStatus`).
 */
#pragma once

#include "nhvk/backend/backend.hpp"
#include "nhvk/sample_member.hpp"

namespace nhvk {

struct RunConfig;

/** @brief The sampling plan of a run (seed, t0, distributions, energy shell). */
SamplingPlan make_sampling_plan(const RunConfig& cfg);

} // namespace nhvk
