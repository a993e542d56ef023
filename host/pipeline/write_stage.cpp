// SPDX-License-Identifier: MIT
#include "pipeline/write_stage.hpp"

#include "pipeline/netcdf_output.hpp"
#include "pipeline/partial_state.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/result_columns.hpp"
#include "report/report.hpp"
#include "stats/byte_io.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "checks.hpp"
#include "inspect.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "sweep_design.hpp"

namespace nhvk {

namespace fs = std::filesystem;

namespace {

/** @brief JSON number, or null for NaN/inf (nlohmann prints those as null too; explicit for clarity). */
nlohmann::json num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

/** @brief `x` (a string or a list), or null where it is empty. */
template <class V> nlohmann::json or_null(const V& x) {
    return x.empty() ? nlohmann::json(nullptr) : nlohmann::json(x);
}

nlohmann::json series_json(const EnsembleResult& r, int metric) {
    nlohmann::json j;
    j["count"] = j["outside_range"] = nlohmann::json::array();
    for (const auto& c : statistic_columns()) j[c.name] = nlohmann::json::array();
    for (const auto& c : interval_columns()) j["intervals"][c.name] = nlohmann::json::array();
    for (std::size_t i = 0; i < r.times.size(); ++i) {
        const stats::SeriesSummary& s = r.at(metric, static_cast<int>(i));
        j["count"].push_back(s.count);
        j["outside_range"].push_back(s.outside_range);
        for (const auto& c : statistic_columns()) j[c.name].push_back(num(c.get(s)));
        for (const auto& c : interval_columns()) j["intervals"][c.name].push_back(num(c.get(s)));
    }
    return j;
}

nlohmann::json sweep_json(const RunConfig& cfg, const EnsembleResult& r);

/** summary.json's growth_rate ([divergence.rate]; null without it): the fits of d ≈ A e^(λ(t − t0)) of d_q and d_v
 *  with their sampling intervals; a sweep point's without the definitions and the groups' own fits. */
nlohmann::json rate_json(const RunConfig& cfg, const EnsembleResult& r, bool point) {
    if (!cfg.rate_fit) return nullptr;
    nlohmann::json j;
    for (const auto& [name, f, lc, ac, groups] :
         {std::tuple<const char*, const stats::GrowthFit*, const stats::ReplicaInterval*, const stats::ReplicaInterval*,
                     const std::vector<double>*>{"q", &r.rate.q, &r.rate.slope_ci_q, &r.rate.amplitude_ci_q,
                                                 &r.rate.group_slopes_q},
          {"v", &r.rate.v, &r.rate.slope_ci_v, &r.rate.amplitude_ci_v, &r.rate.group_slopes_v}}) {
        nlohmann::json& o = j[name];
        o["rate"] = num(f->slope);
        o["ci95"] = {num(lc->lo), num(lc->hi)};
        o["se"] = num(lc->se);
        o["amplitude"] = num(f->amplitude);
        o["amplitude_ci95"] = {num(ac->lo), num(ac->hi)};
        o["points"] = f->points;
        o["r_squared"] = num(f->r_squared);
        if (point) continue;
        o["fit_ci95"] = {num(f->ci_low), num(f->ci_high)};
        o["group_rates"] = nlohmann::json::array();
        for (const double x : *groups) o["group_rates"].push_back(num(x));
    }
    j["interval_method"] = or_null(r.rate.method);
    j["withheld"] = or_null(r.rate.withheld);
    if (point) return j;
    j["statistic"] = cfg.rate_statistic;
    j["window"] = {cfg.rate_t_min, cfg.rate_t_max};
    j["law"] = law_text(cfg, "d", true, true);
    j["definition"] =
        "statistic d ~ A e^(lambda (t - t0)) (divergence.rate): lambda the least-squares slope of log d against t - t0 "
        "over window[0] < t <= window[1], A = exp(intercept); ci95 and se: the sampling intervals of the replica "
        "groups (interval_method: jackknife for the median and the mean, batch_means for other statistics, as for "
        "growth_exponent.sampling); fit_ci95: the scatter of the points about the line, not a sampling error; "
        "group_rates: each group's own fit";
    return j;
}

nlohmann::json summary_json(const RunConfig& cfg, const EnsembleResult& r, bool point = false) {
    nlohmann::json j;
    if (point) {
        // NOTE: a sweep point's part of summary.json: what differs between points (the counts, the fits, the onsets,
        // the flags); the run's description, definitions and per-time series are the pooled summary's and sweep.csv's
        j["trajectories"]["requested"] = r.requested;
        j["trajectories"]["valid"] = r.valid;
        j["trajectories"]["failed"] = r.failed();
        j["trajectories"]["failure_fraction"] =
            num(r.requested > 0 ? static_cast<double>(r.failed()) / static_cast<double>(r.requested) : NAN);
        for (int s = 1; s < status_count; ++s)
            if (r.failed_by_status[s])
                j["trajectories"]["failed_by_status"][status_name(static_cast<Status>(s))] = r.failed_by_status[s];
        for (int s = 1; s < sample_status_count; ++s)
            if (r.sampling[s])
                j["trajectories"]["sampling"][sample_status_name(static_cast<SampleStatus>(s))] = r.sampling[s];
        j["trajectories"]["diverged"] = r.diverged;
        j["trajectories"]["failure_warning"] = or_null(r.failure_warning);
        for (const auto& [name, f, p, c] :
             {std::tuple<const char*, const stats::GrowthFit*, const stats::ReplicaInterval*,
                         const stats::ReplicaInterval*>{"q", &r.growth_fit_q, &r.growth_ci_q, &r.amplitude_ci_q},
              {"v", &r.growth_fit_v, &r.growth_ci_v, &r.amplitude_ci_v}}) {
            nlohmann::json& g = j["growth_exponent"][name];
            g["exponent"] = num(f->slope);
            g["ci95"] = {num(p->lo), num(p->hi)};
            g["se"] = num(p->se);
            g["amplitude"] = num(f->amplitude);
            g["amplitude_ci95"] = {num(c->lo), num(c->hi)};
            g["points"] = f->points;
            g["r_squared"] = num(f->r_squared);
        }
        j["growth_exponent"]["interval_method"] = or_null(r.growth_interval_method);
        j["growth_exponent"]["interval_withheld"] = or_null(r.growth_interval_withheld);
        j["growth_exponent"]["at_rounding_level"] = r.growth_at_rounding_level;
        j["growth_rate"] = rate_json(cfg, r, true);
        const stats::SeriesSummary& ot = r.onset_times();
        j["onset"] = {{"crossed", ot.count},
                      {"never", r.onset.never},
                      {"censored", r.onset.censored},
                      {"p50", num(ot.p50)},
                      {"p50_ci95", {num(ot.q_lo[3]), num(ot.q_hi[3])}},
                      {"mean", num(ot.mean)}};
        for (const auto& [name, metric] : {std::pair<const char*, int>{"d_q", metric_dq}, {"d_v", metric_dv}}) {
            nlohmann::json& d = j["divergence"][name];
            for (const char* k : {"p50", "p50_lo", "p50_hi", "mean", "p95"}) d[k] = nlohmann::json::array();
            for (std::size_t i = 0; i < r.times.size(); ++i) {
                const stats::SeriesSummary& x = r.at(metric, static_cast<int>(i));
                d["p50"].push_back(num(x.p50));
                d["p50_lo"].push_back(num(x.q_lo[3]));
                d["p50_hi"].push_back(num(x.q_hi[3]));
                d["mean"].push_back(num(x.mean));
                d["p95"].push_back(num(x.p95));
            }
        }
        j["coincidence"] = or_null(r.coincide);
        j["balance_flagged"] = r.balance_flagged;
        j["quantiles"] = r.exact_quantiles ? "exact" : "histogram";
        j["low_population_times"] = r.low_population;
        return j;
    }
    j["schema"] = "nhvk.summary/1";
    j["nhvk_version"] = nhvk_version;
    nlohmann::json resolved = cfg.resolved_json();
    j["model"]["name"] = cfg.model.name;
    j["model"]["params"] = resolved.contains("model") && resolved["model"].contains("params")
                               ? resolved["model"]["params"]
                               : nlohmann::json::object();
    j["model"]["n"] = cfg.model.n;
    j["model"]["k"] = cfg.model.k;
    j["model"]["coordinates"] = cfg.model.coords;
    j["model"]["angles"] = cfg.model.angles;
    // The constraints' classification (nhvk inspect) at the run's parameters; a swept parameter at its centre. A
    // classification that fails (no sample state inside the model's charts) must not cost the run its outputs.
    try {
        j["classification"] = classification_json(cfg.model.name, cfg.params);
    } catch (const std::exception& e) {
        j["classification"] = {{"error", e.what()}};
    }
    nlohmann::json& tr = j["trajectories"];
    tr["requested"] = r.requested;
    tr["valid"] = r.valid;
    nlohmann::json failed;
    failed["total"] = r.failed();
    for (int s = 1; s < status_count; ++s)
        failed["by_status"][status_name(static_cast<Status>(s))] = r.failed_by_status[s];
    failed["by_dynamics"]["nonholonomic"] = r.failed_by_dynamics[1];
    failed["by_dynamics"]["vakonomic"] = r.failed_by_dynamics[2];
    for (int d = 1; d < 3; ++d)
        for (int s = 1; s < status_count; ++s)
            failed["by_dynamics_status"][d == 1 ? "nonholonomic" : "vakonomic"][status_name(static_cast<Status>(s))] =
                r.failed_by_dynamics_status[d][s];
    for (int s = 1; s < sample_status_count; ++s)
        failed["sampling"][sample_status_name(static_cast<SampleStatus>(s))] = r.sampling[s];
    tr["failed"] = failed;
    tr["failure_warning"] = or_null(r.failure_warning);
    // The limits that end a trajectory, as this run applied them (step_limit, step_underflow in `failed`).
    nlohmann::json& dv = tr["diverged"];
    dv["count"] = r.diverged;
    dv["stop_at"] = std::isfinite(cfg.stop_at) ? nlohmann::json(cfg.stop_at) : nlohmann::json(nullptr);
    dv["at_time"] = r.diverged_at;
    dv["definition"] =
        "members whose d_q passed divergence.stop_at at an output time before the last: both dynamics stopped there "
        "(status diverged; neither valid nor failed). at_time[i]: how many stopped at output time i, the first "
        "where d_q > stop_at (a censored observation: d_q was above stop_at from then on as far as the run knows). "
        "They count in the per-time statistics up to that time (population alive) and nowhere after it";
    tr["limits"]["max_steps"] = cfg.integrator.max_steps;
    tr["limits"]["min_step"] = cfg.integrator.min_step;
    j["times"] = r.times;
    // Each metric's statistics, largest value and description where its row of metric_table says; a section's
    // definition is its metrics' definitions, but for the divergence's, which states the configured formula (below).
    auto at = [&](const std::string& dotted) -> nlohmann::json& {
        std::string p = "/" + dotted;
        std::replace(p.begin(), p.end(), '.', '/');
        return j[nlohmann::json::json_pointer(p)];
    };
    for (int m = 0; m < metric_count; ++m) {
        const MetricInfo& d = metric_info(m);
        at(d.statistics) = series_json(r, m);
        if (d.max) at(d.max) = num(r.max_over_times(m));
        j["metrics"][d.name] = {{"statistics", d.statistics},
                                {"max", d.max ? nlohmann::json(d.max) : nlohmann::json(nullptr)},
                                {"unit", metric_unit_info(d.unit).key},
                                {"group", metric_group_info(d.group).key},
                                {"definition", d.definition}};
        if (d.group == MetricGroup::divergence) continue;
        const std::string section(d.statistics, std::strrchr(d.statistics, '.'));
        nlohmann::json& def = at(section + ".definition");
        def = (def.is_string() ? def.get<std::string>() + "; " : std::string()) + d.name + ": " + d.definition;
    }
    j["divergence"]["coordinates"] = [&] {
        std::vector<std::string> c;
        for (int i : cfg.divergence_coords) c.push_back(cfg.model.coords[i]);
        return c;
    }();
    j["divergence"]["weights"] = [&] {
        nlohmann::json w = nlohmann::json::object();
        for (int i : cfg.divergence_coords)
            w[cfg.model.coords[i]] = cfg.divergence_weights[static_cast<std::size_t>(i)];
        return w;
    }();
    j["divergence"]["metric"] = cfg.divergence_kinetic ? "kinetic" : "euclidean";
    j["divergence"]["definition"] =
        cfg.divergence_kinetic
            ? "d_q = sqrt(dq' W dq), d_v = sqrt(dv' W dv): each listed coordinate's difference (angles wrapped to "
              "(-pi, pi]) times its weight, in the kinetic metric W(q_NH) of the plain Lagrangian"
            : "d_q = sqrt(sum (w_j dq_j)^2), d_v = sqrt(sum (w_j dv_j)^2) over the listed coordinates (angle "
              "differences wrapped to (-pi, pi])";
    nlohmann::json& dg = j["diagnostics"];
    dg["balance_tolerance"] = cfg.balance_tolerance;
    dg["balance_flagged"] = r.balance_flagged;
    dg["balance_flag_reason"] = r.balance_flagged ? nlohmann::json(balance_flag_text(cfg, r)) : nlohmann::json();
    for (int m = 0; m < metric_count; ++m) dg["nonfinite"][metric_name(m)] = r.nonfinite_over_times(m);
    dg["nonfinite_definition"] =
        "per metric: the most members whose value was NaN or infinite at one output time; they are left out of the "
        "statistics (stats.csv's nonfinite column per time), so a maximum covers only the finite values. Any in "
        "balance_nh sets balance_flagged";
    dg["nonfinite_warning"] = or_null(r.nonfinite_warning);
    j["growth_exponent"]["q"] = num(r.growth_q);
    j["growth_exponent"]["v"] = num(r.growth_v);
    j["growth_exponent"]["t_max"] = cfg.growth_t_max;
    j["growth_exponent"]["statistic"] = cfg.growth_statistic;
    j["growth_exponent"]["window"] = {cfg.growth_t_min, cfg.growth_t_max};
    j["growth_exponent"]["exponent_fixed"] = {
        {"q", std::isfinite(cfg.growth_exponent) ? nlohmann::json(cfg.growth_exponent) : nlohmann::json(nullptr)},
        {"v", std::isfinite(cfg.growth_exponent_v) ? nlohmann::json(cfg.growth_exponent_v) : nlohmann::json(nullptr)}};
    j["growth_exponent"]["law"] = {{"q", law_text(cfg, "d_q", false, true)}, {"v", law_text(cfg, "d_v", false, true)}};
    j["growth_exponent"]["definition"] =
        "statistic d ~ C (t - t0)^p (divergence.fit.statistic, the median by default): p the least-squares slope of "
        "log d against log(t - t0) over window[0] < t <= window[1] (t_max), or the value exponent_fixed.q (d_q) or "
        "exponent_fixed.v (d_v) where that is set (only log C fitted: the mean of log d - p log(t - t0)), "
        "C = exp(intercept), in the unit of d per (time unit)^p";
    j["growth_exponent"]["amplitude"]["q"] = num(r.growth_fit_q.amplitude);
    j["growth_exponent"]["amplitude"]["v"] = num(r.growth_fit_v.amplitude);
    j["growth_exponent"]["fit"]["interval_definition"] =
        "ci95, amplitude_ci95: from the scatter of the log medians about the fitted line (Student t with points - 2 "
        "degrees of freedom); they do not measure the sampling error of the ensemble (another seed moves p and C by "
        "more)";
    for (const auto& [name, f] :
         {std::pair<const char*, const stats::GrowthFit*>{"q", &r.growth_fit_q}, {"v", &r.growth_fit_v}}) {
        nlohmann::json& fit = j["growth_exponent"]["fit"][name];
        fit["points"] = f->points;
        fit["r_squared"] = num(f->r_squared);
        fit["standard_error"] = num(f->standard_error);
        fit["ci95"] = {num(f->ci_low), num(f->ci_high)};
        fit["amplitude_ci95"] = {num(f->amplitude_ci_low), num(f->amplitude_ci_high)};
        fit["max_median"] = num(f->max_median);
        fit["undefined_because"] = or_null(fit_undefined_reason(cfg, r, f == &r.growth_fit_q));
    }
    nlohmann::json& smp = j["growth_exponent"]["sampling"];
    smp["replicas"] = r.replicas;
    smp["members_per_group"] = r.replicas > 0 ? r.integrated() / static_cast<std::uint64_t>(r.replicas) : 0u;
    smp["coverage_note"] =
        "measured coverage of the 95 % intervals (bench/results/2026-11-24-error-bars.md, 200 seeds): jackknife, "
        "exponent 95 % with 200 members per group and 95-98.5 % with 2000, amplitude 92.5-94.5 %; batch means, "
        "exponent about 90 % with 200 members per group (read it as too narrow there) and 96 % with 2000";
    smp["interval_method"] = or_null(r.growth_interval_method);
    smp["min_group_members"] = stats::min_group_members;
    smp["withheld"] = or_null(r.growth_interval_withheld);
    smp["method"] =
        "replica groups: the members are split into statistics.replicas groups by trajectory index mod R (the same "
        "under any chunking, thread count, MPI ranks, shards and resume). interval_method jackknife: each of R fits "
        "leaves one group out (the medians of the other R - 1 groups), se = sqrt((R - 1)/R sum (fit - mean fit)^2); "
        "batch_means (only where a leave-one-out fit is not finite): each group's own medians are fitted, se = "
        "sd(group fits)/sqrt(g). ci95 = pooled value -/+ t(0.975, R - 1) se; the amplitude's on log C (se_log), then "
        "exponentiated. group_exponents and group_amplitudes are the groups' own fits in both cases. These measure "
        "the ensemble's sampling error; null without replica groups (statistics.replicas = 0), and null with the "
        "reason in 'withheld' where a group holds fewer than min_group_members members at an output time of the fit "
        "window";
    for (const auto& [name, p, c, ps, cs] :
         {std::tuple<const char*, const stats::ReplicaInterval*, const stats::ReplicaInterval*,
                     const std::vector<double>*, const std::vector<double>*>{
              "q", &r.growth_ci_q, &r.amplitude_ci_q, &r.replica_growth_q, &r.replica_amplitude_q},
          {"v", &r.growth_ci_v, &r.amplitude_ci_v, &r.replica_growth_v, &r.replica_amplitude_v}}) {
        nlohmann::json& o = smp[name];
        o["groups"] = p->groups;
        o["se"] = num(p->se);
        o["ci95"] = {num(p->lo), num(p->hi)};
        o["amplitude_se_log"] = num(c->se);
        o["amplitude_ci95"] = {num(c->lo), num(c->hi)};
        o["group_exponents"] = nlohmann::json::array();
        o["group_amplitudes"] = nlohmann::json::array();
        for (const double x : *ps) o["group_exponents"].push_back(num(x));
        for (const double x : *cs) o["group_amplitudes"].push_back(num(x));
    }
    j["growth_exponent"]["at_rounding_level"] = r.growth_at_rounding_level;
    j["growth_rate"] = rate_json(cfg, r, false);
    j["coincidence"]["coincide"] = !r.coincide.empty();
    j["coincidence"]["basis"] = or_null(r.coincide);
    j["coincidence"]["statement"] = r.coincide.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.coincide_statement);
    nlohmann::json& on = j["onset"];
    on["threshold"] = cfg.onset_threshold;
    on["counts"] = r.onset.counts;
    on["never"] = r.onset.never;
    on["censored"] = r.onset.censored;
    const stats::SeriesSummary& ot = r.onset_times();
    on["crossed"] = ot.count;
    on["quantiles"] = {
        {"p05", num(ot.p05)}, {"p25", num(ot.p25)}, {"p50", num(ot.p50)}, {"p75", num(ot.p75)}, {"p95", num(ot.p95)}};
    on["mean"] = num(ot.mean);
    const OnsetBracket ob = onset_bracket(cfg, r);
    on["p50_bracket"] = {num(ob.lo), num(ob.hi)};
    on["p50_resolution"] = num(ob.hi - ob.lo);
    on["p50_resolved"] = std::isfinite(ob.lo) ? nlohmann::json(!ob.first) : nlohmann::json();
    on["resolution_definition"] =
        "p50_bracket: the output times t_{i-1} < p50 <= t_i around the median onset (t_{-1} = t0), p50_resolution "
        "their spacing: the onset is interpolated between them, so it is known to about that. p50_resolved is false "
        "when the median falls before the first output time, where d_q is interpolated linearly from 0 at t0 "
        "whatever its law (add output times there)";
    on["definition"] =
        "onset time: where d_q first rises through the threshold, interpolated between the two output times that "
        "bracket the crossing (linear in log d_q against log(t - t0); linear where the earlier d_q is 0); counts[i]: "
        "crossings in (t_{i-1}, t_i]; quantiles (type 7) and mean over the 'crossed' members; 'never': members that "
        "reached t_end below the threshold; 'censored': members that failed before crossing (population 'alive' "
        "only)";
    j["statistics"]["population"] = r.alive_population ? "alive" : "survivors";
    j["statistics"]["population_definition"] =
        r.alive_population ? "per-time statistics over the members alive at that time: a member that fails counts at "
                             "every output time it reached (the per-time count says how many)"
                           : "per-time statistics over the members that reached t_end (a failed member counts nowhere)";
    j["statistics"]["integrated"] = r.integrated();
    j["statistics"]["alive_fraction"] = nlohmann::json::array();
    for (double f : r.alive_fraction) j["statistics"]["alive_fraction"].push_back(num(f));
    nlohmann::json& low = j["statistics"]["low_population"];
    low["below_fraction"] = cfg.low_population_fraction;
    low["time_indices"] = r.low_population;
    low["times"] = nlohmann::json::array();
    for (int i : r.low_population) low["times"].push_back(r.times[static_cast<std::size_t>(i)]);
    j["statistics"]["alive_fraction_definition"] =
        "per output time: the members its statistics cover (d_q's count) over 'integrated' (the members whose "
        "integration began); under population 'alive' the share still alive there. low_population: the output times "
        "where it is below statistics.low_population_fraction, whose statistics describe a remnant of the ensemble "
        "(which members survived can shape them as much as the dynamics)";
    j["statistics"]["quantiles"] = r.exact_quantiles ? "exact" : "histogram";
    j["statistics"]["quantile_definition"] = "type 7 (linear interpolation between order statistics)";
    j["statistics"]["interval_definition"] =
        "each series' intervals (stats.csv's *_se, *_lo, *_hi columns): 95 % intervals and standard errors. mean: "
        "Student t, se = std/sqrt(n); quantiles: distribution-free, the order statistics x_(l), x_(u) with l, u from "
        "the binomial law of the count below the quantile (>= 95 % for any continuous law; null where n is too small), "
        "se = (hi - lo)/3.92, exact or interpolated in the histogram like the quantiles; std of d_q and d_v: the "
        "replica groups' stds, batch means as in growth_exponent.sampling, the lower bound clipped at 0 (null for "
        "other metrics, and where a group holds fewer than growth_exponent.sampling.min_group_members members: "
        "std_interval_withheld says where). std itself is the sample (n - 1) standard deviation, null where count < 2 "
        "(one member has none)";
    j["statistics"]["std_interval_withheld"] = or_null(r.std_interval_withheld);
    if (!r.exact_quantiles) j["statistics"]["histogram_relative_resolution"] = r.histogram_resolution;
    j["statistics"]["histogram_range"] = {r.histogram_lo, r.histogram_hi};
    j["statistics"]["histogram_window_decades"] = r.histogram_window_decades;
    j["statistics"]["values_outside_range"] = r.outside_range();
    j["statistics"]["deterministic"] = true;
    j["backend"] = r.backend;
    j["threads"] = r.threads;
    j["precision"] = to_string(cfg.integrator.precision);
    j["equations"] = to_string(cfg.integrator.equations);
    j["timing"]["seconds"] = r.seconds;
    j["timing"]["sampling_seconds"] = r.sampling_seconds;
    j["timing"]["integration_seconds"] = r.integration_seconds;
    j["timing"]["reduction_seconds"] = r.reduction_seconds;
    j["timing"]["transfer_seconds"] = r.transfer_seconds;
    j["timing"]["trajectories_per_second"] = r.seconds > 0 ? static_cast<double>(r.requested) / r.seconds : 0.0;
    // A model file's compile (or cache hit) in this process; null for a built-in model (and in `nhvk merge`).
    if (const std::optional<modelfile::CompileReport> mf = modelfile::compile_report(cfg.model.name)) {
        j["model_file"] = {{"source", mf->source},
                           {"path", mf->interpreted_because.empty() ? "compiled" : "interpreted"},
                           {"interpreted_because", or_null(mf->interpreted_because)},
                           {"artefact", or_null(mf->artefact)},
                           {"compiled_for", or_null(mf->compiled_for)},
                           {"cache_key", or_null(mf->key)},
                           {"cached", mf->cached},
                           {"derive_seconds", mf->derive_seconds},
                           {"compile_seconds", mf->compile_seconds},
                           {"wait_seconds", mf->wait_seconds}};
        // NVRTC's compile of its kernels when the run was on the CUDA backend; null on the CPU
        if (mf->cuda && r.backend == "cuda")
            j["model_file"]["cuda"] = {{"arch", mf->cuda->arch},
                                       {"artefact", mf->cuda->artefact},
                                       {"cache_key", mf->cuda->key},
                                       {"cached", mf->cuda->cached},
                                       {"compile_seconds", mf->cuda->compile_seconds},
                                       {"wait_seconds", mf->cuda->wait_seconds}};
        else j["model_file"]["cuda"] = nullptr;
    } else j["model_file"] = nullptr;
    // Where the CUDA kernels came from, for a model file and a built-in model alike; null on the CPU and after a merge
    const std::optional<modelfile::CompileReport::Cuda> ck =
        r.backend == "cuda" ? modelfile::cuda_compile_report(cfg.model.name) : std::nullopt;
    if (!ck) j["cuda_kernels"] = nullptr;
    else if (ck->ahead_of_time) j["cuda_kernels"] = {{"compiled", "ahead of time"}};
    else
        j["cuda_kernels"] = {{"compiled", "at run time (NVRTC)"},
                             {"arch", ck->arch},
                             {"artefact", ck->artefact},
                             {"cache_key", ck->key},
                             {"cached", ck->cached},
                             {"compile_seconds", ck->compile_seconds},
                             {"wait_seconds", ck->wait_seconds}};
    nlohmann::json& job = j["job"];
    job["config_hash"] = r.config_hash;
    job["ranks"] = r.ranks;
    job["trajectory_range"] = {r.first, r.end};
    job["shard"] = r.shard_count > 1 ? nlohmann::json{{"index", r.shard_index}, {"count", r.shard_count}}
                                     : nlohmann::json(nullptr);
    job["resumed_at"] = r.resumed ? nlohmann::json(r.resumed_at) : nlohmann::json(nullptr);
    job["merged_from"] = r.merged_from;
    j["config"] = resolved;
    if (cfg.sweep) j["sweep"] = sweep_json(cfg, r);
    return j;
}

/** @brief summary.json's "sweep": the axes, and each point's values, `--set`s and statistics (the pooled ones are
 *         the summary's own). */
nlohmann::json sweep_json(const RunConfig& cfg, const EnsembleResult& r) {
    const Sweep& sw = *cfg.sweep;
    nlohmann::json j;
    j["combine"] = sw.combine;
    j["trajectories_per_point"] = cfg.run.trajectories;
    j["definition"] =
        "each point is the run of its configuration alone (nhvk run with the point's set arguments): the same "
        "members (point p's are the job's trajectory indices [p N, (p + 1) N), member i of it drawn as member i of "
        "that run, so every point sees the same random numbers), the same statistics; the summary's own statistics "
        "pool every point's members";
    j["axes"] = nlohmann::json::array();
    for (const SweepAxis& a : sw.axes) {
        nlohmann::json axis = {
            {"key", a.key}, {"name", a.name}, {"kind", a.kind}, {"spacing", a.log ? "log" : "linear"}};
        axis["range"] = a.kind == "list" ? nlohmann::json(nullptr) : nlohmann::json({a.low, a.high});
        axis["values"] = a.values;
        j["axes"].push_back(axis);
    }
    j["points"] = nlohmann::json::array();
    for (std::size_t p = 0; p < sw.values.size(); ++p) {
        nlohmann::json pt = p < r.points.size() ? summary_json(sw.configs[p], r.points[p], true) : nlohmann::json();
        pt["index"] = p;
        for (std::size_t a = 0; a < sw.axes.size(); ++a) pt["values"][sw.axes[a].name] = num(sw.values[p][a]);
        pt["set"] = sw.sets(p);
        j["points"].push_back(pt);
    }
    return j;
}

/** A number for the Markdown summary: 4 significant digits, "–" for none. */
std::string md_num(double x) {
    if (!std::isfinite(x)) return "–";
    std::ostringstream os;
    os << std::setprecision(4) << x;
    return os.str();
}

/** `text` as a Markdown code span (CommonMark): fenced by one backtick more than its longest run of backticks, and
 *  padded with a space where it starts or ends with a backtick or a space (the renderer strips one from each side),
 *  so that no character of a path can end the span early and let Markdown through. A line break would end the list
 *  item: control characters show as '?'. */
std::string md_code(const std::string& text) {
    std::string body = text;
    std::size_t longest = 0, run = 0;
    for (char& c : body) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    const std::string fence(longest + 1, '`');
    const bool pad = body.find_first_not_of(' ') != std::string::npos && // all spaces are never stripped
                     (body.front() == '`' || body.back() == '`' || body.front() == ' ' || body.back() == ' ');
    const std::string space = pad ? " " : "";
    return fence + space + body + space + fence;
}

/** @brief Appends `x` as the CSV outputs write a number: "%.17g" (std::to_chars promises printf's text), nothing
 *         for NaN or ±inf.
 *  NOTE: into one string, not an ostringstream per number: a large sweep's CSV holds hundreds of millions of
 *  numbers, and formatting them is the write's cost. */
void append_number(std::string& out, double x) {
    if (!std::isfinite(x)) return;
    char b[32];
    out.append(b, std::to_chars(b, b + sizeof b, x, std::chars_format::general, 17).ptr);
}

template <class U> void append_integer(std::string& out, U x) {
    char b[24];
    out.append(b, std::to_chars(b, b + sizeof b, x).ptr);
}

/** @brief A number of the CSV outputs: 17 significant digits, an empty field for NaN or ±inf (no valid value),
 *         documented in the README. */
std::string csv_number(double x) {
    std::string s;
    append_number(s, x);
    return s;
}

/** @brief stats.csv's header line. */
std::string stats_csv_header() {
    std::ostringstream os;
    os << "time_index,t,metric,count,nonfinite";
    for (const auto& c : statistic_columns()) os << ',' << c.name;
    os << ",outside_range,alive_fraction";
    for (const auto& c : interval_columns()) os << ',' << c.name;
    os << '\n';
    return os.str();
}

/** @brief stats.csv's rows, one per output time and metric, each led by `prefix` (a sweep point's columns in
 *         sweep.csv). */
std::string stats_csv_rows(const EnsembleResult& r, const std::string& prefix) {
    std::string os;
    os.reserve(r.times.size() * metric_count * 800);
    for (std::size_t i = 0; i < r.times.size(); ++i)
        for (int m = 0; m < metric_count; ++m) {
            const stats::SeriesSummary& s = r.at(m, static_cast<int>(i));
            os += prefix;
            append_integer(os, i);
            os += ',';
            append_number(os, r.times[i]);
            os += ',';
            os += metric_name(m);
            os += ',';
            append_integer(os, s.count);
            os += ',';
            append_integer(os, s.nonfinite);
            for (const auto& c : statistic_columns()) {
                os += ',';
                append_number(os, c.get(s));
            }
            os += ',';
            append_integer(os, s.outside_range);
            os += ',';
            append_number(os, i < r.alive_fraction.size() ? r.alive_fraction[i] : NAN);
            for (const auto& c : interval_columns()) {
                os += ',';
                append_number(os, c.get(s));
            }
            os += '\n';
        }
    return os;
}

std::string stats_csv(const EnsembleResult& r) { return stats_csv_header() + stats_csv_rows(r, ""); }

/** @brief sweep.csv: stats.csv's rows for every point, each led by the point's index and its axes' values.
 *  NOTE: written point by point: the whole text is larger than the points' summaries (about 0.8 kB a row) */
void write_sweep_csv(const RunConfig& cfg, const EnsembleResult& r, std::ostream& out) {
    const Sweep& sw = *cfg.sweep;
    out << "point";
    for (const SweepAxis& a : sw.axes) out << ',' << a.name;
    out << ',' << stats_csv_header();
    for (std::size_t p = 0; p < r.points.size(); ++p) {
        std::string prefix = std::to_string(p);
        for (double x : sw.values[p]) prefix += ',' + sweep_value_text(x); // as the point's --set spells it
        out << stats_csv_rows(r.points[p], prefix + ',');
    }
}

/** @brief sweep_points.csv: one row per point with its axes' values, counts, growth fits with their intervals and
 *         median onset (what the report plots across the sweep). */
std::string sweep_points_csv(const RunConfig& cfg, const EnsembleResult& r) {
    const Sweep& sw = *cfg.sweep;
    std::ostringstream os;
    os << "point";
    for (const SweepAxis& a : sw.axes) os << ',' << a.name;
    for (const PointColumn& c : point_columns()) os << ',' << c.name;
    os << '\n';
    for (std::size_t p = 0; p < r.points.size(); ++p) {
        const EnsembleResult& x = r.points[p];
        os << p;
        for (double a : sw.values[p]) os << ',' << sweep_value_text(a);
        for (const PointColumn& c : point_columns()) {
            os << ',';
            switch (c.kind) {
            case PointColumn::Kind::count:
                os << c.count(x);
                break;
            case PointColumn::Kind::number:
                os << csv_number(c.number(x));
                break;
            case PointColumn::Kind::text:
                os << c.text(x);
                break;
            }
        }
        os << '\n';
    }
    return os.str();
}

} // namespace

namespace {
/** @brief The low-population flags of population_text (without the members stopped at divergence.stop_at). */
std::string population_flags(const RunConfig& cfg, const EnsembleResult& r, bool markdown) {
    std::ostringstream os;
    os << std::setprecision(4);
    const double pct = 100.0 * cfg.low_population_fraction;
    const auto n = r.low_population.size();
    if (n == 0) {
        os << "at least " << pct << " % of the " << r.integrated() << " members integrated at every output time";
        if (!r.alive_fraction.empty() && std::isfinite(r.alive_fraction.back()))
            os << " (" << 100.0 * r.alive_fraction.back() << " % at t_end)";
        return os.str();
    }
    const int first = r.low_population.front(), last = r.low_population.back();
    os << (markdown ? "**" : "") << "below " << pct << " % of the " << r.integrated() << " members integrated at " << n
       << " of " << r.times.size() << " output times, t = " << r.times[first] << " (" << 100.0 * r.alive_fraction[first]
       << " %)";
    if (n > 1) os << " to " << r.times[last] << " (" << 100.0 * r.alive_fraction[last] << " %)";
    os << ": the statistics there describe a remnant of the ensemble" << (markdown ? "**" : "");
    return os.str();
}
} // namespace

std::string population_text(const RunConfig& cfg, const EnsembleResult& r, bool markdown) {
    std::string text = population_flags(cfg, r, markdown);
    if (r.diverged == 0) return text;
    std::ostringstream os;
    os << std::setprecision(4);
    std::size_t first = r.diverged_at.size(), last = 0;
    for (std::size_t i = 0; i < r.diverged_at.size(); ++i)
        if (r.diverged_at[i] != 0u) {
            first = std::min(first, i);
            last = i;
        }
    if (first >= r.times.size()) first = last = 0; // counts without times: a tally from elsewhere
    os << "; " << r.diverged << " members stopped at divergence.stop_at = " << cfg.stop_at
       << " (d_q passed it at t = " << r.times[first];
    if (last != first) os << " to " << r.times[last];
    os << "): after its stop a member leaves the statistics, which then describe the members whose d_q had stayed "
          "below stop_at";
    return text + os.str();
}

OnsetBracket onset_bracket(const RunConfig& cfg, const EnsembleResult& r) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double m = r.onset_times().p50;
    if (r.onset_times().count == 0u || !std::isfinite(m)) return {nan, nan, false};
    for (std::size_t i = 0; i < r.times.size(); ++i)
        if (m <= r.times[i]) return {i == 0 ? cfg.t0 : r.times[i - 1], r.times[i], i == 0};
    return {nan, nan, false};
}

std::string onset_text(const RunConfig& cfg, const EnsembleResult& r) {
    std::ostringstream os;
    os << std::setprecision(4);
    const stats::SeriesSummary& ot = r.onset_times();
    if (ot.count > 0u) {
        const OnsetBracket b = onset_bracket(cfg, r);
        os << "median t = " << ot.p50 << " over " << ot.count << " crossings, never " << r.onset.never;
        if (r.onset.censored > 0) os << ", censored by a failure " << r.onset.censored;
        // NOTE: the onset is interpolated between two output times; how far apart they are is its resolution, and
        // before the first output time d_q is interpolated from 0 at t0, which says nothing of the law in between
        if (std::isfinite(b.lo)) {
            os << "; resolution " << b.hi - b.lo << " (the output times around the median, t = " << b.lo << " to "
               << b.hi << ")";
            if (b.first)
                os << "; NOT RESOLVED: the median falls before the first output time, where the crossing is "
                      "interpolated linearly from d_q = 0 at t0 (add output times before it)";
        }
        return os.str();
    }
    // NOTE: say who is missing: a member stopped at divergence.stop_at crossed first (stop_at > threshold), but the
    // survivors population leaves it out; a failed one is censored (alive) or left out (survivors)
    const std::uint64_t failed = r.failed();
    if (r.onset.never == 0u && r.onset.censored == 0u && r.diverged + failed > 0u) {
        os << "no member counted:";
        const char* sep = " ";
        if (r.diverged > 0u && !r.alive_population) {
            os << sep << r.diverged << " stopped at divergence.stop_at = " << cfg.stop_at
               << " (after crossing the threshold, which is below it) and population 'survivors' counts only the "
                  "members that reached t_end";
            sep = "; ";
        }
        if (failed > 0u) os << sep << failed << " failed (no onset counted)";
        return os.str();
    }
    os << "no member crossed it (never " << r.onset.never;
    if (r.onset.censored > 0) os << ", censored by a failure " << r.onset.censored;
    if (r.diverged > 0u && !r.alive_population)
        os << "; " << r.diverged << " stopped at divergence.stop_at left out by population 'survivors'";
    os << ")";
    return os.str();
}

std::string law_text(const RunConfig& cfg, const std::string& name, bool rate, bool ascii) {
    std::ostringstream os;
    os << std::setprecision(ascii ? 6 : 4);
    const std::string& statistic = rate ? cfg.rate_statistic : cfg.growth_statistic;
    os << statistic << ' ' << name;
    if (rate) os << (ascii ? " ~ A e^(lambda (t - t0))" : " ≈ A·e^(λ(t − t0))");
    else {
        os << (ascii ? " ~ C (t - t0)^" : " ≈ C·(t − t0)^");
        const double fixed = name == "d_v" ? cfg.growth_exponent_v : cfg.growth_exponent;
        if (std::isfinite(fixed)) os << fixed << " (exponent fixed)";
        else os << "p";
    }
    const double lo = rate ? cfg.rate_t_min : cfg.growth_t_min, hi = rate ? cfg.rate_t_max : cfg.growth_t_max;
    const char* le = ascii ? " <= " : " ≤ ";
    os << (ascii ? " (" : " over ");
    if (lo > cfg.t0) os << lo << " < ";
    os << "t" << le << hi << (ascii ? ")" : "");
    return os.str();
}

std::string fit_undefined_reason(const RunConfig& cfg, const EnsembleResult& r, bool q) {
    const stats::GrowthFit& f = q ? r.growth_fit_q : r.growth_fit_v;
    if (std::isfinite(f.slope)) return "";
    const stats::FitSpec spec = growth_fit_spec(cfg, !q);
    std::size_t window = 0, empty = 0, zero = 0;
    for (std::size_t i = 0; i < r.times.size(); ++i) {
        if (!spec.holds(r.times[i] - cfg.t0)) continue;
        ++window;
        const stats::SeriesSummary& m = r.at(q ? metric_dq : metric_dv, static_cast<int>(i));
        if (m.count == 0u) ++empty;
        else if (!(stats::fit_statistic(m, cfg.growth_statistic) > 0.0)) ++zero;
    }
    std::ostringstream os;
    os << std::setprecision(4) << "p and C undefined: ";
    if (window < 2u)
        os << "the fit window " << (cfg.growth_t_min > cfg.t0 ? std::to_string(cfg.growth_t_min) : std::string("t0"))
           << " < t <= " << cfg.growth_t_max << " holds " << window << " output time" << (window == 1u ? "" : "s")
           << " and a slope needs 2 (more times.count, or a larger divergence.growth_t_max or divergence.fit.window)";
    else
        os << "only " << f.points << " of the " << window << " output times in the fit window have a positive, "
           << "finite " << cfg.growth_statistic << " " << (q ? "d_q" : "d_v") << " and a slope needs 2 (" << empty
           << " have no member counted, " << zero << " a " << cfg.growth_statistic
           << " of 0: many members have not separated)";
    return os.str();
}

std::string balance_flag_text(const RunConfig& cfg, const EnsembleResult& r) {
    const double m = r.max_over_times(metric_balance_nh);
    std::string text;
    if (std::isfinite(m) && m > cfg.balance_tolerance)
        text = "above diagnostics.balance_tolerance = " + md_num(cfg.balance_tolerance) +
               ": a numerical problem (loose tolerance, projection, stiffness)";
    if (r.nonfinite_over_times(metric_balance_nh) > 0u)
        text += std::string(text.empty() ? "" : "; ") +
                "not finite for some members: the energy is not defined at their states (see the non-finite warning)";
    return text;
}

std::string balance_max_text(const EnsembleResult& r) {
    const double m = r.max_over_times(metric_balance_nh);
    std::ostringstream os;
    os << std::setprecision(4);
    if (std::isfinite(m)) os << "max " << m;
    else if (r.nonfinite_over_times(metric_balance_nh) == 0u) os << "no value (no member counted)";
    else os << "no finite value";
    const std::uint64_t n = r.nonfinite_over_times(metric_balance_nh);
    if (n > 0u)
        os << (std::isfinite(m) ? " over the finite values; " : "; ") << "not finite for " << n << " member"
           << (n == 1u ? "" : "s") << " at an output time";
    return os.str();
}

std::string summary_markdown(const RunConfig& cfg, const EnsembleResult& r) {
    std::ostringstream os;
    const int nt = static_cast<int>(r.times.size());
    os << "### nhvk run: " << cfg.model.name << "\n\n";
    os << "- nhvk " << nhvk_version << ", config " << md_code(cfg.source_path) << " (hash `" << r.config_hash
       << "`), seed " << cfg.run.seed << ", " << to_string(cfg.integrator.method) << " "
       << to_string(cfg.integrator.precision) << ", backend " << r.backend
       << (r.ranks > 1 ? ", " + std::to_string(r.ranks) + " MPI ranks" : std::string())
       << (r.merged_from.empty() ? std::string() : ", merged from " + std::to_string(r.merged_from.size()) + " shards")
       << "\n";
    if (cfg.sweep) {
        // NOTE: the points first; every line after the table pools them
        const Sweep& sw = *cfg.sweep;
        os << "- sweep: " << sw.values.size() << " points (" << sw.combine << ") of " << cfg.run.trajectories
           << " trajectories (sweep.csv, sweep_points.csv); the lines after the table pool every point\n\n";
        os << "| point |";
        for (const SweepAxis& a : sw.axes) os << ' ' << a.name << " |";
        os << " valid | failed | p of d_q (95 %) | C of d_q (95 %) | median onset |\n|---|";
        for (std::size_t a = 0; a < sw.axes.size(); ++a) os << "---|";
        os << "---|---|---|---|---|\n";
        for (std::size_t p = 0; p < r.points.size(); ++p) {
            const EnsembleResult& x = r.points[p];
            os << "| " << p << " |";
            for (double v : sw.values[p]) os << ' ' << sweep_value_text(v) << " |";
            os << ' ' << x.valid << " | " << x.failed() << " | " << md_num(x.growth_fit_q.slope) << " ("
               << md_num(x.growth_ci_q.lo) << " to " << md_num(x.growth_ci_q.hi) << ") | "
               << md_num(x.growth_fit_q.amplitude) << " (" << md_num(x.amplitude_ci_q.lo) << " to "
               << md_num(x.amplitude_ci_q.hi) << ") | " << md_num(x.onset_times().p50) << " |\n";
        }
        os << "\n";
    }
    os << "- trajectories: " << r.requested << " requested, " << r.valid << " valid, ";
    if (std::isfinite(cfg.stop_at)) os << r.diverged << " diverged (stopped at d_q > " << md_num(cfg.stop_at) << "), ";
    os << r.failed() << " failed\n";
    if (!r.coincide.empty()) os << "- **" << r.coincide_statement << "**\n";
    for (const auto& [name, f] :
         {std::pair<const char*, const stats::GrowthFit*>{"d_q", &r.growth_fit_q}, {"d_v", &r.growth_fit_v}}) {
        if (!r.coincide.empty() && !std::isfinite(f->slope)) continue; // the statement above says why
        os << "- growth of the " << law_text(cfg, name, false, false) << ": p = " << md_num(f->slope)
           << ", C = " << md_num(f->amplitude);
        const bool q = f == &r.growth_fit_q;
        const stats::ReplicaInterval& pc = q ? r.growth_ci_q : r.growth_ci_v;
        const stats::ReplicaInterval& cc = q ? r.amplitude_ci_q : r.amplitude_ci_v;
        if (const std::string why = fit_undefined_reason(cfg, r, q); !why.empty()) os << " (" << why << ")";
        if (std::isfinite(pc.lo))
            os << "; sampling 95 % intervals from " << pc.groups << " replica groups: p " << md_num(pc.lo) << " to "
               << md_num(pc.hi) << " (se " << md_num(pc.se) << "), C " << md_num(cc.lo) << " to " << md_num(cc.hi);
        else if (!r.growth_interval_withheld.empty() && std::isfinite(f->slope))
            os << "; " << r.growth_interval_withheld;
        if (std::isfinite(f->ci_low))
            os << " (fit-scatter 95 % intervals: p " << md_num(f->ci_low) << " to " << md_num(f->ci_high) << ", C "
               << md_num(f->amplitude_ci_low) << " to " << md_num(f->amplitude_ci_high) << "; R² "
               << md_num(f->r_squared) << ", " << f->points << " points)";
        if (r.growth_at_rounding_level && f == &r.growth_fit_q) os << "; **at rounding level: p and C mean nothing**";
        os << "\n";
    }
    if (cfg.rate_fit)
        for (const auto& [name, f, lc, ac] :
             {std::tuple<const char*, const stats::GrowthFit*, const stats::ReplicaInterval*,
                         const stats::ReplicaInterval*>{"d_q", &r.rate.q, &r.rate.slope_ci_q, &r.rate.amplitude_ci_q},
              {"d_v", &r.rate.v, &r.rate.slope_ci_v, &r.rate.amplitude_ci_v}}) {
            os << "- long-time rate of the " << law_text(cfg, name, true, false) << ": λ = " << md_num(f->slope)
               << ", A = " << md_num(f->amplitude);
            if (std::isfinite(lc->lo))
                os << "; sampling 95 % intervals (" << r.rate.method << ", " << lc->groups << " replica groups): λ "
                   << md_num(lc->lo) << " to " << md_num(lc->hi) << ", A " << md_num(ac->lo) << " to "
                   << md_num(ac->hi);
            else if (!r.rate.withheld.empty() && std::isfinite(f->slope)) os << "; " << r.rate.withheld;
            if (f->points > 0) os << " (R² " << md_num(f->r_squared) << ", " << f->points << " points)";
            else os << " (no output time with a positive " << cfg.rate_statistic << " in the window)";
            os << "\n";
        }
    os << "- onset (d_q > " << md_num(cfg.onset_threshold) << ", interpolated): " << onset_text(cfg, r) << "\n";
    os << "- energy balance residual (relative, nonholonomic): " << balance_max_text(r)
       << (r.balance_flagged ? " — **" + balance_flag_text(cfg, r) + "**"
                             : std::string(" (tolerance ") + md_num(cfg.balance_tolerance) + ")")
       << "\n";
    if (!r.nonfinite_warning.empty()) os << "- **warning: " << r.nonfinite_warning << "**\n";
    os << "- statistics over the members " << (r.alive_population ? "alive at each time" : "that reached t_end")
       << "\n";
    os << "- population: " << population_text(cfg, r, true) << "\n";
    if (!r.failure_warning.empty()) os << "- **warning: " << r.failure_warning << "**\n";
    os << "- largest constraint residual: nonholonomic " << md_num(r.max_over_times(metric_res_nh)) << ", vakonomic "
       << md_num(r.max_over_times(metric_res_vk)) << "; largest energy drift: nonholonomic "
       << md_num(r.max_over_times(metric_energy_nh)) << ", vakonomic " << md_num(r.max_over_times(metric_energy_vk))
       << "\n";
    os << "- quantiles: " << (r.exact_quantiles ? "exact" : "log histogram") << "\n\n";
    os << "| t | d_q p05 | d_q median | d_q p95 | d_v median | count | alive fraction |\n"
       << "|---|---|---|---|---|---|---|\n";
    // NOTE: five rows whatever the number of output times: first, quartiles of the index range, last.
    std::vector<int> rows;
    for (int k = 0; k <= 4 && nt > 0; ++k) {
        const int i = (nt - 1) * k / 4;
        if (rows.empty() || rows.back() != i) rows.push_back(i);
    }
    for (int i : rows) {
        const stats::SeriesSummary& q = r.at(metric_dq, i);
        os << "| " << md_num(r.times[i]) << " | " << md_num(q.p05) << " | " << md_num(q.p50) << " | " << md_num(q.p95)
           << " | " << md_num(r.at(metric_dv, i).p50) << " | " << q.count << " | "
           << md_num(i < static_cast<int>(r.alive_fraction.size()) ? r.alive_fraction[i] : NAN)
           << (std::binary_search(r.low_population.begin(), r.low_population.end(), i) ? " (low)" : "") << " |\n";
    }
    return os.str();
}

std::vector<std::string> run_output_names(const RunConfig& cfg) {
    std::vector<std::string> names = {"summary.json", "summary.md", "stats.csv"};
    if (netcdf_outputs_built()) names.push_back("stats.nc");
    if (cfg.sweep) {
        names.push_back("sweep.csv");
        names.push_back("sweep_points.csv");
        if (netcdf_outputs_built()) names.push_back("sweep.nc");
    }
    names.push_back("report.html");
    if (cfg.run.save_samples) names.push_back("samples.csv");
    if (cfg.run.save_members) names.push_back("members.nc");
    if (cfg.run.save_trajectories > 0) names.push_back("trajectories/");
    return names;
}

std::unique_ptr<OutputFolder> claim_output_folder(const RunConfig& cfg, bool partial_state, const std::string& key) {
    std::vector<std::string> writes = run_output_names(cfg);
    if (partial_state) writes.push_back("partial.nhvk");
    return std::make_unique<OutputFolder>(cfg.run.out, writes, key);
}

SamplesWriter::SamplesWriter(const RunConfig& cfg, const ChunkLayout& layout, OutputFolder& out,
                             std::uint64_t keep_bytes, std::uint64_t keep_rows)
    : cfg_(cfg), layout_(layout), file_(out.create_resumable("samples.csv", keep_bytes, keep_rows + 1)) {
    std::ostream& s = file_.stream();
    if (keep_bytes > 0) {
        s << std::setprecision(17);
        return;
    }
    s << "index,sample_status,status,failed_dynamics,fail_time_index";
    for (int c = 0; c < layout.n; ++c) s << ",q0_" << cfg.model.coords[c];
    for (int c = 0; c < layout.n; ++c) s << ",v0_" << cfg.model.coords[c];
    for (int a = 0; a < layout.k; ++a) s << ",mu0_" << a;
    if (layout.per_member_params)
        for (int p = 0; p < layout.n_params; ++p) s << ",param_" << cfg.model.params[p].name;
    s << ",d_q_final,d_v_final,onset_time\n";
    s << std::setprecision(17);
}

void SamplesWriter::add_chunk(const ChunkArgs& a, std::uint64_t first, long long m) {
    const int n = layout_.n, k = layout_.k, nt = layout_.nt;
    std::ostream& out = file_.stream();
    for (long long j = 0; j < m; ++j) {
        const bool valid = a.sample_status[j] == static_cast<std::uint8_t>(SampleStatus::ok) &&
                           a.status[j] == static_cast<std::uint8_t>(Status::ok);
        // NOTE: a member that could not be sampled was not integrated: no integration status (summary.json counts
        // it under failed.sampling, by its sample_status), whatever the chunk's status slot holds.
        const bool sampled = a.sample_status[j] == static_cast<std::uint8_t>(SampleStatus::ok);
        out << first + static_cast<std::uint64_t>(j) << ','
            << sample_status_name(static_cast<SampleStatus>(a.sample_status[j])) << ','
            << (sampled ? status_name(static_cast<Status>(a.status[j])) : "") << ','
            << (a.failed[j] == 1   ? "nonholonomic"
                : a.failed[j] == 2 ? "vakonomic"
                                   : "")
            << ',' << a.fail_index[j];
        for (int c = 0; c < n; ++c) out << ',' << a.q0[c * a.ld + j];
        for (int c = 0; c < n; ++c) out << ',' << a.v0[c * a.ld + j];
        for (int c = 0; c < k; ++c) out << ',' << a.mu0[c * a.ld + j];
        if (layout_.per_member_params)
            for (int p = 0; p < layout_.n_params; ++p) out << ',' << a.params[p * a.ld + j];
        if (valid)
            out << ',' << a.metrics[(metric_dq * nt + nt - 1) * a.ld + j] << ','
                << a.metrics[(metric_dv * nt + nt - 1) * a.ld + j] << ',';
        else out << ",,,";
        // NOTE: the interpolated onset, also of a member that failed after crossing.
        const double onset = a.metrics[member_series_row(nt, member_onset_time) * a.ld + j];
        if (sampled && std::isfinite(onset)) out << onset;
        out << '\n';
    }
    file_.check();
}

SavedTrajectories::SavedTrajectories(const RunConfig& cfg, const RunPlan& plan) : cfg_(cfg), plan_(plan) {}

bool SavedTrajectories::wants(std::uint64_t g) const {
    const std::uint64_t M = static_cast<std::uint64_t>(cfg_.run.save_trajectories);
    return (cfg_.sweep ? g % static_cast<std::uint64_t>(cfg_.run.trajectories) : g) < M;
}

bool SavedTrajectories::wants(std::uint64_t first, long long m) const {
    if (cfg_.run.save_trajectories <= 0 || m <= 0) return false;
    if (!cfg_.sweep) return wants(first);
    // NOTE: the chunk's first member, or the first member of the next point when the chunk reaches it
    const std::uint64_t N = static_cast<std::uint64_t>(cfg_.run.trajectories);
    return wants(first) || N - first % N < static_cast<std::uint64_t>(m);
}

TrajectoryRequest SavedTrajectories::request(std::vector<double> params, std::vector<double> q0, std::vector<double> v0,
                                             std::vector<double> mu0) const {
    const ChunkCommon& common = plan_.common;
    TrajectoryRequest q;
    q.model = cfg_.model.name;
    q.params = std::move(params);
    q.q0 = std::move(q0);
    q.v0 = std::move(v0);
    q.mu0 = std::move(mu0);
    q.t0 = cfg_.t0;
    q.times = cfg_.times;
    q.method = common.method;
    q.precision = common.precision;
    q.equations = common.equations;
    q.ctl = common.ctl;
    q.divergence = common.divergence;
    q.divergence_label =
        divergence_label(cfg_.model, cfg_.divergence_coords, cfg_.divergence_weights, cfg_.divergence_kinetic);
    return q;
}

void SavedTrajectories::add_chunk(const ChunkArgs& a, std::uint64_t first, long long m) {
    const ChunkLayout& L = plan_.layout;
    for (long long j = 0; j < m; ++j) {
        const std::uint64_t g = first + static_cast<std::uint64_t>(j);
        if (!wants(g)) {
            if (!cfg_.sweep) break;
            continue;
        }
        if (a.sample_status[j] != static_cast<std::uint8_t>(SampleStatus::ok)) continue;
        std::vector<double> params = cfg_.params, q0, v0, mu0;
        if (L.per_member_params)
            for (int p = 0; p < L.n_params; ++p) params[p] = a.params[p * a.ld + j];
        for (int c = 0; c < L.n; ++c) {
            q0.push_back(a.q0[c * a.ld + j]);
            v0.push_back(a.v0[c * a.ld + j]);
        }
        for (int c = 0; c < L.k; ++c) mu0.push_back(a.mu0[c * a.ld + j]);
        requests_.emplace_back(g, request(std::move(params), std::move(q0), std::move(v0), std::move(mu0)));
    }
}

std::string SavedTrajectories::save() const {
    std::string out;
    bytes::put<std::uint64_t>(out, requests_.size());
    for (const auto& [g, q] : requests_) {
        bytes::put(out, g);
        bytes::put_vector(out, q.params);
        bytes::put_vector(out, q.q0);
        bytes::put_vector(out, q.v0);
        bytes::put_vector(out, q.mu0);
    }
    return out;
}

void SavedTrajectories::load(const std::string& data, const std::string& what) {
    if (data.empty()) return;
    bytes::Reader in(data, what);
    const auto n = in.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto g = in.get<std::uint64_t>();
        std::vector<double> params = in.get_vector<double>(), q0 = in.get_vector<double>(),
                            v0 = in.get_vector<double>(), mu0 = in.get_vector<double>();
        if (params.size() != cfg_.params.size() || q0.size() != static_cast<std::size_t>(plan_.layout.n) ||
            v0.size() != q0.size() || mu0.size() != static_cast<std::size_t>(plan_.layout.k))
            throw std::runtime_error(what + ": a saved trajectory of another shape");
        requests_.emplace_back(g, request(std::move(params), std::move(q0), std::move(v0), std::move(mu0)));
    }
}

std::string trajectory_file_name(std::uint64_t index) {
    std::ostringstream name;
    name << "trajectories/trajectory_" << std::setw(6) << std::setfill('0') << index << ".csv";
    return name.str();
}

std::vector<std::uint64_t> saved_trajectory_indices(const std::string& data, const std::string& what) {
    std::vector<std::uint64_t> out;
    if (data.empty()) return out;
    bytes::Reader in(data, what);
    const auto n = in.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
        out.push_back(in.get<std::uint64_t>());
        for (int v = 0; v < 4; ++v) in.get_vector<double>(); // params, q0, v0, mu0
    }
    return out;
}

void SavedTrajectories::write(OutputFolder& out) const {
    if (requests_.empty()) return;
    const ModelOps* ops = find_model_ops(cfg_.model.name);
    if (!ops) throw std::runtime_error("unknown model '" + cfg_.model.name + "'");
    for (const auto& [g, q] : requests_) {
        const TrajectoryResult tr = ops->trajectory_cpu(q);
        const std::string name = trajectory_file_name(g);
        // NOTE: the trajectory writer prints to a FILE*; an in-memory one, copied into the checked output file.
        char* text = nullptr;
        std::size_t size = 0;
        std::FILE* mem = ::open_memstream(&text, &size);
        if (!mem) throw std::runtime_error(std::string("open_memstream: ") + std::strerror(errno));
        ops->write_trajectory_csv(q, tr, mem);
        const bool bad = std::ferror(mem) != 0;
        const bool closed = std::fclose(mem) == 0;
        const std::unique_ptr<char, decltype(&std::free)> hold(text, &std::free);
        if (bad || !closed) throw std::runtime_error("cannot format " + name + " in memory");
        OutputFile& f = out.create(name);
        f.stream().write(text, static_cast<std::streamsize>(size));
        f.close();
    }
}

void write_partial_state(const std::string& bytes, OutputFolder& out) {
    OutputFile& f = out.create("partial.nhvk");
    f.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
}

void write_statistics(const RunConfig& cfg, const EnsembleResult& r, OutputFolder& out) {
    nlohmann::json summary = summary_json(cfg, r);
    const std::string csv = stats_csv(r), summary_text = summary.dump(2) + "\n";
    const auto put = [&](const char* name, const std::string& text) {
        OutputFile& f = out.create(name);
        f.stream() << text;
        f.close();
    };
    put("stats.csv", csv);
    if (cfg.sweep) {
        OutputFile& f = out.create("sweep.csv");
        write_sweep_csv(cfg, r, f.stream());
        f.close();
        put("sweep_points.csv", sweep_points_csv(cfg, r));
    }
    // NOTE: the library writes a file by its path: into the temporary the folder created, which the commit moves.
    // A sweep's summary.json grows with its points, whose numbers sweep.nc holds as variables: the files' copy of it
    // leaves sweep.points out.
    if (netcdf_outputs_built()) {
        std::string nc_summary = summary_text;
        if (cfg.sweep) {
            summary["sweep"].erase("points");
            nc_summary = summary.dump(2) + "\n";
        }
        OutputFile& f = out.create("stats.nc");
        write_stats_netcdf(f.temp_path(), cfg, r, nc_summary);
        f.close();
        if (cfg.sweep) {
            OutputFile& g = out.create("sweep.nc");
            write_sweep_netcdf(g.temp_path(), cfg, r, nc_summary);
            g.close();
        }
    }
    put("summary.md", summary_markdown(cfg, r));
    // NOTE: rendered from the very texts of summary.json and stats.csv, as `nhvk report DIR` does from the files.
    put("report.html", render_report(summary_text, csv));
    put("summary.json", summary_text);
}

} // namespace nhvk
