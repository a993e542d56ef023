// SPDX-License-Identifier: MIT
/** @file
 *  @brief Fixed-size dense linear algebra for host and device: LU with partial pivoting and singularity detection,
 *         and the one assembly of the saddle-point systems (`saddle_matrix`, `motion_system`); compile-time indices
 *         only (nothing forces it into local memory; whether a kernel keeps it in registers is ptxas's choice, which
 *         `bench/kernel_resources.sh` shows). Eigen's decompositions are host-only under nvcc, so this one is ours.
 */
#pragma once

#include <cfloat>
#include <cmath>

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"

namespace nhvk {

template <class T> struct NumericLimits;
template <> struct NumericLimits<double> {
    NHVK_HD static constexpr double epsilon() { return DBL_EPSILON; }
    NHVK_HD static constexpr double max() { return DBL_MAX; }
    NHVK_HD static constexpr double quiet_NaN() { return __builtin_nan(""); }
    NHVK_HD static constexpr double infinity() { return __builtin_huge_val(); }
};
template <> struct NumericLimits<float> {
    NHVK_HD static constexpr float epsilon() { return FLT_EPSILON; }
    NHVK_HD static constexpr float max() { return FLT_MAX; }
};
/** @brief A dual number's limits are its value type's: the generated equations compare with them when they are
 *         differentiated (`rhs_jacobian`, nhvk/jacobian.hpp). */
template <class T, int N> struct NumericLimits<Dual<T, N>> {
    NHVK_HD static constexpr T epsilon() { return NumericLimits<T>::epsilon(); }
    NHVK_HD static constexpr T max() { return NumericLimits<T>::max(); }
};

/** @brief Outcome of a dense solve. */
struct SolveInfo {
    bool ok = false;    ///< false when the matrix is singular or too badly conditioned
    double rcond = 0.0; ///< cheap reciprocal-condition estimate: min |u_ii| / max |u_ii| of the LU factors
};

/** @brief `true` when x is neither NaN nor ±∞. */
template <class T> NHVK_HD NHVK_FORCEINLINE bool is_finite(T x) { return x - x == T(0); }
/** @brief A dual number is finite when its value and every tangent are. */
template <class T, int N> NHVK_HD NHVK_FORCEINLINE bool is_finite(const Dual<T, N>& x) {
    bool ok = is_finite(x.val);
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) ok = ok && is_finite(x.d[i]);
    return ok;
}

/** @brief `max_i |x_i|`, the size of a constraint residual; the first non-finite `|x_i|` instead if there is one (a
 *         plain max would drop a NaN, and a NaN residual must reach the caller to be counted). 0 for `K = 0`. */
template <int K, class T> NHVK_HD NHVK_FORCEINLINE T max_abs_residual(const T* x) {
    T r = T(0);
    NHVK_UNROLL
    for (int i = 0; i < K; ++i) {
        const T a = abs(x[i]);
        if (!is_finite(a)) return a;
        r = a > r ? a : r;
    }
    return r;
}

/** @brief The power of two 2^−e with m = f·2^e, f ∈ [0.5, 1): scaling by it is exact. */
NHVK_HD NHVK_FORCEINLINE double pow2_inverse(double m) {
    int e = 0;
    ::frexp(m, &e);
    return ::ldexp(1.0, -e);
}
NHVK_HD NHVK_FORCEINLINE float pow2_inverse(float m) {
    int e = 0;
    ::frexpf(m, &e);
    return ::ldexpf(1.0f, -e);
}

/** @brief A dual number's scaling: its value's, a constant (the scaling is exact, so it has no derivative). */
template <class T, int N> NHVK_HD NHVK_FORCEINLINE Dual<T, N> pow2_inverse(const Dual<T, N>& m) {
    return Dual<T, N>(pow2_inverse(m.val));
}

/**
 * @brief Solve `A x = b` in place for a compile-time size N by LU with partial pivoting (fully unrolled).
 *
 * The matrix is first equilibrated, rows then columns, by powers of two (exact, so host and device agree bit for
 * bit): a saddle-point matrix mixes the scales of masses, lengths and constraint coefficients, and the tests below
 * must not depend on units. On return `b` holds `x`. The matrix is declared singular when a row or column is zero or
 * not finite, when a pivot of the equilibrated matrix is not larger than `N · ε · max|A_ij|`, or when `rcond`
 * (min |u_ii| / max |u_ii| of the equilibrated factors) falls below `rcond_min` (default 1e3·ε of the type). Then `ok`
 * is false and `b` is left unspecified: callers turn that into a per-trajectory status, never into NaNs.
 */
template <int N, class T>
NHVK_HD NHVK_FORCEINLINE SolveInfo lu_solve(T (&A)[N][N], T (&b)[N],
                                            T rcond_min = T(1e3) * NumericLimits<T>::epsilon()) {
    SolveInfo info;
    T col_scale[N];
    // Row equilibration, then column equilibration of the row-scaled matrix.
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) {
        T m = T(0);
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) {
            const T a = abs(A[i][j]);
            m = a > m ? a : m;
        }
        // NOTE: also rejects NaN/∞ rows: comparisons with NaN are false, and ∞ is not finite.
        if (!(m > T(0)) || !is_finite(m)) return info;
        const T r = pow2_inverse(m);
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) A[i][j] *= r;
        b[i] *= r;
    }
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) {
        T m = T(0);
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) {
            const T a = abs(A[i][j]);
            m = a > m ? a : m;
        }
        if (!(m > T(0))) return info;
        col_scale[j] = pow2_inverse(m);
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) A[i][j] *= col_scale[j];
    }
    T scale = T(0);
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) NHVK_UNROLL
    for (int j = 0; j < N; ++j) {
        const T a = abs(A[i][j]);
        scale = a > scale ? a : scale;
    }
    const T tiny = T(N) * NumericLimits<T>::epsilon() * scale;
    T umin = scale, umax = T(0);

    NHVK_UNROLL
    for (int c = 0; c < N; ++c) {
        // NOTE: partial pivoting by compare-and-swap with compile-time row indices (the first largest |A_rc| ends in
        // row c): no dynamically indexed array, so nothing forces the matrix into local memory on the device.
        NHVK_UNROLL
        for (int r = c + 1; r < N; ++r) {
            const bool swap = abs(A[r][c]) > abs(A[c][c]);
            NHVK_UNROLL
            for (int j = c; j < N; ++j) {
                const T lo = A[r][j], hi = A[c][j];
                A[c][j] = swap ? lo : hi;
                A[r][j] = swap ? hi : lo;
            }
            const T lo = b[r], hi = b[c];
            b[c] = swap ? lo : hi;
            b[r] = swap ? hi : lo;
        }
        const T best = abs(A[c][c]);
        if (!(best > tiny)) return info;
        umin = best < umin ? best : umin;
        umax = best > umax ? best : umax;
        const T inv = T(1) / A[c][c];
        NHVK_UNROLL
        for (int r = c + 1; r < N; ++r) {
            const T f = A[r][c] * inv;
            A[r][c] = f;
            NHVK_UNROLL
            for (int j = c + 1; j < N; ++j) A[r][j] -= f * A[c][j];
            b[r] -= f * b[c];
        }
    }
    info.rcond = double(value_of(umin / umax));
    if (!(umin / umax > rcond_min)) return info;
    // back substitution: U y = c, then x = C y (undo the column scaling)
    NHVK_UNROLL
    for (int i = N - 1; i >= 0; --i) {
        T s = b[i];
        NHVK_UNROLL
        for (int j = i + 1; j < N; ++j) s -= A[i][j] * b[j];
        b[i] = s / A[i][i];
    }
    NHVK_UNROLL
    for (int j = 0; j < N; ++j) b[j] *= col_scale[j];
    info.ok = true;
    return info;
}

/**
 * @brief The LU factors with partial pivoting of an N×N matrix, kept for several right-hand sides (the stages of a
 *        Rosenbrock step): `a` holds L below the diagonal (unit diagonal implied) and U on and above it, each row
 *        exchange applied to whole rows (so the multipliers follow their rows, as LAPACK's getrf does); bit `r` of
 *        `swaps[c]`: rows `c` and `r` were exchanged while column `c` was pivoted, in increasing `r`.
 */
template <int N, class T> struct LuFactors {
    static_assert(N >= 1 && N <= 32, "the row exchanges of a column are a 32-bit mask");
    T a[N][N];
    unsigned swaps[N];
};

/**
 * @brief Factor `f.a` in place (`lu_solve`'s pivoting by compare-and-swap with compile-time indices, without its
 *        equilibration: the callers' matrices, `I/(hγ) − ∂f/∂y`, are dominated by a scaled identity where steps are
 *        small). False when the matrix has a non-finite entry or a pivot not above `N · ε · max|a_ij|`.
 */
template <int N, class T> NHVK_HD NHVK_FORCEINLINE bool lu_factor(LuFactors<N, T>& f) {
    T scale = T(0);
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) NHVK_UNROLL
    for (int j = 0; j < N; ++j) {
        const T x = abs(f.a[i][j]);
        if (!is_finite(x)) return false;
        scale = x > scale ? x : scale;
    }
    const T tiny = T(N) * NumericLimits<T>::epsilon() * scale;
    NHVK_UNROLL
    for (int c = 0; c < N; ++c) {
        unsigned mask = 0u;
        NHVK_UNROLL
        for (int r = c + 1; r < N; ++r) {
            const bool swap = abs(f.a[r][c]) > abs(f.a[c][c]);
            mask |= swap ? (1u << r) : 0u;
            NHVK_UNROLL
            for (int j = 0; j < N; ++j) {
                const T lo = f.a[r][j], hi = f.a[c][j];
                f.a[c][j] = swap ? lo : hi;
                f.a[r][j] = swap ? hi : lo;
            }
        }
        f.swaps[c] = mask;
        if (!(abs(f.a[c][c]) > tiny)) return false;
        const T inv = T(1) / f.a[c][c];
        NHVK_UNROLL
        for (int r = c + 1; r < N; ++r) {
            const T m = f.a[r][c] * inv;
            f.a[r][c] = m;
            NHVK_UNROLL
            for (int j = c + 1; j < N; ++j) f.a[r][j] -= m * f.a[c][j];
        }
    }
    return true;
}

/** @brief Solve `A x = b` in place with the factors of `lu_factor`: the row exchanges in their order, then L, then U.
 */
template <int N, class T> NHVK_HD NHVK_FORCEINLINE void lu_substitute(const LuFactors<N, T>& f, T* b) {
    NHVK_UNROLL
    for (int c = 0; c < N; ++c) NHVK_UNROLL
    for (int r = c + 1; r < N; ++r) {
        const bool swap = (f.swaps[c] >> r) & 1u;
        const T lo = b[r], hi = b[c];
        b[c] = swap ? lo : hi;
        b[r] = swap ? hi : lo;
    }
    NHVK_UNROLL
    for (int r = 1; r < N; ++r) NHVK_UNROLL
    for (int c = 0; c < r; ++c) b[r] -= f.a[r][c] * b[c];
    NHVK_UNROLL
    for (int i = N - 1; i >= 0; --i) {
        T s = b[i];
        NHVK_UNROLL
        for (int j = i + 1; j < N; ++j) s -= f.a[i][j] * b[j];
        b[i] = s / f.a[i][i];
    }
}

/** @brief `A = [W ±Jᵀ; J 0]`: the one assembly of the saddle-point matrices, `Sign = −1` for the equations of motion
 *         (eq. (19), §3; see `motion_system`) and `Sign = +1` for the projection onto the constraints (§5). */
template <int Sign, int N, int K, class T>
NHVK_HD NHVK_FORCEINLINE void saddle_matrix(const T (&W)[N][N], const T (&J)[K][N], T (&A)[N + K][N + K]) {
    static_assert(Sign == 1 || Sign == -1, "the sign of Jᵀ is ±1");
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) {
        NHVK_UNROLL
        for (int j = 0; j < N; ++j) A[i][j] = W[i][j];
        NHVK_UNROLL
        for (int a = 0; a < K; ++a) {
            if constexpr (Sign < 0) A[i][N + a] = -J[a][i];
            else A[i][N + a] = J[a][i];
            A[N + a][i] = J[a][i];
        }
    }
    NHVK_UNROLL
    for (int a = 0; a < K; ++a) NHVK_UNROLL
    for (int c = 0; c < K; ++c) A[N + a][N + c] = T(0);
}

/** @brief The equations of motion's saddle-point system `[Wt −Jᵀ; J 0][a; m] = [−b; γ]` (eq. (19), or §3 with
 *         `Wt = W − Σμ H`): `A` and `r = [−b; γ]`. The engine's `solve_saddle` and the code generator (host/sym,
 *         with the recording scalar `sym::Expr`) both assemble it here. */
template <int N, int K, class T>
NHVK_HD NHVK_FORCEINLINE void motion_system(const T (&W)[N][N], const T (&J)[K][N], const T (&b)[N],
                                            const T (&gamma)[K], T (&A)[N + K][N + K], T (&r)[N + K]) {
    saddle_matrix<-1>(W, J, A);
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) r[i] = -b[i];
    NHVK_UNROLL
    for (int a = 0; a < K; ++a) r[N + a] = gamma[a];
}

} // namespace nhvk
