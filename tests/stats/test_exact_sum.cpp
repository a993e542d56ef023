// SPDX-License-Identifier: MIT
#include "nhvk/stats/exact_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using nhvk::stats::ExactSquareSum;
using nhvk::stats::ExactSum;
using nhvk::stats::mean_std;

std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

double naive_sum(const std::vector<double>& v) {
    double s = 0.0;
    for (const double x : v) {
        s += x;
    }
    return s;
}

ExactSum exact_sum(const std::vector<double>& v) {
    ExactSum s;
    for (const double x : v) {
        s.add(x);
    }
    return s;
}

// random doubles over the whole exponent range, both signs, including subnormals
std::vector<double> wide_random(std::size_t n, std::mt19937_64& rng) {
    std::vector<double> v(n);
    std::uniform_int_distribution<std::uint64_t> mant(0, (std::uint64_t{1} << 52) - 1);
    std::uniform_int_distribution<int> expo(0, 2046);
    std::uniform_int_distribution<int> coin(0, 1);
    for (auto& x : v) {
        const std::uint64_t b = (std::uint64_t(coin(rng)) << 63) | (std::uint64_t(expo(rng)) << 52) | mant(rng);
        std::memcpy(&x, &b, sizeof x);
    }
    return v;
}

TEST(ExactSum, EmptyIsPositiveZero) {
    const ExactSum s;
    EXPECT_EQ(bits(s.value()), bits(0.0));
    EXPECT_FALSE(s.nonfinite());
}

TEST(ExactSum, SignedZerosAddNothing) {
    ExactSum s;
    s.add(-0.0);
    s.add(0.0);
    s.add(-0.0);
    EXPECT_EQ(bits(s.value()), bits(0.0));
    s.add(1.5);
    s.add(-1.5);
    EXPECT_EQ(bits(s.value()), bits(0.0));
}

TEST(ExactSum, CancellationWhereNaiveSummationFails) {
    const std::vector<double> a = {1e16, 1.0, -1e16};
    ASSERT_NE(naive_sum(a), 1.0); // the naive sum loses the 1
    EXPECT_EQ(exact_sum(a).value(), 1.0);

    const std::vector<double> b = {1e100, 1.0, -1e100, 1e-100, 3.0};
    EXPECT_EQ(exact_sum(b).value(), 4.0); // 4 + 1e-100 rounds to 4

    const std::vector<double> c = {DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, 0x1p-1074};
    EXPECT_EQ(exact_sum(c).value(), 0x1p-1074); // the naive sum is inf/nan
    EXPECT_FALSE(std::isfinite(naive_sum(c)));
}

TEST(ExactSum, SubnormalsAndExtremes) {
    EXPECT_EQ(exact_sum({0x1p-1074, 0x1p-1074, 0x1p-1074}).value(), 0x1.8p-1073);
    EXPECT_EQ(exact_sum({DBL_MIN, -0x1p-1074}).value(), std::nextafter(DBL_MIN, 0.0));
    EXPECT_EQ(exact_sum({0x1p1023, 0x1p-1074, -0x1p1023}).value(), 0x1p-1074);
    EXPECT_EQ(exact_sum({DBL_MAX, DBL_MAX, -DBL_MAX}).value(), DBL_MAX);
    EXPECT_EQ(exact_sum({DBL_MAX, DBL_MAX}).value(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(exact_sum({-DBL_MAX, -DBL_MAX}).value(), -std::numeric_limits<double>::infinity());
    // largest finite sum: DBL_MAX + half an ulp − tiny rounds back to DBL_MAX, + half an ulp ties to infinity
    EXPECT_EQ(exact_sum({DBL_MAX, 0x1p970, -0x1p-1074}).value(), DBL_MAX);
    EXPECT_EQ(exact_sum({DBL_MAX, 0x1p970}).value(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(exact_sum({-5.0, 2.0}).value(), -3.0);
}

TEST(ExactSum, RoundsToNearestEven) {
    const double u = 0x1p-52;                                             // ulp of 1
    EXPECT_EQ(exact_sum({1.0, u / 2}).value(), 1.0);                      // tie, 1 is even
    EXPECT_EQ(exact_sum({1.0 + u, u / 2}).value(), 1.0 + 2 * u);          // tie, round to even
    EXPECT_EQ(exact_sum({1.0, u / 2, 0x1p-200}).value(), 1.0 + u);        // just above the tie
    EXPECT_EQ(exact_sum({1.0, u / 2, -0x1p-200}).value(), 1.0);           // just below the tie
    EXPECT_EQ(exact_sum({-1.0, -u / 2, -0x1p-1074}).value(), -(1.0 + u)); // symmetric for negatives
    EXPECT_EQ(exact_sum({0x1p60, 1.0}).value(), 0x1p60);
}

TEST(ExactSum, RejectsNonFinite) {
    ExactSum s;
    s.add(2.0);
    s.add(std::numeric_limits<double>::infinity());
    s.add(std::numeric_limits<double>::quiet_NaN());
    s.add(-std::numeric_limits<double>::infinity());
    EXPECT_TRUE(s.nonfinite());
    EXPECT_EQ(s.value(), 2.0);
    ExactSum t;
    t.merge(s);
    EXPECT_TRUE(t.nonfinite());
}

// values m·2^e with |m| < 2^30, e ∈ [−40, 40]: the exact sum is an integer multiple of 2^-40 below 2^127 (int128)
TEST(ExactSum, MatchesExactIntegerReference) {
    std::mt19937_64 rng(12345);
    std::uniform_int_distribution<std::int64_t> mant(-(std::int64_t{1} << 30) + 1, (std::int64_t{1} << 30) - 1);
    std::uniform_int_distribution<int> expo(-40, 40);
    for (int trial = 0; trial < 20; ++trial) {
        const std::size_t n = 1 + static_cast<std::size_t>(rng() % 20000);
        std::vector<double> v(n);
        __int128 ref = 0;
        for (auto& x : v) {
            const std::int64_t m = mant(rng);
            const int e = expo(rng);
            x = std::ldexp(static_cast<double>(m), e);
            ref += static_cast<__int128>(m) * (static_cast<__int128>(1) << (e + 40)); // no shift of a negative m
        }
        // (double)__int128 is correctly rounded; the scaling by 2^-40 is exact here
        const double expected = std::ldexp(static_cast<double>(ref), -40);
        EXPECT_EQ(bits(exact_sum(v).value()), bits(expected)) << "trial " << trial;
    }
}

// A determinism test: the same sum in other orders and merge trees gives the same bits (the value is validated
// by MatchesExactIntegerReference above).
TEST(ExactSum, OrderAndMergeTreeDoNotChangeBits) {
    std::mt19937_64 rng(7);
    std::vector<double> v = wide_random(5000, rng);
    // a spread of magnitudes in a moderate range too, so the result is not dominated by one huge value
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 0; i < 5000; ++i) {
        v.push_back(std::ldexp(u(rng), static_cast<int>(rng() % 60) - 30));
    }
    const ExactSum ref = exact_sum(v);
    const double ref_value = ref.value();
    for (int trial = 0; trial < 10; ++trial) {
        std::shuffle(v.begin(), v.end(), rng);
        const ExactSum s = exact_sum(v);
        EXPECT_TRUE(s == ref);
        EXPECT_EQ(bits(s.value()), bits(ref_value));
        // split into random pieces, merge them in reverse order
        std::vector<ExactSum> parts(1 + rng() % 17);
        for (const double x : v) {
            parts[rng() % parts.size()].add(x);
        }
        ExactSum m;
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
            m.merge(*it);
        }
        EXPECT_TRUE(m == ref);
        EXPECT_EQ(bits(m.value()), bits(ref_value));
    }
}

TEST(ExactSum, CorrectlyRoundedAgainstFloat128OnModerateRange) {
    // |x| ∈ [2^-20, 2^20): the exact sum of 1000 such values has < 113 significant bits, so __float128 is exact
    std::mt19937_64 rng(99);
    std::uniform_int_distribution<std::int64_t> mant(-(std::int64_t{1} << 53) + 1, (std::int64_t{1} << 53) - 1);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<double> v(1000);
        __float128 ref = 0;
        for (auto& x : v) {
            x = std::ldexp(static_cast<double>(mant(rng)), static_cast<int>(rng() % 40) - 73);
            ref += x;
        }
        EXPECT_EQ(bits(exact_sum(v).value()), bits(static_cast<double>(ref))) << "trial " << trial;
    }
}

TEST(ExactSum, SurvivesLazyCarryNormalisation) {
    // more additions than kNormalizeEvery of the largest significand: without the lazy carry a limb would reach
    // 2^29·2^32 per 2^29 additions and overflow int64 after 2^31
    const double x = std::ldexp(static_cast<double>((std::uint64_t{1} << 53) - 1), 11);
    const std::uint64_t n = static_cast<std::uint64_t>(ExactSum::kNormalizeEvery) + 12345u;
    ExactSum s;
    for (std::uint64_t i = 0; i < n; ++i) {
        s.add(x);
    }
    const __int128 ref = static_cast<__int128>(n) * static_cast<__int128>((std::uint64_t{1} << 53) - 1);
    EXPECT_EQ(s.value(), std::ldexp(static_cast<double>(ref), 11));
    // subtracting the (rounded) reference leaves exactly its rounding error
    const double rounded = std::ldexp(static_cast<double>(ref), 11);
    ExactSum neg;
    neg.add(-rounded);
    s.merge(neg);
    const __int128 rounded_units = static_cast<__int128>(std::ldexp(rounded, -11)); // an integer below 2^83
    EXPECT_EQ(s.value(), std::ldexp(static_cast<double>(ref - rounded_units), 11));
}

// ---- mean and standard deviation ---------------------------------------------------------------------------

void sums(const std::vector<double>& v, ExactSum& s1, ExactSquareSum& s2) {
    for (const double x : v) {
        s1.add(x);
        s2.add(x);
    }
}

TEST(ExactSquareSum, ExactSquaresOverTheWholeRange) {
    ExactSquareSum s;
    EXPECT_EQ(bits(s.value()), bits(0.0));
    s.add(3.0);
    s.add(-4.0);
    EXPECT_EQ(s.value(), 25.0);
    // (1 + 2^-52)² = 1 + 2^-51 + 2^-104: the last term survives only in an exact sum
    ExactSquareSum t;
    t.add(1.0 + 0x1p-52);
    t.add(1.0); // 2 + 2^-51 + 2^-104 → rounds to 2 + 2^-51
    EXPECT_EQ(t.value(), 2.0 + 0x1p-51);
    // tiny and huge squares are exact, not underflowed/overflowed
    ExactSquareSum tiny;
    for (int i = 0; i < 4; ++i) {
        tiny.add(0x1p-600); // 4·2^-1200 = 2^-1198: below the double range, rounds to 0 on reading
    }
    EXPECT_EQ(tiny.value(), 0.0);
    ExactSquareSum big;
    big.add(0x1p600);
    EXPECT_EQ(big.value(), std::numeric_limits<double>::infinity());
    ExactSquareSum sub;
    sub.add(0x1p-537); // 2^-1074, the smallest subnormal
    EXPECT_EQ(sub.value(), 0x1p-1074);
    sub.add(0x1p-538); // + 2^-1076: 1.25·2^-1074 → 2^-1074
    EXPECT_EQ(sub.value(), 0x1p-1074);
    ExactSquareSum nf;
    nf.add(std::numeric_limits<double>::quiet_NaN());
    EXPECT_TRUE(nf.nonfinite());
    EXPECT_EQ(nf.value(), 0.0);
}

TEST(ExactSquareSum, OrderIndependentAndExactOnIntegers) {
    std::mt19937_64 rng(21);
    std::uniform_int_distribution<std::uint64_t> mant(0, (std::uint64_t{1} << 53) - 1);
    std::uniform_int_distribution<int> expo(-1100, 1000);
    std::vector<double> v(3000);
    for (auto& x : v) {
        x = std::ldexp(static_cast<double>(mant(rng)), expo(rng) % 600 - 60); // wide, incl. huge/tiny squares
    }
    ExactSquareSum a;
    for (const double x : v) {
        a.add(x);
    }
    for (int trial = 0; trial < 5; ++trial) {
        std::shuffle(v.begin(), v.end(), rng);
        ExactSquareSum b;
        ExactSquareSum c;
        for (std::size_t i = 0; i < v.size(); ++i) {
            (i % 3 == 0 ? b : c).add(v[i]);
        }
        c.merge(b);
        EXPECT_TRUE(c == a);
        EXPECT_EQ(bits(c.value()), bits(a.value()));
    }
    // integers below 2^26: every square and the sum are exact integers; compare with int128
    __int128 iref = 0;
    ExactSquareSum ints;
    std::uniform_int_distribution<std::int64_t> small(-(std::int64_t{1} << 26), std::int64_t{1} << 26);
    for (int i = 0; i < 10000; ++i) {
        const std::int64_t k = small(rng);
        ints.add(static_cast<double>(k));
        iref += static_cast<__int128>(k) * k;
    }
    EXPECT_EQ(ints.value(), static_cast<double>(iref));
}

TEST(ExactSquareSum, PortableSquareMatchesInt128) {
    std::mt19937_64 rng(8);
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t m = i == 0 ? (std::uint64_t{1} << 53) - 1 : rng() >> 11;
        std::uint64_t hi = 0;
        std::uint64_t lo = 0;
        nhvk::stats::detail::square_53_portable(m, hi, lo);
        const unsigned __int128 sq = static_cast<unsigned __int128>(m) * m;
        ASSERT_EQ(lo, static_cast<std::uint64_t>(sq));
        ASSERT_EQ(hi, static_cast<std::uint64_t>(sq >> 64));
    }
}

TEST(MeanStd, SmallKnownSets) {
    ExactSum s1;
    ExactSquareSum s2;
    sums({1.0, 2.0, 3.0, 4.0}, s1, s2);
    const auto r = mean_std(s1, s2, 4);
    EXPECT_EQ(r.mean, 2.5);
    EXPECT_EQ(r.std, std::sqrt(5.0 / 3.0));

    ExactSum a;
    ExactSquareSum b;
    sums({7.25}, a, b);
    const auto one = mean_std(a, b, 1);
    EXPECT_EQ(one.mean, 7.25);
    EXPECT_EQ(one.std, 0.0);

    const auto none = mean_std(ExactSum{}, ExactSquareSum{}, 0);
    EXPECT_TRUE(std::isnan(none.mean));
    EXPECT_TRUE(std::isnan(none.std));
}

TEST(MeanStd, ConstantValuesGiveExactlyZeroStd) {
    for (const double c : {0.1, 1e-300, 3e200, 1.0 / 3.0, 0x1p-1074, -7.5}) {
        std::vector<double> v(1001, c);
        ExactSum s1;
        ExactSquareSum s2;
        sums(v, s1, s2);
        const auto r = mean_std(s1, s2, v.size());
        EXPECT_EQ(r.mean, c) << c;
        EXPECT_EQ(bits(r.std), bits(0.0)) << c; // exact squares: D == 0 exactly, even where x² leaves the double range
    }
}

TEST(MeanStd, ExtremeMagnitudesStayFinite) {
    // values around 1e200 (x² overflows a double) and 1e-200 (x² underflows): std is still right
    for (const double scale : {1e200, 1e-200}) {
        const std::vector<double> v = {1.0 * scale, 2.0 * scale, 3.0 * scale, 4.0 * scale};
        ExactSum s1;
        ExactSquareSum s2;
        sums(v, s1, s2);
        const auto r = mean_std(s1, s2, v.size());
        EXPECT_NEAR(r.mean / (2.5 * scale), 1.0, 1e-15);
        EXPECT_NEAR(r.std / (std::sqrt(5.0 / 3.0) * scale), 1.0, 1e-15);
    }
}

TEST(MeanStd, NoCancellationForTinySpreadOnLargeOffset) {
    // x = 1e8 + δ_i with δ ~ 1e-4: the one-pass naive formula loses every digit
    std::mt19937_64 rng(3);
    std::normal_distribution<double> g(0.0, 1e-4);
    std::vector<double> v(10000);
    for (auto& x : v) {
        x = 1e8 + g(rng);
    }
    ExactSum s1;
    ExactSquareSum s2;
    sums(v, s1, s2);
    const auto r = mean_std(s1, s2, v.size());
    // reference: two-pass in __float128 around the exact mean
    __float128 m = 0;
    for (const double x : v) {
        m += x;
    }
    m /= v.size();
    __float128 ss = 0;
    for (const double x : v) {
        ss += (x - m) * (x - m);
    }
    const double ref_std = std::sqrt(static_cast<double>(ss / (v.size() - 1)));
    EXPECT_EQ(r.mean, static_cast<double>(m));
    EXPECT_NEAR(r.std / ref_std, 1.0, 5e-16);
    // the textbook formula from the rounded sums is far off
    double a = 0;
    double b = 0;
    for (const double x : v) {
        a += x;
        b += x * x;
    }
    const double naive = std::sqrt(std::fabs(b - a * a / v.size()) / (v.size() - 1));
    EXPECT_GT(std::fabs(naive / ref_std - 1.0), 1e-3);
}

TEST(MeanStd, RandomSetsAgainstFloat128) {
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 30; ++trial) {
        const std::size_t n = 2 + rng() % 3000;
        std::vector<double> v(n);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (auto& x : v) {
            x = std::ldexp(u(rng), static_cast<int>(rng() % 30) - 15);
        }
        ExactSum s1;
        ExactSquareSum s2;
        sums(v, s1, s2);
        const auto r = mean_std(s1, s2, n);
        __float128 m = 0;
        for (const double x : v) {
            m += x; // exact: 30 binades of 53-bit values fit the 113-bit significand
        }
        const __float128 mean128 = m / n;
        __float128 ss = 0;
        for (const double x : v) {
            ss += (x - mean128) * (x - mean128);
        }
        EXPECT_EQ(bits(r.mean), bits(static_cast<double>(mean128))) << trial;
        const double ref_std = std::sqrt(static_cast<double>(ss / (n - 1)));
        EXPECT_NEAR(r.std / ref_std, 1.0, 5e-16) << trial;
    }
}

TEST(MeanStd, MeanIsCorrectlyRoundedBelowHalfUlp) {
    // (1 + 2^-52 + 2^-52·ε)/1 style: n = 3, sum = 3 + 2^-51 → mean = 1 + 2^-51/3 → rounds to 1 + 2^-52·(2/3 → 1)
    ExactSum s1;
    ExactSquareSum s2;
    sums({1.0, 1.0, 1.0 + 0x1p-51}, s1, s2);
    EXPECT_EQ(mean_std(s1, s2, 3).mean, 1.0 + 0x1p-52);
    ExactSum t1;
    ExactSquareSum t2;
    sums({1.0, 1.0, 1.0 + 0x1p-52}, t1, t2); // mean = 1 + 2^-52/3 → 1
    EXPECT_EQ(mean_std(t1, t2, 3).mean, 1.0);
    ExactSum u1;
    ExactSquareSum u2;
    sums({0x1p-1074, 0.0, 0.0}, u1, u2); // mean = 2^-1074/3 → 0
    EXPECT_EQ(mean_std(u1, u2, 3).mean, 0.0);
    ExactSum w1;
    ExactSquareSum w2;
    sums({0x1p-1073, 0.0, 0.0}, w1, w2); // mean = 2/3·2^-1074 → 2^-1074
    EXPECT_EQ(mean_std(w1, w2, 3).mean, 0x1p-1074);
}

} // namespace
