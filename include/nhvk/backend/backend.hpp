// SPDX-License-Identifier: MIT
/** @file
 *  @brief The one interface between the ensemble pipeline (host/) and its backends (the CPU in host/, CUDA in
 *         kernels/): the sizes and settings of a run, where each array of a chunk lives, and the stages a backend
 *         runs on a chunk (sample, integrate, reduce), each enqueued on a slot so that an asynchronous backend
 *         overlaps them with the host's work on another slot.
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nhvk/distribution.hpp"
#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/stats/chunk_metrics.hpp"
#include "nhvk/stats/log_histogram.hpp"
#include "nhvk/stats/series_partial.hpp"

namespace nhvk {

/** @brief Sizes of every chunk of one run. */
struct ChunkLayout {
    int n = 0, k = 0, nt = 0;
    int n_params = 0;
    bool per_member_params = false; ///< parameter sweep: one parameter set per member
    long long capacity = 0;         ///< members per chunk (the leading dimension of every array)
    /** Which regions of a chunk the host reads or writes besides the statuses: a device backend keeps host copies
     *  (pinned memory, one per slot) of these only. A region left out has null host pointers in `slot(s)`. */
    bool host_inputs = true;  ///< q0 … params: the host writes them (`upload`) or reads them (`Downloads::inputs`)
    bool host_metrics = true; ///< the metrics: the host reads them (`Downloads::metrics`)
};

/** @brief How members are drawn (the run's `[q0]`, `[v0]`, `[mu0]`, `[model.params]`, `energy`, `seed`). */
struct SamplingPlan {
    std::uint64_t seed = 0;
    double t0 = 0.0;
    std::vector<Distribution> q0, v0, mu0, params; ///< n, n, k and n_params distributions
    std::optional<double> energy;                  ///< the energy shell E0, when set
};

/** @brief Settings common to every chunk: times, t0, step control, masks, threshold, sampling (pointers are host). */
struct ChunkCommon {
    std::string model;
    Method method = Method::dopri5;
    Precision precision = Precision::f64;
    EquationsKind equations = EquationsKind::generated;
    const double* times = nullptr;
    int nt = 0;
    double t0 = 0.0;
    StepControl ctl;
    DivergenceSpec divergence;
    bool alive_population = true;
    int replicas = 0;                                   ///< statistics.replicas
    double stop_at = NumericLimits<double>::infinity(); ///< divergence.stop_at (inf: never)
    double onset_threshold = 1e-3;
    const double* shared_params = nullptr; ///< used when the layout has no per-member parameters
    SamplingPlan sampling;
    /** A [sweep]: point p's members are the trajectory indices [p·point_size, (p+1)·point_size), drawn with
     *  points[p] as members 0, 1, … of a run of that point alone. point_size 0: no sweep (`sampling` for all). */
    std::vector<SamplingPlan> points;
    std::uint64_t point_size = 0;
};

/** @brief Calls f(p, member, j0, len) for each run [j0, j0 + len) of the trajectories [first, first + m) that lie in
 *         one sweep point of `point_size` members: p is the point and `member` the index within it of trajectory
 *         first + j0. */
template <class F> void for_each_point_range(std::uint64_t point_size, std::uint64_t first, long long m, F&& f) {
    for (long long j = 0; j < m;) {
        const std::uint64_t g = first + static_cast<std::uint64_t>(j), p = g / point_size, i = g - p * point_size;
        const long long len =
            static_cast<long long>(std::min<std::uint64_t>(static_cast<std::uint64_t>(m - j), point_size - i));
        f(p, i, j, len);
        j += len;
    }
}

/** @brief Calls f(plan, member, j0, len) for each run [j0, j0 + len) of members of [first, first + m) that lie in one
 *         sweep point: `plan` is that point's sampling plan and `member` the index within the point of trajectory
 *         first + j0 (without a sweep: one call, the run's plan, member = first). */
template <class F> void for_each_point_run(const ChunkCommon& c, std::uint64_t first, long long m, F&& f) {
    if (c.point_size == 0) {
        f(c.sampling, first, 0LL, m);
        return;
    }
    for_each_point_range(c.point_size, first, m, [&](std::uint64_t p, std::uint64_t i, long long j0, long long len) {
        f(c.points.at(static_cast<std::size_t>(p)), i, j0, len);
    });
}

/** @brief The members [j0, j0 + len) of a chunk as a chunk of their own: every per-member array shifted by j0, the
 *         leading dimension kept. */
inline ChunkArgs member_range(const ChunkArgs& a, long long j0, long long len) {
    ChunkArgs b = a;
    b.m = len;
    const auto shift = [&](auto* p) { return p ? p + j0 : p; };
    b.q0 = shift(a.q0);
    b.v0 = shift(a.v0);
    b.mu0 = shift(a.mu0);
    if (a.params_ld != 0) b.params = shift(a.params);
    b.metrics = shift(a.metrics);
    b.status = shift(a.status);
    b.failed = shift(a.failed);
    b.fail_index = shift(a.fail_index);
    b.onset = shift(a.onset);
    b.sample_status = shift(a.sample_status);
    b.stash = shift(a.stash);
    return b;
}

/** @brief The reduction's view of the members [j0, j0 + len) of chunk `a` as a chunk of their own whose member indices
 *         start at `first_member` (a sweep point's members in a run of that point alone: the index within the point
 *         keys the replica groups). */
inline stats::ChunkView part_view(const ChunkArgs& a, long long j0, long long len, std::uint64_t first_member) {
    ChunkArgs b = member_range(a, j0, len);
    b.first_member = first_member;
    return stats::metrics_view(b, len);
}

/**
 * @brief Byte offsets of the arrays of one chunk inside a single allocation (identical on host and device): the
 *        inputs (q0 … params), then the per-member statuses (sample_status … onset), then the metrics.
 */
struct ChunkBlock {
    std::size_t q0, v0, mu0, params, sample_status, status, failed, fail_index, onset, metrics;
    std::size_t input_bytes;  ///< [0, input_bytes): q0 … params
    std::size_t status_bytes; ///< [sample_status, sample_status + status_bytes): sample_status … onset
    std::size_t metric_bytes; ///< [metrics, metrics + metric_bytes)
    std::size_t total;

    explicit ChunkBlock(const ChunkLayout& L) {
        const std::size_t c = static_cast<std::size_t>(L.capacity);
        std::size_t off = 0;
        auto take = [&](std::size_t bytes) {
            const std::size_t at = off;
            off += (bytes + 255) / 256 * 256;
            return at;
        };
        q0 = take(sizeof(double) * L.n * c);
        v0 = take(sizeof(double) * L.n * c);
        mu0 = take(sizeof(double) * (L.k > 0 ? L.k : 1) * c);
        params = take(sizeof(double) * (L.per_member_params ? L.n_params : 0) * c);
        input_bytes = off;
        sample_status = take(c);
        status = take(c);
        failed = take(c);
        fail_index = take(sizeof(std::int32_t) * c);
        onset = take(sizeof(std::int32_t) * c);
        status_bytes = off - sample_status;
        metrics = take(sizeof(double) * static_cast<std::size_t>(metric_rows(L.nt)) * c);
        metric_bytes = off - metrics;
        total = off;
    }

    /** @brief Point `a`'s arrays into the block at `base`. */
    void bind(ChunkArgs& a, char* base, const ChunkLayout& L) const {
        bind_regions(a, base, base + sample_status, base + metrics, L);
    }

    /** @brief Point `a`'s arrays into three separate regions, each laid out as in the block: `inputs` (input_bytes),
     *         `statuses` (status_bytes) and `metrics` (metric_bytes); a null region leaves its arrays null. */
    void bind_regions(ChunkArgs& a, char* inputs, char* statuses, char* metric_region, const ChunkLayout& L) const {
        a.ld = L.capacity;
        const auto in = [&](std::size_t off) {
            return inputs ? reinterpret_cast<const double*>(inputs + off) : nullptr;
        };
        a.q0 = in(q0);
        a.v0 = in(v0);
        a.mu0 = in(mu0);
        if (L.per_member_params) {
            a.params = in(params);
            a.params_ld = L.capacity;
        }
        a.sample_status = reinterpret_cast<std::uint8_t*>(statuses);
        a.status = reinterpret_cast<std::uint8_t*>(statuses + (status - sample_status));
        a.failed = reinterpret_cast<std::uint8_t*>(statuses + (failed - sample_status));
        a.fail_index = reinterpret_cast<std::int32_t*>(statuses + (fail_index - sample_status));
        a.onset = reinterpret_cast<std::int32_t*>(statuses + (onset - sample_status));
        a.metrics = reinterpret_cast<double*>(metric_region);
    }

    /** @brief Bytes of the host copy a device backend keeps per slot: the statuses and the regions `L` asks for. */
    std::size_t host_bytes(const ChunkLayout& L) const {
        return status_bytes + (L.host_inputs ? input_bytes : 0u) + (L.host_metrics ? metric_bytes : 0u);
    }
};

/** @brief The chunk arguments that do not depend on the buffers. */
inline ChunkArgs common_args(const ChunkLayout& L, const ChunkCommon& c) {
    ChunkArgs a;
    a.nt = c.nt;
    a.t0 = c.t0;
    a.times = c.times;
    a.ctl = c.ctl;
    a.divergence = c.divergence;
    a.alive_population = c.alive_population;
    a.replicas = c.replicas;
    a.stop_at = c.stop_at;
    a.onset_threshold = c.onset_threshold;
    a.n_params = L.n_params;
    a.params = L.per_member_params ? nullptr : c.shared_params;
    a.params_ld = 0;
    return a;
}

/** @brief What `EnsembleBackend::download` brings back to the host besides the statuses. */
struct Downloads {
    bool inputs = false;  ///< q0, v0, mu0, params (samples.csv, saved trajectories)
    bool metrics = false; ///< every metric at every output time (exact quantiles, samples.csv)
};

/** @brief Time a backend spent in each stage (device time on the GPU, measured with events; wall time on the CPU). */
struct StageSeconds {
    double sample = 0.0, integrate = 0.0, reduce = 0.0;
    double transfer = 0.0; ///< host ↔ device copies (0 on the CPU)
};

/** @brief How a run sizes the chunks it gives a backend (pipeline/chunk_sizer.hpp): each chunk is sized from the
 *         measured time per member of the chunks before it so that it takes about `target_seconds`, since a stop
 *         request, a checkpoint and the progress line all wait for the chunk in flight; never more than the layout's
 *         capacity, nor fewer than `least` members (below that the backend is not busy, and the time per member
 *         stops falling); the first chunk, measured blind, has `first` members. */
struct ChunkPacing {
    double target_seconds = 0.0; ///< 0: every chunk has `first` members (a backend that does not pace)
    long long first = 0, least = 1;
};

/**
 * @brief A backend runs the stages of the pipeline on chunks held in slots. Every call enqueues work on slot `s`
 *        and may return before it is done (CUDA: one stream per slot); `wait(s)` completes it. Per chunk the
 *        pipeline calls `sample` (or writes the inputs itself and calls `upload`), `integrate`, `reduce` when the
 *        statistics are kept on the backend, `download`, and later `wait` before it reads `slot(s)`. The CPU
 *        backend is the reference; the CUDA backend runs the same per-member code and the same reduction source.
 */
class EnsembleBackend {
public:
    virtual ~EnsembleBackend() = default;
    virtual std::string name() const = 0;
    /** @brief Chunks that can be in flight at once. */
    virtual int slots() const = 0;
    /** @brief Host-visible buffers of slot `s` (ChunkBlock layout, leading dimension `capacity`). */
    virtual ChunkArgs& slot(int s) = 0;
    /** @brief Stage 1: draw members [first, first + m) into slot `s` (inputs and sample_status). */
    virtual void sample(int s, std::uint64_t first, long long m) = 0;
    /** @brief Inputs that the host wrote into `slot(s)` → the backend (instead of `sample`; tests inject cases). */
    virtual void upload(int s, long long m) = 0;
    /** @brief Stage 2: integrate the `m` members of slot `s`, both dynamics (statuses and metrics). */
    virtual void integrate(int s, long long m) = 0;
    /** @brief Set up the backend's running statistics: `n_series` series of `metric_count · nt` metrics, binned by
     *         `table`, and, when `value_capacity` > 0 (only where `keeps_values()`), room for the values of exact
     *         quantiles of up to `value_capacity` members per series. */
    virtual void start_reduction(std::size_t n_series, const stats::LogBinTable& table,
                                 std::uint64_t value_capacity) = 0;
    /** @brief Stage 3: add the metrics of slot `s`'s valid members (status ok) to the running statistics. */
    virtual void reduce(int s, long long m) = 0;
    /** @brief True when `reduce_part` reduces where the metrics are, so that a sweep's points need no metrics on the
     *         host (the CUDA backend; the CPU backend's metrics are the host's already). */
    virtual bool reduces_parts() const { return false; }
    /** @brief Stage 3 for a part of a chunk, enqueued on slot `s` after `integrate` as `reduce` is: the members
     *         [j0, j0 + len) of slot `s`'s chunk, as part_view(j0, len, first_member) sees them, added to the running
     *         statistics of `key` (a sweep's point), which the backend keeps apart from every other key's until
     *         `take_part`. A key's parts may come from both slots. start_reduction (with no values) sets the shape
     *         and table. */
    virtual void reduce_part(int s, long long j0, long long len, std::uint64_t first_member, std::uint64_t key);
    /** @brief The running statistics of `key`, once every part enqueued for it completed (empty for a key never
     *         given), replacing `partials[n_series]` and `counts[n_series · table.spec.row_words()]` (host arrays);
     *         with `release` the backend then forgets the key, otherwise it keeps adding to it (a snapshot).
     *         Deterministic, as `collect`. */
    virtual void take_part(std::uint64_t key, stats::SeriesPartial* partials, std::uint64_t* counts, bool release);
    /** @brief Slot `s`'s statuses (sample_status … onset) → host, and what `d` asks for. */
    virtual void download(int s, long long m, Downloads d) = 0;
    /** @brief Complete everything enqueued on slot `s`. */
    virtual void wait(int s) = 0;
    /** @brief The running statistics (after every slot completed): `partials[n_series]` and the histogram rows
     *         `counts[n_series · table.spec.row_words()]`, merged into what the arrays hold. Deterministic: exact
     *         sums and integer counts. */
    virtual void collect(stats::SeriesPartial* partials, std::uint64_t* counts) = 0;
    /** @brief True when the backend can keep the values of exact quantiles itself and select their order
     *         statistics (the CUDA backend: the values stay in device memory). */
    virtual bool keeps_values() const { return false; }
    /** @brief The kept values' order statistics (after every slot completed): out[s][i] = the ranks[s][i]-th
     *         smallest value of series s (ranks ascending and below the series' count). Deterministic: an order
     *         statistic is a value. */
    virtual void order_statistics(const std::vector<std::vector<std::uint64_t>>& ranks,
                                  std::vector<std::vector<double>>& out);
    /** @brief The kept values so far (after every slot completed), appended to out[s] in no particular order: for a
     *         resume record, an MPI rank's or a shard's partial state. */
    virtual void download_values(std::vector<std::vector<double>>& out);
    /** @brief The replica groups' leave-one-out order statistics of one row, selected where its values are kept
     *         (after every slot completed): out[g][i] = the ranks[g][i]-th smallest (ranks ascending) of the kept
     *         values of every series of `groups` but groups[g]. Every rank asked lies in the band [a, b]: its value
     *         is one of the values in [a, b] (the row's order statistics around its median, which hold every
     *         delete-one-group median), so only the band is looked at, and only the selected values come back.
     *         Deterministic: an order statistic is a value. */
    virtual void band_order_statistics(const std::vector<std::size_t>& groups, double a, double b,
                                       const std::vector<std::vector<std::uint64_t>>& ranks,
                                       std::vector<std::vector<double>>& out);
    /** @brief Time spent in each stage by the work completed so far (call after `wait`). */
    virtual StageSeconds stage_seconds() const = 0;
    /** @brief How the run sizes this backend's chunks, for chunks of at most `capacity` members; by default every
     *         chunk is full. */
    virtual ChunkPacing pacing(long long capacity) const { return {0.0, capacity, capacity}; }
};

inline void EnsembleBackend::reduce_part(int, long long, long long, std::uint64_t, std::uint64_t) {
    throw std::logic_error("reduce_part: backend '" + name() + "' reduces no parts");
}
inline void EnsembleBackend::take_part(std::uint64_t, stats::SeriesPartial*, std::uint64_t*, bool) {
    throw std::logic_error("take_part: backend '" + name() + "' reduces no parts");
}
inline void EnsembleBackend::order_statistics(const std::vector<std::vector<std::uint64_t>>&,
                                              std::vector<std::vector<double>>&) {
    throw std::logic_error("order_statistics: backend '" + name() + "' keeps no values");
}
inline void EnsembleBackend::download_values(std::vector<std::vector<double>>&) {
    throw std::logic_error("download_values: backend '" + name() + "' keeps no values");
}
inline void EnsembleBackend::band_order_statistics(const std::vector<std::size_t>&, double, double,
                                                   const std::vector<std::vector<std::uint64_t>>&,
                                                   std::vector<std::vector<double>>&) {
    throw std::logic_error("band_order_statistics: backend '" + name() + "' keeps no values");
}

/** @brief The CPU reference backend: OpenMP over members (`threads` ≤ 0: all cores). */
std::unique_ptr<EnsembleBackend> make_cpu_backend(const ChunkLayout& layout, const ChunkCommon& common, int threads);

/** @brief The CUDA backend: two slots, one stream each, one thread per member. Throws without CUDA. */
std::unique_ptr<EnsembleBackend> make_cuda_backend(const ChunkLayout& layout, const ChunkCommon& common);

/** @brief True when this build has the CUDA backend and a device is present. */
bool cuda_available();
/** @brief Why the CUDA backend is not available (empty when it is). */
std::string cuda_unavailable_reason();

} // namespace nhvk
