// SPDX-License-Identifier: MIT
// The range checks shared by `nhvk run` and `nhvk trajectory`; see checks.hpp.
#include "checks.hpp"

#include <nhvk/member.hpp>
#include <nhvk/stats/log_histogram.hpp>

#include "pipeline/ensemble_result.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

namespace nhvk {

std::string format_number(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[40];
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, x);
        if (std::strtod(buf, nullptr) == x) break;
    }
    return buf;
}

double min_rtol(Precision p) { return p == Precision::f32 ? 1e-6 : 2e-15; }

double default_rtol(Precision p) { return p == Precision::f32 ? StepDefaults::rtol_float : StepDefaults::rtol; }
double default_atol(Precision p) { return p == Precision::f32 ? StepDefaults::atol_float : StepDefaults::atol; }
double default_dt(Method m) { return adaptive_method(m) ? 0.0 : StepDefaults::rk4_dt; }

std::vector<int> default_divergence_coords(const ModelInfo& m) {
    // NOTE: metres and radians are not mixed unless asked: a model with both leaves its angles out by default.
    const bool any_angle = std::find(m.angles.begin(), m.angles.end(), true) != m.angles.end();
    const bool any_length = std::find(m.angles.begin(), m.angles.end(), false) != m.angles.end();
    std::vector<int> c;
    for (int i = 0; i < m.n; ++i)
        if (!(any_angle && any_length && m.angles[i])) c.push_back(i);
    return c;
}

std::string divergence_label(const ModelInfo& m, const std::vector<int>& coords, const std::vector<double>& weights,
                             bool kinetic) {
    std::string s;
    for (int i : coords) {
        const double w = weights.empty() ? 1.0 : weights[static_cast<std::size_t>(i)];
        if (!s.empty()) s += ' ';
        if (w != 1.0) s += format_number(w) + "*";
        s += m.coords[static_cast<std::size_t>(i)];
    }
    return kinetic ? s + " kinetic" : s;
}

std::optional<SettingProblem> check_integrator(const IntegratorSettings& s) {
    const bool adaptive = adaptive_method(s.method);
    const std::string method = to_string(s.method);
    if (!(std::isfinite(s.rtol) && s.rtol > 0.0)) return SettingProblem{"integrator.rtol", "a number > 0"};
    if (adaptive && !(s.rtol >= min_rtol(s.precision)))
        return SettingProblem{"integrator.rtol", std::string("rtol >= ") + format_number(min_rtol(s.precision)) +
                                                     " (about 17 units of roundoff: the least precision = \"" +
                                                     to_string(s.precision) + "\" can reach)"};
    // NOTE: atol = 0 would make the error scale atol + rtol·|y| zero for a state component at 0 (0/0 in the error
    // norm); Hairer's codes refuse it too.
    if (!(std::isfinite(s.atol) && s.atol > 0.0))
        return SettingProblem{"integrator.atol", "a number > 0 (the error scale atol + rtol·|y| must not vanish)"};
    if (!adaptive && !(std::isfinite(s.dt) && s.dt > 0.0))
        return SettingProblem{"integrator.dt", "a step > 0 (" + method + ")"};
    if (adaptive && !(std::isfinite(s.dt) && s.dt >= 0.0))
        return SettingProblem{"integrator.dt", "an initial step >= 0 (" + method + "; 0 = automatic)"};
    if (!(std::isfinite(s.min_step) && s.min_step >= 0.0))
        return SettingProblem{"integrator.min_step", "a number >= 0"};
    if (!(s.max_steps >= 1)) return SettingProblem{"integrator.max_steps", "an integer >= 1"};
    return std::nullopt;
}

std::optional<SettingProblem> check_step_count(const IntegratorSettings& s, double t0,
                                               const std::vector<double>& times) {
    if (adaptive_method(s.method) || !(s.dt > 0.0)) return std::nullopt;
    // NOTE: in double, as the stepper plans them (⌈Δ/dt⌉ per output interval, at least one); a count beyond 2^63 is
    // just a large double here, never an integer overflow.
    double steps = 0.0;
    double t = t0;
    for (double ti : times) {
        const double span = ti - t;
        double m = std::floor(span / s.dt);
        if (m * s.dt < span * (1.0 - 1e-12)) m += 1.0; // as plan_equal_steps rounds up
        steps += std::max(1.0, m);
        t = ti;
    }
    if (!(steps <= static_cast<double>(s.max_steps)))
        return SettingProblem{
            "integrator.dt", "a step that reaches the last output time within integrator.max_steps = " +
                                 std::to_string(s.max_steps) + " steps (this one needs " +
                                 (steps < 1e15 ? std::to_string(static_cast<long long>(steps)) : format_number(steps)) +
                                 "; raise dt or max_steps)"};
    return std::nullopt;
}

StatisticsShape statistics_shape(const RunConfig& cfg) {
    StatisticsShape s;
    const int nt = static_cast<int>(cfg.times.size());
    s.base = static_cast<std::size_t>(metric_rows(nt));
    s.replicas = cfg.replicas > 1 ? static_cast<std::size_t>(cfg.replicas) : 0u;
    s.replicated = s.replicas > 0u ? replicated_rows(nt) : 0u;
    s.series = s.base + s.replicas * s.replicated;
    return s;
}

namespace {
/** @brief Heap bytes of a string beyond the object itself (short strings live inside it). */
double heap_of(const std::string& s) { return s.capacity() > 15u ? static_cast<double>(s.capacity()) + 1.0 : 0.0; }

/** @brief Bytes of a run configuration: the object and what its members hold on the heap (a sweep keeps one per
 *         point, Sweep::configs). */
double config_bytes(const RunConfig& c) {
    double b = sizeof(RunConfig) + heap_of(c.source_path) + heap_of(c.run.out) + heap_of(c.model.name) +
               heap_of(c.model.description);
    for (const std::string& x : c.model.coords) b += sizeof(std::string) + heap_of(x);
    for (const ParamInfo& x : c.model.params) b += sizeof(ParamInfo) + heap_of(x.name);
    b += 8.0 * static_cast<double>(c.times.size() + c.params.size() + c.divergence_weights.size()) +
         4.0 * static_cast<double>(c.divergence_coords.size()) +
         sizeof(Distribution) * static_cast<double>(c.param_dists.size() + c.q0.size() + c.v0.size() + c.mu0.size());
    // NOTE: one allocation per non-empty vector or long string, each with malloc's 16-byte header and rounding
    return b + 16.0 * 12.0;
}

/** @brief What summary.json and report.html hold of one sweep point while they are made, per number of its part of
 *         summary.json (a JSON value in the document, its printed line, and the value again when the report parses
 *         the text): measured with bench/results/2026-11-28-sweep-memory.md's runs. */
constexpr double output_bytes_per_number = 120.0;
} // namespace

double sweep_point_bytes(const RunConfig& point) {
    const StatisticsShape shape = statistics_shape(point);
    const double nt = static_cast<double>(point.times.size()), R = static_cast<double>(shape.replicas);
    // EnsembleResult::points[p]: the summaries of its own series (not its replica groups'), the per-time vectors
    // (times, onsets, stops, alive fractions) and each replica group's fits
    const double summaries = sizeof(EnsembleResult) + static_cast<double>(shape.base) * sizeof(stats::SeriesSummary) +
                             4.0 * 8.0 * nt + 4.0 * 8.0 * R + 16.0 * 10.0;
    // its part of summary.json: the d_q and d_v rows (five numbers per output time each) and about 60 more
    const double outputs = (10.0 * nt + 60.0) * output_bytes_per_number;
    return config_bytes(point) + summaries + outputs;
}

double open_point_bytes(const RunConfig& point, bool histogram) {
    const StatisticsShape shape = statistics_shape(point);
    const double n_series = static_cast<double>(shape.series);
    // the accumulator's partials (exact sums: 1.6 kB a series), the summaries `finish` makes of every series, the
    // vectors of the exact values (not the values), and the histogram rows in histogram mode
    const double row = static_cast<double>(stats::LogHistogramSpec{}.row_words()) * 8.0;
    return n_series * (sizeof(stats::SeriesPartial) + sizeof(stats::SeriesSummary) + 24.0 + (histogram ? row : 0.0));
}

namespace {
/** @brief The values exact quantiles keep for one run of `cfg` (a sweep's point: each has the same shape, since a sweep
 *         sets only parameters and sampling), and whether they fit its share of run.exact_memory_mb (an equal share
 *         per point): EnsembleAccumulator's own rule, with the budget ReduceStage gives it (a replica group's values
 * are a part of its row's, not a copy). */
struct ExactValues {
    long double stored;
    bool exact;
};
ExactValues exact_values(const RunConfig& cfg) {
    const StatisticsShape shape = statistics_shape(cfg);
    const long double stored = stats::EnsembleAccumulator::expected_values(
        shape.series, static_cast<std::uint64_t>(cfg.run.trajectories), shape.replica_shape());
    const std::size_t budget_values =
        static_cast<std::size_t>(cfg.run.exact_memory_mb) * 1024u * 1024u / cfg.points() / sizeof(double);
    return {stored, shape.series == 0u || stored <= static_cast<long double>(budget_values)};
}
} // namespace

bool sweep_reduced_in_parts(const RunConfig& cfg) {
    if (!cfg.sweep) return false;
    const std::size_t part_bytes = sizeof(stats::SeriesPartial) + 8u * stats::LogHistogramSpec{}.row_words();
    return !exact_values(cfg).exact &&
           static_cast<long double>(cfg.run.trajectories) * 8.0L >= static_cast<long double>(part_bytes);
}

HostRegions device_host_regions(const RunConfig& cfg) {
    HostRegions h;
    h.inputs = cfg.run.save_samples || cfg.run.save_members || cfg.run.save_trajectories > 0;
    // NOTE: a sweep's per-point statistics are reduced on the host (pipeline/reduce_stage), from the metrics unless
    // the device reduces them part by part
    h.metrics = cfg.run.save_samples || cfg.run.save_members || (cfg.sweep && !sweep_reduced_in_parts(cfg));
    return h;
}

MemoryEstimate estimate_memory(const RunConfig& cfg, bool device_backend) {
    MemoryEstimate e;
    const double N = static_cast<double>(cfg.run.trajectories);
    const double capacity = std::min(static_cast<double>(cfg.run.chunk), N);
    const double n = cfg.model.n, k = std::max(cfg.model.k, 1), n_params = static_cast<double>(cfg.params.size());
    const StatisticsShape shape = statistics_shape(cfg);
    const double metric_series = static_cast<double>(shape.base), n_series = static_cast<double>(shape.series);
    // ChunkBlock (nhvk/backend/backend.hpp): inputs, five per-member status arrays, the metrics. The CPU backend holds
    // one block; the CUDA backend pins two host copies (its two slots) of the statuses and of the regions the host
    // uses (device_host_regions).
    const double inputs = capacity * 8.0 * (2.0 * n + k + n_params), statuses = capacity * 11.0;
    const double metrics = capacity * 8.0 * metric_series;
    const HostRegions host = device_host_regions(cfg);
    const double P = static_cast<double>(cfg.points());
    const bool sweep = cfg.sweep != nullptr;
    e.chunk = device_backend ? 2.0 * (statuses + (host.inputs ? inputs : 0.0) + (host.metrics ? metrics : 0.0))
                             : inputs + statuses + metrics;
    const ExactValues ev = exact_values(cfg);
    const double stored = static_cast<double>(ev.stored);
    e.exact = ev.exact;
    // exact mode keeps every value (a sweep's points pass theirs to the pooled statistics as they finish)
    e.values = e.exact ? stored * 8.0 * P : 0.0;
    // the accumulator's histogram rows (uint64 words, 32.8 KiB per series with the default window), and in histogram
    // mode the backend's as many again (a CUDA backend's tile rows live in device memory: at most 2 × 1 GiB), plus
    // the bin-lookup tables (edges and bucket starts, about 0.75 MiB)
    const stats::LogHistogramSpec spec{};
    const double row = static_cast<double>(spec.row_words()) * 8.0;
    const stats::LogBinTable table = spec.table();
    const double tables = 8.0 * static_cast<double>(table.edges.size()) + 4.0 * static_cast<double>(table.start.size());
    // (a sweep: the pooled accumulator on the host, with rows only in histogram mode, its open points' counted below;
    // one run's exact accumulator may take a backend's rows)
    e.histograms =
        sweep ? (e.exact ? 0.0 : n_series * row) + tables : (e.exact ? 1.0 : 2.0) * (n_series * row + tables);
    if (sweep) {
        // NOTE: a point's stage lives from its first members to its last (pipeline/reduce_stage): the chunks come in
        // order, so at most two are open at once (the one a chunk ends in, the next); a finished point keeps its
        // configuration and summaries, and in exact mode its replica groups' block of the pooled values' bookkeeping
        const RunConfig& point = cfg.sweep->configs.front();
        e.per_point =
            sweep_point_bytes(point) +
            (e.exact ? 8.0 * static_cast<double>(shape.replicated * std::max<std::size_t>(shape.replicas, 1u)) : 0.0);
        e.points = P * e.per_point + std::min(P, 2.0) * open_point_bytes(point, !e.exact) +
                   n_series * sizeof(stats::SeriesPartial) + (e.exact ? 2.0 * stored * 8.0 : 0.0);
    }
    return e;
}

std::optional<SettingProblem> check_memory(const RunConfig& cfg, double available_bytes, bool device_backend,
                                           const std::string& available_what) {
    const MemoryEstimate e = estimate_memory(cfg, device_backend);
    const double need = e.total();
    if (need <= available_bytes) return std::nullopt;
    const bool sweep = cfg.sweep != nullptr;
    const double P = static_cast<double>(cfg.points());
    const char* key = "run.chunk";
    const char* times = cfg.time_grid.spacing == Spacing::list ? "times.list" : "times.count";
    if (e.points >= e.chunk && e.points >= e.histograms && e.points >= e.values) key = "sweep";
    else if (e.histograms >= e.chunk && e.histograms >= e.values) key = sweep ? "sweep" : times;
    else if (e.values >= e.chunk) key = "run.exact_memory_mb";
    // NOTE: whole numbers as integers ("390", not format_number's shortest "3.9e+02")
    const auto whole = [](double x) {
        return x < 1e15 ? std::to_string(static_cast<long long>(std::ceil(x))) : format_number(std::ceil(x));
    };
    const auto mib = [&](double b) { return whole(b / (1024.0 * 1024.0)); };
    const auto kib = [&](double b) { return whole(b / 1024.0); };
    std::string advice;
    if (std::string(key) == "sweep")
        advice = "the " + std::to_string(cfg.points()) + " sweep points keep about " + kib(e.per_point) +
                 " KiB each (their summaries, a row of sweep.csv per metric and output time)" +
                 (e.exact ? std::string() : ", and the open points " + mib(e.points - P * e.per_point) + " MiB") +
                 ": fewer points (split the sweep into several runs) or fewer output times (" + times + ")" +
                 (e.exact ? std::string() : " or statistics.replicas");
    else if (std::string(key) == "run.exact_memory_mb")
        advice = "lower run.exact_memory_mb (histogram quantiles beyond it)" +
                 std::string(sweep ? ", the number of sweep points" : "") + " or the number of output times (" + times +
                 ")";
    else if (std::string(key) == "run.chunk")
        advice = "lower run.chunk or the number of output times (" + std::string(times) + ")";
    else advice = std::string("fewer output times (") + times + ") or statistics.replicas";
    return SettingProblem{key, "the run needs about " + mib(need) + " MiB (chunk buffers " + mib(e.chunk) +
                                   (device_backend ? " pinned for the GPU's two slots" : "") + ", histograms " +
                                   mib(e.histograms) + ", exact-quantile values " + mib(e.values) +
                                   (sweep ? ", sweep points " + mib(e.points) : std::string()) + ", the program " +
                                   mib(e.program) + "), more than the " + mib(available_bytes) + " MiB " +
                                   available_what + ": " + advice};
}

double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(pages) * static_cast<double>(page);
}

double process_limit_bytes() {
    double limit = std::numeric_limits<double>::infinity();
    for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
        struct rlimit rl {};
        if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            limit = std::min(limit, static_cast<double>(rl.rlim_cur));
    }
    return limit;
}

double thread_reservation_bytes() {
    constexpr double mib = 1024.0 * 1024.0;
    struct rlimit rl {};
    double stack = 8.0 * mib;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) stack = static_cast<double>(rl.rlim_cur);
    // NOTE: glibc gives a thread that allocates while another holds the main arena an arena of its own, reserved as
    // HEAP_MAX_SIZE = 64 MiB of address space on 64-bit: the reservation, not the use, is what `ulimit -v` counts
    return stack + 64.0 * mib;
}

double mapped_bytes() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmSize:", 0) == 0) return std::atof(line.c_str() + 7) * 1024.0; // "VmSize:  123456 kB"
    return 0.0;
}

std::optional<std::string> address_space_problem(int threads, double heap, double mapped, double per_thread,
                                                 double limit_bytes) {
    // NOTE: one thread is the memory check's to judge (its data is the run's estimate); this counts what more threads
    // reserve on top
    if (!std::isfinite(limit_bytes) || threads <= 1) return std::nullopt;
    const double room = limit_bytes - mapped - heap;
    const double need = static_cast<double>(threads - 1) * per_thread;
    if (need <= room) return std::nullopt;
    const auto mib = [](double b) { return std::to_string(static_cast<long long>(std::ceil(b / (1024.0 * 1024.0)))); };
    const long long fit = 1 + (room < 0.0 ? 0 : static_cast<long long>(std::floor(room / per_thread)));
    const std::string text = "under the address-space limit of this process (ulimit -v: " + mib(limit_bytes) +
                             " MiB), " + std::to_string(threads) +
                             " threads do not fit: each thread after the first reserves about " + mib(per_thread) +
                             " MiB (its stack and an allocator arena, however little it uses), beside the " +
                             mib(mapped) + " MiB mapped at start and the run's " + mib(heap) + " MiB; ";
    return text + "use --threads " + std::to_string(fit) + " (run.threads) or raise the limit";
}

std::optional<std::string> check_param(const ParamInfo& p, double x) {
    if (std::isfinite(x) && in_domain(p.domain, x)) return std::nullopt;
    return std::string("a number ") + to_string(p.domain) + " (the range of parameter " + p.name + ")";
}

std::optional<std::string> check_param(const ParamInfo& p, const Distribution& d) {
    switch (d.kind) {
    case DistKind::uniform:
        if (auto e = check_param(p, d.a)) return e;
        return check_param(p, d.b);
    case DistKind::normal:
        if (p.domain != ParamDomain::any && d.b > 0.0)
            return std::string("a distribution that stays in the range ") + to_string(p.domain) + " of parameter " +
                   p.name + " (a normal with std > 0 can draw any number; use a uniform)";
        return check_param(p, d.a);
    case DistKind::fixed:
    default:
        return check_param(p, d.a);
    }
}

} // namespace nhvk
