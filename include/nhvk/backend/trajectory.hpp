// SPDX-License-Identifier: MIT
/** @file
 *  @brief One initial state integrated with both dynamics, full states recorded (`nhvk trajectory`).
 */
#pragma once

#include <string>
#include <vector>

#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/numerics.hpp"

namespace nhvk {

/** @brief Everything one trajectory needs; `params` is the full parameter vector in registry order. */
struct TrajectoryRequest {
    std::string model;
    std::vector<double> params;
    std::vector<double> q0, v0, mu0;
    double t0 = 0.0;
    std::vector<double> times; ///< strictly increasing, > t0
    Method method = Method::dopri5;
    Precision precision = Precision::f64;
    EquationsKind equations = EquationsKind::generated;
    StepControl ctl;
    DivergenceSpec divergence; ///< the metric of the d_q, d_v columns of the CSV (default: every coordinate, weight 1)
    /// what d_q and d_v cover, for the CSV header (`d_q[x y]`): the coordinates, `2*x` where weighted, then `kinetic`
    /// where measured in the kinetic metric; empty: plain `d_q`, `d_v`
    std::string divergence_label;
};

/** @brief Rows of `(q_NH, v_NH, q_VK, v_VK, μ)` at t0 and each output time reached. */
struct TrajectoryResult {
    MemberOutcome outcome;
    int row_size = 0;           ///< 4n + k
    int rows = 0;               ///< rows filled: 1 + output times reached
    std::vector<double> states; ///< (times.size() + 1) × row_size, row-major
    /// attempted and rejected steps of the nonholonomic [0] and vakonomic [1] integrations up to the last output time
    /// reached; -1 where not counted (the CUDA backend)
    long long steps[2] = {-1, -1}, rejected[2] = {-1, -1};
};

/** @brief Integrate on the CPU (the reference backend). Throws std::invalid_argument for an unknown model. */
TrajectoryResult run_trajectory_cpu(const TrajectoryRequest& req);

/** @brief Integrate on the GPU with the same per-trajectory code; throws std::runtime_error without CUDA. */
TrajectoryResult run_trajectory_cuda(const TrajectoryRequest& req);

} // namespace nhvk
