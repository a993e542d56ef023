// SPDX-License-Identifier: MIT
// The device's selection of order statistics (kernels/cuda_backend.cu, the steps of rank_select.hpp) against its
// host twin and the full sort, bit for bit: series at the bucket map's edges, of unequal sizes (the shorter filled
// with +inf, as the backend's excluded members are), more series than one batch of the selection holds, and a series
// long enough that many blocks share its counts and buckets. The device's atomics order the gathering differently
// from the twin every time; the values selected must not change. Skipped without a device.
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/cuda_reduce.hpp"
#include "nhvk/stats/rank_select.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

/** @brief The device's, the twin's and the full sort's values of every rank, compared bit for bit. */
void expect_device_selects(const std::vector<std::vector<double>>& values,
                           const std::vector<std::vector<std::uint64_t>>& ranks) {
    std::vector<std::vector<double>> dev, twin;
    nhvk::cuda_select_ranks(values, ranks, dev);
    nhvk::stats::select_ranks_host(values, ranks, {}, twin);
    ASSERT_EQ(dev.size(), values.size());
    for (std::size_t s = 0; s < values.size(); ++s) {
        std::vector<double> sorted = values[s];
        std::sort(sorted.begin(), sorted.end());
        ASSERT_EQ(dev[s].size(), ranks[s].size()) << "series " << s;
        for (std::size_t i = 0; i < ranks[s].size(); ++i) {
            EXPECT_EQ(bits(dev[s][i]), bits(sorted[ranks[s][i]])) << "series " << s << ", rank " << ranks[s][i];
            EXPECT_EQ(bits(dev[s][i]), bits(twin[s][i])) << "series " << s << ", rank " << ranks[s][i];
        }
    }
}

TEST(CudaSelect, DeviceSelectsTheFullSortsValues) {
    if (!nhvk::cuda_available()) GTEST_SKIP() << nhvk::cuda_unavailable_reason();
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0.0, 1.0), e(-1074.0, 1023.0), w(-40.0, 2.0);
    // 300 series (three batches of the selection) of up to 5000 values, each of one kind, with its own ranks
    std::vector<std::vector<double>> values;
    std::vector<std::vector<std::uint64_t>> ranks;
    for (int s = 0; s < 300; ++s) {
        const std::size_t n = 1 + static_cast<std::size_t>(rng() % 5000);
        std::vector<double> v(n);
        for (std::size_t j = 0; j < n; ++j) {
            switch (s % 6) {
            case 0:
                v[j] = u(rng);
                break;
            case 1:
                v[j] = std::ldexp(u(rng) + 0.5, static_cast<int>(e(rng)));
                break;
            case 2:
                v[j] = (j % 2 ? -1.0 : 1.0) * std::exp(w(rng));
                break;
            case 3:
                v[j] = 1.0 + 1e-15 * static_cast<double>(j % 7);
                break;
            case 4:
                v[j] = j % 3 ? HUGE_VAL : static_cast<double>(j % 4);
                break;
            default:
                v[j] = j == 0 ? DBL_MAX : 0.0;
                break;
            }
        }
        std::vector<std::uint64_t> r{0, n - 1, n / 2, (n * 9) / 10};
        std::sort(r.begin(), r.end());
        r.erase(std::unique(r.begin(), r.end()), r.end());
        if (s % 10 == 9) r.clear(); // a series asked for nothing
        values.push_back(std::move(v));
        ranks.push_back(std::move(r));
    }
    expect_device_selects(values, ranks);
}

TEST(CudaSelect, ALongSeriesSharedByManyBlocks) {
    if (!nhvk::cuda_available()) GTEST_SKIP() << nhvk::cuda_unavailable_reason();
    std::mt19937_64 rng(9);
    std::normal_distribution<double> g(0.0, 1.0);
    const std::size_t n = 3000000;
    std::vector<std::vector<double>> values(2, std::vector<double>(n));
    for (std::size_t j = 0; j < n; ++j) {
        values[0][j] = std::exp(3.0 * g(rng));   // log-normal: decades wide
        values[1][j] = std::floor(4.0 * g(rng)); // integers: every bucket a tie
    }
    std::vector<std::uint64_t> r;
    for (const double p : {0.0, 0.01, 0.25, 0.5, 0.75, 0.99}) r.push_back(static_cast<std::uint64_t>(p * n));
    r.push_back(n - 1);
    expect_device_selects(values, {r, r});
}

} // namespace
