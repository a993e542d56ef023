// SPDX-License-Identifier: MIT
#include "nhvk/backend/trajectory.hpp"

#include <stdexcept>

#include "model_ops.hpp"

namespace nhvk {

TrajectoryResult run_trajectory_cpu(const TrajectoryRequest& req) {
    const ModelOps* ops = find_model_ops(req.model);
    if (!ops) throw std::invalid_argument("unknown model '" + req.model + "'");
    return ops->trajectory_cpu(req);
}

} // namespace nhvk
