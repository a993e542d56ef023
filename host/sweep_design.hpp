// SPDX-License-Identifier: MIT
/** @file
 *  @brief The point sets of a `[sweep]`: ranges of an axis, and the random designs that draw P points in a box
 *         (a scrambled Sobol sequence, a Latin hypercube), keyed by the run's seed so that a sweep is reproducible.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nhvk {

/** @brief `count` ≥ 2 values from `low` to `high` (both exact), evenly spaced, or geometrically when `log` (then
 *         0 < low); the inner ones rounded to 15 significant digits (2, not 1.9999999999999998). */
std::vector<double> sweep_range(double low, double high, int count, bool log);

/** @brief A point's value as messages, `--set`s and CSV columns spell it: the shortest text that reads back as `x`,
 *         in plain notation where that is no longer than the exponent one (-100, not -1e+02). */
std::string sweep_value_text(double x);

/** @brief Unit-cube coordinate u ∈ (0, 1) onto [low, high]: linear, or geometric when `log`. */
double sweep_scale(double u, double low, double high, bool log);

/** @brief Largest dimension of `sobol_design` (the direction numbers kept here: Joe and Kuo's first ten). */
inline constexpr std::size_t sobol_max_dimensions = 10;

/** @brief The first `points` points of the Sobol sequence in `dims` ≤ sobol_max_dimensions dimensions (Joe–Kuo
 *         direction numbers), each dimension scrambled by a random digital shift from `seed` (an XOR of its 32-bit
 *         digits, which keeps every net property of the sequence), as points[i][d] ∈ (0, 1) at the centres of their
 *         2^-32 cells. With seed-free shifts of 0 the points are the textbook sequence. */
std::vector<std::vector<double>> sobol_design(std::size_t points, std::size_t dims, std::uint64_t seed,
                                              bool shift = true);

/** @brief A Latin hypercube of `points` points in `dims` dimensions from `seed`: in each dimension the points fall
 *         one in each of the `points` equal strata, at a uniform position inside it, the strata in random order. */
std::vector<std::vector<double>> latin_hypercube_design(std::size_t points, std::size_t dims, std::uint64_t seed);

} // namespace nhvk
