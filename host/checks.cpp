// SPDX-License-Identifier: MIT
// The range checks shared by `nhvk run` and `nhvk trajectory`; see checks.hpp.
#include "checks.hpp"

#include <nhvk/member.hpp>
#include <nhvk/stats/log_histogram.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

std::optional<SettingProblem> check_integrator(const IntegratorSettings& s) {
    const bool rk4 = s.method == Method::rk4;
    if (!(std::isfinite(s.rtol) && s.rtol > 0.0)) return SettingProblem{"integrator.rtol", "a number > 0"};
    if (!rk4 && !(s.rtol >= min_rtol(s.precision)))
        return SettingProblem{"integrator.rtol", std::string("rtol >= ") + format_number(min_rtol(s.precision)) +
                                                     " (about 17 units of roundoff: the least precision = \"" +
                                                     to_string(s.precision) + "\" can reach)"};
    // NOTE: atol = 0 would make the error scale atol + rtol·|y| zero for a state component at 0 (0/0 in the error
    // norm); Hairer's codes refuse it too.
    if (!(std::isfinite(s.atol) && s.atol > 0.0))
        return SettingProblem{"integrator.atol", "a number > 0 (the error scale atol + rtol·|y| must not vanish)"};
    if (rk4 && !(std::isfinite(s.dt) && s.dt > 0.0)) return SettingProblem{"integrator.dt", "a step > 0 (rk4)"};
    if (!rk4 && !(std::isfinite(s.dt) && s.dt >= 0.0))
        return SettingProblem{"integrator.dt", "an initial step >= 0 (dopri5; 0 = automatic)"};
    if (!(std::isfinite(s.min_step) && s.min_step >= 0.0))
        return SettingProblem{"integrator.min_step", "a number >= 0"};
    if (!(s.max_steps >= 1)) return SettingProblem{"integrator.max_steps", "an integer >= 1"};
    return std::nullopt;
}

std::optional<SettingProblem> check_step_count(const IntegratorSettings& s, double t0,
                                               const std::vector<double>& times) {
    if (s.method != Method::rk4 || !(s.dt > 0.0)) return std::nullopt;
    // NOTE: in double, as the stepper plans them (⌈Δ/dt⌉ per output interval, at least one); a count beyond 2^63 is
    // just a large double here, never an integer overflow.
    double steps = 0.0;
    double t = t0;
    for (double ti : times) {
        const double span = ti - t;
        double m = std::floor(span / s.dt);
        if (m * s.dt < span * (1.0 - 1e-12)) m += 1.0; // as Rk4::plan rounds up
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

std::optional<SettingProblem> check_memory(const RunConfig& cfg, double available_bytes, bool device_backend) {
    const double N = static_cast<double>(cfg.run.trajectories);
    const double capacity = std::min(static_cast<double>(cfg.run.chunk), N);
    const double n = cfg.model.n, k = std::max(cfg.model.k, 1), n_params = static_cast<double>(cfg.params.size());
    const StatisticsShape shape = statistics_shape(cfg);
    const double metric_series = static_cast<double>(shape.base), n_series = static_cast<double>(shape.series);
    // ChunkBlock (nhvk/backend/backend.hpp): inputs, five per-member status arrays, the metrics. The CPU backend holds
    // one block; the CUDA backend pins two host copies (its two slots) of the statuses and of the regions the host
    // uses (ChunkLayout::host_inputs, host_metrics: see device_layout in host/ensemble.cpp).
    const double inputs = capacity * 8.0 * (2.0 * n + k + n_params), statuses = capacity * 11.0;
    const double metrics = capacity * 8.0 * metric_series;
    const bool host_inputs = cfg.run.save_samples || cfg.run.save_trajectories > 0;
    // a sweep's points reduce on the host: the device backend brings every metric back
    const double P = static_cast<double>(cfg.points());
    const bool sweep = cfg.sweep != nullptr;
    const double chunk =
        device_backend
            ? 2.0 * (statuses + (host_inputs ? inputs : 0.0) + (cfg.run.save_samples || sweep ? metrics : 0.0))
            : inputs + statuses + metrics;
    // a sweep's points share the budget equally (pipeline/reduce_stage)
    const double budget = static_cast<double>(cfg.run.exact_memory_mb) * 1024.0 * 1024.0 / P;
    // the accumulator's own rule (a replica group's values are a part of its row's, not a copy)
    const double stored = static_cast<double>(stats::EnsembleAccumulator::expected_values(
        shape.series, static_cast<std::uint64_t>(cfg.run.trajectories), shape.replica_shape()));
    const bool exact = stored * 8.0 <= std::floor(budget);
    // exact mode keeps every value (a sweep's pooled statistics read the points' values where they are)
    const double values = exact ? stored * 8.0 * P : 0.0;
    // the accumulator's histogram rows (uint64 words, 32.8 KiB per series with the default window), and in histogram
    // mode the backend's as many again (a CUDA backend's tile rows live in device memory: at most 2 × 1 GiB), plus
    // the bin-lookup tables (edges and bucket starts, about 0.75 MiB)
    const stats::LogHistogramSpec spec{};
    const double row = static_cast<double>(spec.row_words()) * 8.0;
    const stats::LogBinTable table = spec.table();
    const double tables = 8.0 * static_cast<double>(table.edges.size()) + 4.0 * static_cast<double>(table.start.size());
    // (a sweep: one accumulator per point and the pooled one, all on the host, with rows only in histogram mode; one
    // run's exact accumulator may take a backend's rows)
    const double histograms =
        sweep ? (exact ? 0.0 : P + 1.0) * (n_series * row) + tables : (exact ? 1.0 : 2.0) * (n_series * row + tables);
    const double need = chunk + histograms + values;
    if (need <= available_bytes) return std::nullopt;
    const char* key = "run.chunk";
    if (histograms >= chunk && histograms >= values)
        key = sweep ? "sweep" : cfg.time_grid.spacing == Spacing::list ? "times.list" : "times.count";
    else if (values >= chunk) key = "run.exact_memory_mb";
    const auto mib = [](double b) { return format_number(std::ceil(b / (1024.0 * 1024.0))); };
    return SettingProblem{key, "the run needs about " + mib(need) + " MiB (chunk buffers " + mib(chunk) +
                                   (device_backend ? " pinned for the GPU's two slots" : "") + ", histograms " +
                                   mib(histograms) + ", exact-quantile values " + mib(values) + "), more than the " +
                                   mib(available_bytes) + " MiB of memory of this machine: " +
                                   (sweep ? "the " + format_number(P) + " sweep points keep " + mib(n_series * row) +
                                                " MiB of histograms each; fewer points, " +
                                                "fewer output times or statistics.replicas, or "
                                          : std::string()) +
                                   "lower run.chunk, the number of output times or run.exact_memory_mb"};
}

double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(pages) * static_cast<double>(page);
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
