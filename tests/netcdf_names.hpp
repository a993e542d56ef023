// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: the file lists of a run's folder with and without the NetCDF outputs.
 */
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "pipeline/netcdf_output.hpp"

namespace nhvk_test {

/** @brief The names of a run's folder (sorted) with `stats.nc` added where this nhvk writes the NetCDF outputs (a
 *         build with the netCDF library), so that a test's list of files holds with and without it. */
inline std::vector<std::string> with_stats_nc(std::vector<std::string> names) {
    if (nhvk::netcdf_outputs_built()) {
        names.push_back("stats.nc");
        std::sort(names.begin(), names.end());
    }
    return names;
}

} // namespace nhvk_test
