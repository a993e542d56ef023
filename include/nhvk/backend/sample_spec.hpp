// SPDX-License-Identifier: MIT
/** @file
 *  @brief A run's sampling plan as the fixed-size, trivially copyable `SampleSpec<M>` that the sampling stage reads
 *         on host and device (included by each model's host and CUDA translation units).
 */
#pragma once

#include <stdexcept>
#include <string>

#include "nhvk/backend/backend.hpp"
#include "nhvk/sample_member.hpp"

namespace nhvk {

/** @brief Throws std::invalid_argument when the plan's sizes do not match model `M`. */
template <class M> SampleSpec<M> make_sample_spec(const SamplingPlan& plan) {
    if (plan.q0.size() != static_cast<std::size_t>(M::n) || plan.v0.size() != static_cast<std::size_t>(M::n) ||
        plan.mu0.size() != static_cast<std::size_t>(M::k) || plan.params.size() > static_cast<std::size_t>(max_params))
        throw std::invalid_argument(std::string("sampling plan does not match model '") + M::name + "'");
    SampleSpec<M> s;
    s.seed = plan.seed;
    s.t0 = plan.t0;
    s.n_params = static_cast<int>(plan.params.size());
    s.has_energy = plan.energy.has_value();
    s.energy = plan.energy.value_or(0.0);
    for (std::size_t i = 0; i < plan.params.size(); ++i) s.params[i] = plan.params[i];
    for (int j = 0; j < M::n; ++j) {
        s.q0[j] = plan.q0[j];
        s.v0[j] = plan.v0[j];
    }
    for (int a = 0; a < M::k; ++a) s.mu0[a] = plan.mu0[a];
    return s;
}

} // namespace nhvk
