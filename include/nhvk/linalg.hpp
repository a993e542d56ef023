// SPDX-License-Identifier: MIT
/** @file
 *  @brief Fixed-size dense linear algebra that runs in registers on the device: LU with partial pivoting and
 *         singularity detection. Eigen's decompositions are host-only under nvcc, so this one is ours.
 */
#pragma once

#include <cfloat>

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"

namespace nhvk {

template <class T> struct NumericLimits;
template <> struct NumericLimits<double> {
    NHVK_HD static constexpr double epsilon() { return DBL_EPSILON; }
};
template <> struct NumericLimits<float> {
    NHVK_HD static constexpr float epsilon() { return FLT_EPSILON; }
};

/** @brief Outcome of a dense solve. */
struct SolveInfo {
    bool ok = false;    ///< false when the matrix is singular or too badly conditioned
    double rcond = 0.0; ///< cheap reciprocal-condition estimate: min |u_ii| / max |u_ii| of the LU factors
};

/**
 * @brief Solve `A x = b` in place for a compile-time size N by LU with partial pivoting (fully unrolled).
 *
 * On return `b` holds `x` and `A` holds the factors. The matrix is declared singular when a pivot is not larger
 * than `N · ε · max|A_ij|` or when `rcond` falls below `rcond_min` (default: 1e3·ε of the type). Then `ok` is
 * false and `b` is left unspecified: callers turn that into a per-trajectory status, never into NaNs.
 */
template <int N, class T>
NHVK_HD SolveInfo lu_solve(T (&A)[N][N], T (&b)[N], T rcond_min = T(1e3) * NumericLimits<T>::epsilon()) {
    SolveInfo info;
    T scale = T(0);
    NHVK_UNROLL
    for (int i = 0; i < N; ++i)
        NHVK_UNROLL
    for (int j = 0; j < N; ++j) {
        const T a = abs(A[i][j]);
        scale = a > scale ? a : scale;
    }
    // NOTE: also rejects NaN entries: every comparison with NaN is false, so the pivot test below fails.
    if (!(scale > T(0))) return info;
    const T tiny = T(N) * NumericLimits<T>::epsilon() * scale;
    T umin = scale, umax = T(0);

    NHVK_UNROLL
    for (int c = 0; c < N; ++c) {
        int p = c;
        T best = abs(A[c][c]);
        NHVK_UNROLL
        for (int r = c + 1; r < N; ++r) {
            const T a = abs(A[r][c]);
            if (a > best) {
                best = a;
                p = r;
            }
        }
        if (!(best > tiny)) return info;
        if (p != c) {
            NHVK_UNROLL
            for (int j = 0; j < N; ++j) {
                const T tmp = A[c][j];
                A[c][j] = A[p][j];
                A[p][j] = tmp;
            }
            const T tb = b[c];
            b[c] = b[p];
            b[p] = tb;
        }
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
    info.rcond = double(umin / umax);
    if (!(umin / umax > rcond_min)) return info;
    // back substitution: U x = y
    NHVK_UNROLL
    for (int i = N - 1; i >= 0; --i) {
        T s = b[i];
        NHVK_UNROLL
        for (int j = i + 1; j < N; ++j) s -= A[i][j] * b[j];
        b[i] = s / A[i][i];
    }
    info.ok = true;
    return info;
}

/** @brief `true` when x is neither NaN nor ±∞. */
template <class T> NHVK_HD NHVK_FORCEINLINE bool is_finite(T x) { return x - x == T(0); }

} // namespace nhvk
