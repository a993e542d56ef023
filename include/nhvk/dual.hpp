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
#include "nhvk/ops.hpp"

namespace nhvk {

// ---------------------------------------------------------------------------------------------------------------
// Elementary functions on plain floating-point scalars, in namespace nhvk so that model code can call `sin(x)`
// unqualified for S = double, S = float and S = Dual alike (ordinary lookup + ADL). The functions of the table of
// nhvk/ops.hpp, then `pow` and `sqr`.
// ---------------------------------------------------------------------------------------------------------------
#define NHVK_PLAIN_UNARY(name, spelling, on_double, on_float, reads, derivative)                                       \
    NHVK_HD NHVK_FORCEINLINE double name(double x) { return on_double(x); }                                            \
    NHVK_HD NHVK_FORCEINLINE float name(float x) { return on_float(x); }
#define NHVK_PLAIN_BINARY(name, spelling, on_double, on_float, d_first, d_second)                                      \
    NHVK_HD NHVK_FORCEINLINE double name(double u, double w) { return on_double(u, w); }                               \
    NHVK_HD NHVK_FORCEINLINE float name(float u, float w) { return on_float(u, w); }
NHVK_UNARY_FUNCTIONS(NHVK_PLAIN_UNARY)
NHVK_BINARY_FUNCTIONS(NHVK_PLAIN_BINARY)
#undef NHVK_PLAIN_UNARY
#undef NHVK_PLAIN_BINARY
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

/** @brief The value of a plain number or of a (nested) dual number, as a plain number. */
template <class T> NHVK_HD NHVK_FORCEINLINE T value_of(const T& x) { return x; }
template <class T, int N> NHVK_HD NHVK_FORCEINLINE auto value_of(const Dual<T, N>& x) { return value_of(x.val); }

/** @brief `x` (of type `T`, plain or dual) as a constant of the dual type `S` nested around `T`. */
template <class S, class T> NHVK_HD NHVK_FORCEINLINE S lift(const T& x) {
    if constexpr (std::is_same<S, T>::value || is_scalar<T>::value) return S(x);
    else return S(lift<typename S::value_type>(x));
}

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

// Elementary functions of duals, from the table of nhvk/ops.hpp. Each uses the elementary functions of T, so
// nesting works recursively.
// NOTE: where the derivative does not read the value, it is computed first: the order in which g++ evaluated the
// arguments of the former `chain(a, f(x), f'(x))`. With T = sym::Expr the order makes the node ids, and so the text
// of the generated headers.
#define NHVK_DUAL_UNARY_x(name, derivative)                                                                            \
    template <class T, int N> NHVK_HD Dual<T, N> name(const Dual<T, N>& a) {                                           \
        const T& x = a.val;                                                                                            \
        (void)x;                                                                                                       \
        const T df = derivative;                                                                                       \
        return detail::chain(a, name(x), df);                                                                          \
    }
#define NHVK_DUAL_UNARY_f(name, derivative)                                                                            \
    template <class T, int N> NHVK_HD Dual<T, N> name(const Dual<T, N>& a) {                                           \
        const T& x = a.val;                                                                                            \
        const T f = name(x);                                                                                           \
        return detail::chain(a, f, derivative);                                                                        \
    }
#define NHVK_DUAL_UNARY(name, spelling, dbl, flt, reads, derivative) NHVK_DUAL_UNARY_##reads(name, derivative)
// d f(u, w) = ∂f/∂u du + ∂f/∂w dw
#define NHVK_DUAL_BINARY(name, spelling, on_double, on_float, d_first, d_second)                                       \
    template <class T, int N> NHVK_HD Dual<T, N> name(const Dual<T, N>& a, const Dual<T, N>& b) {                      \
        const T &u = a.val, &w = b.val;                                                                                \
        const T du = d_first, dw = d_second;                                                                           \
        Dual<T, N> r;                                                                                                  \
        r.val = name(u, w);                                                                                            \
        NHVK_UNROLL                                                                                                    \
        for (int i = 0; i < N; ++i) r.d[i] = du * a.d[i] + dw * b.d[i];                                                \
        return r;                                                                                                      \
    }
NHVK_UNARY_FUNCTIONS(NHVK_DUAL_UNARY)
NHVK_BINARY_FUNCTIONS(NHVK_DUAL_BINARY)
#undef NHVK_DUAL_UNARY_x
#undef NHVK_DUAL_UNARY_f
#undef NHVK_DUAL_UNARY
#undef NHVK_DUAL_BINARY
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

} // namespace nhvk
