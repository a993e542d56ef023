// SPDX-License-Identifier: MIT
#include "stats/ensemble_stats.hpp"
#include "stats/fit_law.hpp"

#include "nhvk/stats/chunk_reduce.hpp"
#include "nhvk/stats/exact_sum.hpp"
#include "nhvk/stats/host_row_reduce.hpp"
#include "nhvk/stats/rank_select.hpp"

#include <thrust/system/cpp/execution_policy.h>
#include <thrust/system/omp/execution_policy.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace nhvk::stats {

namespace {

// below this many values per chunk, add_chunk runs sequentially
constexpr std::size_t kMinParallelValues = 1u << 15;
// below this many values select_order_statistics runs nth_element on them in place; from here on it only reads them
constexpr std::size_t kSelectInPlaceBelow = 8192u;

void set_quantiles(SeriesSummary& r, const double (&q)[7]) {
    r.p01 = q[0];
    r.p05 = q[1];
    r.p25 = q[2];
    r.p50 = q[3];
    r.p75 = q[4];
    r.p95 = q[5];
    r.p99 = q[6];
}

} // namespace

namespace {

/** @brief Where the type-7 quantile p of n > 0 values sits: between order statistics k and k + 1 (k + 1 < n) at
 *         fraction f, or at k = n − 1 alone. */
struct Type7Point {
    std::uint64_t k;
    double f;
    bool single; ///< only x[k] is read
};

Type7Point type7_point(std::uint64_t n, double p) {
    const double h = static_cast<double>(n - 1u) * p; // same rounding as numpy's (n-1)*p
    const double fl = std::floor(h);
    const auto k = static_cast<std::uint64_t>(fl);
    if (k + 1u >= n) return {n - 1u, 0.0, true};
    return {k, h - fl, false};
}

/** @brief The k-th order statistic out of stats, where stats[i] is the ranks[i]-th (ranks ascending, k among them). */
double order_statistic(const std::vector<std::uint64_t>& ranks, const double* stats, std::uint64_t k) {
    return stats[std::lower_bound(ranks.begin(), ranks.end(), k) - ranks.begin()];
}

double type7_between(double a, double b, double f) {
    const double q = a + f * (b - a); // x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋])
    // NOTE: the clamp only guards against rounding taking q a hair outside [a, b].
    return q < a ? a : (q > b ? b : q);
}

void select_in(double* first, double* last, std::size_t offset, const std::uint64_t* r0, const std::uint64_t* r1) {
    if (r0 == r1) return;
    const std::uint64_t* mid = r0 + (r1 - r0) / 2;
    double* at = first + (*mid - offset);
    std::nth_element(first, at, last);
    select_in(first, at, offset, r0, mid);
    select_in(at + 1, last, *mid + 1, mid + 1, r1);
}

} // namespace

double quantile_type7(const double* sorted, std::size_t n, double p) {
    if (n == 0u) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    const Type7Point t = type7_point(n, p);
    return t.single ? sorted[t.k] : type7_between(sorted[t.k], sorted[t.k + 1u], t.f);
}

QuantileInterval quantile_interval_ranks(std::uint64_t n, double p) {
    QuantileInterval q;
    if (n == 0u) return q;
    const double z = 1.959963984540054;
    const double np = static_cast<double>(n) * p, half = z * std::sqrt(np * (1.0 - p));
    const double lo = std::floor(np - half) - 1.0, hi = std::ceil(np + half);
    q.ok = lo >= 0.0 && hi <= static_cast<double>(n) - 1.0;
    q.lo = q.ok ? static_cast<std::uint64_t>(lo) : 0u;
    q.hi = q.ok ? static_cast<std::uint64_t>(hi) : 0u;
    return q;
}

std::vector<std::uint64_t> quantile_ranks(std::uint64_t n) {
    std::vector<std::uint64_t> r;
    if (n == 0u) return r;
    for (const double p : quantile_levels) {
        const Type7Point t = type7_point(n, p);
        r.push_back(t.k);
        if (!t.single) r.push_back(t.k + 1u);
        const QuantileInterval ci = quantile_interval_ranks(n, p);
        if (ci.ok) {
            r.push_back(ci.lo);
            r.push_back(ci.hi);
        }
    }
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
}

void quantiles_from_order_statistics(std::uint64_t n, const std::vector<std::uint64_t>& ranks, const double* stats,
                                     double (&q)[7]) {
    const auto at = [&](std::uint64_t k) { return order_statistic(ranks, stats, k); };
    for (int i = 0; i < 7; ++i) {
        if (n == 0u) {
            q[i] = std::numeric_limits<double>::quiet_NaN();
            continue;
        }
        const Type7Point t = type7_point(n, quantile_levels[i]);
        q[i] = t.single ? at(t.k) : type7_between(at(t.k), at(t.k + 1u), t.f);
    }
}

void select_order_statistics(std::vector<double>& v, const std::vector<std::uint64_t>& ranks, double* out) {
    if (v.empty()) {
        if (!ranks.empty()) throw std::invalid_argument("select_order_statistics: a rank beyond the values");
        return;
    }
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    select_order_statistics(v.data(), v.size(), *lo, *hi, ranks, out);
}

namespace {

using detail::order_key;

/**
 * @brief Order statistics ranks[0..nr) (sorted, distinct, below n) of v[0..n), all in [min, max], to out; n ≥
 *        kSelectInPlaceBelow; v is only read. `depth`: how many bucket passes led here (from 1 on, the min and the
 *        max get buckets of their own).
 */
void select_by_buckets(const double* v, std::size_t n, double min, double max, const std::uint64_t* ranks,
                       std::size_t nr, double* out, int depth) {
    const bool ties = depth > 0;
    // Buckets of order_key, equal-width between the smallest and largest key: the integer image grows like the
    // logarithm of the magnitude, so values spread over many decades still spread over the buckets. One pass counts,
    // the ranks' buckets are found from the counts, a second pass gathers only those buckets, and the ranks are
    // selected among the gathered values.
    // About n/4 buckets (at most 2^16, a counts array that stays in L2): a metric's values often sit in a few binades
    // of a range that spans hundreds (zeros beside values of 1e-15, say), and the buckets must still be fine there,
    // so that the gathered buckets are small and the gathering pass rarely takes a value.
    const std::uint64_t lo = order_key(min + 0.0);
    const std::uint64_t hi = order_key(max + 0.0);
    if (hi < lo) throw std::invalid_argument("select_order_statistics: min above max");
    if (lo == hi) {
        for (std::size_t r = 0; r < nr; ++r) out[r] = min + 0.0;
        return;
    }
    std::uint64_t n_buckets = 4096u;
    while (n_buckets < 65536u && n_buckets * 4u < n) n_buckets *= 2u;
    int shift = 0;
    while (((hi - lo) >> shift) >= n_buckets) ++shift;
    // bucket 0 and `last` are the min's and the max's own from depth 1 on, and empty at depth 0 (where the min and
    // the max are those of a whole series, and rarely shared: the two comparisons per value are not worth it there)
    const std::size_t last = static_cast<std::size_t>((hi - lo) >> shift) + 2u;
    std::vector<std::uint32_t> count(last + 1u, 0u);
    if (n > 0xFFFFFFFFu) throw std::invalid_argument("select_order_statistics: more than 2^32 - 1 values");
    if (ties) {
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t k = order_key(v[i]);
            if (k < lo || k > hi) throw std::invalid_argument("select_order_statistics: a value outside [min, max]");
            const std::size_t mid = static_cast<std::size_t>((k - lo) >> shift) + 1u;
            ++count[k == lo ? 0u : (k == hi ? last : mid)];
        }
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            // NOTE: a value outside [min, max] would index out of the counts: refused, not trusted
            const std::uint64_t k = order_key(v[i]);
            if (k < lo || k > hi) throw std::invalid_argument("select_order_statistics: a value outside [min, max]");
            ++count[static_cast<std::size_t>((k - lo) >> shift) + 1u];
        }
    }
    // For each rank its bucket and its rank inside the bucket (the min's and the max's own buckets need no values)
    std::vector<std::int32_t> slot(count.size(), -1); // bucket → its index among the gathered buckets
    std::vector<std::size_t> start{0};                // gathered bucket → its offset among the gathered values
    std::vector<std::size_t> bucket(nr);
    std::vector<std::uint64_t> inside(nr);
    std::uint64_t before = 0u;
    std::size_t b = 0;
    for (std::size_t r = 0; r < nr; ++r) {
        while (before + count[b] <= ranks[r]) before += count[b++];
        bucket[r] = b;
        inside[r] = ranks[r] - before;
        if (ties && b == 0u) {
            out[r] = min + 0.0;
        } else if (ties && b == last) {
            out[r] = max + 0.0;
        } else if (slot[b] < 0) {
            slot[b] = static_cast<std::int32_t>(start.size() - 1u);
            start.push_back(start.back() + count[b]);
        }
    }
    const std::size_t total = start.back(), n_gathered = start.size() - 1u;
    if (n_gathered == 0u) return;
    // Gathered in two steps: the values of all the ranks' buckets in one buffer, in order of appearance, then
    // sorted by bucket (a counting sort of those values alone).
    std::vector<double> mixed(total + 1u), gathered(total);
    {
        // NOTE: without a branch: every value is written at the next free place, which only a gathered one keeps
        // (the place after the last is scratch); a branch here mispredicts wherever the gathered buckets hold a
        // large share of the values, as a metric's many equal rounding errors do
        std::vector<std::uint8_t> take(count.size(), 0u);
        for (std::size_t k = 0; k < count.size(); ++k) take[k] = slot[k] >= 0 ? 1u : 0u;
        const std::uint8_t* const keep = take.data();
        double* const into = mixed.data();
        std::size_t at = 0;
        if (ties) {
            for (std::size_t i = 0; i < n; ++i) {
                const double x = v[i];
                const std::uint64_t k = order_key(x);
                const std::size_t mid = static_cast<std::size_t>((k - lo) >> shift) + 1u;
                into[at] = x;
                at += keep[k == lo ? 0u : (k == hi ? last : mid)];
            }
        } else {
            for (std::size_t i = 0; i < n; ++i) {
                const double x = v[i];
                into[at] = x;
                at += keep[static_cast<std::size_t>((order_key(x) - lo) >> shift) + 1u];
            }
        }
        if (n_gathered == 1u) {
            gathered.swap(mixed);
        } else {
            std::vector<std::size_t> fill(start.begin(), start.end() - 1);
            const std::int32_t* const slots = slot.data();
            for (std::size_t i = 0; i < total; ++i) {
                const double x = mixed[i];
                // NOTE: the min's and the max's own buckets are never gathered, so no value here is in them
                const std::size_t bk = static_cast<std::size_t>((order_key(x) - lo) >> shift) + 1u;
                gathered[fill[static_cast<std::size_t>(slots[bk])]++] = x;
            }
        }
    }
    for (std::size_t i = 0; i < nr;) {
        // the ranks that fall in one gathered bucket, selected together
        std::size_t j = i;
        while (j < nr && bucket[j] == bucket[i]) ++j;
        if (slot[bucket[i]] < 0) {
            i = j;
            continue;
        }
        const auto g = static_cast<std::size_t>(slot[bucket[i]]);
        double* const first = gathered.data() + start[g];
        const std::size_t size = start[g + 1u] - start[g];
        std::vector<std::uint64_t> local(inside.begin() + static_cast<std::ptrdiff_t>(i),
                                         inside.begin() + static_cast<std::ptrdiff_t>(j));
        if (size >= kSelectInPlaceBelow && depth < 8) {
            // a large bucket (equal values, or values crowded into a small part of the range): the same again on
            // it alone, with its own bounds, and its min and max (ties, often: all of it, for equal values) apart
            const auto [bmin, bmax] = std::minmax_element(first, first + size);
            select_by_buckets(first, size, *bmin, *bmax, local.data(), local.size(), out + i, depth + 1);
        } else {
            select_in(first, first + size, 0, local.data(), local.data() + local.size());
            for (std::size_t k = i; k < j; ++k) out[k] = first[inside[k]];
        }
        i = j;
    }
}

} // namespace

void select_order_statistics(double* v, std::size_t n, double min, double max, const std::vector<std::uint64_t>& ranks,
                             double* out) {
    if (ranks.empty()) return;
    if (ranks.back() >= n) throw std::invalid_argument("select_order_statistics: a rank beyond the values");
    // NOTE: below a few thousand values the selection itself is cheapest
    if (n < kSelectInPlaceBelow) {
        select_in(v, v + n, 0, ranks.data(), ranks.data() + ranks.size());
        for (std::size_t i = 0; i < ranks.size(); ++i) out[i] = v[ranks[i]];
        return;
    }
    select_by_buckets(v, n, min, max, ranks.data(), ranks.size(), out, 0);
}

std::shared_ptr<const SharedBins> shared_bins(const LogHistogramSpec& spec) {
    // NOTE: weak references, so the bins live only while an accumulator uses them (a spec no longer used does not
    // stay in memory); the lock covers the build too, so that threads asking at once build them once.
    static std::mutex mutex;
    static std::vector<std::pair<LogHistogramSpec, std::weak_ptr<const SharedBins>>> cache;
    const std::lock_guard<std::mutex> lock(mutex);
    cache.erase(std::remove_if(cache.begin(), cache.end(), [](const auto& c) { return c.second.expired(); }),
                cache.end());
    for (const auto& c : cache)
        if (c.first == spec)
            if (std::shared_ptr<const SharedBins> held = c.second.lock()) return held;
    auto bins =
        std::make_shared<const SharedBins>(SharedBins{spec.table(), std::vector<std::uint64_t>(spec.row_words())});
    cache.emplace_back(spec, bins);
    return bins;
}

EnsembleAccumulator::EnsembleAccumulator(std::size_t n_series, std::uint64_t n_total_expected,
                                         std::size_t exact_memory_budget_bytes, LogHistogramSpec spec,
                                         ReplicaShape replicas)
    : n_series_(n_series), budget_values_(exact_memory_budget_bytes / sizeof(double)), spec_(spec),
      bins_(shared_bins(spec)), row_words_(spec.row_words()), n_expected_(n_total_expected), replicas_(replicas),
      exact_(true), partials_(n_series) {
    exact_ = n_series == 0u ||
             expected_values(n_series, n_total_expected, replicas) <= static_cast<long double>(budget_values_);
    if (exact_) {
        values_.resize(n_series);
        group_ends_.resize(replicated_rows());
    } else {
        make_rows();
    }
}

void EnsembleAccumulator::make_rows() {
    if (counts_.empty()) counts_.assign(n_series_ * row_words_, 0u);
}

long double EnsembleAccumulator::expected_values(std::size_t n_series, std::uint64_t n_total_expected,
                                                 ReplicaShape replicas) {
    // NOTE: a replica group's values are a part of its row's (add_chunk keeps a replicated row's values group by
    // group), so the groups take no room of their own. In long double so that no product overflows.
    return static_cast<long double>(std::min(n_series, replicas.from)) * static_cast<long double>(n_total_expected);
}

void EnsembleAccumulator::reserve_values() {
    // NOTE: at the first values, not at construction: an accumulator whose values a backend keeps never needs room.
    for (std::size_t s = 0; s < value_series(); ++s)
        if (values_[s].capacity() == 0u) values_[s].reserve(static_cast<std::size_t>(n_expected_));
}

template <class F> void EnsembleAccumulator::for_each_values(std::size_t s, F&& f) const {
    if (s >= value_series()) {
        // a replica group's series: its segment of each block of its row's values
        const std::size_t rows = replicated_rows(), R = replicas_.groups;
        const std::size_t s0 = (s - value_series()) % rows, g = (s - value_series()) / rows;
        if (s0 < group_ends_.size() && s0 < values_.size()) {
            const std::vector<std::uint64_t>& end = group_ends_[s0];
            for (std::size_t b = 0; b + R <= end.size(); b += R) {
                const std::uint64_t lo = g > 0u ? end[b + g - 1u] : (b > 0u ? end[b - 1u] : 0u);
                if (end[b + g] > lo) f(values_[s0].data() + lo, static_cast<std::size_t>(end[b + g] - lo));
            }
        }
    } else if (s < values_.size() && !values_[s].empty()) {
        f(values_[s].data(), values_[s].size());
    }
    for (const EnsembleAccumulator* part : parts_) part->for_each_values(s, f);
}

template <class ValuesOfGroup> void EnsembleAccumulator::append_group_block(std::size_t s0, ValuesOfGroup&& of) {
    Values& v = values_[s0];
    for (std::size_t g = 0; g < replicas_.groups; ++g) {
        of(value_series() + g * replicated_rows() + s0,
           [&v](const double* x, std::size_t n) { v.insert(v.end(), x, x + n); });
        group_ends_[s0].push_back(v.size());
    }
}

template <class PerSeries> bool EnsembleAccumulator::groups_add_up(const PerSeries& values) const {
    const std::size_t rows = replicated_rows();
    for (std::size_t s0 = 0; s0 < rows; ++s0) {
        std::size_t n = 0;
        for (std::size_t g = 0; g < replicas_.groups; ++g) n += values[value_series() + g * rows + s0].size();
        if (n != values[s0].size()) return false;
    }
    return true;
}

template <class PerSeries> void EnsembleAccumulator::append_group_blocks(const PerSeries& values) {
    for (std::size_t s0 = 0; s0 < replicated_rows(); ++s0)
        append_group_block(s0,
                           [&values](std::size_t s, const auto& sink) { sink(values[s].data(), values[s].size()); });
}

void EnsembleAccumulator::gather_values(const std::vector<std::size_t>& series, std::vector<double>& out) const {
    std::size_t n = 0;
    for (const std::size_t s : series) for_each_values(s, [&](const double*, std::size_t k) { n += k; });
    out.clear();
    out.reserve(n);
    for (const std::size_t s : series)
        for_each_values(s, [&](const double* v, std::size_t k) { out.insert(out.end(), v, v + k); });
}

std::uint64_t EnsembleAccumulator::stored_values() const {
    std::uint64_t total = 0u;
    // NOTE: the series below value_series(): a replica group's values are its row's
    for (std::size_t s = 0; s < value_series(); ++s)
        for_each_values(s, [&](const double*, std::size_t k) { total += k; });
    return total;
}

std::uint64_t EnsembleAccumulator::stored_total() const {
    // NOTE: the values exact mode keeps: a replica group's are counted in its row's
    std::uint64_t total = 0u;
    for (std::size_t s = 0; s < value_series(); ++s) total += partials_[s].count;
    return total;
}

void EnsembleAccumulator::drop_values() {
    // NOTE: exact mode keeps no histogram (the values give every quantile), so the rows are made from the values
    // now; a row is a function of its values' multiset, so this equals having binned them as they came.
    bin_values_of(*this);
    exact_ = false;
    std::vector<Values>().swap(values_);
    std::vector<std::vector<std::uint64_t>>().swap(group_ends_);
    parts_.clear();
}

void EnsembleAccumulator::add_chunk(const double* values, std::size_t chunk, std::size_t ld,
                                    const std::uint8_t* valid) {
    if (chunk == 0u || n_series_ == 0u) {
        return;
    }
    if (ld < chunk) {
        throw std::invalid_argument("EnsembleAccumulator::add_chunk: ld < chunk");
    }
    ChunkView in;
    in.values = values;
    in.chunk = chunk;
    in.ld = ld;
    in.valid = valid;
    in.n_series = n_series_;
    add_chunk(in);
}

void EnsembleAccumulator::add_chunk(const ChunkView& in) {
    if (in.chunk == 0u || n_series_ == 0u) {
        return;
    }
    if (in.ld < in.chunk || in.n_series != n_series_) {
        throw std::invalid_argument("EnsembleAccumulator::add_chunk: ld < chunk or a different series count");
    }
    const std::size_t chunk = in.chunk;
    // NOTE: small chunks run sequentially (an OpenMP region costs more than the work); the result is the same
    // either way, since every reduction below is exact.
    add_chunk_parallel(in, chunk * n_series_ >= kMinParallelValues);
}

namespace {

/** @brief Task `task` of a chunk, with a thread's own binade scratch: with replica groups, tasks below
 *         in.replicated are the replicated rows with their groups (reduce_replicated_row_host); every other task is
 *         series `task` alone (reduce_series_host). */
struct ReduceSeriesHost {
    const ChunkView* in;
    const std::int32_t* times_counted;
    bool all_counted;
    SeriesPartial* partials;
    std::uint64_t* counts;
    const LogBinner* binner;
    double* const* out;
    std::size_t* n_out;

    void operator()(std::size_t task) const {
        thread_local const std::unique_ptr<BinadeSums> sums = std::make_unique<BinadeSums>(); // 96 KiB
        if (in->replicas > 0u && task < in->replicated) {
            reduce_replicated_row_host(*in, task, times_counted, partials, counts, *binner, out, n_out, *sums);
            return;
        }
        const std::size_t k = reduce_series_host(*in, task, times_counted, all_counted, partials[task],
                                                 counts ? counts + task * binner->row_words() : nullptr, *binner,
                                                 out ? out[task] : nullptr, *sums);
        if (n_out) n_out[task] = k;
    }
};

} // namespace

void reduce_chunk_host(const ChunkView& in, SeriesPartial* partials, std::uint64_t* counts, const LogBinner& binner,
                       double* const* out, std::size_t* n_out, bool parallel) {
    // NOTE: the population rule per member once per chunk, not once per value: a timed row then reads one int32 per
    // member, or nothing at all when every member counts everywhere (the usual chunk).
    std::vector<std::int32_t> times(in.chunk);
    bool all_counted = true;
    for (std::size_t j = 0; j < in.chunk; ++j) {
        const long long c = in.times_counted(j);
        times[j] = static_cast<std::int32_t>(c < 0 ? 0 : (c > static_cast<long long>(in.nt) ? in.nt : c));
        all_counted = all_counted && c >= static_cast<long long>(in.nt);
    }
    // the tasks: the series below base_series (the replicated rows with their groups), none of the groups alone
    std::size_t tasks = in.n_series;
    if (in.replicas > 0u) {
        if (in.base_series + in.replicas * in.replicated != in.n_series || in.replicated > in.base_series)
            throw std::invalid_argument("reduce_chunk_host: the replica groups do not end the series, or replicate "
                                        "more rows than precede them");
        tasks = in.base_series;
    }
    const ReduceSeriesHost f{&in, times.data(), all_counted, partials, counts, &binner, out, n_out};
    const thrust::counting_iterator<std::size_t> first(0);
    if (parallel) {
        thrust::for_each(thrust::omp::par, first, first + tasks, f);
    } else {
        thrust::for_each(thrust::cpp::par, first, first + tasks, f);
    }
}

void EnsembleAccumulator::add_chunk_parallel(const ChunkView& in, bool parallel) {
    if (!exact_) {
        reduce_chunk_host(in, partials_.data(), counts_.data(), binner(), nullptr, nullptr, parallel);
        return;
    }
    const std::size_t base = value_series(), rows = replicated_rows();
    // NOTE: the groups' values are kept as segments of their rows' (reduce_chunk_host writes a replicated row group
    // by group), which needs the chunk to describe the accumulator's groups
    if (base < n_series_ && (in.base_series != base || in.replicas != replicas_.groups || in.replicated != rows))
        throw std::invalid_argument("EnsembleAccumulator::add_chunk: a chunk without the accumulator's replica groups");
    reserve_values();
    std::vector<double*> out(n_series_, nullptr);
    std::vector<std::size_t> n_out(n_series_);
    for (std::size_t s = 0; s < base; ++s) {
        values_[s].resize(values_[s].size() + in.chunk);
        out[s] = values_[s].data() + values_[s].size() - in.chunk;
    }
    reduce_chunk_host(in, partials_.data(), nullptr, binner(), out.data(), n_out.data(), parallel);
    for (std::size_t s = 0; s < base; ++s) {
        values_[s].resize(values_[s].size() - in.chunk + n_out[s]);
    }
    for (std::size_t s0 = 0; s0 < rows; ++s0) {
        std::uint64_t end = values_[s0].size() - n_out[s0];
        for (std::size_t g = 0; g < replicas_.groups; ++g) {
            end += n_out[base + g * rows + s0];
            group_ends_[s0].push_back(end);
        }
        if (end != values_[s0].size())
            throw std::logic_error("EnsembleAccumulator::add_chunk: a row's groups do not add up to the row");
    }
    // NOTE: decided on the number of values only, so the final mode does not depend on chunking; the chunk's values
    // are binned with the others.
    if (stored_total() > budget_values_) drop_values();
}

bool EnsembleAccumulator::merge_reduced(const SeriesPartial* partials, const std::uint64_t* counts) {
    bool any = false;
    // NOTE: kept in exact mode too: rows reduced elsewhere (the CUDA backend's) count outside_range in both modes
    make_rows();
    const LogBinner b = binner();
    for (std::size_t s = 0; s < n_series_; ++s) {
        any = any || partials[s].count != 0u;
        partials_[s].merge(partials[s]);
        b.merge(counts_.data() + s * row_words_, counts + s * row_words_);
    }
    return any;
}

void EnsembleAccumulator::add_partials(const SeriesPartial* partials, const std::uint64_t* counts) {
    if (merge_reduced(partials, counts) && exact_) {
        drop_values();
    }
}

void EnsembleAccumulator::add_partials_values_elsewhere(const SeriesPartial* partials, const std::uint64_t* counts) {
    if (!exact_ || stored_values() != 0u || values_elsewhere_)
        throw std::logic_error("EnsembleAccumulator: values kept elsewhere need an exact accumulator storing none");
    merge_reduced(partials, counts);
    values_elsewhere_ = true;
}

void EnsembleAccumulator::add_partials_with_values(const SeriesPartial* partials, const std::uint64_t* counts,
                                                   const std::vector<std::vector<double>>& values) {
    if (values.size() != n_series_) throw std::invalid_argument("add_partials_with_values: one vector per series");
    for (std::size_t s = 0; s < n_series_; ++s)
        if (values[s].size() != partials[s].count)
            throw std::invalid_argument("add_partials_with_values: values out of step with the counts");
    if (!groups_add_up(values))
        throw std::invalid_argument("add_partials_with_values: a row's groups do not add up to the row");
    merge_reduced(partials, counts);
    if (!exact_) return;
    if (stored_total() > budget_values_) {
        drop_values();
        return;
    }
    append_group_blocks(values);
    for (std::size_t s = replicated_rows(); s < value_series(); ++s)
        values_[s].insert(values_[s].end(), values[s].begin(), values[s].end());
}

void EnsembleAccumulator::bin_values_of(const EnsembleAccumulator& src) {
    make_rows();
    const LogBinner b = binner();
    for (std::size_t s = 0; s < n_series_; ++s)
        src.for_each_values(s, [&](const double* v, std::size_t k) {
            for (std::size_t i = 0; i < k; ++i) b.add(counts_.data() + s * row_words_, v[i]);
        });
}

void EnsembleAccumulator::merge_partials_and_rows(const EnsembleAccumulator& other) {
    for (std::size_t s = 0; s < n_series_; ++s) partials_[s].merge(other.partials_[s]);
    if (!other.has_rows()) return; // NOTE: other's rows are all zero, and merging zeros changes no row
    make_rows();
    const LogBinner b = binner();
    for (std::size_t s = 0; s < n_series_; ++s) b.merge(counts_.data() + s * row_words_, other.histogram(s));
}

void EnsembleAccumulator::merge(const EnsembleAccumulator& other) {
    if (&other == this) {
        const EnsembleAccumulator copy = other;
        merge(copy);
        return;
    }
    if (other.n_series_ != n_series_ || (other.bins_ != bins_ && other.bins_->table != bins_->table) ||
        !same_groups(other)) {
        throw std::invalid_argument("EnsembleAccumulator::merge: different series count, replica groups or histogram "
                                    "spec");
    }
    if (values_elsewhere_ || other.values_elsewhere_) {
        throw std::logic_error("EnsembleAccumulator::merge: the values of exact quantiles are kept elsewhere");
    }
    merge_partials_and_rows(other);
    if (!exact_) {
        // NOTE: an exact other's quantiles are in its values; binned here unless it has rows: a backend that sends
        // both (CUDA) has binned the values into those rows already, and binning them again would count them twice
        if (other.exact_ && !other.has_rows()) bin_values_of(other);
        return;
    }
    if (!other.exact_ || stored_total() > budget_values_) {
        drop_values();
        return;
    }
    // NOTE: room for the expected values at once, as add_chunk makes it: a sweep merges its points one by one, and
    // growing by doubling would leave up to half the room unused
    reserve_values();
    const std::size_t rows = replicated_rows();
    for (std::size_t s0 = 0; s0 < rows; ++s0)
        append_group_block(s0, [&other](std::size_t s, const auto& sink) { other.for_each_values(s, sink); });
    for (std::size_t s = rows; s < value_series(); ++s)
        other.for_each_values(s,
                              [&](const double* v, std::size_t k) { values_[s].insert(values_[s].end(), v, v + k); });
}

void EnsembleAccumulator::merge_referencing(const std::vector<const EnsembleAccumulator*>& parts) {
    std::uint64_t total = stored_total();
    bool exact = exact_ && !values_elsewhere_;
    for (const EnsembleAccumulator* part : parts) {
        if (part->n_series_ != n_series_ || (part->bins_ != bins_ && part->bins_->table != bins_->table) ||
            !same_groups(*part))
            throw std::invalid_argument("EnsembleAccumulator::merge: different series count, replica groups or "
                                        "histogram spec");
        exact = exact && part->exact_ && !part->values_elsewhere_ && part != this;
        for (const SeriesPartial& p : part->partials_) total += p.count;
    }
    // NOTE: merge() leaves exact mode when a part is not exact or the values outgrow the budget; the same rule here
    if (!exact || total > budget_values_) {
        for (const EnsembleAccumulator* part : parts) merge(*part);
        return;
    }
    for (const EnsembleAccumulator* part : parts) {
        merge_partials_and_rows(*part);
        parts_.push_back(part);
    }
}

void EnsembleAccumulator::save(std::string& out) const {
    if (values_elsewhere_) {
        throw std::logic_error("EnsembleAccumulator::save: the values of exact quantiles are kept elsewhere");
    }
    bytes::put<std::uint64_t>(out, n_series_);
    bytes::put<std::uint64_t>(out, row_words_);
    bytes::put<std::int32_t>(out, spec_.bins_per_decade);
    bytes::put<std::uint32_t>(out, spec_.window);
    bytes::put<std::uint64_t>(out, budget_values_);
    bytes::put<std::uint8_t>(out, exact_ ? 1u : 0u);
    bytes::put_vector(out, partials_);
    bytes::put_vector(out, counts_); // empty when the rows are all zero (has_rows())
    if (exact_) {
        // the layout of put_vector, written from this accumulator's values and its parts'
        for (std::size_t s = 0; s < n_series_; ++s) {
            std::uint64_t n = 0;
            for_each_values(s, [&](const double*, std::size_t k) { n += k; });
            bytes::put<std::uint64_t>(out, n);
            for_each_values(s, [&](const double* v, std::size_t k) { bytes::put_raw(out, v, k * sizeof(double)); });
        }
    }
}

void EnsembleAccumulator::load(bytes::Reader& in) {
    const std::string what = in.what();
    row_bands_.clear(); // of other values, perhaps as many
    const auto n_series = in.get<std::uint64_t>();
    const auto row_words = in.get<std::uint64_t>();
    const auto bpd = in.get<std::int32_t>();
    const auto window = in.get<std::uint32_t>();
    const auto budget = in.get<std::uint64_t>();
    if (n_series != n_series_ || row_words != row_words_ || bpd != spec_.bins_per_decade || window != spec_.window) {
        throw std::runtime_error(what + ": statistics of another shape (" + std::to_string(n_series) + " series of " +
                                 std::to_string(row_words) + " histogram words, expected " + std::to_string(n_series_) +
                                 " of " + std::to_string(row_words_) + ")");
    }
    if (budget != budget_values_) {
        throw std::runtime_error(what + ": written with another run.exact_memory_mb");
    }
    const bool exact = in.get<std::uint8_t>() != 0u;
    std::vector<SeriesPartial> partials = in.get_vector<SeriesPartial>();
    std::vector<std::uint64_t> counts = in.get_vector<std::uint64_t>();
    // NOTE: no rows (an accumulator that kept none) or every row: a NHVK-STATE-v4 file of an exact accumulator may
    // hold every row, all zero, and still restores (taking no room here)
    if (partials.size() != n_series_ || (!counts.empty() && counts.size() != n_series_ * row_words_)) {
        throw std::runtime_error(what + ": statistics arrays of the wrong length");
    }
    if (exact && std::all_of(counts.begin(), counts.end(), [](std::uint64_t c) { return c == 0u; })) {
        std::vector<std::uint64_t>().swap(counts);
    } else if (!exact && counts.empty()) {
        counts.assign(n_series_ * row_words_, 0u);
    }
    std::vector<Values> values;
    if (exact) {
        values.resize(n_series_);
        for (std::size_t s = 0; s < n_series_; ++s) {
            values[s] = in.get_vector<double, Values::allocator_type>();
            if (values[s].size() != partials[s].count) {
                throw std::runtime_error(what + ": stored values out of step with the counts");
            }
        }
        if (!groups_add_up(values)) throw std::runtime_error(what + ": a row's groups do not add up to the row");
    }
    partials_ = std::move(partials);
    counts_ = std::move(counts);
    exact_ = exact;
    values_elsewhere_ = false;
    parts_.clear();
    values_.assign(exact ? n_series_ : 0u, Values());
    group_ends_.assign(exact ? replicated_rows() : 0u, {});
    if (!exact) return;
    // NOTE: the file holds every series' values, a group's too (the layout does not depend on how they are kept);
    // a replicated row is rebuilt from its groups', which are the same values
    append_group_blocks(values);
    for (std::size_t s = replicated_rows(); s < value_series(); ++s) values_[s] = std::move(values[s]);
}

double EnsembleAccumulator::median_of(const std::vector<std::size_t>& series) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (values_elsewhere_) return nan;
    SeriesPartial all;
    for (const std::size_t s : series) all.merge(partials_[s]);
    if (all.count == 0u) return nan;
    if (exact_) {
        std::vector<double> v;
        gather_values(series, v);
        const Type7Point t = type7_point(v.size(), 0.5);
        const auto at = v.begin() + static_cast<std::ptrdiff_t>(t.k);
        std::nth_element(v.begin(), at, v.end());
        return t.single ? *at : type7_between(*at, *std::min_element(at + 1, v.end()), t.f);
    }
    std::vector<std::uint64_t> row(row_words_, 0u);
    const LogBinner b = binner();
    for (const std::size_t s : series) b.merge(row.data(), histogram(s));
    return histogram_quantile(row.data(), b, all.min, all.max, 0.5);
}

namespace {

/**
 * @brief The delete-one-group medians' plan. Without group g the median reads the order statistics k_g (and k_g + 1)
 *        of the M_g = N − n_g others. Such a value y has at most k_g + n_g values of the union below it and at least
 *        k_g + 1 at or below it, so it lies between the union's order statistics L = min k_g and U = max(k_g + 1 +
 *        n_g): a selection of those two (band_ranks), the count of each group's values below x_(L) and the band
 *        [x_(L), x_(U)] with its groups then give every median (leave_one_out_from_band). The band holds about N/R
 *        values, so the whole costs a few passes over N instead of R selections.
 */
struct LeaveOneOutPlan {
    std::vector<std::uint64_t> n;          ///< each group's count
    std::vector<Type7Point> at;            ///< the median's place among the others, per group
    std::uint64_t N = 0;                   ///< the union's count
    std::vector<std::uint64_t> band_ranks; ///< {L} or {L, U}; empty: no median to take
};

LeaveOneOutPlan leave_one_out_plan(std::vector<std::uint64_t> n) {
    LeaveOneOutPlan p;
    const std::size_t R = n.size();
    for (const std::uint64_t c : n) p.N += c;
    p.n = std::move(n);
    p.at.resize(R);
    if (p.N == 0u) return p;
    std::uint64_t L = p.N, U = 0u;
    for (std::size_t g = 0; g < R; ++g) {
        if (p.N == p.n[g]) continue; // no other value: NaN
        p.at[g] = type7_point(p.N - p.n[g], 0.5);
        L = std::min(L, p.at[g].k);
        U = std::max(U, std::min(p.N - 1u, p.at[g].k + (p.at[g].single ? 0u : 1u) + p.n[g]));
    }
    if (L <= U) p.band_ranks = L == U ? std::vector<std::uint64_t>{L} : std::vector<std::uint64_t>{L, U};
    return p;
}

/** @brief Each group's median among the others as order statistics there: its one or two ranks (none where the group
 *         holds every value). */
std::vector<std::vector<std::uint64_t>> leave_one_out_ranks(const LeaveOneOutPlan& p) {
    std::vector<std::vector<std::uint64_t>> want(p.n.size());
    for (std::size_t g = 0; g < want.size(); ++g) {
        if (p.N == p.n[g]) continue;
        want[g].push_back(p.at[g].k);
        if (!p.at[g].single) want[g].push_back(p.at[g].k + 1u);
    }
    return want;
}

/** @brief out[g] (NaN where there is no other value) from the order statistics leave_one_out_ranks asked for. */
std::vector<double> leave_one_out_from_ranks(const LeaveOneOutPlan& p, const std::vector<std::vector<double>>& got) {
    const std::size_t R = p.n.size();
    std::vector<double> out(R, std::numeric_limits<double>::quiet_NaN());
    if (got.size() != R) throw std::logic_error("leave_one_out_medians: band order statistics of the wrong length");
    for (std::size_t g = 0; g < R; ++g) {
        if (p.N == p.n[g]) continue;
        const Type7Point& t = p.at[g];
        if (got[g].size() != (t.single ? 1u : 2u))
            throw std::logic_error("leave_one_out_medians: band order statistics of the wrong length");
        out[g] = t.single ? got[g][0] : type7_between(got[g][0], got[g][1], t.f);
    }
    return out;
}

/** @brief out[g] from the plan, each group's count of values below the band (below[g]) and the band's values with
 *         their groups (in any order; sorted here). */
std::vector<double> leave_one_out_from_band(const LeaveOneOutPlan& p, const std::vector<std::uint64_t>& below,
                                            std::vector<std::pair<double, std::uint32_t>>& band) {
    // NOTE: by value, then group: the walk skips a group's own values, so equal values of several groups may come in
    // any order, but a deterministic one keeps the function a function of the values' multiset
    std::sort(band.begin(), band.end());
    std::vector<std::vector<double>> got;
    band_ranks_among_others(below, band, leave_one_out_ranks(p), got);
    return leave_one_out_from_ranks(p, got);
}

} // namespace

std::vector<double> EnsembleAccumulator::leave_one_out_medians(const std::vector<std::size_t>& groups) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::size_t R = groups.size();
    std::vector<double> out(R, nan);
    if (values_elsewhere_ || R == 0u) return out;
    if (!exact_) {
        std::vector<std::size_t> others;
        for (std::size_t g = 0; g < R; ++g) {
            others.clear();
            for (std::size_t h = 0; h < R; ++h)
                if (h != g) others.push_back(groups[h]);
            out[g] = median_of(others);
        }
        return out;
    }
    SeriesPartial all;
    std::vector<std::uint64_t> n(R);
    for (std::size_t g = 0; g < R; ++g) {
        all.merge(partials_[groups[g]]);
        n[g] = partials_[groups[g]].count;
    }
    const LeaveOneOutPlan plan = leave_one_out_plan(std::move(n));
    if (plan.band_ranks.empty()) return out;
    double a = 0.0, b = 0.0;
    if (const RowBand* selected = selected_band(groups, plan.N)) {
        a = selected->lo;
        b = selected->hi;
    } else {
        std::vector<double> v;
        gather_values(groups, v);
        if (v.size() != plan.N) throw std::logic_error("EnsembleAccumulator: stored values out of step with counts");
        double ab[2];
        select_order_statistics(v.data(), v.size(), all.min, all.max, plan.band_ranks, ab);
        a = ab[0];
        b = ab[plan.band_ranks.size() - 1u];
    }
    std::vector<std::uint64_t> below(R, 0u);
    std::vector<std::pair<double, std::uint32_t>> band;
    Values kept;
    for (std::size_t g = 0; g < R; ++g)
        for_each_values(groups[g], [&](const double* x, std::size_t k) {
            // NOTE: without a branch: about half the values lie below the band, at random, so a branch mispredicts
            // on every other value; every value is written at the next free place, which only one in the band keeps
            if (kept.size() < k + 1u) kept.resize(k + 1u);
            double* const into = kept.data();
            std::size_t at = 0;
            std::uint64_t under = 0u;
            for (std::size_t i = 0; i < k; ++i) {
                const double y = x[i];
                under += y < a ? 1u : 0u;
                into[at] = y;
                at += (y >= a) & (y <= b) ? 1u : 0u;
            }
            below[g] += under;
            for (std::size_t i = 0; i < at; ++i) band.emplace_back(into[i], static_cast<std::uint32_t>(g));
        });
    return leave_one_out_from_band(plan, below, band);
}

const EnsembleAccumulator::RowBand* EnsembleAccumulator::selected_band(const std::vector<std::size_t>& groups,
                                                                       std::uint64_t n) const {
    const std::size_t rows = replicated_rows(), base = value_series();
    if (rows == 0u || groups.size() != replicas_.groups || groups[0] < base) return nullptr;
    const std::size_t s0 = groups[0] - base;
    if (s0 >= rows || s0 >= row_bands_.size()) return nullptr;
    for (std::size_t g = 0; g < groups.size(); ++g)
        if (groups[g] != base + g * rows + s0) return nullptr;
    const RowBand& band = row_bands_[s0];
    return n != 0u && band.n == n && partials_[s0].count == n ? &band : nullptr;
}

std::vector<std::vector<double>>
EnsembleAccumulator::leave_one_out_medians(const std::vector<std::vector<std::size_t>>& groups,
                                           const std::vector<std::size_t>& rows, const OrderStatistics& select,
                                           const BandOrderStatistics& band_select) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (rows.size() != groups.size()) throw std::invalid_argument("leave_one_out_medians: one row per set of groups");
    std::vector<std::vector<double>> out(groups.size());
    if (!values_elsewhere_) {
        // NOTE: the sets are independent (a const accumulator, each selection on its own copy): in parallel
        const long long n_sets = static_cast<long long>(groups.size());
#pragma omp parallel for schedule(dynamic, 1)
        for (long long k = 0; k < n_sets; ++k)
            out[static_cast<std::size_t>(k)] = leave_one_out_medians(groups[static_cast<std::size_t>(k)]);
        return out;
    }
    // The same plan as with the values here, the selection of x_(L) and x_(U) made in the rows (each the union of its
    // groups) by `select`, and each group's delete-one median's order statistics selected in the band [x_(L), x_(U)]
    // by `band_select`: the band walk's values, so the same doubles.
    std::vector<LeaveOneOutPlan> plans(groups.size());
    std::vector<std::vector<std::uint64_t>> ranks(n_series_);
    std::vector<char> named(n_series_, 0);
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const bool twice = named.at(rows[k]) != 0;
        named[rows[k]] = 1;
        std::vector<std::uint64_t> n(groups[k].size());
        for (std::size_t g = 0; g < n.size(); ++g) n[g] = partials_[groups[k][g]].count;
        plans[k] = leave_one_out_plan(std::move(n));
        if (partials_[rows[k]].count != plans[k].N)
            throw std::logic_error("leave_one_out_medians: a row is not the union of its groups");
        if (plans[k].band_ranks.empty()) continue;
        if (twice) throw std::invalid_argument("leave_one_out_medians: a row named twice");
        if (selected_band(groups[k], plans[k].N) == nullptr) ranks[rows[k]] = plans[k].band_ranks;
    }
    std::vector<std::vector<double>> ab(n_series_);
    // NOTE: only the rows whose band finalize() did not select with their quantiles (none, after a finalize())
    if (std::any_of(ranks.begin(), ranks.end(), [](const auto& r) { return !r.empty(); })) select(ranks, ab);
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const LeaveOneOutPlan& p = plans[k];
        out[k].assign(groups[k].size(), nan);
        if (p.band_ranks.empty()) continue;
        double a = 0.0, b = 0.0;
        if (const RowBand* selected = selected_band(groups[k], p.N)) {
            a = selected->lo;
            b = selected->hi;
        } else {
            const std::vector<double>& sel = ab[rows[k]];
            if (sel.size() != p.band_ranks.size())
                throw std::logic_error("leave_one_out_medians: order statistics of the wrong length");
            a = sel.front();
            b = sel.back();
        }
        std::vector<std::vector<double>> got;
        band_select(groups[k], a, b, leave_one_out_ranks(p), got);
        out[k] = leave_one_out_from_ranks(p, got);
    }
    return out;
}

std::vector<SeriesSummary> EnsembleAccumulator::finalize(const OrderStatistics& elsewhere) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const LogBinner b = binner();
    std::vector<SeriesSummary> out(n_series_);
    // exact mode: the ranks each series' quantiles read, and their order statistics
    std::vector<std::vector<std::uint64_t>> ranks(exact_ ? n_series_ : 0u);
    std::vector<std::vector<double>> stats(ranks.size());
    for (std::size_t s = 0; s < ranks.size(); ++s) ranks[s] = quantile_ranks(partials_[s].count);
    // each replicated row's band of delete-one-group medians (leave_one_out_medians), selected with its quantiles
    row_bands_.assign(exact_ ? replicated_rows() : 0u, RowBand{});
    std::vector<std::vector<std::uint64_t>> band_ranks(row_bands_.size());
    for (std::size_t s0 = 0; s0 < row_bands_.size(); ++s0) {
        std::vector<std::uint64_t> n(replicas_.groups);
        for (std::size_t g = 0; g < n.size(); ++g) n[g] = partials_[value_series() + g * replicated_rows() + s0].count;
        LeaveOneOutPlan plan = leave_one_out_plan(std::move(n));
        if (plan.band_ranks.empty() || plan.N != partials_[s0].count) continue;
        std::vector<std::uint64_t>& r = ranks[s0];
        r.insert(r.end(), plan.band_ranks.begin(), plan.band_ranks.end());
        std::sort(r.begin(), r.end());
        r.erase(std::unique(r.begin(), r.end()), r.end());
        band_ranks[s0] = std::move(plan.band_ranks);
    }
    if (exact_ && values_elsewhere_) {
        if (!elsewhere) throw std::logic_error("EnsembleAccumulator::finalize: the values are kept elsewhere");
        elsewhere(ranks, stats);
        for (std::size_t s = 0; s < n_series_; ++s)
            if (stats[s].size() != ranks[s].size())
                throw std::logic_error("EnsembleAccumulator::finalize: order statistics of the wrong length");
    } else if (exact_) {
        for (std::size_t s = 0; s < n_series_; ++s) {
            std::uint64_t n = 0;
            for_each_values(s, [&](const double*, std::size_t k) { n += k; });
            if (n != partials_[s].count)
                throw std::logic_error("EnsembleAccumulator: stored values out of step with counts");
        }
        // NOTE: a selection per series instead of a full sort (O(n log ranks), not O(n log n)); the series are
        // independent, so they run in parallel. Deterministic: −0 was folded to +0 and the values are finite, so
        // each order statistic is one value whatever finds it.
        const long long n = static_cast<long long>(n_series_);
#pragma omp parallel
        {
            std::vector<double> gathered; // one series' values copied (the selection may reorder): see below
#pragma omp for schedule(dynamic, 1)
            for (long long s = 0; s < n; ++s) {
                const auto i = static_cast<std::size_t>(s);
                auto& st = stats[i];
                st.resize(ranks[i].size());
                double* v = values_[i].data();
                std::size_t n_values = values_[i].size();
                // NOTE: copied when they are in parts, when they are a replica group's (segments of its row's), and
                // when they are a replicated row's that the selection would reorder in place, while another thread
                // reads its groups' segments
                if (!parts_.empty() || i >= value_series() ||
                    (i < replicated_rows() && n_values < kSelectInPlaceBelow)) {
                    gather_values({i}, gathered);
                    v = gathered.data();
                    n_values = gathered.size();
                }
                // NOTE: the exact partial's min and max bound the values, which saves the selection a pass
                select_order_statistics(v, n_values, partials_[i].min, partials_[i].max, ranks[i], st.data());
            }
        }
    }
    for (std::size_t s0 = 0; s0 < row_bands_.size(); ++s0) {
        if (band_ranks[s0].empty()) continue;
        row_bands_[s0] =
            RowBand{partials_[s0].count, order_statistic(ranks[s0], stats[s0].data(), band_ranks[s0].front()),
                    order_statistic(ranks[s0], stats[s0].data(), band_ranks[s0].back())};
    }
    for (std::size_t s = 0; s < n_series_; ++s) {
        const SeriesPartial& p = partials_[s];
        SeriesSummary& r = out[s];
        r.count = p.count;
        r.nonfinite = p.nonfinite;
        r.exact = exact_;
        r.outside_range = LogBinner::below(histogram(s));
        r.mean_se = r.mean_lo = r.mean_hi = r.std_se = r.std_lo = r.std_hi = nan;
        for (int i = 0; i < 7; ++i) r.q_lo[i] = r.q_hi[i] = r.q_se[i] = nan;
        if (p.count == 0u) {
            r.mean = r.std = r.min = r.max = nan;
            set_quantiles(r, {nan, nan, nan, nan, nan, nan, nan});
            continue;
        }
        const MeanStd ms = mean_std(p.sum, p.sum_sq, p.count); // deterministic: function of the exact sums
        r.mean = ms.mean;
        // NOTE: the sample (n − 1) standard deviation of one value is 0/0: undefined, not 0 (a 0 would read as "no
        // spread" and made replica groups of one member look perfectly alike)
        r.std = p.count > 1u ? ms.std : nan;
        r.min = p.min;
        r.max = p.max;
        if (p.count > 1u) {
            r.mean_se = ms.std / std::sqrt(static_cast<double>(p.count));
            const double half = student_t975(static_cast<std::size_t>(p.count - 1u)) * r.mean_se;
            r.mean_lo = ms.mean - half;
            r.mean_hi = ms.mean + half;
        }
        double q[7];
        // the interval bounds are order statistics: selected with the quantiles' (exact), or the histogram's
        // interpolation at the level type-7 maps to that rank, rank/(n − 1)
        double bound_levels[14];
        double bounds[14];
        bool ok[7];
        for (int i = 0; i < 7; ++i) {
            const QuantileInterval ci = quantile_interval_ranks(p.count, quantile_levels[i]);
            ok[i] = ci.ok;
            const double d = static_cast<double>(p.count - 1u);
            bound_levels[2 * i] = ci.ok ? static_cast<double>(ci.lo) / d : 0.0;
            bound_levels[2 * i + 1] = ci.ok ? static_cast<double>(ci.hi) / d : 0.0;
            if (exact_ && ci.ok) {
                bounds[2 * i] = order_statistic(ranks[s], stats[s].data(), ci.lo);
                bounds[2 * i + 1] = order_statistic(ranks[s], stats[s].data(), ci.hi);
            }
        }
        if (exact_) {
            quantiles_from_order_statistics(p.count, ranks[s], stats[s].data(), q);
        } else {
            histogram_quantiles(histogram(s), b, p.min, p.max, quantile_levels, 7, q);
            histogram_quantiles(histogram(s), b, p.min, p.max, bound_levels, 14, bounds);
        }
        set_quantiles(r, q);
        for (int i = 0; i < 7; ++i) {
            if (!ok[i]) continue;
            r.q_lo[i] = bounds[2 * i];
            r.q_hi[i] = bounds[2 * i + 1];
            r.q_se[i] = (r.q_hi[i] - r.q_lo[i]) / (2.0 * 1.959963984540054);
        }
    }
    return out;
}

// ---- OnsetHistogram --------------------------------------------------------------------------------------------

void OnsetHistogram::add(std::int32_t time_index) {
    if (time_index != onset_never && static_cast<std::size_t>(time_index) < counts.size()) {
        ++counts[time_index];
    } else {
        ++never;
    }
}

void OnsetHistogram::add_chunk(const std::int32_t* onset_index, std::size_t chunk, const std::uint8_t* valid) {
    for (std::size_t j = 0; j < chunk; ++j) {
        if (valid == nullptr || valid[j] != 0u) {
            add(onset_index[j]);
        }
    }
}

void OnsetHistogram::merge(const OnsetHistogram& other) {
    if (other.counts.size() != counts.size()) {
        throw std::invalid_argument("OnsetHistogram::merge: different numbers of output times");
    }
    for (std::size_t i = 0; i < counts.size(); ++i) {
        counts[i] += other.counts[i];
    }
    never += other.never;
    censored += other.censored;
}

std::uint64_t OnsetHistogram::total() const {
    std::uint64_t n = never;
    for (const std::uint64_t c : counts) {
        n += c;
    }
    return n;
}

double OnsetHistogram::quantile(double p, const std::vector<double>& t, bool include_never) const {
    if (t.size() != counts.size()) {
        throw std::invalid_argument("OnsetHistogram::quantile: t.size() != number of output times");
    }
    const std::uint64_t n = include_never ? total() : total() - never;
    if (n == 0u) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    // rank r = max(1, ⌈p·n⌉), clamped to n
    const double pr = std::ceil(p * static_cast<double>(n));
    std::uint64_t r = pr < 1.0 ? 1u : static_cast<std::uint64_t>(pr);
    r = r > n ? n : r;
    std::uint64_t cum = 0u;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        cum += counts[i];
        if (cum >= r) {
            return t[i];
        }
    }
    return std::numeric_limits<double>::infinity();
}

// ---- growth exponent -------------------------------------------------------------------------------------------

namespace {
/** @brief The interval of `pooled` from the spread of the finite `values` about their mean: se = se_of(Σ(x − x̄)², g)
 *         over the g of them, half-width t(0.975, g − 1)·se. */
template <class Se> ReplicaInterval spread_interval(double pooled, const std::vector<double>& values, Se se_of) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    ReplicaInterval r;
    double sum = 0.0;
    for (const double x : values)
        if (std::isfinite(x)) {
            sum += x;
            ++r.groups;
        }
    r.se = r.lo = r.hi = nan;
    if (r.groups < 2u || !std::isfinite(pooled)) return r;
    const double g = static_cast<double>(r.groups), mean = sum / g;
    double ss = 0.0;
    for (const double x : values)
        if (std::isfinite(x)) ss += (x - mean) * (x - mean);
    r.se = se_of(ss, g);
    const double half = student_t975(r.groups - 1u) * r.se;
    r.lo = pooled - half;
    r.hi = pooled + half;
    return r;
}
} // namespace

ReplicaInterval replica_interval(double pooled, const std::vector<double>& group_values) {
    return spread_interval(pooled, group_values,
                           [](double ss, double g) { return std::sqrt(ss / (g - 1.0)) / std::sqrt(g); });
}

ReplicaInterval jackknife_interval(double pooled, const std::vector<double>& leave_one_out) {
    return spread_interval(pooled, leave_one_out, [](double ss, double g) { return std::sqrt(ss * (g - 1.0) / g); });
}

double student_t975(std::size_t dof) {
    static const double table[31] = {
        0.0,           12.7062047362, 4.30265272975, 3.18244630528, 2.7764451052,  2.57058183564, 2.44691185114,
        2.36462425159, 2.3060041352,  2.2621571628,  2.22813885199, 2.20098516009, 2.17881282967, 2.16036865646,
        2.14478668792, 2.13144954556, 2.11990529922, 2.10981557783, 2.10092204024, 2.09302405441, 2.08596344727,
        2.07961384473, 2.0738730679,  2.06865761042, 2.06389856163, 2.05953855275, 2.05552943864, 2.05183051648,
        2.0484071418,  2.04522964213, 2.0422724563};
    if (dof == 0u) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (dof <= 30u) {
        return table[dof];
    }
    const double z = 1.959963984540054, n = static_cast<double>(dof);
    return z + (z * z * z + z) / (4.0 * n) + (5.0 * std::pow(z, 5) + 16.0 * z * z * z + 3.0 * z) / (96.0 * n * n);
}

GrowthFit growth_fit(const std::vector<double>& t, const std::vector<double>& median, double t_max) {
    FitSpec spec;
    spec.t_max = t_max;
    return fit_law(t, median, spec);
}

double growth_exponent(const std::vector<double>& t, const std::vector<double>& median, double t_max) {
    return growth_fit(t, median, t_max).slope;
}

} // namespace nhvk::stats
