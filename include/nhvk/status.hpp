// SPDX-License-Identifier: MIT
/** @file
 *  @brief Per-trajectory outcome (in the spirit of heyoka's `taylor_outcome`).
 */
#pragma once

#include <cstdint>

#include "nhvk/config.hpp"

namespace nhvk {

/** @brief How the integration of one trajectory (one dynamics) ended. `ok` is the only success. */
enum class Status : std::uint8_t {
    ok = 0,             ///< reached the last output time
    singular = 1,       ///< the saddle-point (or projection) matrix was singular or too badly conditioned
    non_finite = 2,     ///< a state, derivative or error estimate became NaN or infinite
    step_underflow = 3, ///< the adaptive step fell below `min_step`
    step_limit = 4,     ///< more than `max_steps` steps were attempted
    chart_singular = 5, ///< the state left the model's coordinate chart (e.g. cos θ = 0 for Euler angles)
    /// not a failure: d_q passed `divergence.stop_at` at an output time before the last, and both dynamics stopped
    /// there (beyond `status_count`: the failure tallies indexed by status have no slot for it)
    diverged = 6,
};
/** @brief `ok` and the failure statuses (the size of the tallies indexed by `Status`); `diverged` lies beyond. */
inline constexpr int status_count = 6;

/** @brief The name used in outputs (`summary.json`, CSV, messages). */
NHVK_HD inline const char* status_name(Status s) {
    switch (s) {
    case Status::ok:
        return "ok";
    case Status::singular:
        return "singular";
    case Status::non_finite:
        return "non_finite";
    case Status::step_underflow:
        return "step_underflow";
    case Status::step_limit:
        return "step_limit";
    case Status::chart_singular:
        return "chart_singular";
    case Status::diverged:
        return "diverged";
    }
    return "unknown";
}

/** @brief Which of the two dynamics a failure belongs to. */
enum class Dynamics : std::uint8_t { none = 0, nonholonomic = 1, vakonomic = 2 };

} // namespace nhvk
