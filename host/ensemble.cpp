// SPDX-License-Identifier: MIT
/** @file
 *  @brief The ensemble pipeline behind `nhvk run`.
 *
 *  Per chunk: sample (host, OpenMP) → integrate (backend) → reduce (Thrust, OMP system) → optional per-trajectory
 *  rows. With the CUDA backend two slots alternate, so the host samples and reduces one chunk while the device
 *  integrates the other. Every draw depends only on (seed, global index) and every reduction is order-independent,
 *  so the statistics are bit-identical for any chunk size, thread count and backend schedule.
 */
#include "ensemble.hpp"

#include <omp.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "chunk_runner.hpp"
#include "model_ops.hpp"
#include "trajectory.hpp"

namespace nhvk {

namespace fs = std::filesystem;

const char* metric_name(int metric) {
    static const char* names[metric_count] = {"d_q", "d_v", "res_nh", "res_vk", "energy_nh", "energy_vk"};
    return metric >= 0 && metric < metric_count ? names[metric] : "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string temp_name(const std::string& path) {
    return path + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
}

/** @brief A file written under a temporary name and renamed into place by `commit()`; removed otherwise. */
class AtomicFile {
public:
    explicit AtomicFile(std::string path) : path_(std::move(path)), tmp_(temp_name(path_)) {
        out_.open(tmp_, std::ios::out | std::ios::trunc);
        if (!out_) throw std::runtime_error("cannot write '" + tmp_ + "': " + std::strerror(errno));
    }
    ~AtomicFile() {
        if (!committed_) {
            out_.close();
            std::error_code ec;
            fs::remove(tmp_, ec);
        }
    }
    std::ofstream& stream() { return out_; }
    void commit() {
        out_.flush();
        if (!out_) throw std::runtime_error("error writing '" + tmp_ + "'");
        out_.close();
        std::error_code ec;
        fs::rename(tmp_, path_, ec);
        if (ec) throw std::runtime_error("cannot rename '" + tmp_ + "' to '" + path_ + "': " + ec.message());
        committed_ = true;
    }

private:
    std::string path_, tmp_;
    std::ofstream out_;
    bool committed_ = false;
};

std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    std::ostringstream os;
    const long long t = static_cast<long long>(s + 0.5);
    if (t >= 3600) os << t / 3600 << "h" << std::setw(2) << std::setfill('0') << (t % 3600) / 60 << "m";
    else if (t >= 60) os << t / 60 << "m" << std::setw(2) << std::setfill('0') << t % 60 << "s";
    else os << std::fixed << std::setprecision(1) << s << "s";
    return os.str();
}

/** @brief JSON number, or null for NaN/inf (nlohmann prints those as null too; explicit for clarity). */
nlohmann::json num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json series_json(const EnsembleResult& r, int metric) {
    nlohmann::json j;
    const std::size_t nt = r.times.size();
    std::vector<nlohmann::json> count, mean, sd, mn, mx, p01, p05, p25, p50, p75, p95, p99;
    for (std::size_t i = 0; i < nt; ++i) {
        const stats::SeriesSummary& s = r.at(metric, static_cast<int>(i));
        count.push_back(s.count);
        mean.push_back(num(s.mean));
        sd.push_back(num(s.std));
        mn.push_back(num(s.min));
        mx.push_back(num(s.max));
        p01.push_back(num(s.p01));
        p05.push_back(num(s.p05));
        p25.push_back(num(s.p25));
        p50.push_back(num(s.p50));
        p75.push_back(num(s.p75));
        p95.push_back(num(s.p95));
        p99.push_back(num(s.p99));
    }
    j["count"] = count;
    j["mean"] = mean;
    j["std"] = sd;
    j["min"] = mn;
    j["max"] = mx;
    j["p01"] = p01;
    j["p05"] = p05;
    j["p25"] = p25;
    j["p50"] = p50;
    j["p75"] = p75;
    j["p95"] = p95;
    j["p99"] = p99;
    return j;
}

double overall_max(const EnsembleResult& r, int metric) {
    double m = NAN;
    for (std::size_t i = 0; i < r.times.size(); ++i) {
        const double x = r.at(metric, static_cast<int>(i)).max;
        if (std::isfinite(x)) m = std::isfinite(m) ? std::max(m, x) : x;
    }
    return m;
}

nlohmann::json summary_json(const RunConfig& cfg, const EnsembleResult& r) {
    nlohmann::json j;
    j["schema"] = "nhvk.summary/1";
    j["nhvk_version"] = "0.1.0";
    nlohmann::json resolved = cfg.resolved_json();
    j["model"]["name"] = cfg.model.name;
    j["model"]["params"] = resolved.contains("model") && resolved["model"].contains("params")
                               ? resolved["model"]["params"]
                               : nlohmann::json::object();
    j["model"]["n"] = cfg.model.n;
    j["model"]["k"] = cfg.model.k;
    j["model"]["coordinates"] = cfg.model.coords;
    j["model"]["angles"] = cfg.model.angles;
    nlohmann::json& tr = j["trajectories"];
    tr["requested"] = r.requested;
    tr["valid"] = r.valid;
    nlohmann::json failed;
    failed["total"] = r.failed();
    for (int s = 1; s < status_count; ++s) failed["by_status"][status_name(static_cast<Status>(s))] = r.failed_by_status[s];
    failed["by_dynamics"]["nonholonomic"] = r.failed_by_dynamics[1];
    failed["by_dynamics"]["vakonomic"] = r.failed_by_dynamics[2];
    for (int s = 1; s < sample_status_count; ++s)
        failed["sampling"][sample_status_name(static_cast<SampleStatus>(s))] = r.sampling[s];
    tr["failed"] = failed;
    j["times"] = r.times;
    j["divergence"]["q"] = series_json(r, metric_dq);
    j["divergence"]["v"] = series_json(r, metric_dv);
    j["divergence"]["coordinates"] = [&] {
        std::vector<std::string> c;
        for (int i : cfg.divergence_coords) c.push_back(cfg.model.coords[i]);
        return c;
    }();
    j["constraint_residual"]["nh"] = series_json(r, metric_res_nh);
    j["constraint_residual"]["vk"] = series_json(r, metric_res_vk);
    j["constraint_residual"]["max"]["nh"] = num(overall_max(r, metric_res_nh));
    j["constraint_residual"]["max"]["vk"] = num(overall_max(r, metric_res_vk));
    j["energy_drift"]["definition"] =
        "nh: |E(t) - E(t0)| with E = v.L_v - L; vk: |Et(t) - Et(t0)| with Et = E - mu.(J v) (conserved for "
        "autonomous systems)";
    j["energy_drift"]["nh"] = series_json(r, metric_energy_nh);
    j["energy_drift"]["vk"] = series_json(r, metric_energy_vk);
    j["energy_drift"]["max"]["nh"] = num(overall_max(r, metric_energy_nh));
    j["energy_drift"]["max"]["vk"] = num(overall_max(r, metric_energy_vk));
    j["growth_exponent"]["q"] = num(r.growth_q);
    j["growth_exponent"]["v"] = num(r.growth_v);
    j["growth_exponent"]["t_max"] = cfg.growth_t_max;
    j["growth_exponent"]["definition"] = "least-squares slope of log median d against log t over 0 < t <= t_max";
    nlohmann::json& on = j["onset"];
    on["threshold"] = cfg.onset_threshold;
    on["counts"] = r.onset.counts;
    on["never"] = r.onset.never;
    for (const auto& [name, p] : {std::pair<const char*, double>{"p05", 0.05}, {"p25", 0.25}, {"p50", 0.5},
                                  {"p75", 0.75}, {"p95", 0.95}})
        on["quantiles"][name] = num(r.onset.quantile(p, r.times, true));
    on["definition"] = "first output time with d_q > threshold; quantiles rank 'never' after every output time (null)";
    j["statistics"]["quantiles"] = r.exact_quantiles ? "exact" : "histogram";
    j["statistics"]["quantile_definition"] = "type 7 (linear interpolation between order statistics)";
    if (!r.exact_quantiles) j["statistics"]["histogram_relative_resolution"] = r.histogram_resolution;
    j["statistics"]["deterministic"] = true;
    j["backend"] = r.backend;
    j["threads"] = r.threads;
    j["precision"] = to_string(cfg.integrator.precision);
    j["equations"] = to_string(cfg.integrator.equations);
    j["timing"]["seconds"] = r.seconds;
    j["timing"]["sampling_seconds"] = r.sampling_seconds;
    j["timing"]["integration_seconds"] = r.integration_seconds;
    j["timing"]["reduction_seconds"] = r.reduction_seconds;
    j["timing"]["trajectories_per_second"] = r.seconds > 0 ? static_cast<double>(r.requested) / r.seconds : 0.0;
    j["config"] = resolved;
    return j;
}

std::string stats_csv(const EnsembleResult& r) {
    std::ostringstream os;
    os << std::setprecision(17);
    os << "time_index,t,metric,count,nonfinite,mean,std,min,max,p01,p05,p25,p50,p75,p95,p99\n";
    auto v = [](double x) {
        std::ostringstream s;
        s << std::setprecision(17);
        if (std::isfinite(x)) s << x;
        return s.str(); // NOTE: empty field for NaN (no valid value), documented in the README
    };
    for (std::size_t i = 0; i < r.times.size(); ++i)
        for (int m = 0; m < metric_count; ++m) {
            const stats::SeriesSummary& s = r.at(m, static_cast<int>(i));
            os << i << ',' << v(r.times[i]) << ',' << metric_name(m) << ',' << s.count << ',' << s.nonfinite << ','
               << v(s.mean) << ',' << v(s.std) << ',' << v(s.min) << ',' << v(s.max) << ',' << v(s.p01) << ','
               << v(s.p05) << ',' << v(s.p25) << ',' << v(s.p50) << ',' << v(s.p75) << ',' << v(s.p95) << ','
               << v(s.p99) << '\n';
        }
    return os.str();
}

/** @brief Progress on stderr: done/total, rate, ETA (only when stderr is a terminal). */
class Progress {
public:
    Progress(std::uint64_t total, bool enabled) : total_(total), enabled_(enabled && ::isatty(2)), t0_(Clock::now()) {}
    void update(std::uint64_t done) {
        if (!enabled_) return;
        const double s = seconds_since(t0_);
        if (done < total_ && s - last_ < 0.25) return;
        last_ = s;
        const double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
        const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : NAN;
        std::fprintf(stderr, "\r[nhvk] %llu/%llu (%5.1f%%)  %.4g traj/s  ETA %s   ",
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                     100.0 * static_cast<double>(done) / static_cast<double>(total_), rate,
                     format_duration(eta).c_str());
        std::fflush(stderr);
    }
    void finish() {
        if (enabled_) std::fprintf(stderr, "\n");
    }

private:
    std::uint64_t total_;
    bool enabled_;
    Clock::time_point t0_;
    double last_ = -1.0;
};

} // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
    AtomicFile f(path);
    f.stream() << content;
    f.commit();
}

EnsembleResult run_ensemble(const RunConfig& cfg, const EnsembleOptions& opt) {
    const auto t_start = Clock::now();
    const ModelOps* ops = find_model_ops(cfg.model.name);
    if (!ops) throw std::runtime_error("unknown model '" + cfg.model.name + "'");
    const int n = cfg.model.n, k = cfg.model.k, nt = static_cast<int>(cfg.times.size());
    const int np = static_cast<int>(cfg.params.size());
    if (np > max_params) throw std::runtime_error("model has more than " + std::to_string(max_params) + " parameters");
    const std::uint64_t N = static_cast<std::uint64_t>(cfg.run.trajectories);
    // NOTE: the OpenMP default is process-wide; restore it on return so one run's thread count does not leak into
    // the next run of the same process.
    struct OmpThreadsGuard {
        int saved = omp_get_max_threads();
        ~OmpThreadsGuard() { omp_set_num_threads(saved); }
    } omp_guard;
    const int threads = cfg.run.threads > 0 ? cfg.run.threads : omp_guard.saved;
    omp_set_num_threads(threads);

    // ---- backend ----
    bool per_member_params = false;
    for (const Distribution& d : cfg.param_dists) per_member_params = per_member_params || d.kind != DistKind::fixed;
    ChunkLayout layout;
    layout.n = n;
    layout.k = k;
    layout.nt = nt;
    layout.n_params = np;
    layout.per_member_params = per_member_params;
    layout.capacity = static_cast<long long>(std::min<std::uint64_t>(static_cast<std::uint64_t>(cfg.run.chunk), N));
    ChunkCommon common;
    common.model = cfg.model.name;
    common.method = cfg.integrator.method;
    common.precision = cfg.integrator.precision;
    common.equations = cfg.integrator.equations;
    common.times = cfg.times.data();
    common.nt = nt;
    common.t0 = cfg.t0;
    common.ctl.rtol = cfg.integrator.rtol;
    common.ctl.atol = cfg.integrator.atol;
    common.ctl.dt = cfg.integrator.dt;
    common.ctl.min_step = cfg.integrator.min_step;
    common.ctl.max_steps = cfg.integrator.max_steps;
    common.ctl.project = cfg.integrator.project;
    common.divergence_mask = 0u;
    for (int c : cfg.divergence_coords) common.divergence_mask |= 1u << c;
    common.angle_mask = 0u;
    for (int c = 0; c < n; ++c)
        if (cfg.model.angles[c]) common.angle_mask |= 1u << c;
    common.onset_threshold = cfg.onset_threshold;
    common.shared_params = np > 0 ? cfg.params.data() : nullptr;

    std::unique_ptr<ChunkRunner> runner;
    EnsembleResult r;
    // NOTE: the dual-number reference equations run on the CPU only; `auto` picks the CPU for them.
    if (cfg.run.backend == Backend::cuda && common.equations == EquationsKind::ad)
        throw std::runtime_error("run.backend = \"cuda\" integrates the generated equations only; "
                                 "integrator.equations = \"ad\" needs run.backend = \"cpu\" or \"auto\"");
    if (cfg.run.backend == Backend::cuda ||
        (cfg.run.backend == Backend::automatic && common.equations == EquationsKind::generated && cuda_available())) {
        runner = make_cuda_runner(layout, common);
    } else {
        runner = make_cpu_runner(layout, common, threads);
    }
    // ---- the output folder must be writable before any work is done (after the backend, so a
    // backend error leaves no folder behind) ----
    const fs::path out_dir(cfg.run.out);
    {
        std::error_code ec;
        fs::create_directories(out_dir, ec);
        if (ec || !fs::is_directory(out_dir))
            throw std::runtime_error("run.out: cannot create output folder '" + cfg.run.out + "': " +
                                     (ec ? ec.message() : "not a directory"));
        const std::string probe = (out_dir / ".nhvk_write_probe").string();
        std::ofstream p(probe);
        if (!p) throw std::runtime_error("run.out: output folder '" + cfg.run.out + "' is not writable");
        p.close();
        fs::remove(probe, ec);
    }

    r.backend = runner->name();
    r.threads = threads;
    r.requested = N;
    r.times = cfg.times;

    // ---- accumulators ----
    const std::size_t n_series = static_cast<std::size_t>(metric_count) * nt;
    stats::EnsembleAccumulator acc(n_series, N, static_cast<std::size_t>(cfg.run.exact_memory_mb) * 1024u * 1024u);
    r.onset = stats::OnsetHistogram(static_cast<std::size_t>(nt));

    // ---- optional per-trajectory rows ----
    std::unique_ptr<AtomicFile> samples;
    if (cfg.run.save_samples) {
        samples = std::make_unique<AtomicFile>((out_dir / "samples.csv").string());
        std::ofstream& s = samples->stream();
        s << "index,sample_status,status,failed_dynamics,fail_time_index";
        for (int c = 0; c < n; ++c) s << ",q0_" << cfg.model.coords[c];
        for (int c = 0; c < n; ++c) s << ",v0_" << cfg.model.coords[c];
        for (int a = 0; a < k; ++a) s << ",mu0_" << a;
        if (per_member_params)
            for (int p = 0; p < np; ++p) s << ",param_" << cfg.model.params[p].name;
        s << ",d_q_final,d_v_final,onset_time\n";
        s << std::setprecision(17);
    }
    std::vector<std::pair<std::uint64_t, TrajectoryRequest>> saved_requests;

    const int slots = runner->slots();
    std::vector<std::vector<std::uint8_t>> sample_status(slots, std::vector<std::uint8_t>(layout.capacity));
    std::vector<std::uint64_t> slot_first(slots, 0);
    std::vector<long long> slot_m(slots, 0);
    std::vector<bool> slot_busy(slots, false);
    std::vector<std::uint8_t> valid(layout.capacity);
    Progress progress(N, opt.progress && !opt.quiet);
    std::uint64_t done = 0;

    auto reduce_slot = [&](int s) {
        auto tw = Clock::now();
        runner->wait(s);
        r.integration_seconds += seconds_since(tw);
        auto tr = Clock::now();
        ChunkArgs& a = runner->slot(s);
        const long long m = slot_m[s];
        for (long long j = 0; j < m; ++j) {
            const auto ss = static_cast<SampleStatus>(sample_status[s][j]);
            const auto st = static_cast<Status>(a.status[j]);
            const bool ok = ss == SampleStatus::ok && st == Status::ok;
            valid[j] = ok ? 1u : 0u;
            if (ok) {
                ++r.valid;
            } else if (ss != SampleStatus::ok) {
                ++r.sampling[static_cast<int>(ss)];
                ++r.failed_by_dynamics[0];
            } else {
                ++r.failed_by_status[static_cast<int>(st)];
                ++r.failed_by_dynamics[a.failed[j] < 3 ? a.failed[j] : 0];
            }
        }
        acc.add_chunk(a.metrics, static_cast<std::size_t>(m), static_cast<std::size_t>(a.ld), valid.data());
        r.onset.add_chunk(reinterpret_cast<const std::uint32_t*>(a.onset), static_cast<std::size_t>(m), valid.data());
        if (samples) {
            std::ofstream& out = samples->stream();
            for (long long j = 0; j < m; ++j) {
                out << slot_first[s] + static_cast<std::uint64_t>(j) << ','
                    << sample_status_name(static_cast<SampleStatus>(sample_status[s][j])) << ','
                    << status_name(static_cast<Status>(a.status[j])) << ','
                    << (a.failed[j] == 1 ? "nonholonomic" : a.failed[j] == 2 ? "vakonomic" : "") << ','
                    << a.fail_index[j];
                for (int c = 0; c < n; ++c) out << ',' << a.q0[c * a.ld + j];
                for (int c = 0; c < n; ++c) out << ',' << a.v0[c * a.ld + j];
                for (int c = 0; c < k; ++c) out << ',' << a.mu0[c * a.ld + j];
                if (per_member_params)
                    for (int p = 0; p < np; ++p) out << ',' << a.params[p * a.ld + j];
                if (valid[j]) {
                    out << ',' << a.metrics[(metric_dq * nt + nt - 1) * a.ld + j] << ','
                        << a.metrics[(metric_dv * nt + nt - 1) * a.ld + j] << ',';
                    if (a.onset[j] >= 0) out << cfg.times[a.onset[j]];
                    out << '\n';
                } else {
                    out << ",,\n";
                }
            }
        }
        // The first `save_trajectories` members are re-integrated with full states (CPU, same per-member code).
        for (long long j = 0; j < m; ++j) {
            const std::uint64_t g = slot_first[s] + static_cast<std::uint64_t>(j);
            if (g >= static_cast<std::uint64_t>(cfg.run.save_trajectories)) break;
            if (sample_status[s][j] != static_cast<std::uint8_t>(SampleStatus::ok)) continue;
            TrajectoryRequest q;
            q.model = cfg.model.name;
            q.params = cfg.params;
            if (per_member_params)
                for (int p = 0; p < np; ++p) q.params[p] = a.params[p * a.ld + j];
            for (int c = 0; c < n; ++c) {
                q.q0.push_back(a.q0[c * a.ld + j]);
                q.v0.push_back(a.v0[c * a.ld + j]);
            }
            for (int c = 0; c < k; ++c) q.mu0.push_back(a.mu0[c * a.ld + j]);
            q.t0 = cfg.t0;
            q.times = cfg.times;
            q.method = common.method;
            q.precision = common.precision;
            q.equations = common.equations;
            q.ctl = common.ctl;
            q.divergence_mask = common.divergence_mask;
            saved_requests.emplace_back(g, std::move(q));
        }
        done += static_cast<std::uint64_t>(m);
        slot_busy[s] = false;
        r.reduction_seconds += seconds_since(tr);
        progress.update(done);
    };

    // ---- the chunk loop ----
    std::uint64_t next = 0;
    int chunk_index = 0;
    while (next < N) {
        const int s = chunk_index % slots;
        if (slot_busy[s]) reduce_slot(s);
        const long long m = static_cast<long long>(std::min<std::uint64_t>(layout.capacity, N - next));
        ChunkArgs& a = runner->slot(s);
        SampleChunk sc;
        sc.q0 = const_cast<double*>(a.q0);
        sc.v0 = const_cast<double*>(a.v0);
        sc.mu0 = const_cast<double*>(a.mu0);
        sc.params = per_member_params ? const_cast<double*>(a.params) : nullptr;
        sc.ld = a.ld;
        sc.status = sample_status[s].data();
        SampleRequest req;
        req.cfg = &cfg;
        req.first = next;
        req.m = m;
        req.threads = threads;
        auto ts = Clock::now();
        ops->sample_chunk(req, sc);
        r.sampling_seconds += seconds_since(ts);
        slot_first[s] = next;
        slot_m[s] = m;
        auto ti = Clock::now();
        runner->submit(s, m);
        r.integration_seconds += seconds_since(ti);
        slot_busy[s] = true;
        next += static_cast<std::uint64_t>(m);
        ++chunk_index;
    }
    for (int c = 0; c < slots; ++c) {
        const int s = (chunk_index + c) % slots;
        if (slot_busy[s]) reduce_slot(s);
    }
    progress.finish();

    // ---- statistics ----
    auto tf = Clock::now();
    r.series = acc.finalize();
    r.exact_quantiles = acc.exact();
    r.histogram_resolution = acc.histogram_relative_resolution();
    std::vector<double> med_q(nt), med_v(nt);
    for (int i = 0; i < nt; ++i) {
        med_q[i] = r.at(metric_dq, i).p50;
        med_v[i] = r.at(metric_dv, i).p50;
    }
    std::vector<double> rel_t(nt);
    for (int i = 0; i < nt; ++i) rel_t[i] = cfg.times[i] - cfg.t0;
    r.growth_q = stats::growth_exponent(rel_t, med_q, cfg.growth_t_max - cfg.t0);
    r.growth_v = stats::growth_exponent(rel_t, med_v, cfg.growth_t_max - cfg.t0);
    r.reduction_seconds += seconds_since(tf);

    // ---- saved trajectories (full states), one CSV each in trajectories/ ----
    if (!saved_requests.empty()) {
        const fs::path dir = out_dir / "trajectories";
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) throw std::runtime_error("cannot create '" + dir.string() + "': " + ec.message());
        for (const auto& [g, q] : saved_requests) {
            const TrajectoryResult tr = ops->trajectory_cpu(q);
            std::ostringstream name;
            name << "trajectory_" << std::setw(6) << std::setfill('0') << g << ".csv";
            const std::string path = (dir / name.str()).string();
            const std::string tmp = temp_name(path);
            std::FILE* f = std::fopen(tmp.c_str(), "w");
            if (!f) throw std::runtime_error("cannot write '" + tmp + "': " + std::strerror(errno));
            ops->write_trajectory_csv(q, tr, f);
            const bool bad = std::ferror(f) != 0;
            std::fclose(f);
            if (bad) {
                fs::remove(tmp, ec);
                throw std::runtime_error("error writing '" + tmp + "'");
            }
            fs::rename(tmp, path, ec);
            if (ec) throw std::runtime_error("cannot rename '" + tmp + "': " + ec.message());
        }
    }

    r.seconds = seconds_since(t_start);
    if (samples) samples->commit();
    write_file_atomic((out_dir / "stats.csv").string(), stats_csv(r));
    write_file_atomic((out_dir / "summary.json").string(), summary_json(cfg, r).dump(2) + "\n");
    return r;
}

} // namespace nhvk
