// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA backend: the whole chunk pipeline on the device (sampling, one thread per trajectory running
 *         the same `run_chunk_member` / `integrate_member` as the CPU, the Thrust reduction), pinned host buffers and
 *         two streams so transfers and host work overlap device compute.
 */
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/fill.h>
#include <thrust/system/cuda/execution_policy.h>

#include <algorithm>

#include "cuda_check.hpp"
#include "cuda_jit.hpp"
#include "cuda_model_ops.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/cuda_device.hpp"
#include "nhvk/backend/cuda_reduce.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "nhvk/stats/block_reduce.hpp"
#include "nhvk/stats/chunk_metrics.hpp"
#include "nhvk/stats/rank_select.hpp"
#include "nhvk_builtin_models.hpp"

namespace nhvk {

namespace {
template <class... Ms> std::vector<CudaModelOps> make_table(ModelList<Ms...>) { return {make_cuda_model_ops<Ms>()...}; }

const CudaModelOps& cuda_ops(const std::string& model) {
    // kernels compiled at run time first: a model file's (which may replace a built-in model of its name), or a
    // built-in model's that this build did not compile ahead of time
    if (const CudaModelOps* jit = jit_cuda_ops(model)) return *jit;
    static const std::vector<CudaModelOps> table = make_table(AotCudaModels{});
    for (const CudaModelOps& o : table)
        if (model == o.name) return o;
    // NOTE: the host's provider compiles the module at its first launch (an unknown model is refused there)
    if (const CudaModelOps* provided = provided_cuda_ops()) return *provided;
    throw std::invalid_argument("backend 'cuda': no kernels of model '" + model + "'");
}

/** @brief A device array freed on destruction. */
template <class T> struct DeviceArray {
    T* p = nullptr;
    std::size_t size = 0;
    DeviceArray() = default;
    explicit DeviceArray(std::size_t n) : size(n) { NHVK_CUDA_CHECK(cudaMalloc(&p, sizeof(T) * (n > 0 ? n : 1))); }
    DeviceArray(DeviceArray&& o) noexcept : p(std::exchange(o.p, nullptr)), size(o.size) {}
    DeviceArray& operator=(DeviceArray&& o) noexcept {
        std::swap(p, o.p);
        std::swap(size, o.size);
        return *this;
    }
    ~DeviceArray() { cudaFree(p); }
};

/** @brief Waits for every copy and fill made on the legacy default stream.
 *
 * NOTE: the slots' streams are non-blocking, so nothing orders them after cudaMemcpy/cudaMemset on the legacy stream:
 * a cudaMemset returns before it runs, and a cudaMemcpy from pageable memory returns once its data is staged, before
 * the copy lands, so a kernel on a slot's stream could read the memory before it is set. Set-up copies that both
 * streams read are followed by this; work that stays on one stream uses that stream's own async copies.
 */
void settle() { NHVK_CUDA_CHECK(cudaDeviceSynchronize()); }

// NOTE: no minimum-blocks bound: ptxas spills with one (bench/results/2026-11-29-reduction-kernel-resources.txt).
constexpr unsigned reduce_block_threads = 256;
/** @brief Accumulators a block of the reduction holds at once without histogram rows: 24 × 1640 B of shared memory
 *         (a row and up to 23 of its replica groups per pass), under the 48 KiB a block gets without opting in. */
constexpr std::size_t reduce_block_batch = 24;

/** @brief The block-cooperative reduction of a chunk into tile partials and histogram rows (see block_reduce.hpp,
 *         whose host twin runs the same phases): one block per (row, tile), one barrier between phases. */
__global__ void __launch_bounds__(reduce_block_threads)
    block_reduce_kernel(stats::BlockPlan P, stats::SeriesPartial* partials, std::uint64_t* counts) {
    extern __shared__ stats::BlockAccumulator acc[];
    const std::size_t b = blockIdx.x;
    const std::size_t passes = P.passes(b / P.n_tiles);
    for (std::size_t pass = 0; pass < passes; ++pass) {
        for (int phase = 0; phase < stats::BlockPlan::kPhases; ++phase) {
            stats::block_reduce_phase(phase, P, b, pass, acc, partials, counts, threadIdx.x, blockDim.x);
            __syncthreads();
        }
    }
}

/** @brief Launches `block_reduce_kernel` over `plan` (nothing for an empty chunk) with the shared memory its batch
 *         takes, allowed beyond the default 48 KiB first when it needs more. */
void launch_block_reduce(const stats::BlockPlan& plan, unsigned threads, stats::SeriesPartial* partials,
                         std::uint64_t* counts, cudaStream_t stream) {
    if (plan.blocks() == 0 || plan.in.chunk == 0) return;
    const std::size_t bytes = stats::block_shared_bytes(plan);
    if (bytes > (48u << 10))
        NHVK_CUDA_CHECK(cudaFuncSetAttribute(block_reduce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
    block_reduce_kernel<<<static_cast<unsigned>(plan.blocks()), threads, bytes, stream>>>(plan, partials, counts);
}

/** @brief A device attribute, or `fallback` where it cannot be read. */
int device_attribute(cudaDeviceAttr a, int fallback) {
    int device = 0, v = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) return fallback;
    return v;
}

// The selection of order statistics (rank_select.hpp's steps; its host twin, select_ranks_host, runs the same
// SelectRange and select_plan). Launches cover (tiles × series) blocks: blockIdx.y is the series of the batch.
constexpr unsigned select_threads = 256;
/** @brief Series selected together: their bucket counts, starts and fills (3 × 32 KiB each) stay under 13 MB. */
constexpr std::size_t select_batch = 128;

/** @brief Step 1: each series' least and greatest finite key (lo[y], hi[y] start at kSelectNoLo, kSelectNoHi). */
__global__ void __launch_bounds__(select_threads)
    select_extremes_kernel(const double* values, std::size_t stride, std::size_t n, const std::uint32_t* series,
                           unsigned long long* lo, unsigned long long* hi) {
    const double* v = values + series[blockIdx.y] * stride;
    unsigned long long a = stats::kSelectNoLo, b = stats::kSelectNoHi;
    for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < n;
         j += std::size_t{gridDim.x} * blockDim.x) {
        const double x = v[j];
        if (!stats::detail::is_finite(x)) continue;
        const unsigned long long k = stats::detail::order_key(x);
        a = k < a ? k : a;
        b = k > b ? k : b;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long a2 = __shfl_down_sync(0xFFFFFFFFu, a, o), b2 = __shfl_down_sync(0xFFFFFFFFu, b, o);
        a = a2 < a ? a2 : a;
        b = b2 > b ? b2 : b;
    }
    if ((threadIdx.x & 31u) == 0u) {
        if (a != stats::kSelectNoLo) atomicMin(lo + blockIdx.y, a);
        if (b != stats::kSelectNoHi) atomicMax(hi + blockIdx.y, b);
    }
}

/** @brief Step 2: the bucket counts of each series, in shared memory per block, then added into counts[y]. */
__global__ void __launch_bounds__(select_threads)
    select_count_kernel(const double* values, std::size_t stride, std::size_t n, const std::uint32_t* series,
                        const unsigned long long* lo, const unsigned long long* hi, std::uint32_t* counts) {
    __shared__ std::uint32_t c[stats::kSelectSlots];
    for (unsigned i = threadIdx.x; i < stats::kSelectSlots; i += blockDim.x) c[i] = 0u;
    __syncthreads();
    const double* v = values + series[blockIdx.y] * stride;
    const stats::SelectRange r = stats::SelectRange::of(lo[blockIdx.y], hi[blockIdx.y]);
    for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < n;
         j += std::size_t{gridDim.x} * blockDim.x)
        atomicAdd(c + r.bucket(v[j]), 1u);
    __syncthreads();
    std::uint32_t* into = counts + std::size_t{blockIdx.y} * stats::kSelectSlots;
    for (unsigned i = threadIdx.x; i < stats::kSelectSlots; i += blockDim.x)
        if (c[i] != 0u) atomicAdd(into + i, c[i]);
}

/** @brief Step 3, one thread per series y: its buckets' starts, its ranks' places, and how many values it gathers. */
__global__ void select_plan_kernel(std::size_t n_series, const std::uint32_t* counts, const std::uint64_t* ranks,
                                   const std::size_t* first_rank, std::uint32_t* start, std::uint32_t* pos,
                                   std::uint32_t* total) {
    const std::size_t y = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    if (y >= n_series) return;
    const std::size_t f = first_rank[y];
    total[y] = stats::select_plan(counts + y * stats::kSelectSlots, ranks + f, first_rank[y + 1] - f,
                                  start + y * stats::kSelectSlots, pos + f);
}

/** @brief Step 4: the values of the ranks' buckets, each bucket into its own place of series y's gathered values
 *         (which start at base[y]); the order inside a bucket is the atomics' and irrelevant (step 5 sorts). */
__global__ void __launch_bounds__(select_threads)
    select_gather_kernel(const double* values, std::size_t stride, std::size_t n, const std::uint32_t* series,
                         const unsigned long long* lo, const unsigned long long* hi, const std::uint32_t* start,
                         std::uint32_t* fill, const std::uint64_t* base, double* gathered) {
    const double* v = values + series[blockIdx.y] * stride;
    const stats::SelectRange r = stats::SelectRange::of(lo[blockIdx.y], hi[blockIdx.y]);
    const std::uint32_t* st = start + std::size_t{blockIdx.y} * stats::kSelectSlots;
    std::uint32_t* fl = fill + std::size_t{blockIdx.y} * stats::kSelectSlots;
    double* out = gathered + base[blockIdx.y];
    for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < n;
         j += std::size_t{gridDim.x} * blockDim.x) {
        const double x = v[j];
        const std::uint32_t b = r.bucket(x);
        if (st[b] != stats::kSelectNone) out[st[b] + atomicAdd(fl + b, 1u)] = x;
    }
}

/** @brief Step 5's reading: out[i] = rank i's value among its series' sorted gathered values (+inf: none). */
__global__ void select_pick_kernel(std::size_t n_ranks, const std::uint32_t* rank_series, const std::uint32_t* pos,
                                   const std::uint64_t* base, const double* sorted, double* out) {
    const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    if (i >= n_ranks) return;
    out[i] = pos[i] == stats::kSelectNone ? stats::detail::infinity() : sorted[base[rank_series[i]] + pos[i]];
}

/**
 * @brief The order statistics of kept values on the device: for each series[i] (its values at values +
 *        series[i]·stride, the first n of them, finite or +inf), out[i][k] = its ranks[i][k]-th smallest value
 *        (ranks ascending, below n). Only the selected values come back; the gathered buckets' sizes are the one
 *        other thing read on the host (to size the gathering). Series go in batches of select_batch.
 */
void select_ranks_device(const double* values, std::size_t stride, std::size_t n,
                         const std::vector<std::size_t>& series, const std::vector<std::vector<std::uint64_t>>& ranks,
                         std::vector<std::vector<double>>& out, DeviceArray<char>& temp, cudaStream_t stream) {
    if (series.size() != ranks.size()) throw std::logic_error("select_ranks_device: one rank list per series");
    if (n > 0xFFFFFFFFull) throw std::runtime_error("backend 'cuda': exact quantiles of more than 2^32 - 1 values");
    out.assign(series.size(), {});
    const int sms = device_attribute(cudaDevAttrMultiProcessorCount, 128);
    for (std::size_t b0 = 0; b0 < series.size(); b0 += select_batch) {
        const std::size_t nb = std::min(select_batch, series.size() - b0);
        std::vector<std::uint32_t> h_series(nb), h_rank_series;
        std::vector<std::size_t> h_first(nb + 1, 0);
        std::vector<std::uint64_t> h_ranks;
        for (std::size_t y = 0; y < nb; ++y) {
            h_series[y] = static_cast<std::uint32_t>(series[b0 + y]);
            const std::vector<std::uint64_t>& r = ranks[b0 + y];
            h_ranks.insert(h_ranks.end(), r.begin(), r.end());
            h_rank_series.insert(h_rank_series.end(), r.size(), static_cast<std::uint32_t>(y));
            h_first[y + 1] = h_ranks.size();
        }
        const std::size_t nr = h_ranks.size();
        if (nr == 0) {
            continue;
        }
        DeviceArray<std::uint32_t> d_series(nb), d_rank_series(nr), d_pos(nr), d_total(nb);
        DeviceArray<std::size_t> d_first(nb + 1);
        DeviceArray<std::uint64_t> d_ranks(nr), d_base(nb + 1);
        DeviceArray<unsigned long long> d_lo(nb), d_hi(nb);
        DeviceArray<std::uint32_t> d_counts(nb * stats::kSelectSlots), d_start(nb * stats::kSelectSlots),
            d_fill(nb * stats::kSelectSlots);
        const auto up = [&](auto& dev, const auto& host) {
            NHVK_CUDA_CHECK(
                cudaMemcpyAsync(dev.p, host.data(), sizeof(host[0]) * host.size(), cudaMemcpyHostToDevice, stream));
        };
        up(d_series, h_series);
        up(d_rank_series, h_rank_series);
        up(d_first, h_first);
        up(d_ranks, h_ranks);
        NHVK_CUDA_CHECK(cudaMemsetAsync(d_lo.p, 0xFF, sizeof(unsigned long long) * nb, stream));
        NHVK_CUDA_CHECK(cudaMemsetAsync(d_hi.p, 0, sizeof(unsigned long long) * nb, stream));
        NHVK_CUDA_CHECK(cudaMemsetAsync(d_counts.p, 0, sizeof(std::uint32_t) * d_counts.size, stream));
        NHVK_CUDA_CHECK(cudaMemsetAsync(d_fill.p, 0, sizeof(std::uint32_t) * d_fill.size, stream));
        // NOTE: about eight blocks per multiprocessor over the batch, each striding over at least a block's values
        const std::size_t per_series = std::max<std::size_t>(1, (8u * static_cast<std::size_t>(sms) + nb - 1) / nb);
        const dim3 grid(static_cast<unsigned>(std::min(per_series, std::max<std::size_t>(1, (n + 255) / 256))),
                        static_cast<unsigned>(nb));
        select_extremes_kernel<<<grid, select_threads, 0, stream>>>(values, stride, n, d_series.p, d_lo.p, d_hi.p);
        select_count_kernel<<<grid, select_threads, 0, stream>>>(values, stride, n, d_series.p, d_lo.p, d_hi.p,
                                                                 d_counts.p);
        select_plan_kernel<<<static_cast<unsigned>((nb + 63) / 64), 64, 0, stream>>>(
            nb, d_counts.p, d_ranks.p, d_first.p, d_start.p, d_pos.p, d_total.p);
        NHVK_CUDA_CHECK(cudaGetLastError());
        std::vector<std::uint32_t> h_total(nb);
        NHVK_CUDA_CHECK(
            cudaMemcpyAsync(h_total.data(), d_total.p, sizeof(std::uint32_t) * nb, cudaMemcpyDeviceToHost, stream));
        NHVK_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<std::uint64_t> h_base(nb + 1, 0);
        for (std::size_t y = 0; y < nb; ++y) h_base[y + 1] = h_base[y] + h_total[y];
        up(d_base, h_base);
        const std::size_t n_gathered = h_base[nb];
        DeviceArray<double> d_gathered(n_gathered), d_sorted(n_gathered), d_out(nr);
        select_gather_kernel<<<grid, select_threads, 0, stream>>>(values, stride, n, d_series.p, d_lo.p, d_hi.p,
                                                                  d_start.p, d_fill.p, d_base.p, d_gathered.p);
        if (n_gathered > 0) {
            std::size_t bytes = 0;
            NHVK_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
                nullptr, bytes, d_gathered.p, d_sorted.p, static_cast<std::int64_t>(n_gathered),
                static_cast<std::int64_t>(nb), d_base.p, d_base.p + 1, stream));
            if (temp.size < bytes) temp = DeviceArray<char>(bytes);
            NHVK_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
                temp.p, bytes, d_gathered.p, d_sorted.p, static_cast<std::int64_t>(n_gathered),
                static_cast<std::int64_t>(nb), d_base.p, d_base.p + 1, stream));
        }
        select_pick_kernel<<<static_cast<unsigned>((nr + 255) / 256), 256, 0, stream>>>(nr, d_rank_series.p, d_pos.p,
                                                                                        d_base.p, d_sorted.p, d_out.p);
        NHVK_CUDA_CHECK(cudaGetLastError());
        std::vector<double> h_out(nr);
        NHVK_CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.p, sizeof(double) * nr, cudaMemcpyDeviceToHost, stream));
        NHVK_CUDA_CHECK(cudaStreamSynchronize(stream));
        for (std::size_t y = 0; y < nb; ++y)
            out[b0 + y].assign(h_out.begin() + static_cast<std::ptrdiff_t>(h_first[y]),
                               h_out.begin() + static_cast<std::ptrdiff_t>(h_first[y + 1]));
    }
}

/** @brief x < a: a kept value below a band (+inf, an excluded member's place, never is). */
struct Below {
    double a;
    __device__ bool operator()(double x) const { return x < a; }
};

/** @brief a <= x <= b: a kept value inside a band of finite bounds. */
struct Within {
    double a, b;
    __device__ bool operator()(double x) const { return x >= a && x <= b; }
};

/** @brief A band entry of another group than g (band_order_statistics). */
struct NotGroup {
    std::uint32_t g;
    __device__ bool operator()(std::uint32_t tag) const { return tag != g; }
};

/** @brief Bytes of tile partials and histogram rows per slot: 1 GiB, or NHVK_DEVICE_BUDGET_MB (a benchmark knob). */
std::size_t device_budget() {
    std::size_t mb = 1024;
    if (const char* e = std::getenv("NHVK_DEVICE_BUDGET_MB"))
        mb = static_cast<std::size_t>(std::max(1LL, std::atoll(e)));
    return mb << 20;
}

/** @brief How many tiles each series is reduced in by accumulate_chunk on the device, which reduces there only the
 *         histogram rows too wide for the block reduction's shared memory. An item (series × tile) is one thread's
 *         sequential pass, with a SeriesPartial and a histogram row (32.8 KiB with the default window) of its own.
 *         Many items fill the GPU, but each item reloads its partial every chunk, so an item needs enough of a
 *         chunk's members to amortise that: about 65536 items in all, at least 512 members per item and chunk, and
 *         at most `budget` bytes per slot (at least one tile per series).
 *
 * NOTE: the three numbers come from a sweep on an H100: many series (the DOPRI5 bench's 401) want more items than
 * the old 16384, few series (the RK4 workload's 11) slow down when an item sees only a few members per chunk
 * (bench/results/2026-11-24-h100-statistics.md).
 */
std::size_t device_tiles(std::size_t n_series, std::size_t row_words, long long capacity, std::size_t budget) {
    const std::size_t item_bytes = sizeof(stats::SeriesPartial) + sizeof(std::uint64_t) * row_words;
    // NOTE: NHVK_DEVICE_ITEMS overrides the target number of items (a benchmark knob: bench/gpu_statistics.sh).
    std::size_t items = 65536;
    if (const char* e = std::getenv("NHVK_DEVICE_ITEMS")) items = std::max(1LL, std::atoll(e));
    const std::size_t series = std::max<std::size_t>(1, n_series);
    std::size_t tiles = std::max<std::size_t>(1, items / series);
    tiles = std::min(tiles, std::max<std::size_t>(1, budget / (item_bytes * series)));
    tiles = std::min(tiles, std::max<std::size_t>(1, static_cast<std::size_t>(std::max(1LL, capacity)) / 512));
    return tiles;
}

/**
 * @brief Two slots, each a pinned host block, a device block and a stream: every stage is enqueued on the slot's
 *        stream and returns at once, so the host finishes the other slot meanwhile. Sampling, integration and (for
 *        histogram statistics) the reduction run on the device; per chunk only the statuses come back (and the
 *        inputs or metrics when the run writes them per trajectory or keeps exact quantiles).
 */
class CudaBackend final : public EnsembleBackend {
public:
    CudaBackend(const ChunkLayout& L, const ChunkCommon& c)
        : layout_(L), common_(c), block_(L), ops_(cuda_ops(c.model)) {
        if (common_.equations != EquationsKind::generated)
            throw std::runtime_error("backend 'cuda' integrates the generated equations only "
                                     "(integrator.equations = \"ad\" runs on the CPU backend)");
        NHVK_CUDA_CHECK(cudaMalloc(&d_times_, sizeof(double) * (c.nt > 0 ? c.nt : 1)));
        NHVK_CUDA_CHECK(cudaMemcpy(d_times_, c.times, sizeof(double) * c.nt, cudaMemcpyHostToDevice));
        if (c.shared_params && L.n_params > 0 && !L.per_member_params) {
            NHVK_CUDA_CHECK(cudaMalloc(&d_params_, sizeof(double) * L.n_params));
            NHVK_CUDA_CHECK(
                cudaMemcpy(d_params_, c.shared_params, sizeof(double) * L.n_params, cudaMemcpyHostToDevice));
        }
        settle();
        for (int s = 0; s < 2; ++s) {
            // NOTE: pinned host memory for the statuses and only the regions the host uses: pinning is slow (about a
            // second per few GB) and counts against the host's memory, and the metrics of a chunk are most of it.
            NHVK_CUDA_CHECK(cudaMallocHost(&h_[s], block_.host_bytes(L)));
            char* statuses = h_[s];
            char* inputs = L.host_inputs ? statuses + block_.status_bytes : nullptr;
            char* metrics =
                L.host_metrics ? statuses + block_.status_bytes + (inputs ? block_.input_bytes : 0u) : nullptr;
            // NOTE: the device block ends with the chunk's two-pass stash (ChunkArgs::stash), which the host never
            // sees; an implicit method integrates both motions at once and has none
            const std::size_t stash_bytes =
                two_passes_on_device(c.method)
                    ? sizeof(double) * static_cast<std::size_t>(stash_values(L.n, L.nt) * std::max(L.capacity, 1LL))
                    : 0u;
            if (const cudaError_t e = cudaMalloc(&d_[s], block_.total + stash_bytes); e != cudaSuccess) {
                (void)cudaGetLastError();
                const auto mib = [](std::size_t b) { return std::to_string((b + (1u << 20) - 1) >> 20); };
                throw std::runtime_error(
                    "backend 'cuda': no room on the device for a chunk of " + std::to_string(L.capacity) +
                    " members (" + mib(block_.total + stash_bytes) +
                    " MiB per buffer slot, two slots: " + mib(block_.metric_bytes) + " MiB of metrics" +
                    (stash_bytes ? ", " + mib(stash_bytes) + " MiB of nonholonomic states for the vakonomic pass"
                                 : std::string()) +
                    "; " + cudaGetErrorString(e) + "); lower run.chunk or the number of output times");
            }
            NHVK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_[s], cudaStreamNonBlocking));
            host_args_[s] = common_args(L, c);
            block_.bind_regions(host_args_[s], inputs, statuses, metrics, L);
            h_inputs_[s] = inputs;
            h_metrics_[s] = metrics;
            dev_args_[s] = common_args(L, c);
            block_.bind(dev_args_[s], d_[s], L);
            if (stash_bytes) dev_args_[s].stash = reinterpret_cast<double*>(d_[s] + block_.total);
            dev_args_[s].times = d_times_;
            if (!L.per_member_params) dev_args_[s].params = d_params_;
        }
    }
    ~CudaBackend() override {
        for (int s = 0; s < 2; ++s) {
            if (stream_[s]) {
                cudaStreamSynchronize(stream_[s]);
                cudaStreamDestroy(stream_[s]);
            }
            for (Timed& t : timed_[s]) {
                cudaEventDestroy(t.begin);
                cudaEventDestroy(t.end);
            }
            cudaFreeHost(h_[s]);
            cudaFree(d_[s]);
        }
        for (auto& [key, k] : parts_) cudaEventDestroy(k.done);
        for (KeyStatistics& k : free_parts_) cudaEventDestroy(k.done);
        cudaFree(d_times_);
        cudaFree(d_params_);
    }
    std::string name() const override { return "cuda"; }
    int slots() const override { return 2; }
    ChunkArgs& slot(int s) override { return host_args_[s]; }
    ChunkPacing pacing(long long capacity) const override {
        // NOTE: a chunk of about two seconds keeps the device busy (two are in flight) while a stop request or a
        // checkpoint waits for at most those two. Below 256 members per SM a chunk no longer fills the device, so
        // it would take about as long with fewer members. The first chunk, measured blind, has the default chunk's
        // size, which fills a device of this generation.
        int device = 0, sms = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
            sms = 128;
        const long long least = std::min<long long>(capacity, 256LL * std::max(sms, 1));
        return {2.0, std::max(least, std::min<long long>(capacity, 65536)), least};
    }

    void sample(int s, std::uint64_t first, long long m) override {
        set_m(s, m);
        host_args_[s].first_member = dev_args_[s].first_member = first;
        const int t = begin(s, stage_sample);
        ops_.launch_sample(common_, dev_args_[s], first, stream_[s]);
        end(s, t);
    }
    void upload(int s, long long m) override {
        set_m(s, m);
        dev_args_[s].first_member = host_args_[s].first_member; // the caller's, with the inputs it wrote
        const int t = begin(s, stage_transfer);
        if (!h_inputs_[s]) throw std::logic_error("upload: this backend keeps no host copy of the inputs");
        // NOTE: one copy of the whole input region (its layout is identical on both sides).
        NHVK_CUDA_CHECK(cudaMemcpyAsync(d_[s], h_inputs_[s], block_.input_bytes, cudaMemcpyHostToDevice, stream_[s]));
        NHVK_CUDA_CHECK(cudaMemcpyAsync(d_[s] + block_.sample_status, h_[s], static_cast<std::size_t>(m),
                                        cudaMemcpyHostToDevice, stream_[s]));
        end(s, t);
    }
    void integrate(int s, long long m) override {
        set_m(s, m);
        const int t = begin(s, stage_integrate);
        ops_.launch_chunk(common_, dev_args_[s], stream_[s]);
        end(s, t);
    }
    void start_reduction(std::size_t n_series, const stats::LogBinTable& table, std::uint64_t value_capacity) override {
        n_series_ = n_series;
        value_capacity_ = static_cast<std::size_t>(value_capacity);
        values_filled_ = 0;
        if (value_capacity_ > 0) {
            // NOTE: every member's value of every series, unfiltered (store_chunk_values): one allocation up front, so
            // a run that does not fit the device fails here, before any work.
            const double bytes = 8.0 * static_cast<double>(n_series) * static_cast<double>(value_capacity_);
            double* p = nullptr;
            const cudaError_t e = cudaMalloc(&p, static_cast<std::size_t>(bytes));
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                throw std::runtime_error("backend 'cuda': no room on the device for the values of exact quantiles (" +
                                         std::to_string(bytes / 1048576.0) + " MiB: " + cudaGetErrorString(e) +
                                         "); lower run.exact_memory_mb for histogram quantiles, or run fewer "
                                         "trajectories per process");
            }
            d_values_.p = p;
            d_values_.size = n_series * value_capacity_;
        }
        row_words_ = table.spec.row_words();
        d_edges_ = DeviceArray<double>(table.edges.size());
        d_start_ = DeviceArray<std::uint32_t>(table.start.size());
        NHVK_CUDA_CHECK(
            cudaMemcpy(d_edges_.p, table.edges.data(), sizeof(double) * table.edges.size(), cudaMemcpyHostToDevice));
        NHVK_CUDA_CHECK(cudaMemcpy(d_start_.p, table.start.data(), sizeof(std::uint32_t) * table.start.size(),
                                   cudaMemcpyHostToDevice));
        table_ = table;
        binner_host_ = stats::LogBinner::make(table_);
        binner_ = binner_host_;
        binner_.edges = d_edges_.p;
        binner_.start = d_start_.p;
        // NOTE: the block reduction, its tiles sized from the device's multiprocessors. A block keeps a batch of
        // targets (a row and its replica groups) in shared memory: without histogram rows (exact quantiles) 24, with
        // them as many as fit half a multiprocessor's shared memory (3 of 34 KB on an H100), so two blocks share
        // one. Rows too wide for that (a window far above the default) fall back to accumulate_chunk's items.
        const stats::ChunkView shape = stats::metrics_view(dev_args_[0], layout_.capacity);
        const stats::BlockPlan probe =
            stats::block_plan(shape, 1, reduce_block_batch, value_capacity_ > 0 ? nullptr : &binner_host_);
        reduce_batch_ =
            probe.with_rows ? cuda_block_batch(probe.target_bytes(), reduce_block_batch) : reduce_block_batch;
        if (reduce_batch_ > 0) {
            const std::size_t tile_bytes = sizeof(stats::SeriesPartial) + 8 * probe.row_words();
            n_tiles_ = stats::block_tiles(
                stats::detail::ungrouped_series(shape), static_cast<std::size_t>(std::max(1LL, layout_.capacity)),
                device_attribute(cudaDevAttrMultiProcessorCount, 128), n_series, tile_bytes, device_budget());
        } else {
            n_tiles_ = device_tiles(n_series, row_words_, layout_.capacity, device_budget());
        }
        // NOTE: exact quantiles keep no histogram rows: no tile rows either
        const std::size_t tile_words = value_capacity_ > 0 ? 0 : row_words_;
        const std::vector<stats::SeriesPartial> empty(n_series * n_tiles_);
        for (int s = 0; s < 2; ++s) {
            d_tile_partials_[s] = DeviceArray<stats::SeriesPartial>(n_series * n_tiles_);
            d_tile_counts_[s] = DeviceArray<std::uint64_t>(n_series * n_tiles_ * tile_words);
            NHVK_CUDA_CHECK(cudaMemcpy(d_tile_partials_[s].p, empty.data(), sizeof(stats::SeriesPartial) * empty.size(),
                                       cudaMemcpyHostToDevice));
            NHVK_CUDA_CHECK(cudaMemset(d_tile_counts_[s].p, 0, sizeof(std::uint64_t) * d_tile_counts_[s].size));
        }
        settle();
    }
    void reduce(int s, long long m) override {
        if (n_series_ == 0) throw std::logic_error("reduce before start_reduction");
        const int t = begin(s, stage_reduce);
        const stats::ChunkView in = stats::metrics_view(dev_args_[s], m);
        if (in.n_series != n_series_)
            throw std::logic_error("reduce: the chunk's series differ from start_reduction's");
        // NOTE: the slot's own tiles (the two streams never add into the same partials); merged exactly at collect.
        reduce_into_tiles(s, in);
        if (value_capacity_ > 0) {
            // NOTE: the two slots' chunks take consecutive, disjoint ranges of every series.
            if (values_filled_ + static_cast<std::size_t>(m) > value_capacity_)
                throw std::logic_error("reduce: more members than the values' capacity");
            stats::store_chunk_values(thrust::cuda::par_nosync.on(stream_[s]), in, d_values_.p, value_capacity_,
                                      values_filled_);
            values_filled_ += static_cast<std::size_t>(m);
        }
        NHVK_CUDA_CHECK(cudaGetLastError());
        end(s, t);
    }
    bool reduces_parts() const override { return true; }
    void reduce_part(int s, long long j0, long long len, std::uint64_t first_member, std::uint64_t key) override {
        if (n_series_ == 0 || value_capacity_ > 0)
            throw std::logic_error("reduce_part needs start_reduction without values first");
        const stats::ChunkView in = part_view(dev_args_[s], j0, len, first_member);
        if (in.n_series != n_series_)
            throw std::logic_error("reduce_part: the chunk's series differ from start_reduction's");
        const auto policy = thrust::cuda::par_nosync.on(stream_[s]);
        const int t = begin(s, stage_reduce);
        auto it = parts_.find(key);
        if (it == parts_.end()) {
            // NOTE: a point's statistics are made at its first part and reused once taken (cudaFree would wait for
            // the whole device, the other slot's integration too)
            KeyStatistics k;
            if (!free_parts_.empty()) {
                k = std::move(free_parts_.back());
                free_parts_.pop_back();
            } else {
                k.partials = DeviceArray<stats::SeriesPartial>(n_series_);
                k.counts = DeviceArray<std::uint64_t>(n_series_ * row_words_);
                NHVK_CUDA_CHECK(cudaEventCreateWithFlags(&k.done, cudaEventDisableTiming));
            }
            thrust::fill(policy, k.partials.p, k.partials.p + n_series_, stats::SeriesPartial{});
            NHVK_CUDA_CHECK(cudaMemsetAsync(k.counts.p, 0, sizeof(std::uint64_t) * n_series_ * row_words_, stream_[s]));
            k.stream = s;
            it = parts_.emplace(key, std::move(k)).first;
        } else if (it->second.stream != s) {
            // the key's last part was added on the other slot's stream: this one adds after it
            NHVK_CUDA_CHECK(cudaStreamWaitEvent(stream_[s], it->second.done, 0));
            it->second.stream = s;
        }
        // NOTE: the slot's tiles are this part's scratch (a sweep runs no running reduction), combined into the key's
        // statistics, exactly as collect combines the run's
        DeviceArray<stats::SeriesPartial>& tiles = d_tile_partials_[s];
        DeviceArray<std::uint64_t>& rows = d_tile_counts_[s];
        thrust::fill(policy, tiles.p, tiles.p + tiles.size, stats::SeriesPartial{});
        NHVK_CUDA_CHECK(cudaMemsetAsync(rows.p, 0, sizeof(std::uint64_t) * rows.size, stream_[s]));
        reduce_into_tiles(s, in);
        NHVK_CUDA_CHECK(cudaGetLastError());
        stats::combine_tiles(policy, n_series_, n_tiles_, binner_, tiles.p, rows.p, it->second.partials.p,
                             it->second.counts.p);
        NHVK_CUDA_CHECK(cudaEventRecord(it->second.done, stream_[s]));
        end(s, t);
    }
    void take_part(std::uint64_t key, stats::SeriesPartial* partials, std::uint64_t* counts, bool release) override {
        const auto it = parts_.find(key);
        if (it == parts_.end()) {
            std::fill(partials, partials + n_series_, stats::SeriesPartial{});
            std::fill(counts, counts + n_series_ * row_words_, std::uint64_t{0});
            return;
        }
        const auto t0 = std::chrono::steady_clock::now();
        // NOTE: the key's last part done, the other work of its stream not waited for; plain copies on the legacy
        // stream, which the slots' non-blocking streams do not order
        NHVK_CUDA_CHECK(cudaEventSynchronize(it->second.done));
        NHVK_CUDA_CHECK(cudaMemcpy(partials, it->second.partials.p, sizeof(stats::SeriesPartial) * n_series_,
                                   cudaMemcpyDeviceToHost));
        NHVK_CUDA_CHECK(cudaMemcpy(counts, it->second.counts.p, sizeof(std::uint64_t) * n_series_ * row_words_,
                                   cudaMemcpyDeviceToHost));
        if (release) {
            free_parts_.push_back(std::move(it->second));
            parts_.erase(it);
        }
        seconds_[stage_transfer] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    void download(int s, long long, Downloads d) override {
        const int t = begin(s, stage_transfer);
        if ((d.inputs && !h_inputs_[s]) || (d.metrics && !h_metrics_[s]))
            throw std::logic_error("download: this backend keeps no host copy of the region asked for");
        NHVK_CUDA_CHECK(cudaMemcpyAsync(h_[s], d_[s] + block_.sample_status, block_.status_bytes,
                                        cudaMemcpyDeviceToHost, stream_[s]));
        if (d.inputs)
            NHVK_CUDA_CHECK(
                cudaMemcpyAsync(h_inputs_[s], d_[s], block_.input_bytes, cudaMemcpyDeviceToHost, stream_[s]));
        if (d.metrics)
            NHVK_CUDA_CHECK(cudaMemcpyAsync(h_metrics_[s], d_[s] + block_.metrics, block_.metric_bytes,
                                            cudaMemcpyDeviceToHost, stream_[s]));
        end(s, t);
    }
    void wait(int s) override {
        NHVK_CUDA_CHECK(cudaStreamSynchronize(stream_[s]));
        for (int i = 0; i < used_[s]; ++i) {
            float ms = 0.0f;
            NHVK_CUDA_CHECK(cudaEventElapsedTime(&ms, timed_[s][i].begin, timed_[s][i].end));
            seconds_[timed_[s][i].stage] += 1e-3 * ms;
        }
        used_[s] = 0;
    }
    void collect(stats::SeriesPartial* partials, std::uint64_t* counts) override {
        if (n_series_ == 0) return;
        for (int s = 0; s < 2; ++s) wait(s);
        DeviceArray<stats::SeriesPartial> d_out(n_series_);
        DeviceArray<std::uint64_t> d_counts(n_series_ * row_words_);
        std::vector<stats::SeriesPartial> out(n_series_);
        NHVK_CUDA_CHECK(cudaMemcpyAsync(d_out.p, out.data(), sizeof(stats::SeriesPartial) * n_series_,
                                        cudaMemcpyHostToDevice, stream_[0]));
        NHVK_CUDA_CHECK(cudaMemsetAsync(d_counts.p, 0, sizeof(std::uint64_t) * d_counts.size, stream_[0]));
        for (int s = 0; s < 2; ++s)
            stats::combine_tiles(thrust::cuda::par.on(stream_[0]), n_series_, n_tiles_, binner_, d_tile_partials_[s].p,
                                 value_capacity_ > 0 ? nullptr : d_tile_counts_[s].p, d_out.p, d_counts.p);
        NHVK_CUDA_CHECK(cudaStreamSynchronize(stream_[0]));
        std::vector<std::uint64_t> c(n_series_ * row_words_);
        NHVK_CUDA_CHECK(
            cudaMemcpy(out.data(), d_out.p, sizeof(stats::SeriesPartial) * n_series_, cudaMemcpyDeviceToHost));
        NHVK_CUDA_CHECK(cudaMemcpy(c.data(), d_counts.p, sizeof(std::uint64_t) * c.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < n_series_; ++i) partials[i].merge(out[i]);
        for (std::size_t i = 0; i < n_series_; ++i)
            binner_host_.merge(counts + i * row_words_, c.data() + i * row_words_);
    }
    bool keeps_values() const override { return true; }
    void order_statistics(const std::vector<std::vector<std::uint64_t>>& ranks,
                          std::vector<std::vector<double>>& out) override {
        for (int s = 0; s < 2; ++s) wait(s);
        if (ranks.size() != n_series_) throw std::logic_error("order_statistics: one rank list per series");
        out.assign(n_series_, {});
        std::vector<std::size_t> series;
        std::vector<std::vector<std::uint64_t>> asked;
        for (std::size_t i = 0; i < n_series_; ++i) {
            if (ranks[i].empty()) continue;
            series.push_back(i);
            asked.push_back(ranks[i]);
        }
        if (series.empty()) return;
        const auto t0 = std::chrono::steady_clock::now();
        // NOTE: selected, not sorted (rank_select.hpp): a series holds up to a whole process's members, and a few
        // ranks of each are asked for
        std::vector<std::vector<double>> got;
        DeviceArray<char> temp;
        select_ranks_device(d_values_.p, value_capacity_, values_filled_, series, asked, got, temp, stream_[0]);
        for (std::size_t k = 0; k < series.size(); ++k) out[series[k]] = std::move(got[k]);
        seconds_[stage_reduce] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    void download_values(std::vector<std::vector<double>>& out) override {
        for (int s = 0; s < 2; ++s) wait(s);
        if (out.size() != n_series_) throw std::logic_error("download_values: one vector per series");
        std::vector<double> row(values_filled_);
        for (std::size_t i = 0; i < n_series_; ++i) {
            if (values_filled_ == 0) break;
            NHVK_CUDA_CHECK(cudaMemcpy(row.data(), d_values_.p + i * value_capacity_, sizeof(double) * values_filled_,
                                       cudaMemcpyDeviceToHost));
            for (const double x : row)
                if (x != HUGE_VAL) out[i].push_back(x);
        }
    }
    void band_order_statistics(const std::vector<std::size_t>& groups, double a, double b,
                               const std::vector<std::vector<std::uint64_t>>& ranks,
                               std::vector<std::vector<double>>& out) override {
        for (int s = 0; s < 2; ++s) wait(s);
        const std::size_t R = groups.size();
        if (ranks.size() != R) throw std::logic_error("band_order_statistics: one rank list per group");
        for (const std::size_t s : groups)
            if (s >= n_series_ || value_capacity_ == 0)
                throw std::logic_error("band_order_statistics: no such series kept");
        out.assign(R, {});
        const auto t0 = std::chrono::steady_clock::now();
        // The steps of the host twin, band_select_host (rank_select.hpp): each group's values under a and its values
        // in [a, b], tagged with the group; the band sorted by value; then for each group the band without its
        // values, read at rank − (the others' values under a). Only the selected values leave the device.
        const auto policy = thrust::cuda::par.on(stream_[0]);
        std::vector<std::uint64_t> below(R), first(R + 1, 0);
        for (std::size_t g = 0; g < R; ++g) {
            const double* v = d_values_.p + groups[g] * value_capacity_;
            below[g] = static_cast<std::uint64_t>(thrust::count_if(policy, v, v + values_filled_, Below{a}));
            first[g + 1] =
                first[g] + static_cast<std::uint64_t>(thrust::count_if(policy, v, v + values_filled_, Within{a, b}));
        }
        const std::size_t n = first[R];
        DeviceArray<double> band(n), sorted(n), without(n);
        DeviceArray<std::uint32_t> tags(n), sorted_tags(n);
        for (std::size_t g = 0; g < R; ++g) {
            const double* v = d_values_.p + groups[g] * value_capacity_;
            thrust::copy_if(policy, v, v + values_filled_, band.p + first[g], Within{a, b});
            thrust::fill(policy, tags.p + first[g], tags.p + first[g + 1], static_cast<std::uint32_t>(g));
        }
        if (n > 0) {
            // NOTE: equal values of several groups may sort in any order: they are the same double, so every read
            // below gives the same value whichever group's copy it meets
            std::size_t bytes = 0;
            NHVK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, band.p, sorted.p, tags.p, sorted_tags.p, n,
                                                            0, 64, stream_[0]));
            DeviceArray<char> temp(bytes);
            NHVK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.p, bytes, band.p, sorted.p, tags.p, sorted_tags.p, n,
                                                            0, 64, stream_[0]));
        }
        std::uint64_t below_all = 0;
        for (const std::uint64_t c : below) below_all += c;
        for (std::size_t g = 0; g < R; ++g) {
            if (ranks[g].empty()) continue;
            const std::size_t kept =
                static_cast<std::size_t>(thrust::copy_if(policy, sorted.p, sorted.p + n, sorted_tags.p, without.p,
                                                         NotGroup{static_cast<std::uint32_t>(g)}) -
                                         without.p);
            const std::uint64_t under = below_all - below[g];
            for (const std::uint64_t r : ranks[g]) {
                if (r < under || r - under >= kept)
                    throw std::logic_error("band_order_statistics: an order statistic outside the band");
                double x = 0.0;
                NHVK_CUDA_CHECK(
                    cudaMemcpyAsync(&x, without.p + (r - under), sizeof(double), cudaMemcpyDeviceToHost, stream_[0]));
                NHVK_CUDA_CHECK(cudaStreamSynchronize(stream_[0]));
                out[g].push_back(x);
            }
        }
        seconds_[stage_reduce] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    StageSeconds stage_seconds() const override {
        StageSeconds t;
        t.sample = seconds_[stage_sample];
        t.integrate = seconds_[stage_integrate];
        t.reduce = seconds_[stage_reduce];
        t.transfer = seconds_[stage_transfer];
        return t;
    }

private:
    enum Stage { stage_sample = 0, stage_integrate, stage_reduce, stage_transfer, stage_count };
    /** @brief A pair of events around one stage enqueued on a slot's stream (reused chunk after chunk). */
    struct Timed {
        int stage = 0;
        cudaEvent_t begin = nullptr, end = nullptr;
    };
    /** @brief Adds `in` to slot `s`'s tiles on its stream: the block reduction, or accumulate_chunk's items where a
     *         row is too wide for a block's shared memory; no histogram rows for exact quantiles (values kept). */
    void reduce_into_tiles(int s, const stats::ChunkView& in) {
        const bool rows = value_capacity_ == 0;
        if (reduce_batch_ > 0)
            launch_block_reduce(stats::block_plan(in, n_tiles_, reduce_batch_, rows ? &binner_ : nullptr),
                                reduce_block_threads, d_tile_partials_[s].p, d_tile_counts_[s].p, stream_[s]);
        else
            stats::accumulate_chunk(thrust::cuda::par_nosync.on(stream_[s]), in, n_tiles_, d_tile_partials_[s].p,
                                    rows ? d_tile_counts_[s].p : nullptr, binner_);
    }
    void set_m(int s, long long m) {
        host_args_[s].m = m;
        dev_args_[s].m = m;
    }
    int begin(int s, Stage stage) {
        if (used_[s] == static_cast<int>(timed_[s].size())) {
            Timed t;
            NHVK_CUDA_CHECK(cudaEventCreate(&t.begin));
            NHVK_CUDA_CHECK(cudaEventCreate(&t.end));
            timed_[s].push_back(t);
        }
        Timed& t = timed_[s][used_[s]];
        t.stage = stage;
        NHVK_CUDA_CHECK(cudaEventRecord(t.begin, stream_[s]));
        return used_[s]++;
    }
    void end(int s, int i) { NHVK_CUDA_CHECK(cudaEventRecord(timed_[s][i].end, stream_[s])); }

    ChunkLayout layout_;
    ChunkCommon common_;
    ChunkBlock block_;
    const CudaModelOps& ops_;
    char* h_[2] = {nullptr, nullptr}; ///< pinned: the statuses, then the inputs and metrics when the host uses them
    char* h_inputs_[2] = {nullptr, nullptr};
    char* h_metrics_[2] = {nullptr, nullptr};
    char* d_[2] = {nullptr, nullptr};
    cudaStream_t stream_[2] = {nullptr, nullptr};
    ChunkArgs host_args_[2], dev_args_[2];
    double* d_times_ = nullptr;
    double* d_params_ = nullptr;
    std::vector<Timed> timed_[2];
    int used_[2] = {0, 0};
    double seconds_[stage_count] = {};
    // device statistics (histogram quantiles)
    std::size_t n_series_ = 0, row_words_ = 0, n_tiles_ = 0;
    std::size_t reduce_batch_ = 0; ///< targets a reduction block holds (0: accumulate_chunk's items instead)
    DeviceArray<double> d_edges_;
    DeviceArray<std::uint32_t> d_start_;
    stats::LogBinTable table_;
    stats::LogBinner binner_, binner_host_; // the tables on the device, and table_ on the host
    DeviceArray<stats::SeriesPartial> d_tile_partials_[2];
    DeviceArray<std::uint64_t> d_tile_counts_[2];
    /// the running statistics of one key of reduce_part (a sweep's point): `done` follows its last part, enqueued
    /// on slot `stream`'s stream
    struct KeyStatistics {
        DeviceArray<stats::SeriesPartial> partials;
        DeviceArray<std::uint64_t> counts;
        cudaEvent_t done = nullptr;
        int stream = 0;
    };
    std::map<std::uint64_t, KeyStatistics> parts_;
    std::vector<KeyStatistics> free_parts_; ///< taken keys' statistics, reused
    // device values of exact quantiles: value_capacity_ per series, the first values_filled_ written
    std::size_t value_capacity_ = 0, values_filled_ = 0;
    DeviceArray<double> d_values_;
};
} // namespace

bool cuda_available() { return cuda_unavailable_reason().empty(); }

std::string cuda_unavailable_reason() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    if (count == 0) return "no CUDA device present";
    return {};
}

std::size_t cuda_block_batch(std::size_t target_bytes, std::size_t max_batch) {
    if (!cuda_available()) throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
    const std::size_t smem =
        std::min<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, 48 << 10),
                              device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, 96 << 10) / 2);
    return std::min(max_batch, smem / std::max<std::size_t>(target_bytes, 1));
}

void cuda_block_reduce(const stats::BlockPlan& P, const stats::LogBinTable* table, unsigned threads,
                       std::vector<stats::SeriesPartial>& tiles, std::vector<std::uint64_t>& rows) {
    if (!cuda_available()) throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
    if (P.batch > cuda_block_batch(P.target_bytes(), P.batch))
        throw std::invalid_argument("cuda_block_reduce: a batch of " + std::to_string(P.batch) + " targets of " +
                                    std::to_string(P.target_bytes()) + " bytes exceeds the shared memory the " +
                                    "device reduction gives a block (cuda_block_batch)");
    if (threads == 0 || threads > reduce_block_threads || threads % 32 != 0)
        throw std::invalid_argument("cuda_block_reduce: threads must be a multiple of 32 up to 256");
    if (P.with_rows && table == nullptr) throw std::invalid_argument("cuda_block_reduce: rows need the bin table");
    stats::BlockPlan d = P;
    const std::size_t m = P.in.chunk;
    auto upload = [](auto* host, std::size_t n, auto& dev) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(host)>>;
        dev = DeviceArray<T>(n);
        if (host != nullptr && n > 0) NHVK_CUDA_CHECK(cudaMemcpy(dev.p, host, sizeof(T) * n, cudaMemcpyHostToDevice));
        return host != nullptr ? static_cast<const T*>(dev.p) : nullptr;
    };
    DeviceArray<double> values, edges;
    DeviceArray<std::uint8_t> valid, status;
    DeviceArray<std::int32_t> fail;
    DeviceArray<std::uint32_t> start;
    const std::size_t n_values = P.rows() > 0 && m > 0 ? (P.rows() - 1) * P.in.ld + m : 0;
    d.in.values = upload(P.in.values, n_values, values);
    d.in.valid = upload(P.in.valid, m, valid);
    d.in.status = upload(P.in.status, m, status);
    d.in.fail_index = upload(P.in.fail_index, m, fail);
    if (P.with_rows) {
        d.binner.edges = upload(table->edges.data(), table->edges.size(), edges);
        d.binner.start = upload(table->start.data(), table->start.size(), start);
    }
    DeviceArray<stats::SeriesPartial> d_tiles(tiles.size());
    DeviceArray<std::uint64_t> d_rows(rows.size());
    NHVK_CUDA_CHECK(
        cudaMemcpy(d_tiles.p, tiles.data(), sizeof(stats::SeriesPartial) * tiles.size(), cudaMemcpyHostToDevice));
    NHVK_CUDA_CHECK(cudaMemcpy(d_rows.p, rows.data(), sizeof(std::uint64_t) * rows.size(), cudaMemcpyHostToDevice));
    launch_block_reduce(d, threads, d_tiles.p, P.with_rows ? d_rows.p : nullptr, nullptr);
    NHVK_CUDA_CHECK(cudaGetLastError());
    NHVK_CUDA_CHECK(cudaDeviceSynchronize());
    NHVK_CUDA_CHECK(
        cudaMemcpy(tiles.data(), d_tiles.p, sizeof(stats::SeriesPartial) * tiles.size(), cudaMemcpyDeviceToHost));
    NHVK_CUDA_CHECK(cudaMemcpy(rows.data(), d_rows.p, sizeof(std::uint64_t) * rows.size(), cudaMemcpyDeviceToHost));
}

void cuda_select_ranks(const std::vector<std::vector<double>>& values,
                       const std::vector<std::vector<std::uint64_t>>& ranks, std::vector<std::vector<double>>& out) {
    if (!cuda_available()) throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
    if (values.size() != ranks.size()) throw std::invalid_argument("cuda_select_ranks: one rank list per series");
    // NOTE: the backend's layout: one stride for every series, the shorter ones filled with +inf as excluded
    // members are (their ranks stay below their own sizes, so the filling is never selected)
    std::size_t n = 0;
    for (const auto& v : values) n = std::max(n, v.size());
    std::vector<double> flat(values.size() * n, stats::detail::infinity());
    std::vector<std::size_t> series(values.size());
    for (std::size_t s = 0; s < values.size(); ++s) {
        std::copy(values[s].begin(), values[s].end(), flat.begin() + static_cast<std::ptrdiff_t>(s * n));
        series[s] = s;
    }
    DeviceArray<double> d(flat.size());
    NHVK_CUDA_CHECK(cudaMemcpy(d.p, flat.data(), sizeof(double) * flat.size(), cudaMemcpyHostToDevice));
    DeviceArray<char> temp;
    select_ranks_device(d.p, n, n, series, ranks, out, temp, nullptr);
}

int select_cuda_device(int local_rank) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
    const int device = local_rank % count;
    NHVK_CUDA_CHECK(cudaSetDevice(device));
    return device;
}

TrajectoryResult run_trajectory_cuda(const TrajectoryRequest& req) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw std::runtime_error("backend 'cuda': " + why);
    return cuda_ops(req.model).trajectory(req);
}

std::unique_ptr<EnsembleBackend> make_cuda_backend(const ChunkLayout& layout, const ChunkCommon& common) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw std::runtime_error("backend 'cuda': " + why);
    return std::make_unique<CudaBackend>(layout, common);
}

} // namespace nhvk
