// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: the least-squares slope of log y against log x (divergence growth laws, orders).
 */
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace nhvk_test {

/** @brief Least-squares slope of log(y) against log(x). */
inline double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = double(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double lx = std::log(x[i]), ly = std::log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

} // namespace nhvk_test
