// SPDX-License-Identifier: MIT
#include "pipeline/result_columns.hpp"

#include <cmath>

namespace nhvk {

double SeriesColumn::get(const stats::SeriesSummary& s) const {
    if (statistic >= 4) {
        const int i = statistic - 4;
        const double q[7] = {s.p01, s.p05, s.p25, s.p50, s.p75, s.p95, s.p99};
        const double v[4] = {q[i], s.q_se[i], s.q_lo[i], s.q_hi[i]};
        return v[part];
    }
    if (statistic == 0) {
        const double v[4] = {s.mean, s.mean_se, s.mean_lo, s.mean_hi};
        return v[part];
    }
    if (statistic == 1) {
        const double v[4] = {s.std, s.std_se, s.std_lo, s.std_hi};
        return v[part];
    }
    return statistic == 2 ? s.min : s.max;
}

namespace {

const char* const quantile_names[7] = {"p01", "p05", "p25", "p50", "p75", "p95", "p99"};
const char* const quantile_levels[7] = {"0.01", "0.05", "0.25", "0.5 (median)", "0.75", "0.95", "0.99"};

std::string statistic_long_name(int statistic) {
    switch (statistic) {
    case 0:
        return "mean over the members with a finite value";
    case 1:
        return "standard deviation over the members with a finite value";
    case 2:
        return "smallest finite value";
    case 3:
        return "largest finite value";
    default:
        return std::string("quantile ") + quantile_levels[statistic - 4] + " (type 7)";
    }
}

std::string statistic_name(int statistic) {
    static const char* const first[4] = {"mean", "std", "min", "max"};
    return statistic < 4 ? first[statistic] : quantile_names[statistic - 4];
}

} // namespace

const std::vector<SeriesColumn>& statistic_columns() {
    static const std::vector<SeriesColumn> c = [] {
        std::vector<SeriesColumn> v;
        for (int s = 0; s < 11; ++s) v.push_back({statistic_name(s), statistic_long_name(s), s, 0});
        return v;
    }();
    return c;
}

const std::vector<SeriesColumn>& interval_columns() {
    static const std::vector<SeriesColumn> c = [] {
        const char* suffix[4] = {"", "_se", "_lo", "_hi"};
        const char* what[4] = {"", "standard error of the ", "low end of the 95 % interval of the ",
                               "high end of the 95 % interval of the "};
        std::vector<SeriesColumn> v;
        for (int s = 0; s < 11; ++s) {
            if (s == 2 || s == 3) continue; // min and max carry no interval
            for (int k = 1; k <= 3; ++k) {
                std::string of = statistic_long_name(s);
                if (s >= 4) of = std::string("quantile ") + quantile_levels[s - 4];
                v.push_back({statistic_name(s) + suffix[k], what[k] + of, s, k});
            }
        }
        return v;
    }();
    return c;
}

namespace {

double fraction_failed(const EnsembleResult& x) {
    return x.requested ? static_cast<double>(x.failed()) / static_cast<double>(x.requested) : NAN;
}

} // namespace

const std::vector<PointColumn>& point_columns() {
    using K = PointColumn::Kind;
    static const std::vector<PointColumn> c = {
        {"requested", "members requested at the point", K::count, [](const EnsembleResult& x) { return x.requested; }},
        {"valid", "members both of whose motions reached the last output time", K::count,
         [](const EnsembleResult& x) { return x.valid; }},
        {"failed", "members left out of the statistics by a failure (summary.json's failed_by_status)", K::count,
         [](const EnsembleResult& x) { return x.failed(); }},
        {"diverged", "members stopped at divergence.stop_at", K::count,
         [](const EnsembleResult& x) { return x.diverged; }},
        {"failure_fraction", "failed / requested", K::number, nullptr, fraction_failed},
        {"exponent_q", "growth exponent p of d_q ~ C (t - t0)^p (divergence.fit's statistic, the median by default)",
         K::number, nullptr, [](const EnsembleResult& x) { return x.growth_fit_q.slope; }},
        {"exponent_lo_q", "low end of the 95 % interval of exponent_q (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.growth_ci_q.lo; }},
        {"exponent_hi_q", "high end of the 95 % interval of exponent_q (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.growth_ci_q.hi; }},
        {"amplitude_q", "amplitude C of d_q ~ C (t - t0)^p (divergence.fit's statistic)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.growth_fit_q.amplitude; }},
        {"amplitude_lo_q", "low end of the 95 % interval of amplitude_q (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.amplitude_ci_q.lo; }},
        {"amplitude_hi_q", "high end of the 95 % interval of amplitude_q (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.amplitude_ci_q.hi; }},
        {"exponent_v", "growth exponent p of d_v ~ C (t - t0)^p (divergence.fit's statistic, the median by default)",
         K::number, nullptr, [](const EnsembleResult& x) { return x.growth_fit_v.slope; }},
        {"exponent_lo_v", "low end of the 95 % interval of exponent_v (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.growth_ci_v.lo; }},
        {"exponent_hi_v", "high end of the 95 % interval of exponent_v (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.growth_ci_v.hi; }},
        {"amplitude_v", "amplitude C of d_v ~ C (t - t0)^p (divergence.fit's statistic)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.growth_fit_v.amplitude; }},
        {"amplitude_lo_v", "low end of the 95 % interval of amplitude_v (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.amplitude_ci_v.lo; }},
        {"amplitude_hi_v", "high end of the 95 % interval of amplitude_v (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.amplitude_ci_v.hi; }},
        {"rate_q", "long-time rate lambda of d_q ~ A e^(lambda (t - t0)) ([divergence.rate]; NaN without it)",
         K::number, nullptr, [](const EnsembleResult& x) { return x.rate.q.slope; }},
        {"rate_lo_q", "low end of the 95 % interval of rate_q (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.rate.slope_ci_q.lo; }},
        {"rate_hi_q", "high end of the 95 % interval of rate_q (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.rate.slope_ci_q.hi; }},
        {"rate_v", "long-time rate lambda of d_v ~ A e^(lambda (t - t0)) ([divergence.rate]; NaN without it)",
         K::number, nullptr, [](const EnsembleResult& x) { return x.rate.v.slope; }},
        {"rate_lo_v", "low end of the 95 % interval of rate_v (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.rate.slope_ci_v.lo; }},
        {"rate_hi_v", "high end of the 95 % interval of rate_v (replica groups)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.rate.slope_ci_v.hi; }},
        {"onset_p50", "median onset time (d_q first above divergence.onset_threshold)", K::number, nullptr,
         [](const EnsembleResult& x) { return x.onset_times().p50; }},
        {"onset_p50_lo", "low end of the 95 % interval of onset_p50", K::number, nullptr,
         [](const EnsembleResult& x) { return x.onset_times().q_lo[3]; }},
        {"onset_p50_hi", "high end of the 95 % interval of onset_p50", K::number, nullptr,
         [](const EnsembleResult& x) { return x.onset_times().q_hi[3]; }},
        {"onset_crossed", "members whose d_q crossed the onset threshold", K::count,
         [](const EnsembleResult& x) { return x.onset_times().count; }},
        {"quantiles", "how the quantiles were computed: exact or histogram", K::text, nullptr, nullptr,
         [](const EnsembleResult& x) { return std::string(x.exact_quantiles ? "exact" : "histogram"); }},
    };
    return c;
}

} // namespace nhvk
