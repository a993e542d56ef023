// SPDX-License-Identifier: MIT
/** @file
 *  @brief The range checks that `nhvk run` (config and `--set`) and `nhvk trajectory` (options) share: one rule per
 *         setting, so that both commands accept and refuse the same values. Each check returns what was expected
 *         (a phrase for "expected …, got …") and the caller names the setting as its user spelled it: the config
 *         key with file:line, or the option.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nhvk/distribution.hpp>

#include "config.hpp"
#include "stats/ensemble_stats.hpp"

namespace nhvk {

/** @brief A setting that cannot be honoured: the config key it concerns (e.g. "integrator.dt") and what is
 *         expected of it. */
struct SettingProblem {
    std::string key;
    std::string expected;
};

/** @brief Largest number of output times (`times.count`, `times.list`, `--times`). */
inline constexpr int max_output_times = 1000000;
/** @brief Largest `run.exact_memory_mb` (2^40 MB: the byte count stays far inside 64 bits). */
inline constexpr std::int64_t max_exact_memory_mb = std::int64_t{1} << 40;

/** @brief The smallest `rtol` a run in precision `p` can reach: about 17 units of roundoff, as a round number (2e-15
 *         in double, 1e-6 in float); Hairer's codes refuse tolerances below 10 units. */
double min_rtol(Precision p);
/** @brief The default `rtol` in precision `p`: 1e-10 in double, 1e-6 in float. */
double default_rtol(Precision p);
/** @brief The default `atol` in precision `p`: 1e-12 in double, 1e-8 in float. */
double default_atol(Precision p);
/** @brief integrator.dt's default: a fixed-step method's step, or 0 (the automatic first step) for an adaptive one. */
double default_dt(Method m);

/** @brief The coordinates d_q and d_v cover by default (`divergence.coordinates` unset, `nhvk trajectory` without
 *         `--coordinates`): all of them, but a model that mixes angles and lengths leaves its angles out. */
std::vector<int> default_divergence_coords(const ModelInfo& m);
/** @brief What d_q and d_v cover, as trajectory CSV headers name it (`d_q[x y]`): the coordinates in order, each as
 *         `w*name` where its weight w is not 1, then `kinetic` where measured in the kinetic metric. */
std::string divergence_label(const ModelInfo& m, const std::vector<int>& coords, const std::vector<double>& weights,
                             bool kinetic);

/** @brief The integrator settings on their own (rtol, atol, dt, min_step, max_steps), in the order the config
 *         lists them; the first problem, if any. rtol and atol are only checked for dopri5 (rk4 ignores them). */
std::optional<SettingProblem> check_integrator(const IntegratorSettings& s);

/** @brief rk4: the number of fixed steps to the output times (⌈Δt/dt⌉ per interval, summed in floating point so
 *         that it cannot overflow) must not exceed `max_steps`. Reported under "integrator.dt". */
std::optional<SettingProblem> check_step_count(const IntegratorSettings& s, double t0,
                                               const std::vector<double>& times);

/** @brief What a value of parameter `p` must be ("a number > 0 (m: ...)"), or nothing when `x` is in its range. */
std::optional<std::string> check_param(const ParamInfo& p, double x);

/** @brief As `check_param`, for a swept parameter: every value the distribution can draw must be in range (a
 *         uniform's closed interval, a normal only with std = 0 unless the parameter takes any number). */
std::optional<std::string> check_param(const ParamInfo& p, const Distribution& d);

/** @brief The series of a run's statistics: the `base` = metric_rows(nt) series of the metrics, then, with
 *         statistics.replicas = R ≥ 2, R replica groups of the replicated_rows(nt) divergence series (member index
 *         mod R; ChunkView), `series` in all. */
struct StatisticsShape {
    std::size_t base = 0, replicas = 0, replicated = 0, series = 0;
    /** @brief The series of replica group r (< replicas) of row s0 (< replicated). */
    std::size_t replica_series(std::size_t r, std::size_t s0) const { return base + r * replicated + s0; }
    /** @brief Where the replica groups' series start and how many share the members (the accumulator's view). */
    stats::ReplicaShape replica_shape() const { return {base, replicas > 0u ? replicas : 1u}; }
};
StatisticsShape statistics_shape(const RunConfig& cfg);

/** @brief True when a sweep's points are reduced part by part where the metrics are (EnsembleBackend::reduce_part),
 *         on a backend that can: histogram quantiles at every point (exact ones need the values on the host), and
 *         points whose metrics outweigh the statistics of a part (a partial and a histogram row per series), so that
 *         sending each part's statistics back costs less than sending its metrics. */
bool sweep_reduced_in_parts(const RunConfig& cfg);

/** @brief The chunk regions a device backend keeps host copies of for `cfg` (ChunkLayout::host_inputs and
 *         host_metrics): the inputs for samples.csv, members.nc and saved trajectories; the metrics for samples.csv,
 *         members.nc and a sweep whose points the host reduces. */
struct HostRegions {
    bool inputs = false, metrics = false;
};
HostRegions device_host_regions(const RunConfig& cfg);

/** @brief The host memory a run needs, by what takes it (bytes, in floating point: no overflow). */
struct MemoryEstimate {
    double chunk = 0.0;      ///< the chunk buffers
    double histograms = 0.0; ///< histogram rows and bin tables
    double values = 0.0;     ///< exact-quantile values (0 in histogram mode)
    double points = 0.0;     ///< a sweep's points: every finished point's, the open ones', the pooled partials
    double per_point = 0.0;  ///< of `points`, what each finished point keeps (sweep_point_bytes and its bookkeeping)
    /// the program itself: code and libraries resident, the model tables, the allocator's arenas (about 60 MiB
    /// measured on x86-64 Linux for a run of one member; bench/results/2026-11-28-sweep-memory.md)
    double program = 64.0 * 1024.0 * 1024.0;
    bool exact = true; ///< quantiles exact (every value kept)
    double total() const { return chunk + histograms + values + points + program; }
};
/** @brief The host memory a run needs at its peak, estimated in floating point (no overflow): the chunk buffers (one
 *         block on the CPU backend; with `device_backend`, the two pinned slots' statuses and the regions the host
 *         reads), the histogram rows (on the host and on the backend), when quantiles are exact every value, a
 *         sweep's points, and the program itself. */
MemoryEstimate estimate_memory(const RunConfig& cfg, bool device_backend);

/** @brief Bytes a finished sweep point of configuration `point` keeps until the run ends: that configuration
 *         (Sweep::configs), its summaries and counts (EnsembleResult::points), and its part of summary.json and
 *         report.html while they are made. Not its exact values (run.exact_memory_mb bounds those). */
double sweep_point_bytes(const RunConfig& point);
/** @brief Bytes an open sweep point's stage holds besides its values: the accumulator's partials of every series, the
 *         summaries its finish makes, and its histogram rows when `histogram`. */
double open_point_bytes(const RunConfig& point, bool histogram);

/** @brief `estimate_memory(cfg, device_backend)` against `available_bytes` (`available_what` says whose: "of memory
 *         of this machine", or a process limit). When it does not fit, the problem names the setting that takes the
 *         most (run.chunk, times.count or times.list, run.exact_memory_mb, sweep), and its text is the whole reason
 *         (the sizes in MiB and what lowers the largest), not a phrase. */
std::optional<SettingProblem> check_memory(const RunConfig& cfg, double available_bytes, bool device_backend,
                                           const std::string& available_what = "of memory of this machine");

/** @brief The physical memory of this machine in bytes (sysconf), or +inf when unknown. */
double physical_memory_bytes();
/** @brief The smaller of this process's address-space and data limits (`ulimit -v`, `ulimit -d`) in bytes, or +inf
 *         when neither is set. */
double process_limit_bytes();

/** @brief Address space each CPU thread after the first reserves whatever it uses: its stack (RLIMIT_STACK, 8 MiB
 *         where unlimited) and a glibc malloc arena (64 MiB on 64-bit Linux). */
double thread_reservation_bytes();
/** @brief This process's mapped address space now (VmSize of /proc/self/status), bytes; 0 where unknown. */
double mapped_bytes();
/** @brief Why `threads` CPU threads do not fit under the address-space limit `limit_bytes` (`ulimit -v`), beside the
 *         `mapped` bytes already mapped and the run's `heap` bytes, each thread after the first reserving
 *         `per_thread`; the text names the thread count that fits. nullopt when they fit, for one thread (the memory
 *         check judges its data) and where there is no limit. */
std::optional<std::string> address_space_problem(int threads, double heap, double mapped, double per_thread,
                                                 double limit_bytes);

/** @brief The shortest decimal that reads back as `x` ("0.1", "1e-09", "inf"). */
std::string format_number(double x);

} // namespace nhvk
