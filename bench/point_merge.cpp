// SPDX-License-Identifier: MIT
// The host's share of a sweep reduced on the device (issue 40's sweep target): taking a point's statistics means
// merging its partials and histogram rows into the point's accumulator (EnsembleAccumulator::merge_reduced's loop),
// here for configs/sweep_particle_mu0.toml's 1201 series (40 output times, 10 replica groups), rows of 2000 values
// spread over 10 decades. Header-only: g++ -std=c++17 -O3 -I include bench/point_merge.cpp -o point_merge &&
// ./point_merge
#include "nhvk/stats/log_histogram.hpp"
#include "nhvk/stats/series_partial.hpp"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
int main() {
    using namespace nhvk::stats;
    const std::size_t S = 1201;
    const LogBinTable table = LogHistogramSpec{}.table();
    const LogBinner b = LogBinner::make(table);
    const std::size_t W = b.row_words();
    std::vector<std::uint64_t> acc(S * W, 0), part(S * W, 0);
    std::vector<SeriesPartial> pacc(S), ppart(S);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(-10.0, 0.0);
    for (std::size_t s = 0; s < S; ++s)
        for (int i = 0; i < 2000; ++i) {
            const double x = std::pow(10.0, u(rng));
            b.add(part.data() + s * W, x);
            b.add(acc.data() + s * W, x * 1.5);
            ppart[s].add(x);
            pacc[s].add(x * 1.5);
        }
    double best = 1e9;
    for (int rep = 0; rep < 7; ++rep) {
        std::vector<std::uint64_t> a = acc;
        std::vector<SeriesPartial> pa = pacc;
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t s = 0; s < S; ++s) {
            pa[s].merge(ppart[s]);
            b.merge(a.data() + s * W, part.data() + s * W);
        }
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = t < best ? t : best;
        // NOTE: reads the result, so that the compiler cannot drop the merges
        if (a[5] == 12345u && pa[0].count == 0u) std::printf("x");
    }
    std::printf("merge of one point (1201 series, %zu words per row): best of 7 %.2f ms\n", W, best * 1e3);
}
