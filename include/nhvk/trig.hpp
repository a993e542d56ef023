// SPDX-License-Identifier: MIT
/** @file
 *  @brief sin and cos for the generated equations: the C library's on the host; on the device a version whose
 *         argument reduction needs no local memory.
 *
 *  CUDA's `sin`/`cos` reduce arguments beyond about 10^5 with the Payne–Hanek algorithm into a local array:
 *  every kernel that calls them gets a stack frame (40 bytes in double, 32 in float with nvcc 13, sm_90), even when no
 *  argument is ever that large. `trig_sin`/`trig_cos` reduce instead by the Cody–Waite method with π/2 split into three
 * doubles and fused multiply-adds (`r = x − n·π/2`, the first product exact), then evaluate the FreeBSD msun kernels
 * `__kernel_sin` and `__kernel_cos` (Sun fdlibm, rewritten by Bruce Evans; error below 1 ulp on [−π/4, π/4]). For |x| >
 * 2^30 the argument is first reduced by the double nearest 2π, `x − q·fl(2π)` with one rounding: the result is then the
 * sine of a point within half an ulp of `x` (|q (2π − fl(2π))| < 2^−54 |x|), for angles whose own rounding is already
 *  10^−7. Above 2^80 (float: 2^40) the result is NaN, which the integrators count as `non_finite`; the host's C library
 *  would still give a value there, of an angle that has lost every digit.
 *  `detail::sin_cw`/`cos_cw` (double and float) are the same code callable on the host, so the tests measure its error
 * against the C library.
 */
#pragma once

#include <cmath>

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"

namespace nhvk {

namespace detail {

/** @brief sin(r) for |r| ≤ π/4 (FreeBSD msun k_sin.c, y = 0). */
NHVK_HD NHVK_FORCEINLINE double kernel_sin(double x) {
    constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                     S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                     S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    const double z = x * x, w = z * z;
    const double r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    const double v = z * x;
    return x + v * (S1 + z * r);
}

/** @brief cos(r) for |r| ≤ π/4 (FreeBSD msun k_cos.c, y = 0). */
NHVK_HD NHVK_FORCEINLINE double kernel_cos(double x) {
    constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03, C3 = 2.48015872894767294178e-05,
                     C4 = -2.75573143513906633035e-07, C5 = 2.08757232129817482790e-09,
                     C6 = -1.13596475577881948265e-11;
    const double z = x * x, w = z * z;
    const double r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    const double hz = 0.5 * z;
    const double u = 1.0 - hz;
    return u + (((1.0 - u) - hz) + (z * r));
}

/** @brief `x = n·π/2 + r` with |r| ≤ π/4 (to rounding); `quadrant` = n mod 4. */
struct ReducedAngle {
    double r;
    int quadrant;
};

NHVK_HD NHVK_FORCEINLINE ReducedAngle reduce_half_pi(double x) {
    // NOTE: beyond 2^30 first a reduction by fl(2π): a backward error below half an ulp of x (see the file comment).
    if (fabs(x) > 1073741824.0) {
        // x − q·fl(2π) with one rounding (Sterbenz: x − p is exact; e is the product's exact error): no loop, unlike
        // fmod, whose loop costs the kernels their registers. Beyond 2^80 one such step cannot bring x below 2^30.
        constexpr double two_pi = 6.283185307179586232, inv_two_pi = 0.15915494309189535;
        const double q = trunc(x * inv_two_pi);
        const double p = q * two_pi, e = fma(q, two_pi, -p);
        x = fabs(x) <= 1.2089258196146292e24 ? (x - p) - e : NAN;
    }
    constexpr double two_over_pi = 6.36619772367581382433e-01;
    // π/2 = hi + mid + lo to about 160 bits; x − n·hi is exact (a multiple of ulp(hi) or of ulp(x) below 1).
    constexpr double pio2_hi = 1.5707963267948966e+00, pio2_mid = 6.123233995736766e-17,
                     pio2_lo = -1.4973849048591698e-33;
    const double n = rint(x * two_over_pi);
    double r = fma(-n, pio2_hi, x);
    r = fma(-n, pio2_mid, r);
    r = fma(-n, pio2_lo, r);
    // NOTE: |n| < 2^31 here; NaN and ∞ give a NaN r, and the quadrant is then irrelevant.
    const int quadrant = n == n ? static_cast<int>(static_cast<long long>(n) & 3) : 0;
    return {r, quadrant};
}

/** @brief The float version: π/2 in three floats, Cephes' `sinf`/`cosf` polynomials on [−π/4, π/4] (relative error
 *         about 3e-8), the same reduction by fl(2π) beyond 2^17 (backward error below half an ulp, as for double),
 *         NaN beyond 2^40. */
struct ReducedAngleF {
    float r;
    int quadrant;
};

NHVK_HD NHVK_FORCEINLINE ReducedAngleF reduce_half_pi(float x) {
    if (fabsf(x) > 131072.0f) {
        const float q = truncf(x * 0.159154937f);
        const float p = q * 6.28318548f, e = fmaf(q, 6.28318548f, -p);
        x = fabsf(x) <= 1.09951163e12f ? (x - p) - e : NAN;
    }
    const float n = rintf(x * 0.636619747f);
    float r = fmaf(-n, 1.57079637f, x);
    r = fmaf(-n, -4.37113883e-08f, r);
    r = fmaf(-n, -1.71512451e-15f, r);
    const int quadrant = n == n ? static_cast<int>(static_cast<long long>(n) & 3) : 0;
    return {r, quadrant};
}

NHVK_HD NHVK_FORCEINLINE float kernel_sin(float x) {
    const float z = x * x;
    return ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * x + x;
}

NHVK_HD NHVK_FORCEINLINE float kernel_cos(float x) {
    const float z = x * x;
    return ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
}

// NOTE: sin_cw and cos_cw each keep their own switch: one shared quadrant switch (cos x = sin(x + π/2)) is the same
// arithmetic but, measured with member.hpp's failure tails folded too, cost the double kernels registers (member.hpp).
template <class T> NHVK_HD NHVK_FORCEINLINE T sin_cw(T x) {
    const auto a = reduce_half_pi(x);
    const T s = kernel_sin(a.r), c = kernel_cos(a.r);
    switch (a.quadrant) {
    case 0:
        return s;
    case 1:
        return c;
    case 2:
        return -s;
    default:
        return -c;
    }
}

template <class T> NHVK_HD NHVK_FORCEINLINE T cos_cw(T x) {
    const auto a = reduce_half_pi(x);
    const T s = kernel_sin(a.r), c = kernel_cos(a.r);
    switch (a.quadrant) {
    case 0:
        return c;
    case 1:
        return -s;
    case 2:
        return -c;
    default:
        return s;
    }
}

} // namespace detail

// sin and cos as the generated equations call them (see the file comment).
#if defined(__CUDA_ARCH__)
template <class T> NHVK_HD NHVK_FORCEINLINE T trig_sin(T x) { return detail::sin_cw(x); }
template <class T> NHVK_HD NHVK_FORCEINLINE T trig_cos(T x) { return detail::cos_cw(x); }
#else
template <class T> NHVK_HD NHVK_FORCEINLINE T trig_sin(T x) { return std::sin(x); }
template <class T> NHVK_HD NHVK_FORCEINLINE T trig_cos(T x) { return std::cos(x); }
#endif

// The generated equations differentiated by forward tangents (`rhs_jacobian`, nhvk/jacobian.hpp): each through the
// same sin and cos of the value as above.
template <class T, int N> NHVK_HD NHVK_FORCEINLINE Dual<T, N> trig_sin(const Dual<T, N>& x) {
    return detail::chain(x, trig_sin(x.val), trig_cos(x.val));
}
template <class T, int N> NHVK_HD NHVK_FORCEINLINE Dual<T, N> trig_cos(const Dual<T, N>& x) {
    return detail::chain(x, trig_cos(x.val), -trig_sin(x.val));
}

} // namespace nhvk
