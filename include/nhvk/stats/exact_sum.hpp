// SPDX-License-Identifier: MIT
/** @file
 *  @brief Order-independent exact summation of doubles (a fixed-point superaccumulator) and the exact mean and
 *         standard deviation computed from two such sums.
 *
 *  Every double is an integer multiple of 2^-1074, so a sum of doubles is an integer multiple of 2^-1074. ExactSum
 *  keeps that integer in base-2^32 limbs held in int64 slots: adding a double is adding its 53-bit significand,
 *  split into three 32-bit pieces, to three limbs. Carries are propagated lazily (every 2^29 additions, and on
 *  merge/read), so the state after a set of additions is a function of the multiset of addends only: the sum is
 *  exact, associative and commutative, and value() is the correctly rounded (round-to-nearest-even) double of it.
 *  ExactSquareSum does the same for the exact squares x² (106-bit integers, unit 2^-2148), so that mean_std() can
 *  form n·Σx² − (Σx)² exactly. Nothing here uses floating-point arithmetic except the final conversions, so host and
 *  device agree bit for bit.
 */
#pragma once

#include "nhvk/config.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace nhvk::stats {

namespace detail {

NHVK_HD inline std::uint64_t double_bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

NHVK_HD inline double bits_double(std::uint64_t b) {
    double x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

/** @brief The order-preserving integer image of a double (sign bit flipped, negatives inverted): x < y exactly when
 *         order_key(x) < order_key(y), for −0 folded to +0 first. Integer comparisons and atomics take it. */
NHVK_HD inline std::uint64_t order_key(double x) {
    const std::uint64_t b = double_bits(x);
    return (b >> 63) != 0u ? ~b : b | (std::uint64_t{1} << 63);
}

/** @brief The double of an order_key. */
NHVK_HD inline double key_value(std::uint64_t k) {
    return bits_double((k >> 63) != 0u ? k & ~(std::uint64_t{1} << 63) : ~k);
}

/** @brief True when x is neither an infinity nor a NaN (decided on the bits, identical on host and device). */
NHVK_HD inline bool is_finite(double x) { return ((double_bits(x) >> 52) & 0x7FFu) != 0x7FFu; }

NHVK_HD inline double quiet_nan() { return bits_double(0x7FF8000000000000ull); }
NHVK_HD inline double infinity() { return bits_double(0x7FF0000000000000ull); }

// NOTE: sqrt is correctly rounded and ldexp exact (IEEE 754) on both sides; the wrappers only pick the overload
// set that compiles in device code.
NHVK_HD inline double sqrt_rn(double a) {
#if defined(__CUDA_ARCH__)
    return ::sqrt(a);
#else
    return std::sqrt(a);
#endif
}

NHVK_HD inline double ldexp_exact(double a, int e) {
#if defined(__CUDA_ARCH__)
    return ::ldexp(a, e);
#else
    return std::ldexp(a, e);
#endif
}

// ---- unsigned big integers as little-endian arrays of base-2^32 digits ---------------------------------------

NHVK_HD inline int highest_set_bit(std::uint32_t v) {
    int b = 31;
    while (((v >> b) & 1u) == 0u) {
        --b;
    }
    return b;
}

/** @brief Index of the most significant set bit of the big integer d[0..n), or -1 when it is zero. */
NHVK_HD inline int big_msb(const std::uint32_t* d, int n) {
    for (int i = n - 1; i >= 0; --i) {
        if (d[i] != 0u) {
            return 32 * i + highest_set_bit(d[i]);
        }
    }
    return -1;
}

NHVK_HD inline std::uint64_t big_digit(const std::uint32_t* d, int n, int i) {
    return (i >= 0 && i < n) ? static_cast<std::uint64_t>(d[i]) : 0u;
}

/** @brief Bits [pos, pos+64) of d as an integer; bits below index 0 read as zero (pos may be negative). */
NHVK_HD inline std::uint64_t big_bits(const std::uint32_t* d, int n, int pos) {
    if (pos < 0) {
        return pos <= -64 ? 0u : big_bits(d, n, 0) << (-pos);
    }
    const int idx = pos >> 5;
    const int sh = pos & 31;
    const std::uint64_t w = big_digit(d, n, idx) | (big_digit(d, n, idx + 1) << 32);
    const std::uint64_t top = big_digit(d, n, idx + 2);
    return sh == 0 ? w : (w >> sh) | (top << (64 - sh));
}

/** @brief True when any bit of d with index < pos is set. */
NHVK_HD inline bool big_any_below(const std::uint32_t* d, int n, int pos) {
    if (pos <= 0) {
        return false;
    }
    const int idx = pos >> 5;
    const int sh = pos & 31;
    for (int i = 0; i < idx && i < n; ++i) {
        if (d[i] != 0u) {
            return true;
        }
    }
    return sh != 0 && idx < n && (d[idx] & ((1u << sh) - 1u)) != 0u;
}

/** @brief A 53-bit significand and the index of its least significant bit inside a big integer. */
struct Rounded53 {
    std::uint64_t mant; ///< the kept bits, rounded; < 2^53
    int lsb;            ///< index (in the big integer) of the lowest kept bit
};

/** @brief Rounds the big integer d, whose top set bit is msb, (plus a fraction in (0, 1) of its unit when sticky)
 *  to a multiple of 2^lsb, nearest-even. Requires msb - lsb < 53 and, when sticky is set, lsb >= 1. */
NHVK_HD inline Rounded53 big_round(const std::uint32_t* d, int n, int msb, int lsb, bool sticky) {
    const int width = msb - lsb + 1; // kept bits; <= 0 when the whole number lies below the rounding unit
    std::uint64_t kept = width <= 0 ? 0u : big_bits(d, n, lsb) & ((std::uint64_t{1} << width) - 1u);
    const bool guard = lsb >= 1 && ((big_bits(d, n, lsb - 1) & 1u) != 0u);
    const bool rest = sticky || big_any_below(d, n, lsb - 1);
    if (guard && (rest || (kept & 1u) != 0u)) {
        ++kept;
    }
    int out_lsb = lsb;
    if (kept == (std::uint64_t{1} << 53)) {
        kept >>= 1;
        ++out_lsb;
    }
    return {kept, out_lsb};
}

/** @brief The correctly rounded double of ±(d + f)·2^scale, where f ∈ (0, 1) is present iff sticky.
 *  Handles subnormal results and overflow to infinity. With sticky set, requires scale <= -1075 (so that the
 *  rounding position is never below the integer's unit). */
NHVK_HD inline double big_to_double(const std::uint32_t* d, int n, int scale, bool sticky, bool negative) {
    const std::uint64_t sign = negative ? (std::uint64_t{1} << 63) : 0u;
    const int msb = big_msb(d, n);
    if (msb < 0) {
        return bits_double(sign); // |value| < 2^scale <= 2^-1075: rounds to zero
    }
    // lowest kept bit: 53 significant bits, but never below the subnormal unit 2^-1074
    const int lsb_sub = -1074 - scale;
    const int lsb = (msb - 52 > lsb_sub) ? msb - 52 : lsb_sub;
    const Rounded53 r = big_round(d, n, msb, lsb, sticky);
    const int e_lsb = r.lsb + scale; // value = r.mant · 2^e_lsb
    if (r.mant < (std::uint64_t{1} << 52)) {
        // subnormal (e_lsb == -1074): the significand field is the integer itself
        return bits_double(sign | r.mant);
    }
    const int biased = e_lsb + 1075; // exponent field of mant·2^e_lsb with mant ∈ [2^52, 2^53)
    if (biased >= 2047) {
        return bits_double(sign | 0x7FF0000000000000ull);
    }
    return bits_double(sign | (static_cast<std::uint64_t>(biased) << 52) | (r.mant & ((std::uint64_t{1} << 52) - 1u)));
}

} // namespace detail

namespace detail {

/** @brief A finite double as ±m·2^(p − 1074), m < 2^53, p ∈ [0, 2045] (subnormals: p = 0). */
struct Decoded {
    std::uint64_t m;
    int p;
    bool negative;
    bool finite;
};

NHVK_HD inline Decoded decode(double x) {
    const std::uint64_t b = double_bits(x);
    const auto biased = static_cast<std::uint32_t>((b >> 52) & 0x7FFu);
    std::uint64_t m = b & ((std::uint64_t{1} << 52) - 1u);
    if (biased != 0u) {
        m |= std::uint64_t{1} << 52;
    }
    return {m, biased == 0u ? 0 : static_cast<int>(biased) - 1, (b >> 63) != 0u, biased != 0x7FFu};
}

/** @brief m² for m < 2^53 as (hi, lo) 64-bit words, with 64-bit arithmetic only (fallback; tested against int128). */
NHVK_HD inline void square_53_portable(std::uint64_t m, std::uint64_t& hi, std::uint64_t& lo) {
    // m = a·2^32 + b: m² = a²·2^64 + 2ab·2^32 + b²
    const std::uint64_t a = m >> 32;
    const std::uint64_t b = m & 0xFFFFFFFFu;
    const std::uint64_t mid = 2u * a * b; // < 2^54
    const std::uint64_t bb = b * b;
    lo = bb + (mid << 32);
    hi = a * a + (mid >> 32) + (lo < bb ? 1u : 0u);
}

/** @brief The 106-bit square m² of m < 2^53 as (hi, lo) 64-bit words. */
NHVK_HD inline void square_53(std::uint64_t m, std::uint64_t& hi, std::uint64_t& lo) {
#if defined(__CUDA_ARCH__)
    lo = m * m;
    hi = __umul64hi(m, m);
#elif defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 U128; // GCC/Clang extension; silences -Wpedantic
    const U128 sq = static_cast<U128>(m) * m;
    lo = static_cast<std::uint64_t>(sq);
    hi = static_cast<std::uint64_t>(sq >> 64);
#else
    square_53_portable(m, hi, lo);
#endif
}

/**
 * @brief Signed fixed-point integer in NLimbs base-2^32 limbs held in int64 slots, with lazy carries. Pieces added
 *        are < 2^32 in magnitude and go to limbs below NLimbs − 1; the top limb only receives carries. Integer
 *        arithmetic only, so every operation is exact, associative and commutative (deterministic).
 */
template <int NLimbs> struct FixedAccumulator {
    static constexpr int kDigits = NLimbs + 1;
    static constexpr std::int32_t kNormalizeEvery = std::int32_t{1} << 29;

    std::int64_t limb[NLimbs]{};
    std::int32_t pending = 0;

    /** @brief Adds (or subtracts) the word-aligned pieces d[0..n) at limb k. */
    NHVK_HD void add_pieces(int k, const std::int64_t* d, int n, bool negative) {
        if (negative) {
            for (int i = 0; i < n; ++i) {
                limb[k + i] -= d[i];
            }
        } else {
            for (int i = 0; i < n; ++i) {
                limb[k + i] += d[i];
            }
        }
        // NOTE: each addition changes a limb by < 2^32, so 2^29 additions keep every limb below 2^62.
        if (++pending >= kNormalizeEvery) {
            normalize();
        }
    }

    /** @brief Propagates carries: limbs 0..NLimbs-2 end in [0, 2^32), the top limb carries the sign. */
    NHVK_HD void normalize() {
        for (int i = 0; i + 1 < NLimbs; ++i) {
            const std::int64_t v = limb[i];
            const std::int64_t rem = v & 0xFFFFFFFF;
            limb[i] = rem;
            limb[i + 1] += (v - rem) / (std::int64_t{1} << 32); // exact division: floor carry
        }
        pending = 0;
    }

    NHVK_HD void merge(const FixedAccumulator& other) {
        FixedAccumulator o = other;
        o.normalize();
        normalize();
        for (int i = 0; i < NLimbs; ++i) {
            limb[i] += o.limb[i];
        }
        normalize();
    }

    /** @brief Sign (−1, 0, +1) and magnitude as kDigits little-endian base-2^32 digits. */
    NHVK_HD int magnitude(std::uint32_t (&digits)[kDigits]) const {
        FixedAccumulator c = *this;
        c.normalize();
        int sign = 0;
        if (c.limb[NLimbs - 1] < 0) {
            sign = -1;
            for (int i = 0; i < NLimbs; ++i) {
                c.limb[i] = -c.limb[i];
            }
            c.normalize(); // now every limb >= 0
        } else {
            for (int i = 0; i < NLimbs; ++i) {
                if (c.limb[i] != 0) {
                    sign = 1;
                    break;
                }
            }
        }
        for (int i = 0; i + 1 < NLimbs; ++i) {
            digits[i] = static_cast<std::uint32_t>(c.limb[i]);
        }
        const auto top = static_cast<std::uint64_t>(c.limb[NLimbs - 1]);
        digits[NLimbs - 1] = static_cast<std::uint32_t>(top & 0xFFFFFFFFu);
        digits[NLimbs] = static_cast<std::uint32_t>(top >> 32);
        return sign;
    }

    NHVK_HD bool equals(const FixedAccumulator& other) const {
        std::uint32_t a[kDigits];
        std::uint32_t b[kDigits];
        if (magnitude(a) != other.magnitude(b)) {
            return false;
        }
        for (int i = 0; i < kDigits; ++i) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }
};

#if defined(__SIZEOF_INT128__) && !defined(__CUDA_ARCH__)
__extension__ typedef unsigned __int128 U128; // GCC/Clang extension; silences -Wpedantic

/** @brief Adds mag·2^(pos − unit offset) to `acc`: mag·2^(pos mod 32) as five 32-bit pieces from limb pos/32. The
 *  caller guarantees that pieces beyond the last limb are zero (the sum fits the accumulator). Host only. */
template <int NLimbs> inline void add_wide(FixedAccumulator<NLimbs>& acc, U128 mag, int pos, bool negative) {
    const int r = pos & 31;
    const int k = pos >> 5;
    const U128 low = mag << r;                                                            // bits 0..127 of mag·2^r
    const std::uint64_t top = r == 0 ? 0u : static_cast<std::uint64_t>(mag >> (128 - r)); // bits 128..159
    std::int64_t pieces[5];
    for (int i = 0; i < 4; ++i)
        pieces[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(low >> (32 * i)) & 0xFFFFFFFFu);
    pieces[4] = static_cast<std::int64_t>(top);
    const int n = NLimbs - k < 5 ? NLimbs - k : 5;
    acc.add_pieces(k, pieces, n, negative);
}
#endif

/**
 * @brief What ExactSum and ExactSquareSum share: the fixed-point state with `Limbs` limbs in units of 2^`Scale`, the
 *        non-finite flag, and merging, reading and comparing them. The two sums differ only in what `add` puts in.
 */
template <int Limbs, int Scale> class ExactSumState {
public:
    static constexpr int kLimbs = Limbs;
    static constexpr int kDigits = kLimbs + 1; ///< base-2^32 digits of magnitude()
    static constexpr int kScale = Scale;       ///< digit 0 bit 0 has weight 2^kScale

    /** @brief Sign (−1, 0, +1) and magnitude of the exact sum: kDigits little-endian base-2^32 digits in units of
     *  2^kScale. */
    NHVK_HD int magnitude(std::uint32_t (&digits)[kDigits]) const { return acc_.magnitude(digits); }

    /** @brief The exact sum correctly rounded to double (nearest-even; ±inf beyond the double range; +0 when the
     *  sum is zero). Non-finite addends were excluded; see nonfinite(). */
    NHVK_HD double value() const {
        std::uint32_t d[kDigits];
        const int sign = magnitude(d);
        if (sign == 0) {
            return 0.0;
        }
        return big_to_double(d, kDigits, kScale, false, sign < 0);
    }

    /** @brief True when a non-finite addend was rejected (by this sum or one merged into it). */
    NHVK_HD bool nonfinite() const { return nonfinite_; }

    /** @brief The fixed-point state itself, for a reduction that adds limbs summed elsewhere (the device's block
     *  reduction, block_reduce.hpp): it must keep FixedAccumulator's bound, `pending` counting the additions. */
    NHVK_HD FixedAccumulator<Limbs>& fixed() { return acc_; }

    /** @brief Same exact sum and same non-finite flag. */
    NHVK_HD friend bool operator==(const ExactSumState& a, const ExactSumState& b) {
        return a.nonfinite_ == b.nonfinite_ && a.acc_.equals(b.acc_);
    }
    NHVK_HD friend bool operator!=(const ExactSumState& a, const ExactSumState& b) { return !(a == b); }

protected:
    /** @brief Whether `d` adds anything: false for ±0, and for a non-finite value, which sets the flag instead. */
    NHVK_HD bool adds(const Decoded& d) {
        if (!d.finite) {
            nonfinite_ = true;
            return false;
        }
        return d.m != 0u;
    }

    /** @brief Adds the exact state of another sum (limb-wise, exact). */
    NHVK_HD void merge_state(const ExactSumState& other) {
        acc_.merge(other.acc_);
        nonfinite_ = nonfinite_ || other.nonfinite_;
    }

    FixedAccumulator<Limbs> acc_;
    bool nonfinite_ = false;
};

} // namespace detail

/**
 * @brief Exact, order-independent sum of doubles (fixed-point superaccumulator); trivially copyable, usable on
 *        host and device.
 *
 * Deterministic: the state depends only on the multiset of finite addends, so any summation order, chunking,
 * thread count or merge tree gives the same bits. Non-finite addends are rejected (the state is unchanged) and
 * remembered in a flag. +0 and −0 add nothing; a zero sum reads as +0. 67 limbs of 32 bits: bits 2^-1074 ..
 * 2^1038 plus a carry limb, so up to 2^64 additions of any finite doubles cannot overflow.
 */
class ExactSum : public detail::ExactSumState<67, -1074> {
public:
    static constexpr std::int32_t kNormalizeEvery = detail::FixedAccumulator<kLimbs>::kNormalizeEvery;

    /** @brief Adds x exactly; a non-finite x is rejected and sets nonfinite(). */
    NHVK_HD void add(double x) { add(detail::decode(x)); }

    /** @brief Adds an already decoded double (see detail::decode). */
    NHVK_HD void add(const detail::Decoded& d) {
        if (!adds(d)) {
            return;
        }
        std::int64_t p[kPieces];
        acc_.add_pieces(pieces(d, p), p, kPieces, d.negative);
    }

    static constexpr int kPieces = 3; ///< limbs one addend touches

    /** @brief The magnitude of a finite, nonzero decoded double as kPieces limb values (each < 2^32) and the limb
     *  they start at: what add() adds (or subtracts, for a negative one). */
    NHVK_HD static int pieces(const detail::Decoded& d, std::int64_t (&out)[kPieces]) {
        // |x| = m·2^(p − 1074): m·2^(p mod 32) spans at most three 32-bit limbs from limb p/32
        const int r = d.p & 31;
        const std::uint64_t low = d.m << r; // low 64 bits of m·2^r
        out[0] = static_cast<std::int64_t>(low & 0xFFFFFFFFu);
        out[1] = static_cast<std::int64_t>(low >> 32);
        out[2] = static_cast<std::int64_t>(r == 0 ? 0u : (d.m >> (64 - r)));
        return d.p >> 5;
    }

#if defined(__SIZEOF_INT128__) && !defined(__CUDA_ARCH__)
    /** @brief Adds ±mag·2^(p − 1074) exactly (a binade's sum of significands, see host_row_reduce.hpp). Host only. */
    void add_scaled(detail::U128 mag, int p, bool negative) { detail::add_wide(acc_, mag, p, negative); }
#endif

    /** @brief Adds the exact state of another sum (limb-wise, exact). */
    NHVK_HD void merge(const ExactSum& other) { merge_state(other); }
};

/**
 * @brief Exact, order-independent sum of the exact squares x² of doubles (no rounding of x², no underflow, no
 *        overflow for any finite x); trivially copyable, host and device.
 *
 * x² = m²·2^(2p − 2148) is added as the 106-bit integer m² into 134 limbs with unit 2^-2148 (so magnitude() is
 * never negative). Deterministic like ExactSum. Non-finite x is rejected and flagged.
 */
class ExactSquareSum : public detail::ExactSumState<134, 2 * ExactSum::kScale> {
public:
    /** @brief Adds x² exactly; a non-finite x is rejected and sets nonfinite(). */
    NHVK_HD void add(double x) { add(detail::decode(x)); }

    /** @brief Adds the square of an already decoded double. */
    NHVK_HD void add(const detail::Decoded& d) {
        if (!adds(d)) {
            return;
        }
        std::int64_t p[kPieces];
        acc_.add_pieces(pieces(d, p), p, kPieces, false);
    }

    static constexpr int kPieces = 5; ///< limbs one square touches

    /** @brief x² of a finite, nonzero decoded x as kPieces limb values (each < 2^32) and the limb they start at. */
    NHVK_HD static int pieces(const detail::Decoded& d, std::int64_t (&out)[kPieces]) {
        std::uint64_t hi = 0u;
        std::uint64_t lo = 0u;
        detail::square_53(d.m, hi, lo); // m² < 2^106
        const int q = 2 * d.p;          // x² = m²·2^(q − 2148)
        const int r = q & 31;
        // (w2:w1:w0) = m²·2^r < 2^137
        const std::uint64_t w0 = lo << r;
        const std::uint64_t w1 = r == 0 ? hi : (hi << r) | (lo >> (64 - r));
        const std::uint64_t w2 = r == 0 ? 0u : hi >> (64 - r);
        out[0] = static_cast<std::int64_t>(w0 & 0xFFFFFFFFu);
        out[1] = static_cast<std::int64_t>(w0 >> 32);
        out[2] = static_cast<std::int64_t>(w1 & 0xFFFFFFFFu);
        out[3] = static_cast<std::int64_t>(w1 >> 32);
        out[4] = static_cast<std::int64_t>(w2);
        return q >> 5;
    }

#if defined(__SIZEOF_INT128__) && !defined(__CUDA_ARCH__)
    /** @brief Adds mag·2^(q − 2148) exactly (a binade's sum of squared significands, q = 2p). Host only. */
    void add_scaled(detail::U128 mag, int q) { detail::add_wide(acc_, mag, q, false); }
#endif

    /** @brief Adds the exact state of another sum. */
    NHVK_HD void merge(const ExactSquareSum& other) { merge_state(other); }
};

static_assert(std::is_trivially_copyable_v<ExactSum>, "ExactSum must be trivially copyable (device buffers)");
static_assert(std::is_trivially_copyable_v<ExactSquareSum>, "ExactSquareSum must be trivially copyable");

/** @brief Mean and sample standard deviation. */
struct MeanStd {
    double mean; ///< NaN when n == 0
    double std;  ///< sample (n−1) standard deviation; 0 when n == 1, NaN when n == 0
};

/**
 * @brief Mean and sample standard deviation of n values from the exact sums Σx and Σx² (deterministic: a function
 *        of the exact states only; the non-finite flags are ignored, n must count the accepted values).
 *
 * Accuracy: the mean is the correctly rounded Σx/n (for n < 2^32; above, fl(fl(Σx)/n)). The variance numerator
 * D = n·Σx² − (Σx)² = Σ_{i<j}(x_i − x_j)² is formed exactly in integer arithmetic (both terms are integers in units
 * of 2^-2148), so there is no cancellation whatever the spread: std = sqrt(D/(n(n−1))) with D rounded once, then
 * one division and one square root, i.e. within about 1.5 ulp (plus the rounding of n(n−1) beyond 2^53, and a
 * second rounding if std is subnormal). Equal values give std == 0 exactly.
 */
NHVK_HD inline MeanStd mean_std(const ExactSum& sum, const ExactSquareSum& sum_sq, std::uint64_t n) {
    using detail::big_msb;
    constexpr int kD1 = ExactSum::kDigits;
    constexpr int kD2 = ExactSquareSum::kDigits;
    static_assert(2 * ExactSum::kScale == ExactSquareSum::kScale, "(Σx)² and Σx² must share their unit");
    if (n == 0u) {
        return {detail::quiet_nan(), detail::quiet_nan()};
    }
    std::uint32_t s1[kD1];
    const int sign1 = sum.magnitude(s1);

    // ---- mean = round(Σx / n): long division of 4·|Σx| by n, remainder as sticky bit
    double mean = 0.0;
    if (n < (std::uint64_t{1} << 32)) {
        std::uint32_t q[kD1 + 1];
        std::uint64_t rem = 0u;
        for (int i = kD1; i >= 0; --i) {
            // digit i of 4·|Σx|
            const std::uint64_t lo = i < kD1 ? (static_cast<std::uint64_t>(s1[i]) << 2) & 0xFFFFFFFFu : 0u;
            const std::uint64_t hi = i > 0 ? static_cast<std::uint64_t>(s1[i - 1]) >> 30 : 0u;
            const std::uint64_t cur = (rem << 32) | lo | hi;
            q[i] = static_cast<std::uint32_t>(cur / n);
            rem = cur % n;
        }
        mean = detail::big_to_double(q, kD1 + 1, ExactSum::kScale - 2, rem != 0u, sign1 < 0);
    } else {
        mean = sum.value() / static_cast<double>(n);
    }
    if (n == 1u) {
        return {mean, 0.0};
    }

    // ---- D = n·Σx² − (Σx)², exactly, in units of 2^-2148
    constexpr int kW = kD2 + 3;
    static_assert(kW >= 2 * kD1, "room for (Σx)²");
    std::uint32_t sq[kW] = {};  // (Σx)²
    std::uint32_t nsq[kW] = {}; // n·Σx²
    const int msb1 = big_msb(s1, kD1);
    const int top1 = msb1 < 0 ? -1 : msb1 >> 5; // highest non-zero digit of |Σx|
    for (int i = 0; i <= top1; ++i) {
        std::uint64_t carry = 0u;
        for (int j = 0; j <= top1; ++j) {
            const std::uint64_t t = static_cast<std::uint64_t>(sq[i + j]) +
                                    static_cast<std::uint64_t>(s1[i]) * static_cast<std::uint64_t>(s1[j]) + carry;
            sq[i + j] = static_cast<std::uint32_t>(t);
            carry = t >> 32;
        }
        for (int k = i + top1 + 1; carry != 0u && k < kW; ++k) {
            const std::uint64_t t = static_cast<std::uint64_t>(sq[k]) + carry;
            sq[k] = static_cast<std::uint32_t>(t);
            carry = t >> 32;
        }
    }
    std::uint32_t s2[kD2];
    if (sum_sq.magnitude(s2) > 0) {
        const std::uint64_t factors[2] = {n & 0xFFFFFFFFu, n >> 32};
        for (int h = 0; h < 2; ++h) {
            std::uint64_t carry = 0u;
            for (int i = 0; i < kD2; ++i) {
                const std::uint64_t t =
                    static_cast<std::uint64_t>(nsq[i + h]) + static_cast<std::uint64_t>(s2[i]) * factors[h] + carry;
                nsq[i + h] = static_cast<std::uint32_t>(t);
                carry = t >> 32;
            }
            for (int k = kD2 + h; carry != 0u && k < kW; ++k) {
                const std::uint64_t t = static_cast<std::uint64_t>(nsq[k]) + carry;
                nsq[k] = static_cast<std::uint32_t>(t);
                carry = t >> 32;
            }
        }
    }
    // D = nsq − sq >= 0 by the identity above; guard anyway
    for (int i = kW - 1; i >= 0; --i) {
        if (nsq[i] != sq[i]) {
            if (nsq[i] < sq[i]) {
                return {mean, 0.0};
            }
            break;
        }
    }
    std::uint64_t borrow = 0u;
    for (int i = 0; i < kW; ++i) {
        const std::uint64_t t = static_cast<std::uint64_t>(nsq[i]) - static_cast<std::uint64_t>(sq[i]) - borrow;
        nsq[i] = static_cast<std::uint32_t>(t);
        borrow = (t >> 63) & 1u;
    }
    const int msb = big_msb(nsq, kW);
    if (msb < 0) {
        return {mean, 0.0};
    }
    // D ≈ mant·2^(lsb − 2148), mant ∈ [2^52, 2^53); std = sqrt(mant/(n(n−1)))·2^(e/2) with e even
    const detail::Rounded53 r = detail::big_round(nsq, kW, msb, msb - 52, false);
    int e = r.lsb + ExactSquareSum::kScale;
    double mant = static_cast<double>(r.mant);
    if ((e & 1) != 0) {
        mant *= 2.0;
        e -= 1;
    }
    const double nn1 = static_cast<double>(n) * static_cast<double>(n - 1u);
    return {mean, detail::ldexp_exact(detail::sqrt_rn(mant / nn1), e / 2)};
}

} // namespace nhvk::stats
