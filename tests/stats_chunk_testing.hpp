// SPDX-License-Identifier: MIT
/** @file
 *  @brief Chunks of metric rows for the statistics' reduction tests (the block reduction's host twin in tests/stats
 *         and its device in tests/kernels): rows, a member range of them as a ChunkView, random values with every
 *         kind of edge, and one series of given values.
 */
#pragma once

#include "nhvk/stats/chunk_reduce.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace nhvk_test {

/** @brief n_series rows of n members (row stride ld), and what ChunkView needs besides. */
struct ChunkRows {
    std::size_t n_series = 0, n = 0, ld = 0, nt = 1, timed = static_cast<std::size_t>(-1);
    std::vector<double> values;
    std::vector<std::uint8_t> status;
    std::vector<std::int32_t> fail_index;
};

/** @brief The view of members [cut, cut + m) with `replicas` groups of the first `replicated` rows. */
inline nhvk::stats::ChunkView view(const ChunkRows& d, std::size_t cut, std::size_t m, std::size_t replicas,
                                   std::size_t replicated, std::uint64_t first_member) {
    nhvk::stats::ChunkView in{d.values.data() + cut, m, d.ld, nullptr, d.n_series + replicas * replicated};
    in.status = d.status.empty() ? nullptr : d.status.data() + cut;
    in.fail_index = d.fail_index.empty() ? nullptr : d.fail_index.data() + cut;
    in.nt = d.nt;
    in.timed_series = d.timed;
    if (replicas > 0u) {
        in.base_series = d.n_series;
        in.replicated = replicated;
        in.replicas = replicas;
    }
    in.first_member = first_member + cut;
    return in;
}

/** @brief 7 rows (two metrics at three output times, then a per-member series) of `n` members (stride n + 4, the
 *         padding NaN: never read) drawn from `seed`: zeros of both signs, −inf, NaN, and magnitudes over 30 decades
 *         of both signs; one member in five failed, after reaching −1 … 3 output times. */
inline ChunkRows random_rows(std::size_t n = 1999, std::uint64_t seed = 42) {
    ChunkRows d;
    d.n_series = 7;
    d.nt = 3;
    d.timed = 6;
    d.n = n;
    d.ld = n + 4;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    d.values.assign(d.n_series * d.ld, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t s = 0; s < d.n_series; ++s)
        for (std::size_t j = 0; j < d.n; ++j) {
            const double r = u(rng);
            d.values[s * d.ld + j] = r < 0.02   ? 0.0
                                     : r < 0.03 ? -0.0
                                     : r < 0.04 ? -INFINITY
                                     : r < 0.05 ? std::numeric_limits<double>::quiet_NaN()
                                     : r < 0.40 ? -std::pow(10.0, 30 * u(rng) - 25)
                                                : std::pow(10.0, 30 * u(rng) - 25);
        }
    d.status.assign(d.n, 0u);
    d.fail_index.assign(d.n, 0);
    for (std::size_t j = 0; j < d.n; ++j)
        if (rng() % 5 == 0) {
            d.status[j] = 1u;
            d.fail_index[j] = static_cast<std::int32_t>(rng() % 5) - 1;
        }
    return d;
}

/** @brief One series of the given values, every member alive. */
inline ChunkRows one_series(std::vector<double> x) {
    ChunkRows d;
    d.n_series = 1;
    d.n = x.size();
    d.ld = x.size();
    d.values = std::move(x);
    return d;
}

} // namespace nhvk_test
