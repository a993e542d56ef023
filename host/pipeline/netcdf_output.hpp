// SPDX-License-Identifier: MIT
/** @file
 *  @brief The NetCDF-4 twins of the CSV statistics: `stats.nc` (time × metric) and, for a sweep, `sweep.nc`
 *         (point × time × metric), labelled so that `xarray.open_dataset` gives the data as it is (README "Outputs").
 *
 *  Built from the same column tables as the CSVs (pipeline/result_columns.hpp), with the same doubles: every number
 *  equals its CSV twin bit for bit (NaN where the CSV field is empty).
 */
#pragma once

#include <string>

#include "config.hpp"
#include "pipeline/ensemble_result.hpp"

namespace nhvk {

/** @brief True when this nhvk was built with the netCDF library (libnetcdf-dev), so runs write the `.nc` files. */
bool netcdf_outputs_built();

/** @brief Write stats.nc to `path` (an output's temporary): the pooled statistics of `r`, with `summary_text`
 *         (summary.json) and the resolved config as attributes. Throws std::runtime_error naming the file when the
 *         library fails, or when it is not built in. */
void write_stats_netcdf(const std::string& path, const RunConfig& cfg, const EnsembleResult& r,
                        const std::string& summary_text);

/** @brief Write sweep.nc to `path`: every point's statistics (point × time × metric), each axis's values as a
 *         coordinate along point, and the columns of sweep_points.csv (cfg.sweep set). */
void write_sweep_netcdf(const std::string& path, const RunConfig& cfg, const EnsembleResult& r,
                        const std::string& summary_text);

} // namespace nhvk
