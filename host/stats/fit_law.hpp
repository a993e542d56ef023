// SPDX-License-Identifier: MIT
/** @file
 *  @brief The laws fitted to a statistic of the divergence against time: the growth law d ≈ C·(t − t0)^p (free or
 *         fixed exponent) and the long-time exponential d ≈ A·e^{λ(t − t0)}, each by least squares on log d over a
 *         window of output times (`[divergence.fit]`, `[divergence.rate]`; README "Config reference").
 */
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "stats/ensemble_stats.hpp"

namespace nhvk::stats {

enum class FitLaw {
    power,      ///< log d = log C + p·log(t − t0)
    exponential ///< log d = log A + λ·(t − t0)
};

/** @brief What is fitted and where. Times are relative to t0. */
struct FitSpec {
    FitLaw law = FitLaw::power;
    double t_min = 0.0; ///< the window: t_min < t − t0 <= t_max
    double t_max = std::numeric_limits<double>::infinity();
    /// finite: the slope (p, or λ) is fixed at this value and only the amplitude is fitted
    double fixed_slope = std::numeric_limits<double>::quiet_NaN();
    bool fixed() const { return !std::isnan(fixed_slope); }
    /** True for a time t − t0 inside the window (and > 0 for the power law, which takes its log). */
    bool holds(double t) const { return t > t_min && t <= t_max && (law != FitLaw::power || t > 0.0); }
};

/** @brief The statistic `name` of a series ("median", "mean", "p05", "p25", "p75", "p95": config.hpp's
 *         fit_statistics()); the median for any other name. */
double fit_statistic(const SeriesSummary& s, const std::string& name);

/** @brief The fit of `spec` to the points (t[i], y[i]) in its window with y > 0 and finite: `slope` p (or λ),
 *         `amplitude` C (or A) = exp(intercept), R², and the intervals from the scatter about the line (Student t:
 *         n − 2 degrees of freedom with a free slope, n − 1 with a fixed one, whose own interval is then the value
 *         itself). NaN where fewer than 2 points (1 with a fixed slope) are in the window. `max_median`: the largest y
 *         among the points. */
GrowthFit fit_law(const std::vector<double>& t, const std::vector<double>& y, const FitSpec& spec);

} // namespace nhvk::stats
