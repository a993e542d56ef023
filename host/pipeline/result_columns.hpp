// SPDX-License-Identifier: MIT
/** @file
 *  @brief The columns of a run's tabular outputs, described once: stats.csv and sweep.csv, sweep_points.csv,
 *         summary.json's series and the NetCDF files (stats.nc, sweep.nc) are all written from these tables, so a
 *         column added here appears in every format under the same name.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "pipeline/ensemble_result.hpp"
#include "stats/ensemble_stats.hpp"

namespace nhvk {

/** @brief A floating-point statistic of one series at one output time: stats.csv's column `name`, summary.json's
 *         key (an interval's under "intervals"). */
struct SeriesColumn {
    std::string name;
    std::string long_name; ///< what it is, for the NetCDF files' `long_name`
    int statistic;         ///< 0: mean, 1: std, 2: min, 3: max, 4 + i: quantile i (p01 ... p99)
    int part;              ///< 0: the value, 1: its standard error, 2: its 95 % interval's low end, 3: high end
    double get(const stats::SeriesSummary& s) const;
};

/** @brief The statistics (mean, std, min, max, p01 ... p99), in stats.csv's order. */
const std::vector<SeriesColumn>& statistic_columns();
/** @brief The uncertainty columns after them (mean_se, mean_lo, mean_hi, std_se, ..., p99_hi): the standard error
 *         and 95 % interval of the mean, the std and each quantile. */
const std::vector<SeriesColumn>& interval_columns();

/** @brief One column of sweep_points.csv: a sweep point's count, number or word. */
struct PointColumn {
    enum class Kind { count, number, text };
    std::string name;
    std::string long_name;
    Kind kind;
    std::uint64_t (*count)(const EnsembleResult&) = nullptr;
    double (*number)(const EnsembleResult&) = nullptr;
    std::string (*text)(const EnsembleResult&) = nullptr;
};

/** @brief sweep_points.csv's columns after the point's index and its axes' values, in order. */
const std::vector<PointColumn>& point_columns();

} // namespace nhvk
