// SPDX-License-Identifier: MIT
// Forward-mode AD (include/nhvk/dual.hpp): values, first and nested second derivatives of every elementary function
// against analytic formulas, arithmetic rules, multi-component tangents, float and double.
#include <nhvk/dual.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using D1 = nhvk::Dual<double, 1>;
using D2 = nhvk::Dual<D1, 1>; // second derivatives in one variable

/** Seed x for f(x), f'(x), f''(x): inner and outer tangents both along x. */
D2 seed2(double x) {
    D2 r{D1(x)};
    r.val.d[0] = 1.0;
    r.d[0] = D1(1.0);
    return r;
}

struct Case {
    std::string name;
    double x;
    std::function<D2(const D2&)> f;
    double f0, f1, f2; // analytic value, first and second derivative at x
};

std::vector<Case> elementary_cases() {
    using nhvk::Dual;
    std::vector<Case> cs;
    auto add = [&](const char* name, double x, std::function<D2(const D2&)> f, double f0, double f1, double f2) {
        cs.push_back({name, x, f, f0, f1, f2});
    };
    for (double x : {-1.3, -0.4, 0.0, 0.7, 2.1}) {
        add(
            "sin", x, [](const D2& a) { return sin(a); }, std::sin(x), std::cos(x), -std::sin(x));
        add(
            "cos", x, [](const D2& a) { return cos(a); }, std::cos(x), -std::sin(x), -std::cos(x));
        const double tn = std::tan(x);
        add(
            "tan", x, [](const D2& a) { return tan(a); }, tn, 1 + tn * tn, 2 * tn * (1 + tn * tn));
        add(
            "atan", x, [](const D2& a) { return atan(a); }, std::atan(x), 1 / (1 + x * x),
            -2 * x / ((1 + x * x) * (1 + x * x)));
        add(
            "sinh", x, [](const D2& a) { return sinh(a); }, std::sinh(x), std::cosh(x), std::sinh(x));
        add(
            "cosh", x, [](const D2& a) { return cosh(a); }, std::cosh(x), std::sinh(x), std::cosh(x));
        const double th = std::tanh(x);
        add(
            "tanh", x, [](const D2& a) { return tanh(a); }, th, 1 - th * th, -2 * th * (1 - th * th));
        add(
            "asinh", x, [](const D2& a) { return asinh(a); }, std::asinh(x), 1 / std::sqrt(1 + x * x),
            -x / std::pow(1 + x * x, 1.5));
        add(
            "exp", x, [](const D2& a) { return exp(a); }, std::exp(x), std::exp(x), std::exp(x));
        add(
            "sqr", x, [](const D2& a) { return sqr(a); }, x * x, 2 * x, 2.0);
        // x³ via the arithmetic operators: product rule twice
        add(
            "x*x*x", x, [](const D2& a) { return a * a * a; }, x * x * x, 3 * x * x, 6 * x);
        // 1/(1+x²) via division by a dual
        add(
            "1/(1+x^2)", x, [](const D2& a) { return 1.0 / (1.0 + a * a); }, 1 / (1 + x * x),
            -2 * x / std::pow(1 + x * x, 2), (6 * x * x - 2) / std::pow(1 + x * x, 3));
        if (x != 0.0) {
            add(
                "abs", x, [](const D2& a) { return abs(a); }, std::fabs(x), x > 0 ? 1.0 : -1.0, 0.0);
        }
    }
    for (double x : {-0.8, -0.3, 0.2, 0.6}) {
        const double s = 1 - x * x;
        add(
            "asin", x, [](const D2& a) { return asin(a); }, std::asin(x), 1 / std::sqrt(s), x / std::pow(s, 1.5));
        add(
            "acos", x, [](const D2& a) { return acos(a); }, std::acos(x), -1 / std::sqrt(s), -x / std::pow(s, 1.5));
    }
    for (double x : {0.05, 0.9, 3.7}) {
        add(
            "log", x, [](const D2& a) { return log(a); }, std::log(x), 1 / x, -1 / (x * x));
        add(
            "sqrt", x, [](const D2& a) { return sqrt(a); }, std::sqrt(x), 0.5 / std::sqrt(x),
            -0.25 / (x * std::sqrt(x)));
        add(
            "pow(x,2.5)", x, [](const D2& a) { return pow(a, 2.5); }, std::pow(x, 2.5), 2.5 * std::pow(x, 1.5),
            3.75 * std::pow(x, 0.5));
        add(
            "pow(x,-1.5)", x, [](const D2& a) { return pow(a, -1.5); }, std::pow(x, -1.5), -1.5 * std::pow(x, -2.5),
            3.75 * std::pow(x, -3.5));
        // composition: exp(sin(x)) · log(x)
        const double es = std::exp(std::sin(x));
        const double g = es * std::log(x);
        const double g1 = es * std::cos(x) * std::log(x) + es / x;
        const double g2 =
            es * (std::cos(x) * std::cos(x) - std::sin(x)) * std::log(x) + 2 * es * std::cos(x) / x - es / (x * x);
        add(
            "exp(sin x) log x", x, [](const D2& a) { return exp(sin(a)) * log(a); }, g, g1, g2);
    }
    return cs;
}

TEST(Dual, ElementaryFunctionsFirstAndSecondDerivatives) {
    for (const Case& c : elementary_cases()) {
        SCOPED_TRACE(c.name + " at x = " + std::to_string(c.x));
        const D2 r = c.f(seed2(c.x));
        const double tol = 1e-13 * (1 + std::fabs(c.f0) + std::fabs(c.f1) + std::fabs(c.f2));
        EXPECT_NEAR(r.val.val, c.f0, tol);
        // Both first-derivative slots must agree (inner tangent and outer tangent).
        EXPECT_NEAR(r.val.d[0], c.f1, tol);
        EXPECT_NEAR(r.d[0].val, c.f1, tol);
        EXPECT_NEAR(r.d[0].d[0], c.f2, tol);
    }
}

TEST(Dual, ThirdDerivativeByTripleNesting) {
    using D3 = nhvk::Dual<D2, 1>;
    const double x = 0.37;
    D3 a{D2(D1(x))};
    a.val.val.d[0] = 1;
    a.val.d[0] = D1(1.0);
    a.d[0] = D2(D1(1.0));
    const D3 r = sin(a) * exp(a); // (sin x eˣ)''' = 2eˣ(cos x − sin x)
    EXPECT_NEAR(r.d[0].d[0].d[0], 2 * std::exp(x) * (std::cos(x) - std::sin(x)), 1e-13);
    EXPECT_NEAR(r.d[0].d[0].val, 2 * std::exp(x) * std::cos(x), 1e-13);
}

TEST(Dual, Atan2GradientAndHessian) {
    using S1 = nhvk::Dual<double, 2>;
    using S2 = nhvk::Dual<S1, 2>;
    for (double ang : {0.3, 1.9, -2.5, 3.0, -0.7}) {
        const double rad = 1.7;
        const double x = rad * std::cos(ang), y = rad * std::sin(ang), r2 = x * x + y * y;
        S2 Y{S1(y)}, X{S1(x)};
        Y.val.d[0] = 1;
        Y.d[0] = S1(1.0);
        X.val.d[1] = 1;
        X.d[1] = S1(1.0);
        const S2 f = atan2(Y, X);
        EXPECT_NEAR(f.val.val, std::atan2(y, x), 1e-15);
        EXPECT_NEAR(f.val.d[0], x / r2, 1e-14);  // ∂/∂y
        EXPECT_NEAR(f.val.d[1], -y / r2, 1e-14); // ∂/∂x
        EXPECT_NEAR(f.d[0].d[0], -2 * x * y / (r2 * r2), 1e-14);
        EXPECT_NEAR(f.d[1].d[1], 2 * x * y / (r2 * r2), 1e-14);
        EXPECT_NEAR(f.d[0].d[1], (y * y - x * x) / (r2 * r2), 1e-14);
        EXPECT_NEAR(f.d[1].d[0], (y * y - x * x) / (r2 * r2), 1e-14);
    }
}

TEST(Dual, PowDualExponentGradientAndMixedSecondDerivative) {
    using S1 = nhvk::Dual<double, 2>;
    using S2 = nhvk::Dual<S1, 2>;
    const double x = 1.7, y = 0.6;
    S2 X{S1(x)}, Y{S1(y)};
    X.val.d[0] = 1;
    X.d[0] = S1(1.0);
    Y.val.d[1] = 1;
    Y.d[1] = S1(1.0);
    const S2 f = pow(X, Y); // x^y
    const double p = std::pow(x, y), lx = std::log(x);
    EXPECT_NEAR(f.val.val, p, 1e-14);
    EXPECT_NEAR(f.val.d[0], y * std::pow(x, y - 1), 1e-14);
    EXPECT_NEAR(f.val.d[1], p * lx, 1e-14);
    EXPECT_NEAR(f.d[0].d[0], y * (y - 1) * std::pow(x, y - 2), 1e-14);
    EXPECT_NEAR(f.d[1].d[1], p * lx * lx, 1e-14);
    EXPECT_NEAR(f.d[0].d[1], std::pow(x, y - 1) * (1 + y * lx), 1e-14);
}

// pow with an arithmetic exponent must work for a negative base when the exponent is an integer, as std::pow does:
// a model writing pow(v, 2) or pow(q, 3) for a velocity or coordinate of either sign.
TEST(Dual, PowIntegerExponentNegativeBaseFirstOrder) {
    const double x = -1.3;
    D1 a(x);
    a.d[0] = 1;
    const D1 r = pow(a, 3);
    EXPECT_NEAR(r.val, x * x * x, 1e-14);
    EXPECT_NEAR(r.d[0], 3 * x * x, 1e-14);
}

// A regression test: the nested pow(Dual, U) once computed pow(a.val, T(p)) with both arguments duals, which
// dispatches to pow(Dual, Dual) = exp(p log a): NaN for a < 0 (and extra rounding for a > 0). The exponent now stays
// a plain number through the nesting (include/nhvk/dual.hpp), and this test passes; it fails if that comes back.
TEST(Dual, PowIntegerExponentNegativeBaseNested) {
    for (double x : {-1.3, -0.5, 0.8}) {
        SCOPED_TRACE("x = " + std::to_string(x));
        const D2 r = pow(seed2(x), 3);
        EXPECT_NEAR(r.val.val, x * x * x, 1e-14);
        EXPECT_NEAR(r.val.d[0], 3 * x * x, 1e-14);
        EXPECT_NEAR(r.d[0].val, 3 * x * x, 1e-14);
        EXPECT_NEAR(r.d[0].d[0], 6 * x, 1e-13);
        const D2 s = pow(seed2(x), 2.0);
        EXPECT_NEAR(s.d[0].d[0], 2.0, 1e-13);
    }
}

TEST(Dual, ArithmeticRulesAndMixedScalars) {
    using S = nhvk::Dual<double, 3>;
    S a(2.0), b(-0.5);
    a.d[0] = 1;
    a.d[2] = 0.25;
    b.d[1] = 1;
    b.d[2] = -2;
    const S p = a * b, q = a / b, s = a - b, m = -a, c1 = 3.0 - a, c2 = a / 4.0, c3 = 1.0 / b;
    for (int i = 0; i < 3; ++i) {
        EXPECT_DOUBLE_EQ(p.d[i], a.d[i] * b.val + a.val * b.d[i]);
        EXPECT_NEAR(q.d[i], (a.d[i] * b.val - a.val * b.d[i]) / (b.val * b.val), 1e-15);
        EXPECT_DOUBLE_EQ(s.d[i], a.d[i] - b.d[i]);
        EXPECT_DOUBLE_EQ(m.d[i], -a.d[i]);
        EXPECT_DOUBLE_EQ(c1.d[i], -a.d[i]);
        EXPECT_DOUBLE_EQ(c2.d[i], a.d[i] / 4);
        EXPECT_NEAR(c3.d[i], -b.d[i] / (b.val * b.val), 1e-15);
    }
    EXPECT_DOUBLE_EQ(q.val, -4.0);
    EXPECT_DOUBLE_EQ(c1.val, 1.0);
    S acc = a;
    acc *= b;
    acc += a;
    acc -= b;
    acc /= a; // (ab + a − b)/a = b + 1 − b/a
    for (int i = 0; i < 3; ++i) {
        const double expect = b.d[i] - (b.d[i] * a.val - b.val * a.d[i]) / (a.val * a.val);
        EXPECT_NEAR(acc.d[i], expect, 1e-15);
    }
    EXPECT_NEAR(acc.val, b.val + 1 - b.val / a.val, 1e-15);
    EXPECT_TRUE(b < a);
    EXPECT_TRUE(a > b);
    EXPECT_TRUE(a >= a);
    EXPECT_TRUE(b <= a);
}

// Gradient and Hessian of a 3-variable function with nested duals against the hand-derived ones:
// f = x² y + sin(y z) + exp(x) z.
TEST(Dual, MultivariateGradientAndHessian) {
    using S1 = nhvk::Dual<double, 3>;
    using S2 = nhvk::Dual<S1, 3>;
    const double x = 0.4, y = -1.1, z = 0.9;
    S2 v[3] = {S2(S1(x)), S2(S1(y)), S2(S1(z))};
    for (int i = 0; i < 3; ++i) {
        v[i].val.d[i] = 1;
        v[i].d[i] = S1(1.0);
    }
    const S2 f = v[0] * v[0] * v[1] + sin(v[1] * v[2]) + exp(v[0]) * v[2];
    const double g[3] = {2 * x * y + std::exp(x) * z, x * x + z * std::cos(y * z), y * std::cos(y * z) + std::exp(x)};
    const double H[3][3] = {
        {2 * y + std::exp(x) * z, 2 * x, std::exp(x)},
        {2 * x, -z * z * std::sin(y * z), std::cos(y * z) - y * z * std::sin(y * z)},
        {std::exp(x), std::cos(y * z) - y * z * std::sin(y * z), -y * y * std::sin(y * z)},
    };
    EXPECT_NEAR(f.val.val, x * x * y + std::sin(y * z) + std::exp(x) * z, 1e-15);
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(f.val.d[i], g[i], 1e-14);
        EXPECT_NEAR(f.d[i].val, g[i], 1e-14);
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(f.d[i].d[j], H[i][j], 1e-14) << i << "," << j;
    }
}

template <class T> class DualTyped : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DualTyped, Scalars);

TYPED_TEST(DualTyped, SecondDerivativesInBothPrecisions) {
    using T = TypeParam;
    using S1 = nhvk::Dual<T, 1>;
    using S2 = nhvk::Dual<S1, 1>;
    const T tol = std::is_same<T, float>::value ? T(2e-5) : T(1e-13);
    const T x = T(0.6);
    S2 a{S1(x)};
    a.val.d[0] = T(1);
    a.d[0] = S1(T(1));
    const S2 r = sqrt(T(1) + a * a) * tanh(a) + log(a) - atan(a);
    // f = √(1+x²) tanh x + log x − atan x
    const double xd = 0.6, s = std::sqrt(1 + xd * xd), th = std::tanh(xd), se = 1 - th * th;
    const double f1 = xd / s * th + s * se + 1 / xd - 1 / (1 + xd * xd);
    const double f2 = (1 / (s * s * s)) * th + 2 * (xd / s) * se + s * (-2 * th * se) - 1 / (xd * xd) +
                      2 * xd / ((1 + xd * xd) * (1 + xd * xd));
    EXPECT_NEAR(double(r.val.val), s * th + std::log(xd) - std::atan(xd), double(tol));
    EXPECT_NEAR(double(r.val.d[0]), f1, double(tol) * 4);
    EXPECT_NEAR(double(r.d[0].d[0]), f2, double(tol) * 8);
}

} // namespace
