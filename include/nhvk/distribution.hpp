// SPDX-License-Identifier: MIT
/** @file
 *  @brief Distributions of sampled initial conditions and swept parameters, sampled with counter-based draws.
 */
#pragma once

#include <math.h>
#include <stdint.h>

#include "config.hpp"
#include "rng.hpp"

namespace nhvk {

/** @brief Kind of a `Distribution`. The values appear in saved samples: never renumber. */
enum class DistKind : uint32_t {
    fixed = 0,   ///< always a
    uniform = 1, ///< U(a, b): a = low, b = high, a < b
    normal = 2,  ///< N(a, b²): a = mean, b = standard deviation ≥ 0
};

/** @brief A one-dimensional distribution; trivially copyable, passed to kernels by value. */
struct Distribution {
    DistKind kind = DistKind::fixed;
    double a = 0.0; ///< fixed: value; uniform: low; normal: mean
    double b = 0.0; ///< fixed: unused (0); uniform: high; normal: std
};

/** @brief The point mass at `value`. */
NHVK_HD inline Distribution make_fixed(double value) { return Distribution{DistKind::fixed, value, 0.0}; }
/** @brief U(low, high). */
NHVK_HD inline Distribution make_uniform(double low, double high) { return Distribution{DistKind::uniform, low, high}; }
/** @brief N(mean, std²). */
NHVK_HD inline Distribution make_normal(double mean, double std) { return Distribution{DistKind::normal, mean, std}; }

/** @brief Equality of kind and parameters (b is ignored for `fixed`). */
NHVK_HD inline bool operator==(const Distribution& x, const Distribution& y) {
    if (x.kind != y.kind) return false;
    return x.kind == DistKind::fixed ? x.a == y.a : (x.a == y.a && x.b == y.b);
}
NHVK_HD inline bool operator!=(const Distribution& x, const Distribution& y) { return !(x == y); }

/** @brief The draw k of `key` from `dist`. A fixed distribution consumes no randomness.
 *
 *  uniform: low + (high − low)·u with u = uniform01(key, k); rounding can give `high` itself in rare cases.
 *  normal: mean + std·z with z = normal01(key, k).
 *  Written with explicit fma so the bits do not depend on the compiler's contraction (see rng.hpp).
 */
NHVK_HD inline double sample(const Distribution& dist, const DrawKey& key, uint32_t k) {
    switch (dist.kind) {
    case DistKind::uniform: {
        const double width = dist.b - dist.a;
        return fma(width, uniform01(key, k), dist.a);
    }
    case DistKind::normal:
        return fma(dist.b, normal01(key, k), dist.a);
    case DistKind::fixed:
    default:
        return dist.a;
    }
}

} // namespace nhvk
