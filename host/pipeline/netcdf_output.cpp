// SPDX-License-Identifier: MIT
#include "pipeline/netcdf_output.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "nhvk/metrics.hpp"
#include "pipeline/result_columns.hpp"

#if NHVK_HAVE_NETCDF
#include "pipeline/nc_file.hpp"
#endif

namespace nhvk {

#if NHVK_HAVE_NETCDF

bool netcdf_outputs_built() { return true; }

namespace {

/** The variables of a series block (stats.csv's columns over [point ×] time × metric). */
struct SeriesVars {
    int count, nonfinite, outside_range, alive;
    std::vector<int> statistics, intervals;
};

SeriesVars define_series(NcFile& f, const std::vector<int>& dims, const std::vector<std::size_t>& chunks) {
    const std::vector<int> per_time(dims.begin(), dims.end() - 1);
    std::vector<std::size_t> time_chunks;
    if (!chunks.empty()) time_chunks.assign(chunks.begin(), chunks.end() - 1);
    SeriesVars v;
    v.count = f.var("count", NC_UINT64, dims, "members with a finite value (in the statistics)", chunks);
    v.nonfinite =
        f.var("nonfinite", NC_UINT64, dims, "valid members whose value was NaN or infinite (left out)", chunks);
    for (const SeriesColumn& c : statistic_columns())
        v.statistics.push_back(f.var(c.name, NC_DOUBLE, dims, c.long_name, chunks));
    v.outside_range = f.var("outside_range", NC_UINT64, dims,
                            "values under the log histogram's resolved window (0 with exact quantiles)", chunks);
    v.alive = f.var("alive_fraction", NC_DOUBLE, per_time,
                    "fraction of the members integrated still in the statistics (not failed or stopped) at this time",
                    time_chunks);
    for (const SeriesColumn& c : interval_columns())
        v.intervals.push_back(f.var(c.name, NC_DOUBLE, dims, c.long_name, chunks));
    return v;
}

/** Writes the series of `results[0 .. n)` as the block of points starting at `first` (no point dimension when
 *  `point_dim` is false). */
void put_series(NcFile& f, const SeriesVars& v, const std::vector<const EnsembleResult*>& results, std::size_t first,
                bool point_dim) {
    const std::size_t n = results.size(), T = results.front()->times.size(), M = metric_count;
    std::vector<std::size_t> start = {0, 0}, count = {T, M}, start_t = {0}, count_t = {T};
    if (point_dim) {
        start.insert(start.begin(), first);
        count.insert(count.begin(), n);
        start_t.insert(start_t.begin(), first);
        count_t.insert(count_t.begin(), n);
    }
    std::vector<double> x(n * T * M);
    std::vector<std::uint64_t> k(n * T * M);
    const auto counts = [&](int var, std::uint64_t stats::SeriesSummary::*field) {
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t i = 0; i < T; ++i)
                for (std::size_t m = 0; m < M; ++m)
                    k[(p * T + i) * M + m] = results[p]->at(static_cast<int>(m), static_cast<int>(i)).*field;
        f.put(var, start, count, k.data());
    };
    const auto numbers = [&](int var, const SeriesColumn& c) {
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t i = 0; i < T; ++i)
                for (std::size_t m = 0; m < M; ++m)
                    x[(p * T + i) * M + m] = c.get(results[p]->at(static_cast<int>(m), static_cast<int>(i)));
        f.put(var, start, count, x.data());
    };
    counts(v.count, &stats::SeriesSummary::count);
    counts(v.nonfinite, &stats::SeriesSummary::nonfinite);
    counts(v.outside_range, &stats::SeriesSummary::outside_range);
    for (std::size_t c = 0; c < v.statistics.size(); ++c) numbers(v.statistics[c], statistic_columns()[c]);
    for (std::size_t c = 0; c < v.intervals.size(); ++c) numbers(v.intervals[c], interval_columns()[c]);
    x.assign(n * T, NAN);
    for (std::size_t p = 0; p < n; ++p)
        for (std::size_t i = 0; i < T && i < results[p]->alive_fraction.size(); ++i)
            x[p * T + i] = results[p]->alive_fraction[i];
    f.put(v.alive, start_t, count_t, x.data());
}

/** The time and metric coordinates with the metrics' units and definitions, and the file's global attributes. */
struct Axes {
    int time_dim, metric_dim, time, metric, unit, definition, label;
};

Axes define_axes(NcFile& f, const EnsembleResult& r) {
    Axes a;
    a.time_dim = f.dim("time", r.times.size());
    a.metric_dim = f.dim("metric", metric_count);
    a.time = f.var("time", NC_DOUBLE, {a.time_dim}, "output time t (the model's time unit)");
    a.metric = f.var("metric", NC_STRING, {a.metric_dim}, "the metric (stats.csv's metric column)");
    a.unit = f.var("metric_unit", NC_STRING, {a.metric_dim}, "the metric's unit (summary.json's metrics.*.unit)");
    a.label = f.var("metric_label", NC_STRING, {a.metric_dim}, "the metric as the report labels it");
    a.definition = f.var("metric_definition", NC_STRING, {a.metric_dim}, "what the metric measures");
    return a;
}

void put_axes(NcFile& f, const Axes& a, const EnsembleResult& r) {
    f.put(a.time, {0}, {r.times.size()}, r.times.data());
    std::vector<std::string> names, units, labels, definitions;
    for (int m = 0; m < metric_count; ++m) {
        const MetricInfo& d = metric_info(m);
        names.push_back(d.name);
        units.push_back(metric_unit_info(d.unit).key);
        labels.push_back(d.label);
        definitions.push_back(d.definition);
    }
    f.put_strings(a.metric, names);
    f.put_strings(a.unit, units);
    f.put_strings(a.label, labels);
    f.put_strings(a.definition, definitions);
}

void global_attributes(NcFile& f, const RunConfig& cfg, const EnsembleResult& r, const std::string& summary_text,
                       const std::string& title, const std::string& schema) {
    run_attributes(f, cfg, title, schema);
    f.text(NC_GLOBAL, "quantiles", r.exact_quantiles ? "exact" : "histogram");
    f.text(NC_GLOBAL, "missing_values",
           "NaN (_FillValue) where a statistic has no valid value, as an empty field of the CSV twin");
    f.text(NC_GLOBAL, "summary_json", summary_text);
}

/** The per-metric strings, read by xarray as labels of the metric axis rather than as data. */
const std::string metric_labels = "metric_unit metric_label metric_definition";

/** NOTE: CF's `coordinates` attribute: xarray reads the variables it names as coordinates (labels) of the series. */
void label_coordinates(NcFile& f, const SeriesVars& v, const std::string& names) {
    for (int id : {v.count, v.nonfinite, v.outside_range, v.alive}) f.text(id, "coordinates", names);
    for (int id : v.statistics) f.text(id, "coordinates", names);
    for (int id : v.intervals) f.text(id, "coordinates", names);
}

} // namespace

void write_stats_netcdf(const std::string& path, const RunConfig& cfg, const EnsembleResult& r,
                        const std::string& summary_text) {
    NcFile f(path, "stats.nc");
    const Axes a = define_axes(f, r);
    const SeriesVars v = define_series(f, {a.time_dim, a.metric_dim}, {});
    global_attributes(f, cfg, r, summary_text, "nhvk ensemble statistics (stats.csv's twin)", "nhvk.stats_nc/1");
    label_coordinates(f, v, metric_labels);
    f.end_definitions();
    put_axes(f, a, r);
    put_series(f, v, {&r}, 0, false);
    f.close();
}

void write_sweep_netcdf(const std::string& path, const RunConfig& cfg, const EnsembleResult& r,
                        const std::string& summary_text) {
    const Sweep& sw = *cfg.sweep;
    const std::size_t P = r.points.size(), T = r.times.size(), M = metric_count;
    for (const EnsembleResult& x : r.points)
        if (x.times != r.times) throw std::runtime_error("sweep.nc: the points' output times differ");
    NcFile f(path, "sweep.nc");
    const int point_dim = f.dim("point", P);
    const Axes a = define_axes(f, r);
    // NOTE: blocks of points of about 2^16 values: the chunks compress well and a block is all one write holds
    const std::size_t block = std::min<std::size_t>(P, std::max<std::size_t>(1, (std::size_t{1} << 16) / (T * M)));
    const SeriesVars v = define_series(f, {point_dim, a.time_dim, a.metric_dim}, {block, T, M});
    const int point = f.var("point", NC_INT64, {point_dim}, "sweep point (sweep.csv's point column)");
    // Each axis is a coordinate along `point`, under its sweep.csv column name where that is a NetCDF name no other
    // variable has (else axis_<a>, its column name in the attribute `name`).
    std::set<std::string> taken = {
        "point", "time",      "metric",        "metric_unit",   "metric_label", "metric_definition",
        "count", "nonfinite", "outside_range", "alive_fraction"};
    for (const SeriesColumn& c : statistic_columns()) taken.insert(c.name);
    for (const SeriesColumn& c : interval_columns()) taken.insert(c.name);
    for (const PointColumn& c : point_columns()) taken.insert(c.name);
    std::vector<int> axis_vars;
    std::string coordinates = "point";
    for (std::size_t i = 0; i < sw.axes.size(); ++i) {
        const SweepAxis& ax = sw.axes[i];
        const bool plain =
            !ax.name.empty() && (std::isalpha(static_cast<unsigned char>(ax.name[0])) || ax.name[0] == '_') &&
            std::all_of(ax.name.begin(), ax.name.end(), [](char ch) {
                return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '-' || ch == '+';
            });
        const std::string n = plain && !taken.count(ax.name) ? ax.name : "axis_" + std::to_string(i);
        taken.insert(n);
        const int id = f.var(n, NC_DOUBLE, {point_dim}, "sweep axis " + ax.name + " (sets " + ax.key + ")");
        f.text(id, "name", ax.name);
        f.text(id, "sweep_key", ax.key);
        f.text(id, "spacing", ax.log ? "log" : "linear");
        axis_vars.push_back(id);
        coordinates += " " + n;
    }
    std::vector<int> point_vars;
    for (const PointColumn& c : point_columns()) {
        const nc_type t = c.kind == PointColumn::Kind::count    ? NC_UINT64
                          : c.kind == PointColumn::Kind::number ? NC_DOUBLE
                                                                : NC_STRING;
        point_vars.push_back(f.var(c.name, t, {point_dim}, c.long_name));
    }
    global_attributes(f, cfg, r, summary_text, "nhvk sweep statistics (sweep.csv's and sweep_points.csv's twin)",
                      "nhvk.sweep_nc/1");
    f.text(NC_GLOBAL, "sweep_combine", sw.combine);
    label_coordinates(f, v, coordinates + " " + metric_labels);
    for (int id : point_vars) f.text(id, "coordinates", coordinates);
    f.end_definitions();
    put_axes(f, a, r);
    std::vector<long long> index(P);
    for (std::size_t p = 0; p < P; ++p) index[p] = static_cast<long long>(p);
    f.put(point, {0}, {P}, index.data());
    std::vector<double> x(P);
    for (std::size_t i = 0; i < axis_vars.size(); ++i) {
        for (std::size_t p = 0; p < P; ++p) x[p] = sw.values[p][i];
        f.put(axis_vars[i], {0}, {P}, x.data());
    }
    for (std::size_t c = 0; c < point_vars.size(); ++c) {
        const PointColumn& col = point_columns()[c];
        if (col.kind == PointColumn::Kind::count) {
            std::vector<std::uint64_t> k(P);
            for (std::size_t p = 0; p < P; ++p) k[p] = col.count(r.points[p]);
            f.put(point_vars[c], {0}, {P}, k.data());
        } else if (col.kind == PointColumn::Kind::number) {
            for (std::size_t p = 0; p < P; ++p) x[p] = col.number(r.points[p]);
            f.put(point_vars[c], {0}, {P}, x.data());
        } else {
            std::vector<std::string> s(P);
            for (std::size_t p = 0; p < P; ++p) s[p] = col.text(r.points[p]);
            f.put_strings(point_vars[c], s);
        }
    }
    for (std::size_t first = 0; first < P; first += block) {
        std::vector<const EnsembleResult*> part;
        for (std::size_t p = first; p < std::min(P, first + block); ++p) part.push_back(&r.points[p]);
        put_series(f, v, part, first, true);
    }
    f.close();
}

#else

bool netcdf_outputs_built() { return false; }

void write_stats_netcdf(const std::string&, const RunConfig&, const EnsembleResult&, const std::string&) {
    throw std::runtime_error("stats.nc: this nhvk was built without the netCDF library (libnetcdf-dev)");
}

void write_sweep_netcdf(const std::string&, const RunConfig&, const EnsembleResult&, const std::string&) {
    throw std::runtime_error("sweep.nc: this nhvk was built without the netCDF library (libnetcdf-dev)");
}

#endif

} // namespace nhvk
