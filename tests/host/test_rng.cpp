// SPDX-License-Identifier: MIT
// Counter-based draws (include/nhvk/rng.hpp) and distributions (include/nhvk/distribution.hpp).
#include <nhvk/distribution.hpp>
#include <nhvk/rng.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

namespace {

using nhvk::DrawKey;
using nhvk::Stream;

std::uint64_t bits_of(double x) {
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

constexpr int n_stat = 1000000;
// Kolmogorov–Smirnov: P(√n·D > c) = α for c = √(−ln(α/2)/2); α = 1e-3 → c ≈ 1.9495.
const double ks_critical_1e3 = std::sqrt(-std::log(0.5e-3) / 2.0) / std::sqrt(static_cast<double>(n_stat));

/** KS statistic of `xs` (sorted in place) against the continuous CDF `cdf`. */
template <class Cdf> double ks_statistic(std::vector<double>& xs, Cdf cdf) {
    std::sort(xs.begin(), xs.end());
    const double n = static_cast<double>(xs.size());
    double d = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double f = cdf(xs[i]);
        d = std::max({d, (static_cast<double>(i) + 1.0) / n - f, f - static_cast<double>(i) / n});
    }
    return d;
}

struct Moments {
    double mean = 0.0, var = 0.0;
};
Moments moments(const std::vector<double>& xs) {
    Moments m;
    for (double x : xs) m.mean += x;
    m.mean /= static_cast<double>(xs.size());
    for (double x : xs) m.var += (x - m.mean) * (x - m.mean);
    m.var /= static_cast<double>(xs.size() - 1);
    return m;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

} // namespace

// Known-answer vectors of Random123's kat_vectors file, so a change of generator or of compile flags shows.
TEST(Rng, PhiloxKnownAnswer) {
    r123::Philox4x64 philox;
    r123::Philox4x64::ctr_type ctr = {{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
                                       0x082efa98ec4e6c89ULL}};
    r123::Philox4x64::key_type key = {{0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL}};
    const auto out = philox(ctr, key);
    EXPECT_EQ(out.v[0], 0xa528f45403e61d95ULL);
    EXPECT_EQ(out.v[1], 0x38c72dbd566e9788ULL);
    EXPECT_EQ(out.v[2], 0xa5a1610e72fd18b5ULL);
    EXPECT_EQ(out.v[3], 0x57bd43b5e52b7fe6ULL);

    // The key/counter layout of nhvk: seed 0, trajectory 0, stream 0, draw 0 is the all-zero Philox input.
    const auto zero = nhvk::philox_block(DrawKey{0, 0, 0}, 0);
    EXPECT_EQ(zero.v[0], 0x16554d9eca36314cULL);
    EXPECT_EQ(zero.v[1], 0xdb20fe9d672d0fdcULL);
    EXPECT_EQ(zero.v[2], 0xd7e772cee186176bULL);
    EXPECT_EQ(zero.v[3], 0x7e68b68aec7ba23bULL);
}

TEST(Rng, KeyLayout) {
    // seed → key word 0, trajectory → key word 1, draw index → counter word 0, stream → counter word 1.
    r123::Philox4x64 philox;
    r123::Philox4x64::ctr_type ctr = {{7, 3, 0, 0}};
    r123::Philox4x64::key_type key = {{11, 13}};
    const auto expect = philox(ctr, key);
    const auto got = nhvk::philox_block(nhvk::make_draw_key(11, 13, Stream::params), 7);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], expect.v[i]);
    EXPECT_EQ(nhvk::make_draw_key(11, 13, Stream::params).stream, 3u);
}

TEST(Rng, GoldenDraws) {
    // The draws are part of a run's reproducibility: a given (seed, trajectory) must start from the same initial
    // condition in every version. Change these only on purpose, and say so in the changelog.
    struct Golden {
        std::uint64_t traj, uniform_bits, normal_bits;
    };
    for (const Golden& g : {Golden{0, 0x3fe96fd4e899e337ULL, 0x3fbf9dd19219ea81ULL},
                            Golden{1, 0x3fd98e1c8e765b0aULL, 0x3feaa164550c51a3ULL},
                            Golden{1000000, 0x3fe56a8c3291268fULL, 0xbfe0e74c3ff8d21cULL}}) {
        const DrawKey key = nhvk::make_draw_key(1, g.traj, Stream::q0);
        EXPECT_EQ(bits_of(nhvk::uniform01(key, 0)), g.uniform_bits) << g.traj;
        EXPECT_EQ(bits_of(nhvk::normal01(key, 0)), g.normal_bits) << g.traj;
    }
}

TEST(Rng, SameKeySameBits) {
    for (std::uint64_t traj : {0ULL, 1ULL, 123456789ULL, ~0ULL}) {
        const DrawKey a = nhvk::make_draw_key(42, traj, Stream::v0);
        const DrawKey b{42, traj, static_cast<std::uint32_t>(Stream::v0)};
        for (std::uint32_t k = 0; k < 16; ++k) {
            EXPECT_EQ(bits_of(nhvk::uniform01(a, k)), bits_of(nhvk::uniform01(b, k)));
            EXPECT_EQ(bits_of(nhvk::normal01(a, k)), bits_of(nhvk::normal01(b, k)));
        }
    }
}

TEST(Rng, IndependentOfEvaluationOrder) {
    // Draws of 1000 trajectories visited forwards, backwards and in chunks of 7 are the same bits.
    const std::uint64_t seed = 9;
    std::vector<double> forward(1000), backward(1000), chunked(1000);
    for (std::uint64_t i = 0; i < 1000; ++i) forward[i] = nhvk::normal01(nhvk::make_draw_key(seed, i, Stream::q0), 2);
    for (std::uint64_t i = 1000; i-- > 0;) backward[i] = nhvk::normal01(nhvk::make_draw_key(seed, i, Stream::q0), 2);
    for (std::uint64_t c = 0; c < 1000; c += 7)
        for (std::uint64_t i = c; i < std::min<std::uint64_t>(c + 7, 1000); ++i)
            chunked[i] = nhvk::normal01(nhvk::make_draw_key(seed, i, Stream::q0), 2);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_EQ(bits_of(forward[i]), bits_of(backward[i]));
        EXPECT_EQ(bits_of(forward[i]), bits_of(chunked[i]));
    }
}

TEST(Rng, DifferentKeysGiveDifferentDraws) {
    const DrawKey base = nhvk::make_draw_key(1, 5, Stream::q0);
    std::set<std::uint64_t> uniforms, normals;
    int count = 0;
    auto add = [&](const DrawKey& key, std::uint32_t k) {
        uniforms.insert(bits_of(nhvk::uniform01(key, k)));
        normals.insert(bits_of(nhvk::normal01(key, k)));
        ++count;
    };
    for (std::uint32_t k = 0; k < 8; ++k) {
        add(base, k);                                                 // draw index
        add(DrawKey{base.seed + 1, base.traj, base.stream}, k);       // seed
        add(DrawKey{base.seed, base.traj + 1, base.stream}, k);       // trajectory
        add(DrawKey{base.seed, base.traj + (1ULL << 40), base.stream}, k); // high bits of the trajectory
        for (std::uint32_t s = 1; s <= static_cast<std::uint32_t>(Stream::reserved); ++s)
            add(DrawKey{base.seed, base.traj, s}, k); // stream
    }
    EXPECT_EQ(static_cast<int>(uniforms.size()), count);
    EXPECT_EQ(static_cast<int>(normals.size()), count);
    // Swapping seed and trajectory is a different draw too.
    EXPECT_NE(nhvk::uniform01(DrawKey{3, 4, 0}, 0), nhvk::uniform01(DrawKey{4, 3, 0}, 0));
}

TEST(Rng, OpenUnitIntervalAtTheExtremes) {
    const double lo = nhvk::detail::bits_to_open01(0);
    const double hi = nhvk::detail::bits_to_open01(~0ULL);
    EXPECT_GT(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    EXPECT_EQ(lo, std::ldexp(1.0, -53));
    EXPECT_EQ(hi, 1.0 - std::ldexp(1.0, -53));
    EXPECT_EQ(nhvk::detail::bits_to_open01(1ULL << 63), 0.5 + std::ldexp(1.0, -53));
}

TEST(Rng, UniformMomentsAndKolmogorovSmirnov) {
    std::vector<double> xs(n_stat);
    for (int i = 0; i < n_stat; ++i) xs[i] = nhvk::uniform01(nhvk::make_draw_key(2024, i, Stream::q0), 0);
    double lo = 1.0, hi = 0.0;
    for (double x : xs) lo = std::min(lo, x), hi = std::max(hi, x);
    EXPECT_GT(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    const Moments m = moments(xs);
    const double n = n_stat;
    EXPECT_NEAR(m.mean, 0.5, 5.0 * std::sqrt(1.0 / 12.0 / n));                  // 5σ of the sample mean
    EXPECT_NEAR(m.var, 1.0 / 12.0, 5.0 * std::sqrt((1.0 / 80 - 1.0 / 144) / n)); // 5σ of the sample variance
    const double d = ks_statistic(xs, [](double x) { return x; });
    EXPECT_LT(d, ks_critical_1e3);
}

TEST(Rng, NormalMomentsAndKolmogorovSmirnov) {
    std::vector<double> xs(n_stat);
    for (int i = 0; i < n_stat; ++i) xs[i] = nhvk::normal01(nhvk::make_draw_key(7, 1000 + i, Stream::v0), 3);
    const double bound = std::sqrt(2.0 * 53.0 * std::log(2.0));
    for (double x : xs) ASSERT_LE(std::abs(x), bound);
    const Moments m = moments(xs);
    const double n = n_stat;
    EXPECT_NEAR(m.mean, 0.0, 5.0 / std::sqrt(n));
    EXPECT_NEAR(m.var, 1.0, 5.0 * std::sqrt(2.0 / n));
    double m4 = 0.0;
    for (double x : xs) m4 += x * x * x * x;
    EXPECT_NEAR(m4 / n, 3.0, 5.0 * std::sqrt(96.0 / n)); // E z⁴ = 3, Var z⁴ = 105 − 9
    const double d = ks_statistic(xs, normal_cdf);
    EXPECT_LT(d, ks_critical_1e3);
}

TEST(Rng, NormalAlongTheDrawIndexAndUncorrelatedWithUniform) {
    // One trajectory, 10^6 draw indices: the other axis of the counter space.
    std::vector<double> zs(n_stat), us(n_stat);
    const DrawKey key = nhvk::make_draw_key(3, 77, Stream::mu0);
    for (int k = 0; k < n_stat; ++k) {
        zs[k] = nhvk::normal01(key, static_cast<std::uint32_t>(k));
        us[k] = nhvk::uniform01(key, static_cast<std::uint32_t>(k));
    }
    double corr = 0.0, lag = 0.0;
    for (int k = 0; k < n_stat; ++k) corr += zs[k] * (us[k] - 0.5);
    for (int k = 0; k + 1 < n_stat; ++k) lag += zs[k] * zs[k + 1];
    corr /= n_stat * std::sqrt(1.0 / 12.0);
    lag /= n_stat - 1;
    EXPECT_NEAR(corr, 0.0, 5.0 / std::sqrt(static_cast<double>(n_stat)));
    EXPECT_NEAR(lag, 0.0, 5.0 / std::sqrt(static_cast<double>(n_stat)));
    EXPECT_LT(ks_statistic(zs, normal_cdf), ks_critical_1e3);
}

TEST(Rng, PortableLogMatchesLibm) {
    // det_log replaces libm's log to be bit-identical on host and device; it must stay within 1 ulp of it.
    double worst = 0.0;
    for (int i = 0; i < 200000; ++i) {
        const double u = nhvk::uniform01(nhvk::make_draw_key(1, i, Stream::reserved), 0);
        for (double x : {u, std::ldexp(u, -40), 1.0 - u * 1e-6, 1.0 + u * 1e-6, 0.5 + u}) {
            const long double ref = std::log(static_cast<long double>(x));
            const double r = std::abs(static_cast<double>(ref));
            const double ulp = std::nextafter(r, 1e300) - r;
            worst = std::max(worst, static_cast<double>(std::abs(nhvk::detail::det_log(x) - ref)) / ulp);
        }
    }
    EXPECT_LE(worst, 1.0) << "worst error in ulps of the result";
    EXPECT_EQ(nhvk::detail::det_log(1.0), 0.0);
    EXPECT_EQ(nhvk::detail::det_log(0x1p-53), std::log(0x1p-53));
}

TEST(Rng, PortableCosineMatchesLibm) {
    double worst = 0.0;
    for (int i = 0; i < 200000; ++i) {
        const double u = nhvk::uniform01(nhvk::make_draw_key(2, i, Stream::reserved), 0);
        const long double ref = std::cos(2.0L * 3.141592653589793238462643383279502884L * u);
        worst = std::max(worst, static_cast<double>(std::abs(nhvk::detail::det_cos_2pi(u) - ref)));
    }
    EXPECT_LE(worst, 2.5e-16) << "worst absolute error";
    // Quarter turns land on the exact values.
    EXPECT_EQ(nhvk::detail::det_cos_2pi(0.0), 1.0);
    EXPECT_EQ(nhvk::detail::det_cos_2pi(0.25), 0.0);
    EXPECT_EQ(nhvk::detail::det_cos_2pi(0.5), -1.0);
    EXPECT_EQ(nhvk::detail::det_cos_2pi(0.75), 0.0);
}

TEST(Distribution, FixedConsumesNoRandomness) {
    const nhvk::Distribution d = nhvk::make_fixed(0.25);
    for (std::uint64_t i = 0; i < 100; ++i) EXPECT_EQ(nhvk::sample(d, nhvk::make_draw_key(5, i, Stream::q0), 0), 0.25);
}

TEST(Distribution, UniformRangeAndMoments) {
    const nhvk::Distribution d = nhvk::make_uniform(-1.0, 3.0);
    std::vector<double> xs(n_stat);
    for (int i = 0; i < n_stat; ++i) xs[i] = nhvk::sample(d, nhvk::make_draw_key(8, i, Stream::q0), 1);
    for (double x : xs) {
        ASSERT_GE(x, -1.0);
        ASSERT_LE(x, 3.0);
    }
    const Moments m = moments(xs);
    EXPECT_NEAR(m.mean, 1.0, 5.0 * 4.0 * std::sqrt(1.0 / 12.0 / n_stat));
    EXPECT_NEAR(m.var, 16.0 / 12.0, 5.0 * 16.0 * std::sqrt((1.0 / 80 - 1.0 / 144) / n_stat));
    EXPECT_LT(ks_statistic(xs, [](double x) { return (x + 1.0) / 4.0; }), ks_critical_1e3);
    // The same key and index as uniform01, mapped affinely.
    const auto key = nhvk::make_draw_key(8, 17, Stream::q0);
    EXPECT_EQ(nhvk::sample(d, key, 1), std::fma(4.0, nhvk::uniform01(key, 1), -1.0));
}

TEST(Distribution, NormalMoments) {
    const nhvk::Distribution d = nhvk::make_normal(2.0, 0.5);
    std::vector<double> xs(n_stat);
    for (int i = 0; i < n_stat; ++i) xs[i] = nhvk::sample(d, nhvk::make_draw_key(8, i, Stream::v0), 0);
    const Moments m = moments(xs);
    EXPECT_NEAR(m.mean, 2.0, 5.0 * 0.5 / std::sqrt(static_cast<double>(n_stat)));
    EXPECT_NEAR(m.var, 0.25, 5.0 * 0.25 * std::sqrt(2.0 / n_stat));
    EXPECT_LT(ks_statistic(xs, [](double x) { return normal_cdf((x - 2.0) / 0.5); }), ks_critical_1e3);
    // A zero standard deviation is the mean exactly.
    EXPECT_EQ(nhvk::sample(nhvk::make_normal(2.0, 0.0), nhvk::make_draw_key(1, 1, Stream::v0), 0), 2.0);
}

TEST(Distribution, Equality) {
    EXPECT_EQ(nhvk::make_fixed(1.0), (nhvk::Distribution{nhvk::DistKind::fixed, 1.0, 7.0}));
    EXPECT_NE(nhvk::make_uniform(0.0, 1.0), nhvk::make_normal(0.0, 1.0));
    EXPECT_NE(nhvk::make_normal(0.0, 1.0), nhvk::make_normal(0.0, 2.0));
}
