// SPDX-License-Identifier: MIT
/** @file
 *  @brief Signed, mergeable relative-error histogram (in the manner of DDSketch): a positive and a negative store of
 *         log-spaced bins over every normal double magnitude, an exact zero count, a bounded window of bins per
 *         store, a host/device bin-index function, and quantiles interpolated inside a bin and clamped to the exactly
 *         tracked min/max.
 *
 *  Global bins (n = LogHistogramSpec::n_log_bins(), the same for both stores) cut the magnitudes [DBL_MIN, DBL_MAX]
 *  at the powers 10^(j/bins_per_decade): bin 0 is [DBL_MIN, e_1), bin g is [e_g, e_{g+1}), the last bin [e_{n−1},
 *  DBL_MAX] (e_n = +inf). Nonzero subnormal magnitudes count in bin 0. The bin index is a lookup on the top bits of
 *  |x| followed by one comparison with the edge table, so it is the same on host and device (no log10 involved).
 *
 *  A row (one series' state) is `row_words()` uint64 words, all zero when empty:
 *    [kZeroWord] exact zeros (−0 counts as +0)
 *    store s (0: x > 0, 1: x < 0, binned by |x|): [kStoreWords + 2s] top + 1 (0: the store is empty),
 *      [kStoreWords + 2s + 1] below, and K = window counts at kFirstCount + s·K, bin g at position g mod K.
 *  A store keeps the K bins [top − K + 1, top] below its largest bin `top`; a value whose bin is lower counts in
 *  `below`. When a larger value arrives the window moves up and the bins that leave it are added to `below`, so each
 *  value ends in its own bin when that is at least top_final − K + 1 and in `below` otherwise: the state is a
 *  function of the multiset of values, and merges (chunks, tiles, threads, ranks, shards) are exact in any order.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/stats/exact_sum.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace nhvk::stats {

/** @brief Fixed words of a histogram row; the two stores' counts start at kFirstCount. */
enum HistogramWord : std::uint32_t { kZeroWord = 0, kStoreWords = 1, kFirstCount = 5 };

struct LogBinTable;

/** @brief Parameters of the signed log histogram: bins_per_decade bins per decade of magnitude, `window` bins kept
 *         per store. */
struct LogHistogramSpec {
    int bins_per_decade = 50;
    std::uint32_t window = 2048; ///< K, a power of two: 2048 bins of 50 per decade span 40.96 decades

    /** @brief Throws std::invalid_argument unless 1 <= bins_per_decade <= 10000 and window is a power of two in
     *  [2, 2^20]. */
    void validate() const {
        if (bins_per_decade < 1 || bins_per_decade > 10000) {
            throw std::invalid_argument("LogHistogramSpec: bins_per_decade must be in [1, 10000], got " +
                                        std::to_string(bins_per_decade));
        }
        if (window < 2u || window > (1u << 20) || (window & (window - 1u)) != 0u) {
            throw std::invalid_argument("LogHistogramSpec: window must be a power of two in [2, 2^20], got " +
                                        std::to_string(window));
        }
    }

    /** @brief The lowest and highest j with DBL_MIN < 10^(j/bins_per_decade) <= DBL_MAX (after rounding). */
    void edge_exponents(long long& j0, long long& j1) const {
        validate();
        const long double b = bins_per_decade;
        j0 = static_cast<long long>(std::ceil(b * std::log10(static_cast<long double>(DBL_MIN))));
        j1 = static_cast<long long>(std::floor(b * std::log10(static_cast<long double>(DBL_MAX))));
        while (!(edge_at(j0) > DBL_MIN)) ++j0;
        while (!(edge_at(j1) <= DBL_MAX)) --j1;
    }

    /** @brief 10^(j/bins_per_decade) rounded once to double. Deterministic for a given C library; merge checks that
     *  the tables agree. */
    double edge_at(long long j) const {
        return static_cast<double>(std::pow(10.0L, static_cast<long double>(j) / bins_per_decade));
    }

    /** @brief Number of global bins n over [DBL_MIN, DBL_MAX] (30796 for 50 per decade). */
    std::uint32_t n_log_bins() const {
        long long j0 = 0, j1 = 0;
        edge_exponents(j0, j1);
        return static_cast<std::uint32_t>(j1 - j0 + 2);
    }

    /** @brief uint64 words of one series' row: the zero count, two (top, below) pairs and 2·window counts. */
    std::size_t row_words() const {
        validate();
        return kFirstCount + 2u * std::size_t{window};
    }

    /** @brief Relative width of a log bin, 10^(1/bins_per_decade) − 1: a histogram quantile of values in the stores'
     *  windows is within this relative distance of the exact one. */
    double relative_resolution() const { return std::pow(10.0, 1.0 / bins_per_decade) - 1.0; }

    /** @brief Decades of magnitude a store resolves below its largest bin, window / bins_per_decade. */
    double window_decades() const { return static_cast<double>(window) / bins_per_decade; }

    /** @brief The n+1 bin edges: e_0 = DBL_MIN, e_k = 10^((j0 + k − 1)/bins_per_decade), e_n = +inf. */
    std::vector<double> edges() const {
        long long j0 = 0, j1 = 0;
        edge_exponents(j0, j1);
        const auto n = static_cast<std::size_t>(j1 - j0 + 2);
        std::vector<double> e(n + 1);
        e.front() = DBL_MIN;
        for (std::size_t k = 1; k < n; ++k) {
            e[k] = edge_at(j0 + static_cast<long long>(k) - 1);
        }
        e.back() = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < n; ++k) {
            if (!(e[k] < e[k + 1])) {
                throw std::invalid_argument("LogHistogramSpec: bins too narrow for double precision");
            }
        }
        return e;
    }

    /** @brief The edges plus the bucket → start-bin lookup table used by LogBinner (see LogBinTable). */
    LogBinTable table() const;

    friend bool operator==(const LogHistogramSpec& a, const LogHistogramSpec& b) {
        return a.bins_per_decade == b.bins_per_decade && a.window == b.window;
    }
    friend bool operator!=(const LogHistogramSpec& a, const LogHistogramSpec& b) { return !(a == b); }
};

/**
 * @brief Host-side owner of the bin edges and of a lookup table from the top bits of a normal positive double to the
 *        first candidate bin.
 *
 * The doubles in [DBL_MIN, DBL_MAX] are cut into buckets by their exponent and top `52 − shift` significand bits
 * (bucket = (bits >> shift) − base). shift is chosen so that every bucket holds at most one edge in its interior
 * (verified when the table is built), so x's bin is start[bucket] or the next one: one comparison with the edge
 * table decides. For 50 bins per decade that is 64 buckets per binade, 2046 binades: 512 KiB of uint32.
 */
struct LogBinTable {
    LogHistogramSpec spec;
    std::vector<double> edges;        ///< n + 1 increasing edges, e_0 = DBL_MIN, e_n = +inf
    std::vector<std::uint32_t> start; ///< bin containing the lowest double of each bucket
    std::uint64_t base = 0;           ///< bucket of DBL_MIN
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
        t.base = detail::double_bits(DBL_MIN) >> t.shift;
        const std::uint64_t n_buckets = (detail::double_bits(DBL_MAX) >> t.shift) - t.base + 1;
        if (n_buckets > (std::uint64_t{1} << 26)) {
            throw std::invalid_argument("LogHistogramSpec: bins too fine for the lookup table");
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
 * @brief Trivially copyable view (pointers into a LogBinTable + constants) that bins values and updates and merges
 *        histogram rows, for host or device code. The tables must live in memory the calling code can read (device
 *        memory for a CUDA kernel). Every operation is deterministic and only adds integers.
 */
struct LogBinner {
    const double* edges = nullptr;        ///< n + 1 increasing edges
    const std::uint32_t* start = nullptr; ///< LogBinTable::start
    std::uint64_t base = 0;
    int shift = 52;
    std::uint32_t n_log = 0;  ///< number of global bins n
    std::uint32_t window = 0; ///< K, bins kept per store (a power of two)

    /** @brief A view of a host table (or, with edges/start replaced by device copies, of its device mirror). */
    static LogBinner make(const LogBinTable& t) {
        LogBinner b;
        b.edges = t.edges.data();
        b.start = t.start.data();
        b.base = t.base;
        b.shift = t.shift;
        b.n_log = static_cast<std::uint32_t>(t.edges.size() - 1);
        b.window = t.spec.window;
        return b;
    }

    /** @brief uint64 words of one row. */
    NHVK_HD std::uint32_t row_words() const { return kFirstCount + 2u * window; }

    /** @brief Global bin of a finite magnitude m > 0 (deterministic: decided by comparisons with the edge table only;
     *  a subnormal m is in bin 0). */
    NHVK_HD std::uint32_t bin(double m) const {
        if (m < edges[0]) {
            return 0u;
        }
        // m ∈ [DBL_MIN, DBL_MAX]: its bucket holds at most one interior edge, so the bin is start or start + 1
        std::uint32_t k = start[(detail::double_bits(m) >> shift) - base];
        k += static_cast<std::uint32_t>(m >= edges[k + 1]); // edges[n] = +inf keeps k <= n − 1
        return k;
    }

    /** @brief Adds a finite x to `row` (x == 0, including −0, to the zero count). */
    NHVK_HD void add(std::uint64_t* row, double x) const {
        if (x == 0.0) {
            ++row[kZeroWord];
            return;
        }
        const std::uint32_t s = x < 0.0 ? 1u : 0u;
        std::uint64_t* st = row + kStoreWords + 2u * s; // st[0] = top + 1, st[1] = below
        std::uint64_t* c = row + kFirstCount + s * window;
        const std::uint64_t g1 = std::uint64_t{bin(s != 0u ? -x : x)} + 1u;
        if (g1 > st[0]) {
            raise(st, c, g1);
        } else if (g1 + window <= st[0]) { // g < top − K + 1
            ++st[1];
            return;
        }
        ++c[(g1 - 1u) & (window - 1u)];
    }

    /** @brief Adds the state of row `other` to `row` (exact; the result does not depend on the order of merges). */
    NHVK_HD void merge(std::uint64_t* row, const std::uint64_t* other) const {
        row[kZeroWord] += other[kZeroWord];
        for (std::uint32_t s = 0; s < 2u; ++s) {
            std::uint64_t* st = row + kStoreWords + 2u * s;
            const std::uint64_t* ost = other + kStoreWords + 2u * s;
            std::uint64_t* c = row + kFirstCount + s * window;
            const std::uint64_t* oc = other + kFirstCount + s * window;
            st[1] += ost[1];
            if (ost[0] == 0u) {
                continue;
            }
            if (ost[0] > st[0]) {
                raise(st, c, ost[0]);
            }
            // other's bins g ∈ [max(otop − K + 1, 0), otop]; those below this window's lowest bin go to below
            const long long lo = static_cast<long long>(st[0]) - window;
            const long long otop = static_cast<long long>(ost[0]) - 1;
            for (long long g = otop - window + 1 > 0 ? otop - window + 1 : 0; g <= otop; ++g) {
                const std::uint64_t v = oc[g & (window - 1u)];
                if (g >= lo) {
                    c[g & (window - 1u)] += v;
                } else {
                    st[1] += v;
                }
            }
        }
    }

    /** @brief Finite values of `row` in the stores' `below` counts (no relative guarantee for their quantiles). */
    NHVK_HD static std::uint64_t below(const std::uint64_t* row) { return row[kStoreWords + 1] + row[kStoreWords + 3]; }

private:
    /** @brief Moves a store's window up to top + 1 = new_top1 (> st[0]): bins leaving it are added to below. */
    NHVK_HD void raise(std::uint64_t* st, std::uint64_t* c, std::uint64_t new_top1) const {
        if (st[0] != 0u) {
            // leaving: g ∈ [old top − K + 1, new top − K] ∩ [0, old top]
            const long long old_top = static_cast<long long>(st[0]) - 1;
            const long long first = old_top - window + 1 > 0 ? old_top - window + 1 : 0;
            const long long new_lo = static_cast<long long>(new_top1) - window;
            const long long last = new_lo - 1 < old_top ? new_lo - 1 : old_top;
            for (long long g = first; g <= last; ++g) {
                std::uint64_t& v = c[g & (window - 1u)];
                st[1] += v;
                v = 0u;
            }
        }
        st[0] = new_top1;
    }
};

namespace detail {

/** @brief One run of equal-width pieces in the ascending walk over a row: `count` values spread over a bin. */
struct HistogramPiece {
    std::uint64_t count;
    double lower, upper; ///< the piece's value interval (lower < upper, or both 0 for the zero count)
    bool geometric;      ///< interpolate geometrically (a log bin, `below` down to min) or linearly (zero, `below`)
};

/**
 * @brief Calls f(piece) for the pieces of a row in ascending order of value, stopping when f returns true: the
 *        negative store from its largest magnitude down, its `below` (values in (−e_lo, 0)), the zeros, the positive
 *        `below` ((0, e_lo)), the positive store upward. The unbounded top bin is given its neighbour's ratio. A
 *        `below` piece spans from its window's lowest edge to the exact min (max) when that has the store's sign,
 *        geometrically, else linearly to 0: no resolution is promised there, only a plausible value.
 */
template <class F> void walk_histogram(const std::uint64_t* row, const LogBinner& b, double min, double max, F&& f) {
    const std::uint32_t K = b.window;
    const auto bin_edges = [&](long long g, double& lo, double& hi) {
        lo = b.edges[g];
        hi = g + 1 < static_cast<long long>(b.n_log) ? b.edges[g + 1] : lo * (lo / b.edges[g - 1]);
    };
    const auto lowest = [&](std::uint32_t s) {
        const long long top = static_cast<long long>(row[kStoreWords + 2u * s]) - 1;
        return top - K + 1 > 0 ? top - K + 1 : 0;
    };
    double lo = 0.0, hi = 0.0;
    // negative store: magnitude bins from the top down
    const long long neg_top = static_cast<long long>(row[kStoreWords + 2u]) - 1;
    const std::uint64_t* nc = row + kFirstCount + K;
    for (long long g = neg_top, g_lo = lowest(1u); g >= g_lo; --g) {
        if (nc[g & (K - 1u)] == 0u) continue;
        bin_edges(g, lo, hi);
        if (f(HistogramPiece{nc[g & (K - 1u)], -hi, -lo, true})) return;
    }
    if (row[kStoreWords + 3u] != 0u &&
        f(HistogramPiece{row[kStoreWords + 3u], -b.edges[lowest(1u)], max < 0.0 ? max : 0.0, max < 0.0}))
        return;
    if (row[kZeroWord] != 0u && f(HistogramPiece{row[kZeroWord], 0.0, 0.0, false})) return;
    if (row[kStoreWords + 1u] != 0u &&
        f(HistogramPiece{row[kStoreWords + 1u], min > 0.0 ? min : 0.0, b.edges[lowest(0u)], min > 0.0}))
        return;
    const long long pos_top = static_cast<long long>(row[kStoreWords]) - 1;
    const std::uint64_t* pc = row + kFirstCount;
    for (long long g = lowest(0u); g <= pos_top; ++g) {
        if (pc[g & (K - 1u)] == 0u) continue;
        bin_edges(g, lo, hi);
        if (f(HistogramPiece{pc[g & (K - 1u)], lo, hi, true})) return;
    }
}

/** @brief Total finite values of a row. */
inline std::uint64_t histogram_total(const std::uint64_t* row, const LogBinner& b) {
    std::uint64_t n = 0u;
    walk_histogram(row, b, 0.0, 0.0, [&](const HistogramPiece& p) {
        n += p.count;
        return false;
    });
    return n;
}

/**
 * @brief Estimates of the order statistics k[0] < k[1] < … (0-based, n of them) of a row with `total` values into
 *        out[]: the j-th of a piece's c values sits at fraction (j + 1/2)/c of it, geometrically inside a log bin (for
 *        a negative bin, geometrically in magnitude), in `below` as walk_histogram() says; clamped to [min, max]; k ==
 * 0 is min and k == total − 1 is max. One walk over the row.
 */
inline void histogram_order_statistics(const std::uint64_t* row, const LogBinner& b, std::uint64_t total, double min,
                                       double max, const std::uint64_t* k, std::size_t n, double* out) {
    std::size_t i = 0;
    for (; i < n && k[i] == 0u; ++i) out[i] = min;
    std::uint64_t before = 0u;
    walk_histogram(row, b, min, max, [&](const HistogramPiece& p) {
        for (; i < n && k[i] < before + p.count; ++i) {
            double est = 0.0;
            if (k[i] + 1u >= total) {
                est = max;
            } else {
                const double f = (static_cast<double>(k[i] - before) + 0.5) / static_cast<double>(p.count);
                if (!p.geometric) {
                    est = p.lower + f * (p.upper - p.lower);
                } else if (p.lower > 0.0) {
                    est = p.lower * std::pow(p.upper / p.lower, f); // lower·(upper/lower)^f
                } else {
                    est = p.upper * std::pow(p.lower / p.upper, 1.0 - f); // −|lower|·(|upper|/|lower|)^(1−f)
                }
            }
            out[i] = est < min ? min : (est > max ? max : est);
        }
        before += p.count;
        return i == n;
    });
    for (; i < n; ++i) out[i] = max;
}

} // namespace detail

/**
 * @brief Quantiles p[0], p[1], … ∈ [0, 1] (n of them) of a histogram row with exactly known min and max, into q[].
 *
 * Follows the type-7 definition on estimated order statistics: h = (N−1)p, q = x̂[⌊h⌋] + (h−⌊h⌋)(x̂[⌊h⌋+1] − x̂[⌊h⌋]),
 * where x̂[0] = min, x̂[N−1] = max and any other x̂[k] is interpolated inside its bin and clamped to [min, max]. Each
 * x̂[k] lies in the bin of the true x[k], so when x[⌊h⌋] and x[⌊h⌋+1] are in the stores' windows (or zero),
 * |q̂ − q| <= r·((1−f)|x[⌊h⌋]| + f|x[⌊h⌋+1]|) with r = relative_resolution() (up to the rounding of the edges), which
 * is r·|q| when the two have the same sign. NaN when the row is empty. Deterministic (host only: uses std::pow).
 */
inline void histogram_quantiles(const std::uint64_t* row, const LogBinner& binner, double min, double max,
                                const double* p, std::size_t n, double* q) {
    const std::uint64_t total = detail::histogram_total(row, binner);
    if (total == 0u) {
        for (std::size_t i = 0; i < n; ++i) q[i] = detail::quiet_nan();
        return;
    }
    std::vector<std::uint64_t> k(2 * n);
    std::vector<double> h(n);
    for (std::size_t i = 0; i < n; ++i) {
        h[i] = static_cast<double>(total - 1u) * p[i];
        k[2 * i] = static_cast<std::uint64_t>(std::floor(h[i]));
        k[2 * i + 1] = std::min(k[2 * i] + 1u, total - 1u);
    }
    // the order statistics needed, ascending and once each, found in one walk
    std::vector<std::uint64_t> ks = k;
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    std::vector<double> xs(ks.size());
    detail::histogram_order_statistics(row, binner, total, min, max, ks.data(), ks.size(), xs.data());
    const auto x = [&](std::uint64_t j) { return xs[std::lower_bound(ks.begin(), ks.end(), j) - ks.begin()]; };
    for (std::size_t i = 0; i < n; ++i) {
        const double a = x(k[2 * i]), b = x(k[2 * i + 1]);
        const double v = a + (h[i] - std::floor(h[i])) * (b - a);
        q[i] = v < a ? a : (v > b ? b : v);
    }
}

/** @brief Quantile p ∈ [0, 1] of a histogram row, see histogram_quantiles(). */
inline double histogram_quantile(const std::uint64_t* row, const LogBinner& binner, double min, double max, double p) {
    double q = 0.0;
    histogram_quantiles(row, binner, min, max, &p, 1u, &q);
    return q;
}

/** @brief A single signed log histogram with exact min/max (host side; mergeable). Non-finite values are counted
 *  apart. */
class LogHistogram {
public:
    explicit LogHistogram(LogHistogramSpec spec = {}) : table_(spec.table()), row_(spec.row_words(), 0u) {}

    /** @brief Adds a value (a non-finite one only increments nonfinite()). */
    void add(double x) {
        if (!detail::is_finite(x)) {
            ++nonfinite_;
            return;
        }
        x = x == 0.0 ? 0.0 : x; // −0 → +0 so that min/max do not depend on order
        min_ = total_ == 0u || x < min_ ? x : min_;
        max_ = total_ == 0u || x > max_ ? x : max_;
        binner().add(row_.data(), x);
        ++total_;
    }

    /** @brief Adds the state of another histogram with the same spec (exact, order-independent). */
    void merge(const LogHistogram& other) {
        if (other.table_ != table_) {
            throw std::invalid_argument("LogHistogram::merge: different bin specifications");
        }
        if (other.total_ != 0u) {
            min_ = total_ == 0u || other.min_ < min_ ? other.min_ : min_;
            max_ = total_ == 0u || other.max_ > max_ ? other.max_ : max_;
        }
        binner().merge(row_.data(), other.row_.data());
        total_ += other.total_;
        nonfinite_ += other.nonfinite_;
    }

    /** @brief Quantile p ∈ [0, 1], see histogram_quantiles(). */
    double quantile(double p) const { return histogram_quantile(row_.data(), binner(), min_, max_, p); }

    /** @brief Number of finite values added. */
    std::uint64_t total() const { return total_; }
    /** @brief Number of non-finite values rejected. */
    std::uint64_t nonfinite() const { return nonfinite_; }
    /** @brief Finite values below the stores' windows (quantiles among them have no relative guarantee). */
    std::uint64_t below() const { return LogBinner::below(row_.data()); }
    /** @brief Smallest finite value (NaN when empty). */
    double min() const { return total_ == 0u ? detail::quiet_nan() : min_; }
    /** @brief Largest finite value (NaN when empty). */
    double max() const { return total_ == 0u ? detail::quiet_nan() : max_; }
    /** @brief The row (see the file comment for its layout). */
    const std::vector<std::uint64_t>& row() const { return row_; }
    /** @brief Bin edges e_0..e_n. */
    const std::vector<double>& edges() const { return table_.edges; }
    /** @brief The specification. */
    const LogHistogramSpec& spec() const { return table_.spec; }
    /** @brief Relative bin width 10^(1/bins_per_decade) − 1. */
    double relative_resolution() const { return table_.spec.relative_resolution(); }
    /** @brief A view into this histogram's tables (valid while this object lives). */
    LogBinner binner() const { return LogBinner::make(table_); }

private:
    LogBinTable table_;
    std::vector<std::uint64_t> row_;
    std::uint64_t total_ = 0u;
    std::uint64_t nonfinite_ = 0u;
    double min_ = 0.0;
    double max_ = 0.0;
};

} // namespace nhvk::stats
