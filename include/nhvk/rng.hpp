// SPDX-License-Identifier: MIT
/** @file
 *  @brief Counter-based random draws (Philox4x64-10): a draw is a pure function of
 *         (seed, trajectory index, stream, draw index).
 *
 *  Nothing here has state. A draw never depends on the order in which trajectories are visited, on how they
 *  are chunked, on the thread or on the backend, so trajectory i of a run with seed s starts from the same
 *  initial condition on the CPU and on the GPU, alone or in an ensemble (docs/physics.md §6).
 *
 *  Bit-for-bit reproducibility across backends:
 *  - `uniform01` is exact integer arithmetic plus one exact scaling: identical bits everywhere.
 *  - `normal01` uses its own logarithm and cosine, written with explicit `fma` and operations that are
 *    correctly rounded in IEEE 754 (+, −, ×, /, sqrt, fma, frexp/ldexp), and no product ever feeds an
 *    addition outside an explicit `fma`, so neither nvcc's nor gcc's FMA contraction can change a result.
 *    The libm / CUDA `log`, `sin`, `cos` are *not* used: they differ by an ulp between glibc and CUDA.
 *    Assumes IEEE double without flush-to-zero (true for double on the GPU, and on x86-64 by default);
 *    `-ffast-math` on the host voids the guarantee.
 */
#pragma once

#include <math.h>
#include <stdint.h>

#include <Random123/philox.h>
#include <Random123/uniform.hpp>

#include "config.hpp"

namespace nhvk {

/** @brief Independent random streams of one trajectory. The values are part of the output format: never renumber. */
enum class Stream : uint32_t {
    q0 = 0,       ///< initial coordinates, draw index = coordinate index
    v0 = 1,       ///< trial velocities, draw index = coordinate index
    mu0 = 2,      ///< vakonomic multipliers μ0, draw index = constraint index
    params = 3,   ///< swept model parameters, draw index = parameter index
    reserved = 4, ///< free for later use (e.g. resampling)
    sweep = 5,    ///< a [sweep]'s random designs (traj = 0: Sobol's shifts; 1 + axis: a Latin hypercube's column)
};

/** @brief Identifies one stream of one trajectory: with a draw index k it names a single draw. */
struct DrawKey {
    uint64_t seed = 0;   ///< run seed (`run.seed`)
    uint64_t traj = 0;   ///< global trajectory index, 0-based, independent of chunking
    uint32_t stream = 0; ///< a `Stream` value
};

/** @brief Builds a key from a named stream. */
NHVK_HD inline DrawKey make_draw_key(uint64_t seed, uint64_t traj, Stream stream) {
    DrawKey key;
    key.seed = seed;
    key.traj = traj;
    key.stream = static_cast<uint32_t>(stream);
    return key;
}

/** @brief The 256 random bits of draw k: Philox4x64-10 with key (seed, traj) and counter (k, stream, 0, 0). */
NHVK_HD inline r123::Philox4x64::ctr_type philox_block(const DrawKey& key, uint32_t k) {
    r123::Philox4x64 philox;
    r123::Philox4x64::ctr_type ctr = {{static_cast<uint64_t>(k), static_cast<uint64_t>(key.stream), 0, 0}};
    r123::Philox4x64::key_type pkey = {{key.seed, key.traj}};
    return philox(ctr, pkey);
}

namespace detail {

/** @brief 64 random bits → one of the 2^52 doubles {1, 3, 5, …, 2^53 − 1}·2^−53: open (0, 1), exact. */
NHVK_HD inline double bits_to_open01(uint64_t bits) { return r123::u01fixedpt<double>(bits); }

/** @brief c[0] + z·(c[1] + z·(… + z·c[N−1])) by Horner's rule, one explicit fma a step (the same bits everywhere). */
template <int N> NHVK_HD inline double horner_fma(double z, const double (&c)[N]) {
    double p = c[N - 1];
    NHVK_UNROLL
    for (int i = N - 2; i >= 0; --i) p = fma(z, p, c[i]);
    return p;
}

/** @brief ln(u) for 0 < u < ∞ (finite, normal or subnormal), ≤ 1 ulp or so, bit-identical on host and device.
 *
 *  fdlibm's e_log.c algorithm: u = 2^e·m with m ∈ [√2/2, √2), f = m − 1, s = f/(2 + f),
 *  ln m = 2 atanh s = f − f²/2 + s·(f²/2 + R(s²)), R a minimax polynomial (Lg1…Lg7).
 *  NOTE: products that feed an addition are either exact (·0.5, ·2) or inside an explicit fma.
 */
NHVK_HD inline double det_log(double u) {
    const double ln2_hi = 6.93147180369123816490e-01; // trailing zeros: e·ln2_hi is exact for |e| < 2^11
    const double ln2_lo = 1.90821492927058770002e-10;
    const double lg[7] = {6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
                          2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
                          1.479819860511658591e-01}; // Lg1 … Lg7
    int e = 0;
    double m = frexp(u, &e); // exact: u = m·2^e, m ∈ [0.5, 1)
    if (m < 0.70710678118654752440) {
        m = m * 2.0; // exact
        e -= 1;
    }
    const double f = m - 1.0; // exact (Sterbenz)
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double r = z * horner_fma(z, lg); // R = z·(Lg1 + z·(Lg2 + … + z·Lg7))
    const double h = 0.5 * f;               // exact
    const double hfsq_r = fma(h, f, r);     // f²/2 + R
    const double de = static_cast<double>(e);
    // ln u = e·ln2_hi − ((f²/2 − (s·(f²/2 + R) + e·ln2_lo)) − f), fdlibm's order of operations
    const double lo = fma(s, hfsq_r, de * ln2_lo);
    const double small = fma(h, f, -lo) - f; // f²/2 − lo, fused (a plain h·f − lo is what compilers contract)
    return fma(de, ln2_hi, -small);          // e·ln2_hi is exact, so this is fdlibm's last subtraction
}

/** @brief sin(x) and cos(x) for |x| ≤ π/4 (fdlibm k_sin.c / k_cos.c kernels, no tail), explicit fma. */
NHVK_HD inline double det_sin_kernel(double x) {
    const double s[6] = {-1.66666666666666324348e-01, 8.33333333332248946124e-03,  -1.98412698298579493134e-04,
                         2.75573137070700676789e-06,  -2.50507602534068634195e-08, 1.58969099521155010221e-10};
    const double z = x * x;
    const double v = z * x;
    return fma(v, horner_fma(z, s), x); // x + x³·(s1 + z·(…))
}

/** @copydoc det_sin_kernel */
NHVK_HD inline double det_cos_kernel(double x) {
    const double c[6] = {4.16666666666666019037e-02,  -1.38888888888741095749e-03, 2.48015872894767294178e-05,
                         -2.75573143513906633035e-07, 2.08757232129817482790e-09,  -1.13596475577881948265e-11};
    const double z = x * x;
    const double zr = z * horner_fma(z, c); // cos x = 1 − z/2 + z²·p, p = c1 + z·(c2 + …)
    const double hz = 0.5 * z;              // exact
    const double w = 1.0 - hz;
    const double tail = fma(z, zr, (1.0 - w) - hz); // recovers the rounding of 1 − z/2 (fdlibm)
    return w + tail;
}

/** @brief cos(2π·u) for u ∈ [0, 1) a multiple of 2^−53; the reduction r = u − n/4 is exact. */
NHVK_HD inline double det_cos_2pi(double u) {
    const double two_pi = 6.28318530717958647693;
    // Nearest quarter turn n. The one rounding of 4u + 1/2 can only move a point within 2^-53 of a boundary to
    // the neighbouring quarter, leaving |r| ≤ 1/8 + 2^-53, which the kernels handle just as well.
    const double n = floor(fma(u, 4.0, 0.5));
    const double r = fma(-0.25, n, u); // u − n/4, exact: a multiple of 2^-53 with |r| < 1/4
    const double x = r * two_pi;       // |x| ≤ π/4
    const int quadrant = static_cast<int>(n) & 3;
    if (quadrant == 0) return det_cos_kernel(x);
    if (quadrant == 1) return -det_sin_kernel(x); // cos(x + π/2)
    if (quadrant == 2) return -det_cos_kernel(x);
    return det_sin_kernel(x); // cos(x + 3π/2)
}

} // namespace detail

/** @brief Uniform draw in the open interval (0, 1): never 0, never 1; 2^52 equally likely values.
 *  Uses word 0 of the Philox block of draw k. */
NHVK_HD inline double uniform01(const DrawKey& key, uint32_t k) {
    return detail::bits_to_open01(philox_block(key, k).v[0]);
}

/** @brief Standard normal draw N(0, 1) by Box–Muller, z = √(−2 ln u₁)·cos(2π u₂).
 *  Uses words 2 and 3 of the Philox block of draw k, so `uniform01(key, k)` and `normal01(key, k)` are
 *  independent. |z| ≤ √(2·53·ln 2) ≈ 8.57. */
NHVK_HD inline double normal01(const DrawKey& key, uint32_t k) {
    const r123::Philox4x64::ctr_type block = philox_block(key, k);
    const double u1 = detail::bits_to_open01(block.v[2]);
    const double u2 = detail::bits_to_open01(block.v[3]);
    const double radius = sqrt(-2.0 * detail::det_log(u1));
    return radius * detail::det_cos_2pi(u2);
}

} // namespace nhvk
