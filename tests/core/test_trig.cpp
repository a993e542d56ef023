// SPDX-License-Identifier: MIT
// The device's sin and cos (nhvk/trig.hpp: Cody–Waite reduction and the msun/Cephes polynomials), run on the host
// and compared with the x87 long-double sinl/cosl of the C library, an independent implementation whose error is far
// below a double's ulp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "nhvk/trig.hpp"

namespace {

/** @brief |got − truth| in ulps of the correctly rounded value (the spacing above its magnitude). */
template <class T> double ulp_error(T got, long double truth) {
    const T t = static_cast<T>(truth);
    const T ulp = std::nextafter(std::fabs(t), std::numeric_limits<T>::infinity()) - std::fabs(t);
    return static_cast<double>(std::fabs(static_cast<long double>(got) - truth) / ulp);
}

template <class T> void expect_within_ulps(T range, double max_ulps, int samples) {
    std::mt19937_64 gen(20261123);
    std::uniform_real_distribution<T> draw(-range, range);
    double worst_sin = 0, worst_cos = 0;
    for (int i = 0; i < samples; ++i) {
        const T x = draw(gen);
        worst_sin = std::max(worst_sin, ulp_error(nhvk::detail::sin_cw(x), sinl(static_cast<long double>(x))));
        worst_cos = std::max(worst_cos, ulp_error(nhvk::detail::cos_cw(x), cosl(static_cast<long double>(x))));
    }
    EXPECT_LE(worst_sin, max_ulps) << "sin on |x| <= " << range;
    EXPECT_LE(worst_cos, max_ulps) << "cos on |x| <= " << range;
    // NOTE: guards against a test that compares nothing: the polynomials are not exact, some error is seen.
    EXPECT_GT(worst_sin + worst_cos, 0.0);
}

} // namespace

// CUDA documents 2 ulps for its own double sin and cos; measured here: 0.71 on [−π/4, π/4], 1.52 up to 2^30.
TEST(Trig, DoubleWithinTwoUlpsUpToTwoToTheThirty) {
    for (const double r : {0.785, 3.2, 100.0, 1e4, 1e6, 1073741824.0}) expect_within_ulps<double>(r, 2.0, 100000);
}

TEST(Trig, FloatWithinTwoUlpsUpToTwoToTheSeventeen) {
    for (const float r : {0.785f, 3.2f, 100.0f, 1e4f, 131072.0f}) expect_within_ulps<float>(r, 2.0, 100000);
}

// Beyond the Cody–Waite range the argument is first reduced by fl(2π) with one rounding: the result is the exact sine
// of a point within half an ulp of x, so the forward error is bounded by |cos x|·h + h²/2 (Taylor, |sin''| ≤ 1) with h
// = ulp(x)/2, plus the polynomial's rounding.
template <class T> void expect_backward_stable(T lo, T hi) {
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<T> draw(lo, hi);
    for (int i = 0; i < 20000; ++i) {
        const T x = (i % 2 ? T(1) : T(-1)) * draw(gen);
        const long double half_ulp_x =
            0.5L *
            static_cast<long double>(std::nextafter(std::fabs(x), std::numeric_limits<T>::infinity()) - std::fabs(x));
        const long double s = sinl(static_cast<long double>(x)), c = cosl(static_cast<long double>(x));
        const long double eps = std::numeric_limits<T>::epsilon();
        const long double curvature = 0.5L * half_ulp_x * half_ulp_x;
        ASSERT_LE(std::fabs(static_cast<long double>(nhvk::detail::sin_cw(x)) - s),
                  std::fabs(c) * half_ulp_x + curvature + 4 * eps)
            << "x = " << x;
        ASSERT_LE(std::fabs(static_cast<long double>(nhvk::detail::cos_cw(x)) - c),
                  std::fabs(s) * half_ulp_x + curvature + 4 * eps)
            << "x = " << x;
    }
}

TEST(Trig, HugeArgumentsAreBackwardStable) {
    // NOTE: only where ulp(x) is well below 1, so that the bound says something.
    expect_backward_stable<double>(1.1e9, 1e13);
    expect_backward_stable<float>(1.4e5f, 1e6f);
}

TEST(Trig, BeyondTheReductionRangeGivesNaN) {
    // A counted non_finite failure rather than a value of an angle with no digits left.
    EXPECT_TRUE(std::isnan(nhvk::detail::sin_cw(1.3e24)));
    EXPECT_TRUE(std::isnan(nhvk::detail::cos_cw(-1e300)));
    EXPECT_TRUE(std::isnan(nhvk::detail::sin_cw(1.2e12f)));
    EXPECT_FALSE(std::isnan(nhvk::detail::sin_cw(1.2e24)));
    EXPECT_FALSE(std::isnan(nhvk::detail::cos_cw(1.09e12f)));
    EXPECT_NEAR(std::hypot(nhvk::detail::sin_cw(1.2e24), nhvk::detail::cos_cw(1.2e24)), 1.0, 1e-15);
}

TEST(Trig, NonFiniteGivesNaN) {
    for (const double x : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
        EXPECT_TRUE(std::isnan(nhvk::detail::sin_cw(x)));
        EXPECT_TRUE(std::isnan(nhvk::detail::cos_cw(x)));
        EXPECT_TRUE(std::isnan(nhvk::detail::sin_cw(static_cast<float>(x))));
    }
}

TEST(Trig, QuadrantsAndSigns) {
    // Exact points that each quadrant branch must get right to the rounding of the reduction.
    const double pi = 3.14159265358979323846;
    EXPECT_EQ(nhvk::detail::sin_cw(0.0), 0.0);
    EXPECT_EQ(nhvk::detail::cos_cw(0.0), 1.0);
    EXPECT_NEAR(nhvk::detail::sin_cw(pi / 2), 1.0, 1e-16);
    EXPECT_NEAR(nhvk::detail::cos_cw(pi), -1.0, 1e-16);
    EXPECT_NEAR(nhvk::detail::sin_cw(-pi / 2), -1.0, 1e-16);
    EXPECT_NEAR(nhvk::detail::cos_cw(3 * pi / 2), 0.0, 1e-15);
    EXPECT_NEAR(nhvk::detail::sin_cw(3 * pi / 2), -1.0, 1e-16);
}
