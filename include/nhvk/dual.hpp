// SPDX-License-Identifier: MIT
/** @file
 *  @brief Forward-mode automatic differentiation: a dual number with N tangent components, nestable for second
 *         derivatives (`Dual<Dual<double, n>, m>`), host and device.
 *
 *  A model's `L`, `φ` and `F` are written once, generic in the scalar type `S`; the engine evaluates them with
 *  `S = double/float` for values and nested duals for each first and second derivative that docs/physics.md §1–3 needs.
 *  No derivative is ever taken by hand or by finite differences.
 */
#pragma once

#include <cmath>
#include <type_traits>

#include "nhvk/config.hpp"

namespace nhvk {

// ---------------------------------------------------------------------------------------------------------------
// Elementary functions on plain floating-point scalars, in namespace nhvk so that model code can call `sin(x)`
// unqualified for S = double, S = float and S = Dual alike (ordinary lookup + ADL).
// ---------------------------------------------------------------------------------------------------------------
#define NHVK_PLAIN_FN(name)                                                                                            \
    NHVK_HD NHVK_FORCEINLINE double name(double x) { return ::name(x); }                                               \
    NHVK_HD NHVK_FORCEINLINE float name(float x) { return ::name##f(x); }
NHVK_PLAIN_FN(sin)
NHVK_PLAIN_FN(cos)
NHVK_PLAIN_FN(tan)
NHVK_PLAIN_FN(asin)
NHVK_PLAIN_FN(acos)
NHVK_PLAIN_FN(atan)
NHVK_PLAIN_FN(sinh)
NHVK_PLAIN_FN(cosh)
NHVK_PLAIN_FN(tanh)
NHVK_PLAIN_FN(asinh)
NHVK_PLAIN_FN(exp)
NHVK_PLAIN_FN(log)
NHVK_PLAIN_FN(sqrt)
#undef NHVK_PLAIN_FN
NHVK_HD NHVK_FORCEINLINE double abs(double x) { return ::fabs(x); }
NHVK_HD NHVK_FORCEINLINE float abs(float x) { return ::fabsf(x); }
NHVK_HD NHVK_FORCEINLINE double atan2(double y, double x) { return ::atan2(y, x); }
NHVK_HD NHVK_FORCEINLINE float atan2(float y, float x) { return ::atan2f(y, x); }
NHVK_HD NHVK_FORCEINLINE double pow(double x, double p) { return ::pow(x, p); }
NHVK_HD NHVK_FORCEINLINE float pow(float x, float p) { return ::powf(x, p); }
NHVK_HD NHVK_FORCEINLINE double sqr(double x) { return x * x; }
NHVK_HD NHVK_FORCEINLINE float sqr(float x) { return x * x; }

/** @brief A type that mixes with duals like a plain number: arithmetic types, and the symbolic `sym::Expr` (which
 *         specializes this). Duals themselves are not scalars. */
template <class T> struct is_scalar : std::is_arithmetic<T> {};

/** @brief Dual number `val + Σ_i d[i] ε_i` with `ε_i ε_j = 0`. `T` may itself be a Dual (nesting). */
template <class T, int N> struct Dual {
    static_assert(N >= 1, "a Dual needs at least one tangent component");
    using value_type = T;
    static constexpr int size = N;

    T val;
    T d[N];

    NHVK_HD Dual() : val(0) {
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) d[i] = T(0);
    }
    /** @brief A constant (all tangents zero). Implicit so that model code mixes constants freely. */
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0> NHVK_HD Dual(U c) : val(T(c)) {
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) d[i] = T(0);
    }
    /** @brief A constant of the inner type (for nested duals). */
    template <class TT = T, std::enable_if_t<!is_scalar<TT>::value, int> = 0> NHVK_HD Dual(const T& c) : val(c) {
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) d[i] = T(0);
    }

    NHVK_HD Dual& operator+=(const Dual& o) {
        val += o.val;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) d[i] += o.d[i];
        return *this;
    }
    NHVK_HD Dual& operator-=(const Dual& o) {
        val -= o.val;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) d[i] -= o.d[i];
        return *this;
    }
    NHVK_HD Dual& operator*=(const Dual& o) { return *this = *this * o; }
    NHVK_HD Dual& operator/=(const Dual& o) { return *this = *this / o; }

    // ---- hidden friends: found by ADL; the arithmetic-scalar templates win over user conversions ----
    friend NHVK_HD Dual operator+(const Dual& a) { return a; }
    friend NHVK_HD Dual operator-(const Dual& a) {
        Dual r;
        r.val = -a.val;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
        return r;
    }
    friend NHVK_HD Dual operator+(const Dual& a, const Dual& b) {
        Dual r;
        r.val = a.val + b.val;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
        return r;
    }
    friend NHVK_HD Dual operator-(const Dual& a, const Dual& b) {
        Dual r;
        r.val = a.val - b.val;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
        return r;
    }
    friend NHVK_HD Dual operator*(const Dual& a, const Dual& b) {
        Dual r;
        r.val = a.val * b.val;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.val + a.val * b.d[i];
        return r;
    }
    friend NHVK_HD Dual operator/(const Dual& a, const Dual& b) {
        // (a/b)' = (a' − (a/b) b') / b
        Dual r;
        const T inv = T(1) / b.val;
        r.val = a.val * inv;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - r.val * b.d[i]) * inv;
        return r;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator+(const Dual& a, U c) {
        Dual r = a;
        r.val += T(c);
        return r;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator+(U c, const Dual& a) {
        return a + c;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator-(const Dual& a, U c) {
        Dual r = a;
        r.val -= T(c);
        return r;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator-(U c, const Dual& a) {
        Dual r = -a;
        r.val += T(c);
        return r;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator*(const Dual& a, U c) {
        Dual r;
        const T cc = T(c);
        r.val = a.val * cc;
        NHVK_UNROLL
        for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * cc;
        return r;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator*(U c, const Dual& a) {
        return a * c;
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator/(const Dual& a, U c) {
        return a * (T(1) / T(c));
    }
    template <class U, std::enable_if_t<is_scalar<U>::value, int> = 0>
    friend NHVK_HD Dual operator/(U c, const Dual& a) {
        return Dual(c) / a;
    }

    // Comparisons look at the value only (branching in model code, e.g. a chart check).
    friend NHVK_HD bool operator<(const Dual& a, const Dual& b) { return a.val < b.val; }
    friend NHVK_HD bool operator>(const Dual& a, const Dual& b) { return a.val > b.val; }
    friend NHVK_HD bool operator<=(const Dual& a, const Dual& b) { return a.val <= b.val; }
    friend NHVK_HD bool operator>=(const Dual& a, const Dual& b) { return a.val >= b.val; }
};

namespace detail {
/** @brief Chain rule: given f(a.val) and f'(a.val), build f(a). */
template <class T, int N> NHVK_HD NHVK_FORCEINLINE Dual<T, N> chain(const Dual<T, N>& a, const T& f, const T& df) {
    Dual<T, N> r;
    r.val = f;
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = df * a.d[i];
    return r;
}
} // namespace detail

// Elementary functions of duals. Each uses the elementary functions of T, so nesting works recursively.
template <class T, int N> NHVK_HD Dual<T, N> sin(const Dual<T, N>& a) {
    return detail::chain(a, sin(a.val), cos(a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> cos(const Dual<T, N>& a) {
    return detail::chain(a, cos(a.val), -sin(a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> tan(const Dual<T, N>& a) {
    const T t = tan(a.val);
    return detail::chain(a, t, T(1) + t * t);
}
template <class T, int N> NHVK_HD Dual<T, N> asin(const Dual<T, N>& a) {
    return detail::chain(a, asin(a.val), T(1) / sqrt(T(1) - a.val * a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> acos(const Dual<T, N>& a) {
    return detail::chain(a, acos(a.val), T(-1) / sqrt(T(1) - a.val * a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> atan(const Dual<T, N>& a) {
    return detail::chain(a, atan(a.val), T(1) / (T(1) + a.val * a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> sinh(const Dual<T, N>& a) {
    return detail::chain(a, sinh(a.val), cosh(a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> cosh(const Dual<T, N>& a) {
    return detail::chain(a, cosh(a.val), sinh(a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> tanh(const Dual<T, N>& a) {
    const T t = tanh(a.val);
    return detail::chain(a, t, T(1) - t * t);
}
template <class T, int N> NHVK_HD Dual<T, N> asinh(const Dual<T, N>& a) {
    return detail::chain(a, asinh(a.val), T(1) / sqrt(T(1) + a.val * a.val));
}
template <class T, int N> NHVK_HD Dual<T, N> exp(const Dual<T, N>& a) {
    const T e = exp(a.val);
    return detail::chain(a, e, e);
}
template <class T, int N> NHVK_HD Dual<T, N> log(const Dual<T, N>& a) {
    return detail::chain(a, log(a.val), T(1) / a.val);
}
template <class T, int N> NHVK_HD Dual<T, N> sqrt(const Dual<T, N>& a) {
    // NOTE: the derivative is infinite at 0; models with a √ of a norm (appell_hamel, equal_speeds) are singular
    // there, and the engine reports such a trajectory as non-finite rather than hiding it.
    const T s = sqrt(a.val);
    return detail::chain(a, s, T(0.5) / s);
}
template <class T, int N> NHVK_HD Dual<T, N> abs(const Dual<T, N>& a) { return a.val < T(0) ? -a : a; }
template <class T, int N> NHVK_HD Dual<T, N> sqr(const Dual<T, N>& a) { return a * a; }
template <class T, int N, class U, std::enable_if_t<std::is_arithmetic<U>::value, int> = 0>
NHVK_HD Dual<T, N> pow(const Dual<T, N>& a, U p) {
    // NOTE: the exponent stays a plain number through the nesting (a Dual exponent would take exp(p·log a), NaN for
    // a < 0 even with an integer p).
    using P = std::conditional_t<std::is_arithmetic<T>::value, T, U>;
    const P e = P(p);
    return detail::chain(a, pow(a.val, e), T(e) * pow(a.val, P(e - P(1))));
}
template <class T, int N> NHVK_HD Dual<T, N> pow(const Dual<T, N>& a, const Dual<T, N>& p) { return exp(p * log(a)); }
template <class T, int N> NHVK_HD Dual<T, N> atan2(const Dual<T, N>& y, const Dual<T, N>& x) {
    // d atan2(y, x) = (x dy − y dx) / (x² + y²)
    Dual<T, N> r;
    r.val = atan2(y.val, x.val);
    const T inv = T(1) / (x.val * x.val + y.val * y.val);
    NHVK_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = (x.val * y.d[i] - y.val * x.d[i]) * inv;
    return r;
}

} // namespace nhvk
