// SPDX-License-Identifier: MIT
// Dense solves (include/nhvk/linalg.hpp) against Eigen, singularity detection, the LU factors kept for several
// right-hand sides, and the saddle-point solve of dynamics.hpp on a sub-Riemannian model whose W is singular while the
// saddle-point matrix is regular.
#include "core_test_util.hpp"

#include <nhvk/linalg.hpp>
#include <nhvk/models/rolling_disc.hpp>

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>

namespace {

template <class T> class LuSolve : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LuSolve, Scalars);

template <class T> T eps() { return std::numeric_limits<T>::epsilon(); }

/** Random well-conditioned matrix: uniform(−1, 1) entries plus a diagonal shift of N (diagonally dominant). */
template <int N, class T> void random_matrix(std::mt19937_64& rng, T (&A)[N][N], bool shift) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) A[i][j] = T(u(rng) + (shift && i == j ? (u(rng) < 0 ? -N : N) : 0));
}

template <int N, class T> void check_against_eigen(std::mt19937_64& rng) {
    // NOTE: dynamic-size Eigen types, one instantiation for all N (fixed sizes made this file slow to compile).
    using Mat = Eigen::MatrixXd;
    using Vec = Eigen::VectorXd;
    int tested = 0;
    for (int trial = 0; trial < 50; ++trial) {
        T A[N][N], Ac[N][N], b[N], bc[N];
        // Half the trials diagonally dominant, half plain random with a condition check (these exercise pivoting).
        random_matrix(rng, A, trial % 2 == 0);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (int i = 0; i < N; ++i) b[i] = T(u(rng));
        Mat Ae(N, N);
        Vec be(N);
        for (int i = 0; i < N; ++i) {
            be(i) = double(b[i]);
            bc[i] = b[i];
            for (int j = 0; j < N; ++j) Ae(i, j) = Ac[i][j] = A[i][j];
        }
        const Eigen::JacobiSVD<Mat> svd(Ae); // singular values only
        const double cond = svd.singularValues()(0) / svd.singularValues()(N - 1);
        if (cond > 1e3) continue; // well-conditioned only: the comparison below is then meaningful in float too
        const Vec xe = Ae.partialPivLu().solve(be);
        const nhvk::SolveInfo info = nhvk::lu_solve(A, b);
        ASSERT_TRUE(info.ok) << "N = " << N << " cond = " << cond;
        ++tested;
        EXPECT_GT(info.rcond, 0.0);
        EXPECT_LE(info.rcond, 1.0);
        // forward error ≤ C · cond · ε · |x|, residual ≤ C · N · ε · |A| |x|
        Vec x(N);
        for (int i = 0; i < N; ++i) x(i) = double(b[i]);
        const double e = double(eps<T>());
        EXPECT_LE((x - xe).norm(), 20.0 * N * cond * e * xe.norm()) << "N = " << N;
        Mat A0(N, N);
        Vec b0(N);
        for (int i = 0; i < N; ++i) {
            b0(i) = double(bc[i]);
            for (int j = 0; j < N; ++j) A0(i, j) = double(Ac[i][j]);
        }
        EXPECT_LE((A0 * x - b0).norm(), 10.0 * N * e * A0.norm() * x.norm()) << "N = " << N;
    }
    EXPECT_GE(tested, 30) << "too few well-conditioned draws at N = " << N;
}

template <class T, int... Ns> void check_sizes(std::integer_sequence<int, Ns...>) {
    std::mt19937_64 rng(1234);
    (check_against_eigen<Ns + 1, T>(rng), ...);
}

TYPED_TEST(LuSolve, MatchesEigenOnRandomMatricesOfSize1To10) {
    check_sizes<TypeParam>(std::make_integer_sequence<int, 10>{});
}

TYPED_TEST(LuSolve, ScaleInvariant) {
    // A well-conditioned matrix scaled by a huge or tiny factor is still regular (the pivot test is relative).
    using T = TypeParam;
    const T big = std::is_same<T, float>::value ? T(1e30) : T(1e250);
    for (T s : {big, T(1) / big}) {
        T A[3][3] = {{T(2) * s, T(1) * s, T(0)}, {T(1) * s, T(3) * s, T(1) * s}, {T(0), T(1) * s, T(4) * s}};
        T b[3] = {T(3) * s, T(5) * s, T(5) * s}; // x = (1, 1, 1)
        ASSERT_TRUE(nhvk::lu_solve(A, b).ok);
        for (T xi : b) EXPECT_NEAR(double(xi), 1.0, 10 * double(eps<T>()));
    }
}

template <int N, class T> void check_singular(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    T b[N];
    for (int i = 0; i < N; ++i) b[i] = T(u(rng));
    // zero matrix
    {
        T A[N][N] = {};
        T bb[N];
        std::copy(b, b + N, bb);
        EXPECT_FALSE(nhvk::lu_solve(A, bb).ok) << "zero, N = " << N;
    }
    if (N >= 2) {
        // rank-deficient: last row = combination of the others; then nearly singular (perturbed at 1e-2·ε_rel)
        for (double delta : {0.0, 10.0 * double(eps<T>())}) {
            T A[N][N], bb[N];
            random_matrix(rng, A, false);
            for (int j = 0; j < N; ++j) {
                double s = 0;
                for (int i = 0; i + 1 < N; ++i) s += (0.5 + 0.1 * i) * double(A[i][j]);
                A[N - 1][j] = T(s + (j == 0 ? delta : 0.0));
            }
            std::copy(b, b + N, bb);
            const nhvk::SolveInfo info = nhvk::lu_solve(A, bb);
            EXPECT_FALSE(info.ok) << "rank-deficient, N = " << N << " delta = " << delta << " rcond " << info.rcond;
        }
    }
    // a NaN or an infinity in any single position
    for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
        for (int p = 0; p < N * N; ++p) {
            T A[N][N], bb[N];
            random_matrix(rng, A, true);
            A[p / N][p % N] = bad;
            std::copy(b, b + N, bb);
            EXPECT_FALSE(nhvk::lu_solve(A, bb).ok) << "N = " << N << " bad entry at " << p << " = " << double(bad);
        }
    }
}

template <class T, int... Ns> void check_singular_sizes(std::integer_sequence<int, Ns...>) {
    std::mt19937_64 rng(99);
    (check_singular<Ns + 1, T>(rng), ...);
}

TYPED_TEST(LuSolve, DetectsSingularNearlySingularAndNonFinite) {
    check_singular_sizes<TypeParam>(std::make_integer_sequence<int, 8>{});
}

// The factors kept for several right-hand sides (lu_factor, lu_substitute: the Rosenbrock stages), against Eigen's
// partial-pivoting LU: sizes 1 to 14 (the largest state of a catalogue model is 13), three right-hand sides per
// factoring.
template <int N, class T> void check_factors_against_eigen(std::mt19937_64& rng) {
    using Mat = Eigen::MatrixXd;
    using Vec = Eigen::VectorXd;
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    int tested = 0;
    for (int trial = 0; trial < 40; ++trial) {
        T A[N][N];
        random_matrix(rng, A, trial % 2 == 0);
        Mat Ae(N, N);
        nhvk::LuFactors<N, T> f;
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) Ae(i, j) = f.a[i][j] = A[i][j];
        const Eigen::JacobiSVD<Mat> svd(Ae);
        const double cond = svd.singularValues()(0) / svd.singularValues()(N - 1);
        if (cond > 1e3) continue;
        ASSERT_TRUE(nhvk::lu_factor(f)) << "N = " << N << " cond = " << cond;
        ++tested;
        const auto lu = Ae.partialPivLu();
        for (int rhs = 0; rhs < 3; ++rhs) {
            T b[N];
            Vec be(N);
            for (int i = 0; i < N; ++i) be(i) = double(b[i] = T(u(rng)));
            nhvk::lu_substitute(f, b);
            const Vec xe = lu.solve(be);
            Vec x(N);
            for (int i = 0; i < N; ++i) x(i) = double(b[i]);
            const double e = double(eps<T>());
            EXPECT_LE((x - xe).norm(), 20.0 * N * cond * e * xe.norm()) << "N = " << N << " rhs " << rhs;
            EXPECT_LE((Ae * x - be).norm(), 10.0 * N * e * Ae.norm() * x.norm()) << "N = " << N;
        }
    }
    EXPECT_GE(tested, 20) << "too few well-conditioned draws at N = " << N;
}

template <class T, int... Ns> void check_factor_sizes(std::integer_sequence<int, Ns...>) {
    std::mt19937_64 rng(4321);
    (check_factors_against_eigen<Ns + 1, T>(rng), ...);
}

TYPED_TEST(LuSolve, KeptFactorsMatchEigenOnSizes1To14) {
    check_factor_sizes<TypeParam>(std::make_integer_sequence<int, 14>{});
}

TYPED_TEST(LuSolve, KeptFactorsDetectSingularAndNonFinite) {
    using T = TypeParam;
    nhvk::LuFactors<3, T> zero{};
    EXPECT_FALSE(nhvk::lu_factor(zero));
    // rank 2: the third row the sum of the first two
    nhvk::LuFactors<3, T> rank2{{{T(1), T(2), T(3)}, {T(4), T(5), T(6)}, {T(5), T(7), T(9)}}, {}};
    EXPECT_FALSE(nhvk::lu_factor(rank2));
    for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
        nhvk::LuFactors<3, T> f{{{T(4), T(1), T(0)}, {T(1), T(4), T(1)}, {T(0), T(1), bad}}, {}};
        EXPECT_FALSE(nhvk::lu_factor(f)) << double(bad);
    }
    // a regular matrix that needs a row exchange in every column (zero leading pivot)
    nhvk::LuFactors<3, T> p{{{T(0), T(1), T(2)}, {T(0), T(0), T(3)}, {T(4), T(5), T(6)}}, {}};
    ASSERT_TRUE(nhvk::lu_factor(p));
    T b[3] = {T(3), T(3), T(15)}; // x = (1, 1, 1)
    nhvk::lu_substitute(p, b);
    for (T xi : b) EXPECT_NEAR(double(xi), 1.0, 10 * double(eps<T>()));
}

// Sub-Riemannian Heisenberg (L = ½(ẋ²+ẏ²), φ = ż − ½(x ẏ − y ẋ)): W = diag(1, 1, 0) is singular, the saddle-point
// matrix [W −Jᵀ; J 0] is regular. Hand solution (docs/physics.md §2, §3; docs/models.md):
//   nonholonomic: the z-row gives λ = 0, then a = 0 (γ = 0 since φ_q·v = −½ẏẋ + ½ẋẏ = 0);
//   vakonomic: L̃ = L − μφ gives b̃ = (−μẏ, μẋ, 0), and the z-row gives μ̇ = 0, so ẍ = μẏ, ÿ = −μẋ,
//   z̈ = ½(x ÿ − y ẍ).
TEST(SaddleSolve, SubRiemannianSingularW) {
    const nhvk_test::HeisenbergSR model;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (int trial = 0; trial < 10; ++trial) {
        const double q[3] = {u(rng), u(rng), u(rng)}, mu[1] = {u(rng)};
        double v[3] = {u(rng), u(rng), 0.0};
        v[2] = 0.5 * (q[0] * v[1] - q[1] * v[0]);
        const auto lp = nhvk::lagrangian_parts(model, q, v, 0.0, static_cast<const double*>(nullptr));
        const auto cp = nhvk::constraint_parts(model, q, v, 0.0);
        EXPECT_EQ(lp.W[2][2], 0.0);
        const auto s_nh = nhvk::solve_saddle(lp, cp);
        ASSERT_EQ(s_nh.status, nhvk::Status::ok);
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(s_nh.a[i], 0.0, 1e-14);
        EXPECT_NEAR(s_nh.mult[0], 0.0, 1e-14);

        const auto lv = nhvk::lagrangian_parts(model, q, v, 0.0, mu);
        const auto s_vk = nhvk::solve_saddle(lv, cp);
        ASSERT_EQ(s_vk.status, nhvk::Status::ok);
        const double ax = mu[0] * v[1], ay = -mu[0] * v[0];
        EXPECT_NEAR(s_vk.a[0], ax, 1e-13);
        EXPECT_NEAR(s_vk.a[1], ay, 1e-13);
        EXPECT_NEAR(s_vk.a[2], 0.5 * (q[0] * ay - q[1] * ax), 1e-13);
        EXPECT_NEAR(s_vk.mult[0], 0.0, 1e-13);

        // The same 4×4 matrix through lu_solve against Eigen.
        double A[4][4] = {}, r[4];
        Eigen::MatrixXd Ae = Eigen::MatrixXd::Zero(4, 4);
        Eigen::VectorXd re(4);
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) A[i][j] = lv.W[i][j];
            A[i][3] = -cp.J[0][i];
            A[3][i] = cp.J[0][i];
            r[i] = -lv.b[i];
        }
        r[3] = cp.gamma[0];
        for (int i = 0; i < 4; ++i) {
            re(i) = r[i];
            for (int j = 0; j < 4; ++j) Ae(i, j) = A[i][j];
        }
        const Eigen::VectorXd xe = Ae.fullPivLu().solve(re);
        ASSERT_TRUE(nhvk::lu_solve(A, r).ok);
        for (int i = 0; i < 4; ++i) EXPECT_NEAR(r[i], xe(i), 1e-13);
    }
}

// A 1-cm coin (rolling_disc, m = 1, R = 0.01: W = diag(1, 1, 5e-5, 2.5e-5), J ∋ R cos ϕ) in float. The saddle-point
// matrix is badly scaled but intrinsically well conditioned (2-norm condition 6.5e4, 85 after symmetric diagonal
// equilibration, both measured with Eigen), and the float LU solve is accurate to ~6e-8 relative when it is allowed
// to finish. A regression test: lu_solve's rcond = min|u_ii| / max|u_ii| (2.5e-5 here) is not invariant under
// row/column scaling, and without equilibration it fell below the float threshold 1e3·ε = 1.2e-4, so the member was
// reported Status::singular (already for R ≤ 0.02; double is unaffected). lu_solve now equilibrates first
// (include/nhvk/linalg.hpp), and this test passes; it fails if the equilibration goes.
TEST(SaddleSolve, FloatSmallCoinIsNotSingular) {
    nhvk::models::RollingDisc model;
    model.R = 0.01;
    const double th = 2.0, ph = 0.7;
    const double yd[8] = {0, 0, 0.3, ph, model.R * th * std::cos(ph), model.R * th * std::sin(ph), th, 1.0};
    float yf[8];
    for (int i = 0; i < 8; ++i) yf[i] = float(yd[i]);
    double dyd[8], lamd[2];
    float dyf[8], lamf[2];
    const nhvk::NonholonomicSystem<nhvk::models::RollingDisc, double> sd{model};
    const nhvk::NonholonomicSystem<nhvk::models::RollingDisc, float> sf{model};
    ASSERT_EQ(sd.rhs(0.0, yd, dyd, lamd), nhvk::Status::ok);
    ASSERT_EQ(sf.rhs(0.0f, yf, dyf, lamf), nhvk::Status::ok) << "a well-posed float saddle point declared singular";
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(dyf[i], dyd[i], 1e-5 * (1 + std::fabs(dyd[i])));
}

// A saddle-point matrix whose constraint row vanishes (J = 0) is reported singular, not solved into NaNs.
TEST(SaddleSolve, VanishingJacobianIsSingular) {
    const nhvk_test::DegenerateModel model;
    const double q[2] = {0.3, -0.2}, v[2] = {0.0, 0.0};
    const auto lp = nhvk::lagrangian_parts(model, q, v, 0.0, static_cast<const double*>(nullptr));
    const auto cp = nhvk::constraint_parts(model, q, v, 0.0);
    EXPECT_EQ(nhvk::solve_saddle(lp, cp).status, nhvk::Status::singular);
}

} // namespace
