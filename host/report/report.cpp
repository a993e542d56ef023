// SPDX-License-Identifier: MIT
#include "report/report.hpp"

#include "input_limits.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "nhvk/metrics.hpp"
#include "pipeline/partial_state.hpp"
#include "report/svg_plot.hpp"

namespace nhvk {

namespace fs = std::filesystem;
using nlohmann::json;
using report::fmt;
using report::xml_escape;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// stats.csv

/** The quantile columns, in the order of a Box's q[]. */
const char* const box_columns[9] = {"min", "p01", "p05", "p25", "p50", "p75", "p95", "p99", "max"};

/** One metric of stats.csv: every numeric column by name, one value per output time (NaN: empty field). */
struct Metric {
    std::string name;
    std::map<std::string, std::vector<double>> col;
    std::vector<bool> seen;
    const std::vector<double>& operator[](const std::string& c) const { return col.at(c); }
};

struct Stats {
    std::vector<Metric> metrics; ///< in the order of their first row
    const Metric* find(const std::string& name) const {
        for (const Metric& m : metrics)
            if (m.name == name) return &m;
        return nullptr;
    }
};

bool parse_double(const std::string& s, double& v) {
    if (s.empty()) {
        v = NAN;
        return true;
    }
    char* end = nullptr;
    errno = 0;
    v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v);
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> f;
    std::size_t at = 0;
    while (true) {
        const std::size_t c = line.find(',', at);
        f.push_back(line.substr(at, c == std::string::npos ? std::string::npos : c - at));
        if (c == std::string::npos) break;
        at = c + 1;
    }
    return f;
}

Stats parse_stats(const std::string& text, const std::string& name, const std::vector<double>& times) {
    auto bad = [&](std::size_t line, const std::string& what) {
        throw ReportInputError(name + (line ? ":" + std::to_string(line) : std::string()) + ": " + what);
    };
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line)) bad(0, "empty: expected the stats.csv of an nhvk run (a header line, then rows)");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> header = split(line);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    for (const char* c :
         {"time_index", "t", "metric", "count", "min", "p01", "p05", "p25", "p50", "p75", "p95", "p99", "max"})
        if (!col.count(c))
            bad(1, std::string("header: expected a column '") + c +
                       "' (time_index,t,metric,count,…,p50,…: the stats.csv of an nhvk run), got '" + clip(line) + "'");
    const std::size_t nt = times.size();
    Stats s;
    std::size_t ln = 1, rows = 0;
    while (std::getline(in, line)) {
        ++ln;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::vector<std::string> f = split(line);
        if (f.size() != header.size())
            bad(ln, "expected " + std::to_string(header.size()) + " fields as in the header, got " +
                        std::to_string(f.size()));
        const std::string& ti = f[col["time_index"]];
        if (ti.empty() || ti.size() > 9 || ti.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(ti) >= nt)
            bad(ln, "time_index: expected a whole number below " + std::to_string(nt) +
                        " (the number of output times in summary.json), got '" + clip(ti) + "'");
        const std::size_t i = std::stoul(ti);
        double t = NAN;
        if (!parse_double(f[col["t"]], t) || !(std::fabs(t - times[i]) <= 1e-12 * std::max(1.0, std::fabs(t))))
            bad(ln, "t: expected " + fmt(times[i], 17) + " (summary.json times[" + ti + "]), got '" +
                        clip(f[col["t"]]) + "': the two files are not of the same run");
        const std::string& mname = f[col["metric"]];
        if (mname.empty() ||
            mname.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
                std::string::npos)
            bad(ln, "metric: expected a metric name (letters, digits, _), got '" + clip(mname) + "'");
        Metric* m = nullptr;
        for (Metric& x : s.metrics)
            if (x.name == mname) m = &x;
        if (!m) {
            s.metrics.push_back(Metric{mname, {}, std::vector<bool>(nt, false)});
            m = &s.metrics.back();
            for (std::size_t c = 0; c < header.size(); ++c)
                if (header[c] != "time_index" && header[c] != "t" && header[c] != "metric")
                    m->col[header[c]].assign(nt, NAN);
        }
        if (m->seen[i]) bad(ln, "a second row for time_index " + ti + " and metric " + clip(mname) + ": expected one");
        m->seen[i] = true;
        for (std::size_t c = 0; c < header.size(); ++c) {
            if (header[c] == "time_index" || header[c] == "t" || header[c] == "metric") continue;
            double v = NAN;
            if (!parse_double(f[c], v))
                bad(ln, clip(header[c]) + ": expected a number or an empty field, got '" + clip(f[c]) + "'");
            m->col[header[c]][i] = v;
        }
        ++rows;
    }
    if (rows == 0) bad(0, "no rows: expected one row per output time and metric");
    for (const Metric& m : s.metrics)
        for (std::size_t i = 0; i < nt; ++i)
            if (!m.seen[i])
                bad(0, "metric " + clip(m.name) + " has no row for time_index " + std::to_string(i) +
                           ": expected one row per output time and metric");
    return s;
}

// ---------------------------------------------------------------------------------------------------------------
// summary.json

/** The value at a dotted path, or nullptr. */
const json* find(const json& j, const std::string& dotted) {
    const json* cur = &j;
    std::size_t at = 0;
    while (at <= dotted.size()) {
        const std::size_t dot = dotted.find('.', at);
        const std::string key = dotted.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
        if (!cur->is_object()) return nullptr;
        const auto it = cur->find(key);
        if (it == cur->end()) return nullptr;
        cur = &*it;
        if (dot == std::string::npos) break;
        at = dot + 1;
    }
    return cur;
}

double number(const json& j, const std::string& path) {
    const json* v = find(j, path);
    return v && v->is_number() ? v->get<double>() : NAN;
}

/** A JSON value for people (escaped for HTML): numbers with 6 digits, strings as they are, null as "–". */
std::string show(const json* v) {
    if (!v || v->is_null()) return "\u2013";
    if (v->is_string()) return xml_escape(v->get<std::string>());
    if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
    if (v->is_number_integer() || v->is_number_unsigned()) return v->dump();
    if (v->is_number()) return fmt(v->get<double>(), 6);
    if (v->is_array()) {
        std::string s;
        for (const json& e : *v) s += (s.empty() ? "" : ", ") + show(&e);
        return "[" + s + "]";
    }
    return xml_escape(v->dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string show(const json& j, const std::string& path) { return show(find(j, path)); }

json parse_summary(const std::string& text, const std::string& name, std::vector<double>& times) {
    json j;
    // NOTE: refused while parsing, before the tree exists: the code that walks and prints it recurses, and a
    // summary.json nested 50,000 deep overflows the stack (input_limits.hpp). depth counts the enclosing levels.
    const json::parser_callback_t depth_limit = [&](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
            depth >= max_nesting_depth)
            throw ReportInputError(name + ": objects and arrays nested deeper than " +
                                   std::to_string(max_nesting_depth) +
                                   " levels: expected the summary.json of an nhvk run (at most 5 levels)");
        return true;
    };
    try {
        j = json::parse(text, depth_limit);
    } catch (const json::exception& e) {
        throw ReportInputError(name + ": not valid JSON (" + clip(e.what()) +
                               "): expected the summary.json of an nhvk run");
    }
    auto need = [&](const std::string& path, bool ok, const std::string& what) {
        if (!ok) throw ReportInputError(name + ": field '" + path + "': expected " + what);
    };
    const json* schema = find(j, "schema");
    need("schema", schema && schema->is_string() && schema->get<std::string>().rfind("nhvk.summary/", 0) == 0,
         "\"nhvk.summary/…\" (the summary.json of an nhvk run)");
    const json* name_ = find(j, "model.name");
    need("model.name", name_ && name_->is_string(), "a string");
    const json* t = find(j, "times");
    need("times", t && t->is_array() && !t->empty(), "a non-empty array of output times");
    for (const json& x : *t) {
        need("times", x.is_number() && std::isfinite(x.get<double>()), "finite numbers");
        times.push_back(x.get<double>());
    }
    for (const char* p : {"trajectories.requested", "trajectories.valid"}) {
        const json* v = find(j, p);
        need(p, v && v->is_number_integer(), "a whole number");
    }
    return j;
}

// ---------------------------------------------------------------------------------------------------------------
// summary.json's sweep: each point's statistics, which the sweep section plots against the axes

/** A value and its 95 % interval (NaN: none). */
struct Estimate {
    double v = NAN, lo = NAN, hi = NAN;
};

struct SweepAxisView {
    std::string name, key, kind, spacing;
};

struct SweepPointView {
    long long index = 0;
    std::vector<double> at; ///< the point's value of each axis (NaN: none)
    double requested = NAN, valid = NAN, failure = NAN;
    bool at_rounding_level = false;
    Estimate exponent, amplitude, onset; ///< of d_q: p and C of d_q ≈ C·t^p, the median onset time
    std::vector<Estimate> d_q;           ///< the median d_q at each output time with its interval (empty: none)
};

struct SweepView {
    std::string combine;
    std::vector<SweepAxisView> axes;
    std::vector<SweepPointView> points;
};

/** Reads summary.json's `sweep`: the layout is required, a point's statistics may be missing or null (no value), and
 *  anything of another type is refused naming the field. */
struct SweepReader {
    const std::string& file;
    std::size_t nt; ///< output times

    [[noreturn]] void bad(const std::string& path, const std::string& what) const {
        throw ReportInputError(file + ": field '" + path + "': expected " + what);
    }
    const json& object(const json* v, const std::string& path) const {
        if (!v || !v->is_object()) bad(path, "an object (the sweep of an nhvk run)");
        return *v;
    }
    std::string text(const json& o, const std::string& base, const char* key) const {
        const json* v = find(o, key);
        if (!v || !v->is_string()) bad(base + "." + key, "a string");
        return v->get<std::string>();
    }
    /** A number, NaN where missing or null. */
    double value(const json* v, const std::string& path) const {
        if (!v || v->is_null()) return NAN;
        if (!v->is_number()) bad(path, "a number or null, got " + clip(v->dump()));
        return v->get<double>();
    }
    double value(const json& o, const std::string& base, const std::string& rel) const {
        return value(find(o, rel), base + "." + rel);
    }
    /** A value and its [lo, hi] interval; either may be missing or null. */
    Estimate estimate(const json& o, const std::string& base, const std::string& rel,
                      const std::string& interval) const {
        Estimate e;
        e.v = value(o, base, rel);
        const json* ci = find(o, interval);
        if (!ci || ci->is_null()) return e;
        if (!ci->is_array() || ci->size() != 2) bad(base + "." + interval, "an interval [lo, hi] or null");
        e.lo = value(&(*ci)[0], base + "." + interval + "[0]");
        e.hi = value(&(*ci)[1], base + "." + interval + "[1]");
        return e;
    }
    /** One number or null per output time; empty where missing or null. */
    std::vector<double> series(const json& o, const std::string& base, const std::string& rel) const {
        const json* v = find(o, rel);
        if (!v || v->is_null()) return {};
        if (!v->is_array() || v->size() != nt)
            bad(base + "." + rel, "an array of " + std::to_string(nt) + " numbers or nulls (one per output time)");
        std::vector<double> out;
        for (std::size_t i = 0; i < nt; ++i)
            out.push_back(value(&(*v)[i], base + "." + rel + "[" + std::to_string(i) + "]"));
        return out;
    }

    SweepView read(const json& summary) const {
        const json& sw = object(find(summary, "sweep"), "sweep");
        SweepView view;
        view.combine = text(sw, "sweep", "combine");
        const json* axes = find(sw, "axes");
        if (!axes || !axes->is_array() || axes->empty()) bad("sweep.axes", "a non-empty array of axes");
        for (std::size_t a = 0; a < axes->size(); ++a) {
            const std::string base = "sweep.axes[" + std::to_string(a) + "]";
            const json& ax = object(&(*axes)[a], base);
            SweepAxisView v{text(ax, base, "name"), text(ax, base, "key"), text(ax, base, "kind"),
                            text(ax, base, "spacing")};
            if (v.spacing != "linear" && v.spacing != "log") bad(base + ".spacing", "\"linear\" or \"log\"");
            view.axes.push_back(v);
        }
        const json* points = find(sw, "points");
        if (!points || !points->is_array()) bad("sweep.points", "an array of points");
        for (std::size_t k = 0; k < points->size(); ++k) {
            const std::string base = "sweep.points[" + std::to_string(k) + "]";
            const json& pt = object(&(*points)[k], base);
            SweepPointView v;
            const json* index = find(pt, "index");
            if (index && !index->is_number_integer()) bad(base + ".index", "a whole number");
            v.index = index ? index->get<long long>() : static_cast<long long>(k);
            const json& values = object(find(pt, "values"), base + ".values");
            for (const SweepAxisView& a : view.axes) {
                // NOTE: an axis' name may be its dotted key (initial.mu.std): looked up as one key, not a path
                const auto it = values.find(a.name);
                const json* x = it == values.end() ? nullptr : &*it;
                if (!x) bad(base + ".values", "a value for every axis (none for '" + clip(a.name) + "')");
                v.at.push_back(value(x, base + ".values." + a.name));
            }
            v.requested = value(pt, base, "trajectories.requested");
            v.valid = value(pt, base, "trajectories.valid");
            v.failure = value(pt, base, "trajectories.failure_fraction");
            const json* rounding = find(pt, "growth_exponent.at_rounding_level");
            if (rounding && !rounding->is_boolean() && !rounding->is_null())
                bad(base + ".growth_exponent.at_rounding_level", "true or false");
            v.at_rounding_level = rounding && rounding->is_boolean() && rounding->get<bool>();
            v.exponent = estimate(pt, base, "growth_exponent.q.exponent", "growth_exponent.q.ci95");
            v.amplitude = estimate(pt, base, "growth_exponent.q.amplitude", "growth_exponent.q.amplitude_ci95");
            v.onset = estimate(pt, base, "onset.p50", "onset.p50_ci95");
            const std::vector<double> med = series(pt, base, "divergence.d_q.p50"),
                                      lo = series(pt, base, "divergence.d_q.p50_lo"),
                                      hi = series(pt, base, "divergence.d_q.p50_hi");
            if (!med.empty())
                for (std::size_t i = 0; i < nt; ++i)
                    v.d_q.push_back({med[i], lo.empty() ? NAN : lo[i], hi.empty() ? NAN : hi[i]});
            view.points.push_back(v);
        }
        return view;
    }
};

// ---------------------------------------------------------------------------------------------------------------
// what the metrics mean

/** What the report shows of a metric of stats.csv, from its row of metric_table (nhvk/metrics.hpp). */
struct MetricLook {
    std::string label;   ///< legend and heading
    std::string axis;    ///< y-axis title with the unit
    std::string group;   ///< metrics of one group share a plot
    std::string heading; ///< the group's plot heading
    bool divergence;     ///< plotted one by one with its growth exponent, before the other groups
};

MetricLook metric_look(const std::string& m) {
    for (const MetricInfo& d : metric_table)
        if (m == d.name) {
            const MetricGroupInfo& g = metric_group_info(d.group);
            return {d.label,
                    std::string(d.group == MetricGroup::divergence ? d.name : g.quantity) + " (" +
                        metric_unit_info(d.unit).description + ")",
                    g.key, g.heading, d.group == MetricGroup::divergence};
        }
    // NOTE: a metric of a later nhvk: a plot of its own under its name
    return {m, m, m, m, false};
}

// ---------------------------------------------------------------------------------------------------------------
// the page

struct Page {
    Page(const json& summary, const Stats& stats) : s(summary), st(stats) {}
    const json& s;
    const Stats& st;
    std::vector<double> times, tau; ///< output times, and t − t0 (the x of every log-time plot)
    double t0 = 0;
    std::ostringstream h;
    int plot_no = 0;

    /** Why the classification says E is not conserved: its system flags in words. */
    std::string energy_reason() const {
        std::vector<std::string> why;
        if (const json* t = find(s, "classification.system.lagrangian_time_dependent"); t && t->is_boolean() && *t)
            why.push_back("L depends on time");
        if (const json* f = find(s, "classification.system.has_force"); f && f->is_boolean() && *f)
            why.push_back("an applied force");
        if (const json* w = find(s, "classification.system.reactions_do_no_work"); w && w->is_boolean() && !*w)
            why.push_back("the reactions do work");
        std::string out;
        for (const std::string& w : why) out += (out.empty() ? "" : ", ") + w;
        return out.empty() ? "energy_conserved false" : out;
    }

    std::string time_title() const {
        return t0 == 0 ? std::string("t (model time units)")
                       : "t \u2212 t0 (model time units; t0 = " + fmt(t0, 6) + ")";
    }

    std::vector<bool> low; ///< per output time: flagged in statistics.low_population (empty: none flagged)
    std::string low_label;

    /** Shades the flagged output times of a plot over t − t0: each from halfway to its neighbours (in the axis'
     *  units), runs of flagged times as one span; a box plot's boxes at flagged times. */
    void shade(report::Plot& p, const std::vector<std::size_t>& box_times = {}) const {
        if (low.empty()) return;
        p.shade_label = low_label;
        for (std::size_t k = 0; k < box_times.size() && k < p.boxes.size(); ++k) p.boxes[k].shaded = low[box_times[k]];
        if (!p.boxes.empty()) return;
        auto mid = [&](double a, double b) { return p.log_x && a > 0 && b > 0 ? std::sqrt(a * b) : (a + b) / 2; };
        const std::size_t nt = tau.size();
        for (std::size_t i = 0; i < nt; ++i) {
            if (!low[i] || (i > 0 && low[i - 1])) continue;
            std::size_t j = i;
            while (j + 1 < nt && low[j + 1]) ++j;
            p.shades.push_back(
                {i > 0 ? mid(tau[i - 1], tau[i]) : tau[i], j + 1 < nt ? mid(tau[j], tau[j + 1]) : tau[j]});
        }
    }

    void section_plot(const std::string& heading, report::Plot p, const std::string& empty_reason,
                      const std::vector<std::string>& extra = {}, bool over_time = true) {
        std::vector<std::string> notes;
        if (over_time) shade(p);
        if (p.id.empty()) p.id = "plot-" + std::to_string(++plot_no);
        h << "<h3>" << xml_escape(heading) << "</h3>\n";
        const std::string svg = report::render_svg(p, notes);
        if (svg.empty()) h << "<p class=\"nodata\">No data to plot: " << xml_escape(empty_reason) << "</p>\n";
        else h << "<figure>\n" << svg << "</figure>\n";
        for (const std::string& e : extra) h << "<p class=\"note\">" << e << "</p>\n";
        for (const std::string& n : notes) h << "<p class=\"note\">" << xml_escape(n) << "</p>\n";
    }

    void row(const std::string& k, const std::string& v) {
        h << "<tr><th>" << xml_escape(k) << "</th><td>" << v << "</td></tr>\n";
    }

    const SweepView* sweep = nullptr; ///< summary.json's sweep, when the run was one
    std::string pooled;               ///< appended to the headings of the pooled statistics' sections in a sweep

    using SweepGroups = std::vector<std::pair<std::string, std::vector<std::size_t>>>;
    bool sweep_log(std::size_t a) const;
    SweepGroups sweep_groups(std::size_t a) const;
    std::vector<std::pair<std::size_t, std::string>> sweep_times() const;
    report::Line sweep_line(const std::string& label, const std::vector<std::size_t>& group, std::size_t a, int k,
                            const std::function<Estimate(const SweepPointView&)>& get) const;

    void header();
    void sweep_section();
    void sweep_axis(std::size_t a, const std::vector<std::pair<std::size_t, std::string>>& at_times);
    void sweep_heat();
    std::string resolution_note(const std::function<const Estimate&(const SweepPointView&)>& get, bool log_z) const;
    void counts();
    void classification();
    void divergence(const std::string& metric, const std::string& key);
    void distribution();
    void onset();
    void metric_groups();
};

void Page::header() {
    const std::string model = s["model"]["name"].get<std::string>();
    h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>nhvk report: "
      << xml_escape(model) << "</title>\n<style>\n"
      << "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:96em;margin:1em auto;padding:0 1em;"
         "color:#111;line-height:1.35}\n"
      << "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #999;padding:2px 8px;text-align:left;"
         "vertical-align:top}th{background:#eeeeee;font-weight:normal}\n"
      << "svg.plot{width:100%;height:auto;display:block}figure{margin:.5em 0}\n"
      << ".warn{border:3px solid #000;background:#ffe0b2;padding:.5em;font-weight:bold}\n"
      << ".note{font-size:90%;color:#333;margin:.2em 0}.nodata{border:2px dashed #666;padding:1em}\n"
      << ".cfg{columns:2;font-size:85%;background:#f4f4f4;padding:.5em;overflow-wrap:anywhere}\n"
      << "</style>\n</head>\n<body>\n";
    h << "<h1>nhvk report: " << xml_escape(model) << "</h1>\n";
    h << "<p>Rendered from <code>summary.json</code> and <code>stats.csv</code> of the output folder"
      << " (<code>nhvk report DIR</code> renders it again).</p>\n";

    const json* flagged = find(s, "diagnostics.balance_flagged");
    if (flagged && flagged->is_boolean() && flagged->get<bool>())
        h << "<p class=\"warn\">Warning: the energy balance residual is far above the integration tolerance "
             "(summary.json diagnostics.balance_flagged): a numerical problem, the results are not trustworthy.</p>\n";
    const json* rounding = find(s, "growth_exponent.at_rounding_level");
    if (rounding && rounding->is_boolean() && rounding->get<bool>())
        h << "<p class=\"warn\">Note: the divergence is at rounding level: exponent meaningless.</p>\n";
    if (const json* co = find(s, "coincidence.statement"); co && co->is_string())
        h << "<p class=\"warn\">Note: " << xml_escape(co->get<std::string>()) << ".</p>\n";
    // NOTE: a member stopped at divergence.stop_at has statistics up to its stop (a summary.json without the field
    // predates stop_at: none diverged)
    const json* diverged = find(s, "trajectories.diverged.count");
    const long long n_diverged = diverged && diverged->is_number_integer() ? diverged->get<long long>() : 0;
    if (s["trajectories"]["valid"].get<long long>() == 0 && n_diverged == 0)
        h << "<p class=\"warn\">Warning: not one trajectory was valid: the statistics are empty.</p>\n";
    if (const json* fw = find(s, "trajectories.failure_warning"); fw && fw->is_string())
        h << "<p class=\"warn\">Warning: " << xml_escape(fw->get<std::string>()) << ".</p>\n";
    if (!low.empty()) {
        std::size_t n = 0, first = 0, last = 0;
        for (std::size_t i = 0; i < low.size(); ++i)
            if (low[i]) {
                first = n++ == 0 ? i : first;
                last = i;
            }
        h << "<p class=\"warn\">Warning: at " << n << " of " << times.size()
          << " output times (t = " << fmt(times[first], 4) << (n > 1 ? " to " + fmt(times[last], 4) : std::string())
          << ") the statistics cover fewer than " << fmt(100 * number(s, "statistics.low_population.below_fraction"), 4)
          << " % of the " << show(s, "statistics.integrated")
          << " members integrated: they describe a remnant of the ensemble, shaped by which members survived as much "
             "as by the dynamics. Every plot shades these times.</p>\n";
    }

    h << "<h2>Run</h2>\n<table>\n";
    row("model", xml_escape(model) + " (n = " + show(s, "model.n") + " coordinates, k = " + show(s, "model.k") +
                     " constraints)");
    std::string params;
    // NOTE: a swept parameter's config value is only the base the points replace: it shows as swept, not as a value
    const auto swept_axis = [&](const std::string& name) -> const SweepAxisView* {
        for (std::size_t a = 0; sweep && a < sweep->axes.size(); ++a)
            if (sweep->axes[a].key == "model.params." + name) return &sweep->axes[a];
        return nullptr;
    };
    if (const json* p = find(s, "model.params"); p && p->is_object())
        for (auto it = p->begin(); it != p->end(); ++it) {
            const SweepAxisView* a = swept_axis(it.key());
            params += (params.empty() ? "" : "; ") + xml_escape(it.key()) +
                      (a ? " swept (axis " + xml_escape(a->name) + ")" : " = " + show(&it.value()));
        }
    if (sweep) {
        std::string swept;
        for (const SweepAxisView& a : sweep->axes) swept += (swept.empty() ? "" : ", ") + xml_escape(a.name);
        params += std::string(params.empty() ? "" : "; ") + "swept: " + swept + " (each point's values: Sweep)";
    }
    row("parameters", params.empty() ? "none" : params);
    row("coordinates", show(s, "model.coordinates") + "; angles " + show(s, "model.angles"));
    row("nhvk version", show(s, "nhvk_version") + " (schema " + show(s, "schema") + ")");
    row("backend", show(s, "backend") + ", " + show(s, "threads") + " threads, precision " + show(s, "precision") +
                       ", equations " + show(s, "equations"));
    row("integrator", show(s, "config.integrator.method") + ", rtol " + show(s, "config.integrator.rtol") + ", atol " +
                          show(s, "config.integrator.atol") + ", max_steps " + show(s, "config.integrator.max_steps"));
    row("trajectories", show(s, "trajectories.requested") + " requested, seed " + show(s, "config.run.seed"));
    row("output times", std::to_string(times.size()) + " from " + fmt(times.front(), 6) + " to " +
                            fmt(times.back(), 6) + " (" + show(s, "config.times.spacing") +
                            " spacing, t0 = " + fmt(t0, 6) + ")");
    row("divergence over", show(s, "divergence.coordinates"));
    row("time", fmt(number(s, "timing.seconds"), 4) + " s wall (sampling " +
                    fmt(number(s, "timing.sampling_seconds"), 3) + " s, integration " +
                    fmt(number(s, "timing.integration_seconds"), 3) + " s, reduction " +
                    fmt(number(s, "timing.reduction_seconds"), 3) + " s, transfers " +
                    fmt(number(s, "timing.transfer_seconds"), 3) + " s), " +
                    fmt(number(s, "timing.trajectories_per_second"), 4) + " trajectories/s");
    row("job", "config hash " + show(s, "job.config_hash") + ", ranks " + show(s, "job.ranks") + ", trajectory range " +
                   show(s, "job.trajectory_range") + ", shard " + show(s, "job.shard") + ", resumed at " +
                   show(s, "job.resumed_at") + ", merged from " + show(s, "job.merged_from"));
    // NOTE: the count below the histogram's window only means something in histogram mode; an exact run keeps no
    // histogram, and any count beside "exact" would read as values the quantiles left out.
    const json* mode = find(s, "statistics.quantiles");
    const bool exact = mode && mode->is_string() && mode->get<std::string>() == "exact";
    row("quantiles",
        show(mode) + " (" + show(s, "statistics.quantile_definition") + ")" +
            (exact ? "; from all the values, no histogram: none lies outside its range"
                   : "; values below the histogram's resolved window: " + show(s, "statistics.values_outside_range")));
    if (const json* pop = find(s, "statistics.population"))
        row("statistics population", "the per-time statistics cover: " + show(pop));
    else
        row("statistics population", "not stated (this summary predates statistics.population: the per-time "
                                     "statistics are over the valid trajectories)");
    h << "</table>\n";
}

// ---------------------------------------------------------------------------------------------------------------
// the sweep section

/** "v [lo, hi]" (the interval where it has a bound), `digits` significant digits. */
std::string with_interval(const Estimate& e, int digits = 4) {
    const bool ci = std::isfinite(e.lo) || std::isfinite(e.hi);
    return fmt(e.v, digits) + (ci ? " [" + fmt(e.lo, digits) + ", " + fmt(e.hi, digits) + "]" : std::string());
}

/** A log x axis for a log-spaced range or sample; a list (which has no spacing of its own) gets one when its values
 *  are positive and span more than 1.5 decades. */
bool Page::sweep_log(std::size_t a) const {
    if (sweep->axes[a].spacing == "log") return true;
    if (sweep->axes[a].kind != "list") return false;
    double lo = INFINITY, hi = -INFINITY;
    for (const SweepPointView& pt : sweep->points) {
        const double v = pt.at[a];
        if (!std::isfinite(v)) continue;
        if (v <= 0) return false;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    return lo <= hi && hi / lo > std::pow(10.0, 1.5);
}

/** The series of axis a's plots: in a product grid one per combination of the other axes' values (so a line follows
 *  axis a with the others fixed); else one series (a zip moves every axis together, and a random design has no two
 *  points sharing the other values). Each series' points in ascending order of axis a. */
Page::SweepGroups Page::sweep_groups(std::size_t a) const {
    const SweepView& sw = *sweep;
    const bool grid = sw.combine == "product" && sw.axes.size() > 1;
    // NOTE: NaN (no value) keyed as +inf: a map's order needs comparable keys
    std::map<std::vector<double>, std::vector<std::size_t>> by;
    for (std::size_t k = 0; k < sw.points.size(); ++k) {
        std::vector<double> key;
        for (std::size_t b = 0; grid && b < sw.axes.size(); ++b)
            if (b != a) key.push_back(std::isfinite(sw.points[k].at[b]) ? sw.points[k].at[b] : INFINITY);
        by[key].push_back(k);
    }
    SweepGroups groups;
    for (auto& [key, members] : by) {
        std::stable_sort(members.begin(), members.end(), [&](std::size_t i, std::size_t j) {
            const double x = sw.points[i].at[a], y = sw.points[j].at[a];
            return std::isfinite(x) && (!std::isfinite(y) || x < y);
        });
        std::string label;
        for (std::size_t b = 0, o = 0; grid && b < sw.axes.size(); ++b)
            if (b != a) label += (label.empty() ? "" : ", ") + sw.axes[b].name + " = " + fmt(key[o++], 4);
        groups.emplace_back(label, members);
    }
    return groups;
}

/** The output times of the sweep's d_q plots: the one nearest the growth fit's t_max (the end of its window, where
 *  C·t^p describes d_q; the first output time without one), the last one, and the one halfway between them by index
 *  (on a log time grid, geometrically halfway); each once, in time order. */
std::vector<std::pair<std::size_t, std::string>> Page::sweep_times() const {
    std::vector<std::pair<std::size_t, std::string>> pick;
    auto add = [&](std::size_t i, const std::string& why) {
        for (auto& [j, w] : pick)
            if (j == i) {
                w += ", " + why;
                return;
            }
        pick.emplace_back(i, why);
    };
    const double t_max = number(s, "growth_exponent.t_max");
    std::size_t fit_end = 0;
    if (std::isfinite(t_max)) {
        auto gap = [&](std::size_t i) {
            return times[i] > 0 && t_max > 0 ? std::fabs(std::log(times[i] / t_max)) : std::fabs(times[i] - t_max);
        };
        for (std::size_t i = 1; i < times.size(); ++i)
            if (gap(i) < gap(fit_end)) fit_end = i;
        add(fit_end, "nearest the growth fit's t_max");
    } else {
        add(fit_end, "first output time");
    }
    const std::size_t last = times.size() - 1;
    add((fit_end + last) / 2, "halfway by index");
    add(last, "last output time");
    std::sort(pick.begin(), pick.end());
    return pick;
}

/** The k-th series of a sweep plot: x axis a's values of the group's points, y and its error bar from `get`; a
 *  random design's points are not joined (their order along one axis says nothing of the others). */
report::Line Page::sweep_line(const std::string& label, const std::vector<std::size_t>& group, std::size_t a, int k,
                              const std::function<Estimate(const SweepPointView&)>& get) const {
    report::Line l;
    l.label = label;
    l.cls = "sweep-series";
    l.style = report::series_style(k);
    l.marker = k;
    l.join = sweep->combine == "product" || sweep->combine == "zip";
    for (std::size_t i : group) {
        const Estimate e = get(sweep->points[i]);
        l.x.push_back(sweep->points[i].at[a]);
        l.y.push_back(e.v);
        l.lo.push_back(e.lo);
        l.hi.push_back(e.hi);
    }
    return l;
}

void Page::sweep_section() {
    const SweepView& sw = *sweep;
    const std::size_t np = sw.points.size();
    h << "<h2>Sweep</h2>\n<p>" << np << " point(s), combine <code>" << xml_escape(sw.combine) << "</code>, "
      << show(s, "sweep.trajectories_per_point")
      << " trajectories per point. Each point is the run of its configuration alone (summary.json "
         "<code>sweep.points</code>); the sections after this one show the statistics pooled over every point's "
         "members.</p>\n";
    h << "<table>\n<tr><th>axis</th><th>key</th><th>kind</th><th>values</th><th>plotted on</th></tr>\n";
    for (std::size_t a = 0; a < sw.axes.size(); ++a) {
        double lo = INFINITY, hi = -INFINITY;
        for (const SweepPointView& pt : sw.points)
            if (std::isfinite(pt.at[a])) {
                lo = std::min(lo, pt.at[a]);
                hi = std::max(hi, pt.at[a]);
            }
        h << "<tr><td>" << xml_escape(sw.axes[a].name) << "</td><td><code>" << xml_escape(sw.axes[a].key)
          << "</code></td><td>" << xml_escape(sw.axes[a].kind) << "</td><td>"
          << (lo <= hi ? fmt(lo, 4) + " to " + fmt(hi, 4) : std::string("none")) << " (" << sw.axes[a].spacing
          << " spacing)</td><td>" << (sweep_log(a) ? "a log axis" : "a linear axis") << "</td></tr>\n";
    }
    h << "</table>\n";
    if (np == 0) {
        h << "<p class=\"nodata\">The sweep has no points.</p>\n";
        return;
    }
    // NOTE: a long sweep's table would bury the plots: the first rows, the rest in sweep_points.csv
    const std::size_t max_rows = 50;
    h << "<table>\n<tr><th>point</th>";
    for (const SweepAxisView& a : sw.axes) h << "<th>" << xml_escape(a.name) << "</th>";
    h << "<th>valid / requested</th><th>exponent p of d_q [95 %]</th><th>amplitude C of d_q [95 %]</th>"
         "<th>median onset [95 %]</th><th>failure fraction</th></tr>\n";
    for (std::size_t k = 0; k < np && k < max_rows; ++k) {
        const SweepPointView& pt = sw.points[k];
        h << "<tr><td>" << pt.index << "</td>";
        for (double v : pt.at) h << "<td>" << fmt(v, 6) << "</td>";
        h << "<td>" << fmt(pt.valid, 12) << " / " << fmt(pt.requested, 12) << "</td><td>"
          << with_interval(pt.exponent, 6) << (pt.at_rounding_level ? " (at rounding level: meaningless)" : "")
          << "</td><td>" << with_interval(pt.amplitude) << "</td><td>" << with_interval(pt.onset) << "</td><td>"
          << fmt(pt.failure, 4) << "</td></tr>\n";
    }
    h << "</table>\n";
    if (np > max_rows)
        h << "<p class=\"note\">" << np - max_rows << " more points in <code>sweep_points.csv</code>.</p>\n";
    const auto at_times = sweep_times();
    std::string which;
    for (const auto& [i, why] : at_times) which += (which.empty() ? "" : "; ") + fmt(times[i], 4) + " (" + why + ")";
    h << "<p class=\"note\">Plots against each axis: a marker per point with its 95 % interval as an error bar (the "
         "median d_q's p50_lo to p50_hi; the sampling intervals of p and C; the median onset's p50_ci95). "
      << (sw.combine == "product" && sw.axes.size() > 1    ? "One series per value of the other axes, joined by lines. "
          : sw.combine == "product" || sw.combine == "zip" ? "The points joined by a line. "
                                                           : "A random design: markers only, not joined. ")
      << "The median d_q at t = " << which << ".</p>\n";
    for (std::size_t a = 0; a < sw.axes.size(); ++a) sweep_axis(a, at_times);
    if (sw.combine == "product" && sw.axes.size() == 2) sweep_heat();
}

void Page::sweep_axis(std::size_t a, const std::vector<std::pair<std::size_t, std::string>>& at_times) {
    const SweepAxisView& ax = sweep->axes[a];
    const SweepGroups groups = sweep_groups(a);
    const std::string id = "plot-sweep-" + std::to_string(a) + "-";
    auto plot = [&](const std::string& key, const std::string& title, const std::string& y_title, bool log_y) {
        report::Plot p;
        p.id = id + key;
        p.title = title + " against " + ax.name;
        p.x_title = ax.name + " (" + ax.key + ")";
        p.y_title = y_title;
        p.log_x = sweep_log(a);
        p.log_y = log_y;
        return p;
    };
    // One series per group; a single group is labelled with what it shows.
    auto series = [&](report::Plot& p, const std::string& single,
                      const std::function<Estimate(const SweepPointView&)>& get) {
        for (std::size_t g = 0; g < groups.size(); ++g)
            p.lines.push_back(sweep_line(groups.size() == 1 ? single : groups[g].first, groups[g].second, a,
                                         static_cast<int>(g), get));
    };
    auto d_q_at = [](std::size_t i) {
        return [i](const SweepPointView& pt) { return pt.d_q.empty() ? Estimate{} : pt.d_q[i]; };
    };
    const std::string none = "no point has a value here";
    if (groups.size() == 1) {
        report::Plot p = plot("d_q", "median d_q at chosen output times", "median d_q", true);
        for (std::size_t k = 0; k < at_times.size(); ++k)
            p.lines.push_back(sweep_line("t = " + fmt(times[at_times[k].first], 3), groups[0].second, a,
                                         static_cast<int>(k), d_q_at(at_times[k].first)));
        section_plot("Median d_q against " + ax.name, p, none, {}, false);
    } else {
        for (const auto& [i, why] : at_times) {
            report::Plot p = plot("d_q-t" + std::to_string(i), "median d_q at t = " + fmt(times[i], 4),
                                  "median d_q at t = " + fmt(times[i], 4), true);
            series(p, "", d_q_at(i));
            section_plot("Median d_q at t = " + fmt(times[i], 4) + " (" + why + ") against " + ax.name, p, none, {},
                         false);
        }
    }
    report::Plot p = plot("exponent", "growth exponent p of d_q", "exponent p of d_q \u2248 C\u00b7t^p", false);
    series(p, "p, 95 % interval", [](const SweepPointView& pt) { return pt.exponent; });
    section_plot("Growth exponent p of d_q against " + ax.name, p, none, {}, false);
    p = plot("amplitude", "amplitude C of d_q", "amplitude C of d_q \u2248 C\u00b7t^p", true);
    series(p, "C, 95 % interval", [](const SweepPointView& pt) { return pt.amplitude; });
    section_plot("Amplitude C of d_q against " + ax.name, p, none, {}, false);
    p = plot("onset", "median onset time", "median onset time (model time units)", true);
    series(p, "median onset, 95 % interval", [](const SweepPointView& pt) { return pt.onset; });
    section_plot("Median onset time against " + ax.name, p, "no point has an onset (no d_q crossed the threshold)", {},
                 false);
    p = plot("failure", "failure fraction", "failure fraction (failed / requested)", false);
    p.y_from_zero = true;
    series(p, "failure fraction", [](const SweepPointView& pt) { return Estimate{pt.failure, NAN, NAN}; });
    for (report::Line& l : p.lines) l.lo.clear(), l.hi.clear();
    section_plot("Failure fraction against " + ax.name, p, none, {}, false);
}

/** A two-axis product grid: the amplitude and the exponent over the grid, one cell per pair of values (equal cells
 *  whatever the spacing). */
/** What a heat map's colours can tell apart: the spread of the values against the median width of their 95 %
 *  intervals (on log values for a log colour scale), so that noise inside the intervals is not read as structure. */
std::string Page::resolution_note(const std::function<const Estimate&(const SweepPointView&)>& get, bool log_z) const {
    const auto u = [&](double x) { return log_z ? (x > 0 ? std::log10(x) : NAN) : x; };
    double lo = INFINITY, hi = -INFINITY;
    std::vector<double> widths;
    for (const SweepPointView& pt : sweep->points) {
        const Estimate& e = get(pt);
        if (!std::isfinite(u(e.v))) continue;
        lo = std::min(lo, u(e.v));
        hi = std::max(hi, u(e.v));
        if (std::isfinite(u(e.lo)) && std::isfinite(u(e.hi))) widths.push_back(u(e.hi) - u(e.lo));
    }
    if (widths.empty() || !(lo <= hi))
        return "No 95 % intervals at these points: the colours show the values without their sampling error.";
    std::nth_element(widths.begin(), widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2), widths.end());
    const double w = widths[widths.size() / 2], span = hi - lo;
    const std::string in = log_z ? " decades" : "";
    if (span <= w)
        return "The colours span " + fmt(span, 3) + in + ", less than a typical 95 % interval (median width " +
               fmt(w, 3) + in + "): every difference between these cells is within the sampling error.";
    return "A typical 95 % interval is " + fmt(w, 3) + in + " wide, " + fmt(100.0 * w / span, 2) +
           " % of the colour scale: differences of colour smaller than that are within the sampling error.";
}

void Page::sweep_heat() {
    const SweepView& sw = *sweep;
    std::vector<double> cols, rows;
    for (const SweepPointView& pt : sw.points) {
        if (std::isfinite(pt.at[0])) cols.push_back(pt.at[0]);
        if (std::isfinite(pt.at[1])) rows.push_back(pt.at[1]);
    }
    for (std::vector<double>* v : {&cols, &rows}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    auto heat = [&](const std::string& key, const std::string& what, bool log_z,
                    const std::function<const Estimate&(const SweepPointView&)>& get) {
        report::Plot p;
        p.id = "plot-sweep-heat-" + key;
        p.title = what + " over " + sw.axes[0].name + " and " + sw.axes[1].name;
        p.x_title = sw.axes[0].name + " (" + sw.axes[0].key + ")";
        p.y_title = sw.axes[1].name + " (" + sw.axes[1].key + ")";
        for (double v : cols) p.heat.cols.push_back(fmt(v, 4));
        for (double v : rows) p.heat.rows.push_back(fmt(v, 4));
        p.heat.z.assign(cols.size() * rows.size(), NAN);
        p.heat.log_z = log_z;
        p.heat.z_title = what;
        for (const SweepPointView& pt : sw.points) {
            const auto c = std::lower_bound(cols.begin(), cols.end(), pt.at[0]);
            const auto r = std::lower_bound(rows.begin(), rows.end(), pt.at[1]);
            if (c == cols.end() || *c != pt.at[0] || r == rows.end() || *r != pt.at[1]) continue;
            p.heat.z[static_cast<std::size_t>(r - rows.begin()) * cols.size() +
                     static_cast<std::size_t>(c - cols.begin())] = get(pt).v;
        }
        section_plot("Heat map: " + what + " over " + sw.axes[0].name + " and " + sw.axes[1].name, p,
                     "no point has a value" + std::string(log_z ? " above 0" : ""), {resolution_note(get, log_z)},
                     false);
    };
    heat("amplitude", "amplitude C of d_q", true,
         [](const SweepPointView& pt) -> const Estimate& { return pt.amplitude; });
    heat("exponent", "exponent p of d_q", false,
         [](const SweepPointView& pt) -> const Estimate& { return pt.exponent; });
}

void Page::counts() {
    h << "<h2>Trajectories" << pooled << "</h2>\n<table>\n";
    row("valid", show(s, "trajectories.valid") + " of " + show(s, "trajectories.requested"));
    if (const json* af = find(s, "statistics.alive_fraction"); af && af->is_array() && !af->empty())
        row("alive fraction", "of the " + show(s, "statistics.integrated") + " members integrated: " +
                                  show(&af->front()) + " at the first output time, " + show(&af->back()) +
                                  " at the last; flagged below " + show(s, "statistics.low_population.below_fraction"));
    if (const json* at = find(s, "trajectories.diverged.stop_at"); at && at->is_number())
        row("diverged", show(s, "trajectories.diverged.count") + " stopped where d_q passed divergence.stop_at = " +
                            show(at) + " (neither valid nor failed; counted up to their stop)");
    row("failed", show(s, "trajectories.failed.total") + " (nonholonomic " +
                      show(s, "trajectories.failed.by_dynamics.nonholonomic") + ", vakonomic " +
                      show(s, "trajectories.failed.by_dynamics.vakonomic") + ")");
    h << "</table>\n";
    const json* bs = find(s, "trajectories.failed.by_status");
    if (bs && bs->is_object()) {
        h << "<table>\n<tr><th>failure status</th><th>total</th><th>nonholonomic</th><th>vakonomic</th></tr>\n";
        for (auto it = bs->begin(); it != bs->end(); ++it)
            h << "<tr><td>" << xml_escape(it.key()) << "</td><td>" << show(&it.value()) << "</td><td>"
              << show(s, "trajectories.failed.by_dynamics_status.nonholonomic." + it.key()) << "</td><td>"
              << show(s, "trajectories.failed.by_dynamics_status.vakonomic." + it.key()) << "</td></tr>\n";
        h << "</table>\n";
    }
    const json* sm = find(s, "trajectories.failed.sampling");
    if (sm && sm->is_object()) {
        h << "<table>\n<tr><th>sampling failure</th><th>count</th></tr>\n";
        for (auto it = sm->begin(); it != sm->end(); ++it)
            h << "<tr><td>" << xml_escape(it.key()) << "</td><td>" << show(&it.value()) << "</td></tr>\n";
        h << "</table>\n";
    }
    h << "<p class=\"note\">Limits that end a trajectory: max_steps " << show(s, "trajectories.limits.max_steps")
      << ", min_step " << show(s, "trajectories.limits.min_step") << ".</p>\n";
}

void Page::classification() {
    h << "<h2>Classification of the constraints</h2>\n";
    const json* c = find(s, "classification");
    if (!c || !c->is_object()) {
        h << "<p>This summary.json predates the classification (no <code>classification</code> field).</p>\n";
        return;
    }
    const json* cons = find(*c, "constraints");
    if (cons && cons->is_array() && !cons->empty()) {
        std::vector<std::string> keys = {"index",  "velocity_dependence", "homogeneous",
                                         "degree", "time_dependent",      "integrability"};
        for (const json& e : *cons)
            if (e.is_object())
                for (auto it = e.begin(); it != e.end(); ++it)
                    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
        h << "<table>\n<tr>";
        for (const std::string& k : keys) h << "<th>" << xml_escape(k) << "</th>";
        h << "</tr>\n";
        for (const json& e : *cons) {
            h << "<tr>";
            for (const std::string& k : keys) h << "<td>" << show(e.is_object() ? find(e, k) : nullptr) << "</td>";
            h << "</tr>\n";
        }
        h << "</table>\n";
    }
    const json* sys = find(*c, "system");
    if (sys && sys->is_object() && !sys->empty()) {
        h << "<table>\n<tr><th>system</th><th></th></tr>\n";
        for (auto it = sys->begin(); it != sys->end(); ++it) row(it.key(), show(&it.value()));
        h << "</table>\n";
    }
    const json* st_ = find(*c, "statements");
    if (st_ && st_->is_array() && !st_->empty()) {
        h << "<ul>\n";
        for (const json& e : *st_) h << "<li>" << show(&e) << "</li>\n";
        h << "</ul>\n";
    }
}

void Page::divergence(const std::string& metric, const std::string& key) {
    const MetricLook info = metric_look(metric);
    const Metric* m = st.find(metric);
    report::Plot p;
    p.id = "plot-" + metric;
    p.title = info.label + " against time, quantile bands";
    p.x_title = time_title();
    p.y_title = info.axis;
    std::vector<std::string> extra;
    if (m) {
        p.bands.push_back({"5 % to 95 %", "band-p05-p95", tau, (*m)["p05"], (*m)["p95"], "#c6dbef", 1.0});
        p.bands.push_back({"25 % to 75 %", "band-p25-p75", tau, (*m)["p25"], (*m)["p75"], "#6baed6", 1.0});
        p.lines.push_back({"median", "median", tau, (*m)["p50"], {"#08306b", "", 2.4}});
        const double expo = number(s, "growth_exponent." + key), t_max = number(s, "growth_exponent.t_max");
        const json* rounding = find(s, "growth_exponent.at_rounding_level");
        const bool at_rounding = rounding && rounding->is_boolean() && rounding->get<bool>();
        const std::string fit = "growth_exponent.fit." + key;
        const double amp = number(s, "growth_exponent.amplitude." + key);
        std::string text = "Growth of the median " + metric +
                           " \u2248 C\u00b7(t \u2212 t0)<sup>p</sup>: <strong>p = " + fmt(expo, 4) +
                           "</strong>, <strong>C = " + fmt(amp, 4) + "</strong> (";
        const std::string smp = "growth_exponent.sampling." + key;
        if (const json* ci = find(s, smp + ".ci95"); ci && ci->is_array() && ci->size() == 2 && !(*ci)[0].is_null()) {
            text += "sampling 95 % intervals from " + show(s, smp + ".groups") + " replica groups: <strong>p " +
                    show(&(*ci)[0]) + " to " + show(&(*ci)[1]) + "</strong>";
            if (const json* ca = find(s, smp + ".amplitude_ci95"); ca && ca->is_array() && ca->size() == 2)
                text += ", <strong>C " + show(&(*ca)[0]) + " to " + show(&(*ca)[1]) + "</strong>";
            text += "; ";
        }
        if (const json* ci = find(s, fit + ".ci95"); ci && ci->is_array() && ci->size() == 2 && !(*ci)[0].is_null()) {
            text += "fit-scatter 95 % intervals (the medians about the line, not a sampling error): p " +
                    show(&(*ci)[0]) + " to " + show(&(*ci)[1]);
            if (const json* ca = find(s, fit + ".amplitude_ci95"); ca && ca->is_array() && ca->size() == 2)
                text += ", C " + show(&(*ca)[0]) + " to " + show(&(*ca)[1]);
            text += "; ";
        }
        text += "R\u00b2 " + fmt(number(s, fit + ".r_squared"), 6) + ", " + show(s, fit + ".points") + " points";
        text += ", least squares over " + xml_escape(p.x_title.substr(0, p.x_title.find(' '))) + " in (t0, " +
                fmt(t_max, 4) + "])";
        if (at_rounding && metric == "d_q") text += ": <strong>at rounding level: exponent meaningless</strong>";
        const json* coincide = find(s, "coincidence.coincide");
        if (!std::isfinite(expo) && coincide && coincide->is_boolean() && coincide->get<bool>())
            text = "Growth of the median " + metric +
                   ": <strong>none to fit: the two dynamics coincide for this ensemble</strong> (see the note above)";
        extra.push_back(text + ".");
        // NOTE: the fitted line spans the output times of the fit's points; its intercept is log C, or, for a
        // summary.json without the amplitude, follows from the exponent and the medians in the window (the
        // least-squares line passes through their mean).
        double sx = 0, sy = 0;
        int n = 0;
        double lo = INFINITY, hi = -INFINITY;
        for (std::size_t i = 0; i < times.size(); ++i) {
            const double med = (*m)["p50"][i];
            if (tau[i] > 0 && times[i] <= t_max && std::isfinite(med) && med > 0) {
                sx += std::log(tau[i]);
                sy += std::log(med);
                lo = std::min(lo, tau[i]);
                hi = std::max(hi, tau[i]);
                ++n;
            }
        }
        if (n >= 2 && std::isfinite(expo)) {
            const double b = std::isfinite(amp) && amp > 0 ? std::log(amp) : sy / n - expo * sx / n;
            report::Line f{"fit C\u00b7t^p, p = " + fmt(expo, 4) + ", C = " + fmt(std::exp(b), 4),
                           "fit",
                           {lo, hi},
                           {std::exp(b + expo * std::log(lo)), std::exp(b + expo * std::log(hi))},
                           {"#d94801", "8 4", 2.4}};
            if (at_rounding && metric == "d_q") f.label = "fit (rounding level!)";
            p.lines.push_back(f);
        }
    }
    section_plot("Divergence " + info.label, p,
                 m ? "no positive " + metric + " quantile at any output time (no valid trajectory, or " + metric +
                         " = 0 throughout: the two dynamics coincide)"
                   : "stats.csv has no metric " + metric,
                 extra);
}

void Page::distribution() {
    const Metric* m = st.find("d_q");
    report::Plot p;
    p.id = "plot-d_q-distribution";
    p.title = "distribution of log10 d_q at chosen output times";
    p.x_title = "output time (n: valid values there)";
    p.y_title = "d_q (log scale: decades of log10 d_q)";
    std::vector<std::size_t> shade_times;
    if (m) {
        std::vector<std::size_t> alive;
        for (std::size_t i = 0; i < times.size(); ++i)
            if ((*m)["count"][i] > 0) alive.push_back(i);
        std::vector<std::size_t> pick;
        for (int k = 0; k <= 4 && !alive.empty(); ++k) {
            const std::size_t i = alive[(alive.size() - 1) * k / 4];
            if (pick.empty() || pick.back() != i) pick.push_back(i);
        }
        shade_times = pick;
        for (std::size_t i : pick) {
            report::Box b;
            b.label = "t = " + fmt(times[i], 3);
            b.sublabel = "n = " + fmt((*m)["count"][i], 10);
            for (int k = 0; k < 9; ++k) b.q[k] = (*m)[box_columns[k]][i];
            p.boxes.push_back(b);
        }
    }
    shade(p, shade_times);
    section_plot("Distribution of log10 d_q at chosen times", p,
                 m ? "no valid d_q value at any output time" : "stats.csv has no metric d_q",
                 {"Box plots from the quantiles of stats.csv at the first and last output time and three between "
                  "them (by index)."});
}

void Page::onset() {
    const json* counts = find(s, "onset.counts");
    report::Plot p;
    p.id = "plot-onset";
    p.title = "onset time distribution";
    p.x_title = time_title();
    p.y_title = "trajectories (first d_q > threshold)";
    const json* spacing = find(s, "config.times.spacing");
    p.log_x = spacing && spacing->is_string() ? spacing->get<std::string>() == "log"
                                              : tau.front() > 0 && tau.back() / tau.front() > 100;
    p.log_y = false;
    std::vector<std::string> extra;
    std::string reason = "no trajectory's d_q exceeded the threshold at an output time";
    if (counts && counts->is_array() && counts->size() == times.size()) {
        report::Bars b;
        b.label = "onsets per output time";
        for (std::size_t i = 0; i < times.size(); ++i) {
            const double right = tau[i];
            double left = i > 0 ? tau[i - 1] : 0.0;
            if (i == 0 && p.log_x) left = times.size() > 1 && tau[1] > 0 ? tau[0] * tau[0] / tau[1] : tau[0] / 2;
            b.x0.push_back(left);
            b.x1.push_back(right);
            b.y.push_back((*counts)[i].is_number() ? (*counts)[i].get<double>() : NAN);
        }
        p.bars.push_back(b);
    } else {
        reason = "summary.json onset.counts is missing or does not hold one count per output time";
    }
    std::string q;
    for (const char* k : {"p05", "p25", "p50", "p75", "p95"})
        q += std::string(q.empty() ? "" : ", ") + k + " " + show(s, std::string("onset.quantiles.") + k);
    extra.push_back("Onset: the first output time at which d_q exceeds the threshold " + show(s, "onset.threshold") +
                    "; never exceeded: <strong>" + show(s, "onset.never") + "</strong> of " +
                    show(s, "trajectories.valid") +
                    " valid trajectories. A bar at output time t counts the "
                    "trajectories first above it there (after the previous output time). Onset time quantiles: " +
                    q + ".");
    section_plot("Onset time", p, reason, extra);
}

/** Every metric of stats.csv but the divergences, by group (metric_table's, in the order of stats.csv). */
void Page::metric_groups() {
    std::vector<std::string> groups;
    for (const Metric& m : st.metrics) {
        const MetricLook look = metric_look(m.name);
        if (!look.divergence && std::find(groups.begin(), groups.end(), look.group) == groups.end())
            groups.push_back(look.group);
    }
    for (const std::string& g : groups) {
        // NOTE: metrics with negative values (a signed work) cannot share a log axis: each gets a linear plot.
        std::vector<const Metric*> positive, signed_;
        for (const Metric& m : st.metrics)
            if (const MetricLook look = metric_look(m.name); look.group == g && !look.divergence) {
                bool neg = false;
                for (const char* c : box_columns)
                    for (double v : m[c]) neg = neg || v < 0;
                (neg ? signed_ : positive).push_back(&m);
            }
        // NOTE: where the model does not conserve E (a time-dependent L, applied forces, reactions that work:
        // summary.json's classification), E(t) − E(t0) is physics, not an integration error: "change", not "drift"
        const json* conserved = find(s, "classification.system.energy_conserved");
        const bool change =
            (g == "energy" || g == "energy_rel") && conserved && conserved->is_boolean() && !conserved->get<bool>();
        const auto drift_to_change = [&](std::string text) {
            for (std::size_t at = 0; change && (at = text.find("drift", at)) != std::string::npos; at += 6)
                text.replace(at, 5, "change");
            return text;
        };
        auto plot = [&](const std::vector<const Metric*>& ms, bool log_y, const std::string& suffix) {
            report::Plot p;
            p.id = "plot-" + g + suffix;
            const std::string heading = drift_to_change(metric_look(ms.front()->name).heading);
            p.title = heading + " against time";
            p.x_title = time_title();
            p.y_title = drift_to_change(metric_look(ms.front()->name).axis);
            p.log_x = true;
            p.log_y = log_y;
            std::string names;
            std::vector<std::string> meaning;
            for (std::size_t k = 0; k < ms.size(); ++k) {
                const Metric& m = *ms[k];
                const std::string label = metric_look(m.name).label;
                p.bands.push_back({m.name + " 5 % to 95 %", "band-" + m.name, tau, m["p05"], m["p95"],
                                   report::series_fill(static_cast<int>(k)), 0.55});
                p.lines.push_back({m.name + " median", "median metric-" + m.name, tau, m["p50"],
                                   report::series_style(static_cast<int>(k))});
                names += (names.empty() ? "" : ", ") + m.name;
                meaning.push_back(label == m.name ? "<code>" + xml_escape(m.name) +
                                                        "</code>: a metric this nhvk "
                                                        "has no description for"
                                                  : xml_escape(label));
            }
            if (change)
                meaning.push_back("This model does not conserve the energy (summary.json classification: " +
                                  xml_escape(energy_reason()) +
                                  "): its change over time is the dynamics, not an integration error; the energy "
                                  "balance residual below is the accuracy check.");
            section_plot(heading + (suffix.empty() ? "" : " (" + names + ", linear axis: it takes negative values)"), p,
                         "no finite " + names + " value at any output time" +
                             (log_y ? " that a log axis can show (all are 0 or missing)" : ""),
                         meaning);
        };
        if (!positive.empty()) plot(positive, true, "");
        for (const Metric* m : signed_) plot({m}, false, "-" + m->name);
    }
}

/** `dotted.key = value` lines (escaped) of a config object; distribution tables and arrays stay on one line. */
void flatten(const json& j, const std::string& prefix, std::vector<std::string>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        const json& v = it.value();
        if (v.is_object() && !v.contains("dist") && !v.empty()) flatten(v, key, out);
        else
            out.push_back(xml_escape(key) + " = " + xml_escape(v.dump(-1, ' ', false, json::error_handler_t::replace)));
    }
}

std::string read_file(const fs::path& p, const std::string& what) {
    std::error_code ec;
    if (fs::exists(p, ec) && !fs::is_regular_file(p, ec))
        throw ReportInputError(p.string() + ": not a regular file: expected the " + what + " of a completed nhvk run");
    std::ifstream in(p, std::ios::binary);
    if (!in)
        throw ReportInputError(p.string() + ": cannot read (" + std::strerror(errno) + "): expected the " + what +
                               " of a completed nhvk run");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw ReportInputError(p.string() + ": cannot read (" + std::strerror(errno) + ")");
    return ss.str();
}

} // namespace

std::string render_report(const std::string& summary_text, const std::string& stats_text,
                          const std::string& summary_name, const std::string& stats_name) {
    std::vector<double> times;
    const json s = parse_summary(summary_text, summary_name, times);
    const Stats st = parse_stats(stats_text, stats_name, times);
    Page pg(s, st);
    pg.times = times;
    pg.t0 = number(s, "config.initial.t0");
    if (!std::isfinite(pg.t0)) pg.t0 = 0;
    for (double t : times) pg.tau.push_back(t - pg.t0);
    if (const json* li = find(s, "statistics.low_population.time_indices"); li && li->is_array() && !li->empty()) {
        pg.low.assign(times.size(), false);
        for (const json& i : *li)
            if (i.is_number_unsigned() && i.get<std::size_t>() < times.size()) pg.low[i.get<std::size_t>()] = true;
        pg.low_label = "population < " + fmt(100 * number(s, "statistics.low_population.below_fraction"), 4) + " %";
    }

    std::optional<SweepView> sweep;
    if (s.contains("sweep")) {
        sweep = SweepReader{summary_name, times.size()}.read(s);
        pg.sweep = &*sweep;
        pg.pooled = " (pooled over the sweep's " + std::to_string(sweep->points.size()) + " points)";
    }

    pg.header();
    if (pg.sweep) pg.sweep_section();
    pg.counts();
    pg.classification();
    pg.h << "<h2>Divergence of the nonholonomic and vakonomic motions" << pg.pooled << "</h2>\n"
         << "<p class=\"note\">Same initial state for both dynamics; the bands are quantiles over the trajectories "
            "at each output time, on log-log axes.</p>\n";
    // NOTE: growth_exponent's key of a divergence is the last part of its statistics' path (divergence.q: q).
    for (const MetricInfo& d : metric_table)
        if (d.group == MetricGroup::divergence) pg.divergence(d.name, std::strrchr(d.statistics, '.') + 1);
    pg.distribution();
    pg.onset();
    pg.h << "<h2>Diagnostics" << pg.pooled << "</h2>\n";
    pg.metric_groups();
    pg.h << "<h2>Resolved config</h2>\n";
    if (const json* cfg = find(s, "config"); cfg && cfg->is_object()) {
        std::vector<std::string> lines;
        flatten(*cfg, "", lines);
        pg.h << "<div class=\"cfg\">\n";
        for (const std::string& l : lines) pg.h << "<code>" << l << "</code><br/>\n";
        pg.h << "</div>\n";
    } else {
        pg.h << "<p>(not in summary.json)</p>\n";
    }
    pg.h << "<p class=\"note\">Rendered by nhvk " << nhvk_version << ".</p>\n</body>\n</html>\n";
    return pg.h.str();
}

std::string render_report(const fs::path& dir) {
    const fs::path sp = dir / "summary.json", cp = dir / "stats.csv";
    const std::string summary = read_file(sp, "summary.json"), stats = read_file(cp, "stats.csv");
    return render_report(summary, stats, sp.string(), cp.string());
}

} // namespace nhvk
