// SPDX-License-Identifier: MIT
#include "pipeline/ensemble_result.hpp"

#include <algorithm>
#include <cmath>

namespace nhvk {

double EnsembleResult::max_over_times(int metric) const {
    double m = NAN;
    for (std::size_t i = 0; i < times.size(); ++i) {
        const double x = at(metric, static_cast<int>(i)).max;
        if (std::isfinite(x)) m = std::isfinite(m) ? std::max(m, x) : x;
    }
    return m;
}

std::uint64_t EnsembleResult::nonfinite_over_times(int metric) const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < times.size(); ++i) n = std::max(n, at(metric, static_cast<int>(i)).nonfinite);
    return n;
}

const char* metric_name(int metric) {
    if (metric >= 0 && metric < metric_count) return metric_info(metric).name;
    // NOTE: the per-member series follow the per-time ones (series row / nt lands here for them)
    return metric == metric_count + member_onset_time ? "onset_time" : "unknown";
}

} // namespace nhvk
