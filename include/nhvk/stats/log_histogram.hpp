// SPDX-License-Identifier: MIT
/** @file
 *  @brief Mergeable log-binned histogram: the bin specification, a host/device bin-index function, and quantiles
 *         interpolated geometrically inside a bin and clamped to the exactly tracked min/max.
 *
 *  Bin layout (n = number of log bins, e_0 = lo < e_1 < … < e_n = hi the bin edges):
 *    0: negative (x < 0)  1: zero (x == 0)  2: underflow (0 < x < lo)  3 + k: [e_k, e_{k+1})  3 + n: overflow (x ≥ hi)
 *  The edges are a table computed once on the host; the bin index is a lookup on the top bits of x followed by one
 *  comparison with the edge table, so it is the same on host and device (no log10 involved).
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/stats/exact_sum.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace nhvk::stats {

/** @brief Fixed bin indices of the log histogram; the log bins start at kFirstLogBin. */
enum HistogramBin : std::uint32_t { kNegativeBin = 0, kZeroBin = 1, kUnderflowBin = 2, kFirstLogBin = 3 };

struct LogBinTable;

/** @brief Parameters of a log-binned histogram: bins_per_decade bins per decade over [lo, hi). */
struct LogHistogramSpec {
    double lo = 1e-30;
    double hi = 1e10;
    int bins_per_decade = 50;

    /** @brief Throws std::invalid_argument unless DBL_MIN <= lo < hi < inf, bins_per_decade >= 1, and hi/lo is a
     *  whole number of bins (within 1e-6 bin). */
    void validate() const {
        if (!(lo >= std::numeric_limits<double>::min()) || !(hi > lo) || !std::isfinite(hi) || bins_per_decade < 1) {
            throw std::invalid_argument(
                "LogHistogramSpec: need DBL_MIN <= lo < hi < inf (lo not subnormal) and bins_per_decade >= 1");
        }
        const double n = bins_per_decade * (std::log10(hi) - std::log10(lo));
        if (std::fabs(n - std::round(n)) > 1e-6 || std::round(n) < 1.0 || n > 1e7) {
            throw std::invalid_argument("LogHistogramSpec: log10(hi/lo)·bins_per_decade must be a whole number, got " +
                                        std::to_string(n));
        }
    }

    /** @brief Number of log bins, n = bins_per_decade·log10(hi/lo). */
    std::uint32_t n_log_bins() const {
        validate();
        return static_cast<std::uint32_t>(std::llround(bins_per_decade * (std::log10(hi) - std::log10(lo))));
    }

    /** @brief Total number of bins including negative, zero, underflow and overflow. */
    std::size_t n_bins() const { return std::size_t{n_log_bins()} + kFirstLogBin + 1; }

    /** @brief Relative width of a log bin, 10^(1/bins_per_decade) − 1: a histogram quantile of positive values in
     *  [lo, hi) is within this relative distance of the exact one. */
    double relative_resolution() const { return std::pow(10.0, 1.0 / bins_per_decade) - 1.0; }

    /** @brief The n+1 bin edges e_k = lo·10^(k/bins_per_decade) (rounded once to double; e_0 = lo, e_n = hi
     *  exactly). Deterministic for a given C library; merge checks that the tables agree. */
    std::vector<double> edges() const {
        const std::uint32_t n = n_log_bins();
        std::vector<double> e(std::size_t{n} + 1);
        for (std::uint32_t k = 0; k <= n; ++k) {
            const long double x =
                static_cast<long double>(lo) *
                std::pow(10.0L, static_cast<long double>(k) / static_cast<long double>(bins_per_decade));
            e[k] = static_cast<double>(x);
        }
        e.front() = lo;
        e.back() = hi;
        for (std::uint32_t k = 0; k < n; ++k) {
            if (!(e[k] < e[k + 1])) {
                throw std::invalid_argument("LogHistogramSpec: bins too narrow for double precision");
            }
        }
        return e;
    }

    /** @brief The edges plus the bucket → start-bin lookup table used by LogBinner (see LogBinTable). */
    LogBinTable table() const;

    friend bool operator==(const LogHistogramSpec& a, const LogHistogramSpec& b) {
        return a.lo == b.lo && a.hi == b.hi && a.bins_per_decade == b.bins_per_decade;
    }
    friend bool operator!=(const LogHistogramSpec& a, const LogHistogramSpec& b) { return !(a == b); }
};

/**
 * @brief Host-side owner of the bin edges and of a lookup table from the top bits of a positive double to the first
 *        candidate log bin.
 *
 * The doubles in [lo, hi) are cut into buckets by their exponent and top `52 − shift` significand bits (bucket =
 * (bits >> shift) − base). shift is chosen so that every bucket holds at most one edge in its interior (verified when
 * the table is built), so x's bin is start[bucket] or the next one: one comparison with the edge table decides.
 */
struct LogBinTable {
    LogHistogramSpec spec;
    std::vector<double> edges;        ///< n_log + 1 increasing edges, e_0 = lo, e_n = hi
    std::vector<std::uint32_t> start; ///< log bin containing the lowest double of each bucket
    std::uint64_t base = 0;           ///< bucket of lo
    int shift = 52;

    friend bool operator==(const LogBinTable& a, const LogBinTable& b) {
        return a.spec == b.spec && a.edges == b.edges && a.start == b.start && a.base == b.base && a.shift == b.shift;
    }
    friend bool operator!=(const LogBinTable& a, const LogBinTable& b) { return !(a == b); }
};

inline LogBinTable LogHistogramSpec::table() const {
    LogBinTable t;
    t.spec = *this;
    t.edges = edges();
    const auto& e = t.edges;
    const std::size_t n = e.size() - 1;
    // sub-binade buckets of relative width <= 2^-(52 − shift), at most half the bin ratio − 1
    int sub_bits = std::max(0, static_cast<int>(std::ceil(std::log2(1.0 / relative_resolution()))) + 1);
    for (;; ++sub_bits) {
        if (sub_bits > 40) {
            throw std::invalid_argument("LogHistogramSpec: bins too fine for the lookup table");
        }
        t.shift = 52 - sub_bits;
        t.base = detail::double_bits(e.front()) >> t.shift;
        const std::uint64_t n_buckets = (detail::double_bits(e.back()) >> t.shift) - t.base + 1;
        if (n_buckets > (std::uint64_t{1} << 26)) {
            throw std::invalid_argument("LogHistogramSpec: range too wide for the lookup table");
        }
        t.start.assign(static_cast<std::size_t>(n_buckets), 0u);
        bool ok = true;
        std::size_t k = 0; // last edge <= bucket start (bucket starts increase, so k only moves up)
        for (std::uint64_t i = 0; i < n_buckets && ok; ++i) {
            const double v = detail::bits_double((t.base + i) << t.shift);
            while (k + 1 < n && e[k + 1] <= v) {
                ++k;
            }
            t.start[i] = static_cast<std::uint32_t>(k);
            // at most one edge strictly inside this bucket: e[k+2] must not be below the next bucket's start
            const double next = detail::bits_double((t.base + i + 1) << t.shift);
            ok = k + 2 > n || e[k + 2] >= next;
        }
        if (ok) {
            return t;
        }
    }
}

/**
 * @brief Trivially copyable bin-index view (pointers into a LogBinTable + constants) for host or device code. The
 *        tables must live in memory the calling code can read (device memory for a CUDA kernel).
 */
struct LogBinner {
    const double* edges = nullptr;        ///< n_log + 1 increasing edges
    const std::uint32_t* start = nullptr; ///< LogBinTable::start
    std::uint64_t base = 0;
    int shift = 52;
    std::uint32_t n_log = 0; ///< number of log bins

    /** @brief A view of a host table (or, with edges/start replaced by device copies, of its device mirror). */
    static LogBinner make(const LogBinTable& t) {
        LogBinner b;
        b.edges = t.edges.data();
        b.start = t.start.data();
        b.base = t.base;
        b.shift = t.shift;
        b.n_log = static_cast<std::uint32_t>(t.edges.size() - 1);
        return b;
    }

    /** @brief Total number of bins (n_log + 4). */
    NHVK_HD std::uint32_t n_bins() const { return n_log + kFirstLogBin + 1; }

    /** @brief Index of the overflow bin. */
    NHVK_HD std::uint32_t overflow_bin() const { return n_log + kFirstLogBin; }

    /** @brief Bin of a finite x (deterministic: decided by comparisons with the edge table only). */
    NHVK_HD std::uint32_t bin(double x) const {
        if (x < 0.0) {
            return kNegativeBin;
        }
        if (x == 0.0) {
            return kZeroBin;
        }
        if (x < edges[0]) {
            return kUnderflowBin;
        }
        if (x >= edges[n_log]) {
            return overflow_bin();
        }
        // x ∈ [lo, hi): its bucket holds at most one interior edge, so the bin is start or start + 1
        std::uint32_t k = start[(detail::double_bits(x) >> shift) - base];
        k += static_cast<std::uint32_t>(x >= edges[k + 1]); // edges[n_log] > x keeps k <= n_log − 1
        return kFirstLogBin + k;
    }
};

namespace detail {

/** @brief Estimate of the value of order statistic k (0-based) of a histogram with total count `total`. */
inline double histogram_order_statistic(const std::uint64_t* counts, const LogBinner& b, std::uint64_t total,
                                        double min, double max, std::uint64_t k) {
    if (k == 0u) {
        return min;
    }
    if (k + 1u >= total) {
        return max;
    }
    std::uint64_t before = 0u;
    std::uint32_t bin = 0u;
    for (; bin < b.n_bins(); ++bin) {
        if (k < before + counts[bin]) {
            break;
        }
        before += counts[bin];
    }
    // position inside the bin: the j-th of c values sits at fraction (j + 1/2)/c
    const double f = (static_cast<double>(k - before) + 0.5) / static_cast<double>(counts[bin]);
    double lower = 0.0;
    double upper = 0.0;
    double est = 0.0;
    if (bin == kNegativeBin) {
        lower = min;
        upper = max < 0.0 ? max : 0.0;
        est = lower + f * (upper - lower);
    } else if (bin == kZeroBin) {
        est = 0.0;
    } else {
        // unbounded end bins are given the width of their neighbour log bin
        if (bin == kUnderflowBin) {
            lower = b.edges[0] * (b.edges[0] / b.edges[1]);
            upper = b.edges[0];
        } else if (bin == b.overflow_bin()) {
            lower = b.edges[b.n_log];
            upper = b.edges[b.n_log] * (b.edges[b.n_log] / b.edges[b.n_log - 1]);
        } else {
            lower = b.edges[bin - kFirstLogBin];
            upper = b.edges[bin - kFirstLogBin + 1];
        }
        est = lower * std::pow(upper / lower, f); // geometric interpolation: lower·(upper/lower)^f
    }
    return est < min ? min : (est > max ? max : est);
}

} // namespace detail

/**
 * @brief Quantile p ∈ [0, 1] of a histogram (counts has binner.n_bins() entries) with exactly known min and max.
 *
 * Follows the type-7 definition on estimated order statistics: h = (N−1)p, q = x̂[⌊h⌋] + (h−⌊h⌋)(x̂[⌊h⌋+1] − x̂[⌊h⌋]),
 * where x̂[0] = min, x̂[N−1] = max and any other x̂[k] is interpolated geometrically inside its bin and clamped to
 * [min, max]. Each x̂[k] lies in the bin of the true x[k], so for values in [lo, hi) (or zero) the result is within a
 * factor 1 + relative_resolution() (up to the rounding of the edges) of the exact type-7 quantile. NaN when the
 * histogram is empty. Deterministic (host only: uses std::pow).
 */
inline double histogram_quantile(const std::uint64_t* counts, const LogBinner& binner, double min, double max,
                                 double p) {
    std::uint64_t total = 0u;
    for (std::uint32_t i = 0; i < binner.n_bins(); ++i) {
        total += counts[i];
    }
    if (total == 0u) {
        return detail::quiet_nan();
    }
    const double h = static_cast<double>(total - 1u) * p;
    const double fl = std::floor(h);
    const auto k = static_cast<std::uint64_t>(fl);
    const double a = detail::histogram_order_statistic(counts, binner, total, min, max, k);
    if (k + 1u >= total) {
        return a;
    }
    const double b = detail::histogram_order_statistic(counts, binner, total, min, max, k + 1u);
    const double q = a + (h - fl) * (b - a);
    return q < a ? a : (q > b ? b : q);
}

/** @brief A single log histogram with exact min/max (host side; mergeable). Non-finite values are counted apart. */
class LogHistogram {
public:
    explicit LogHistogram(LogHistogramSpec spec = {}) : table_(spec.table()), counts_(spec.n_bins(), 0u) {}

    /** @brief Adds a value (a non-finite one only increments nonfinite()). */
    void add(double x) {
        if (!detail::is_finite(x)) {
            ++nonfinite_;
            return;
        }
        x = x == 0.0 ? 0.0 : x; // −0 → +0 so that min/max do not depend on order
        min_ = total_ == 0u || x < min_ ? x : min_;
        max_ = total_ == 0u || x > max_ ? x : max_;
        ++counts_[binner().bin(x)];
        ++total_;
    }

    /** @brief Adds the counts of another histogram with the same spec (exact). */
    void merge(const LogHistogram& other) {
        if (other.table_ != table_) {
            throw std::invalid_argument("LogHistogram::merge: different bin specifications");
        }
        if (other.total_ != 0u) {
            min_ = total_ == 0u || other.min_ < min_ ? other.min_ : min_;
            max_ = total_ == 0u || other.max_ > max_ ? other.max_ : max_;
        }
        for (std::size_t i = 0; i < counts_.size(); ++i) {
            counts_[i] += other.counts_[i];
        }
        total_ += other.total_;
        nonfinite_ += other.nonfinite_;
    }

    /** @brief Quantile p ∈ [0, 1], see histogram_quantile(). */
    double quantile(double p) const { return histogram_quantile(counts_.data(), binner(), min_, max_, p); }

    /** @brief Number of finite values added. */
    std::uint64_t total() const { return total_; }
    /** @brief Number of non-finite values rejected. */
    std::uint64_t nonfinite() const { return nonfinite_; }
    /** @brief Smallest finite value (NaN when empty). */
    double min() const { return total_ == 0u ? detail::quiet_nan() : min_; }
    /** @brief Largest finite value (NaN when empty). */
    double max() const { return total_ == 0u ? detail::quiet_nan() : max_; }
    /** @brief Counts per bin (see HistogramBin for the layout). */
    const std::vector<std::uint64_t>& counts() const { return counts_; }
    /** @brief Bin edges e_0..e_n. */
    const std::vector<double>& edges() const { return table_.edges; }
    /** @brief The specification. */
    const LogHistogramSpec& spec() const { return table_.spec; }
    /** @brief Relative bin width 10^(1/bins_per_decade) − 1. */
    double relative_resolution() const { return table_.spec.relative_resolution(); }
    /** @brief A bin-index view into this histogram's tables (valid while this object lives). */
    LogBinner binner() const { return LogBinner::make(table_); }

private:
    LogBinTable table_;
    std::vector<std::uint64_t> counts_;
    std::uint64_t total_ = 0u;
    std::uint64_t nonfinite_ = 0u;
    double min_ = 0.0;
    double max_ = 0.0;
};

} // namespace nhvk::stats
