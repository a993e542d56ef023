// SPDX-License-Identifier: MIT
// report.html: every run writes it, `nhvk report DIR` renders the same bytes again, the page is well-formed and
// holds the run's numbers and one SVG per plot; bad folders exit 2 naming the file; fields that other parts of nhvk
// add to summary.json/stats.csv (classification, balance flag, population, new metrics) are shown.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nhvk/metrics.hpp"
#include "report/report.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk_test::read_text;

/** The first problem with `s` as XML (tags nested and closed, attributes quoted, `&`/`<` only as markup or
 *  entities), after an optional `<!DOCTYPE html>`; empty when well-formed. Enough for the pages nhvk writes. */
std::string xml_problem(const std::string& s) {
    std::vector<std::string> open;
    std::size_t i = 0;
    const std::string doctype = "<!DOCTYPE html>";
    if (s.compare(0, doctype.size(), doctype) == 0) i = doctype.size();
    auto name_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '_';
    };
    auto at = [&](std::size_t p) { return " at byte " + std::to_string(p); };
    bool root_seen = false;
    while (i < s.size()) {
        const char c = s[i];
        if (c == '<') {
            if (s.compare(i, 4, "<!--") == 0) {
                const std::size_t e = s.find("-->", i);
                if (e == std::string::npos) return "unclosed comment" + at(i);
                i = e + 3;
                continue;
            }
            const bool closing = i + 1 < s.size() && s[i + 1] == '/';
            std::size_t j = i + (closing ? 2 : 1), k = j;
            while (k < s.size() && name_char(s[k])) ++k;
            const std::string name = s.substr(j, k - j);
            if (name.empty()) return "a '<' that starts no tag" + at(i);
            if (closing) {
                if (k >= s.size() || s[k] != '>') return "malformed end tag </" + name + at(i);
                if (open.empty() || open.back() != name)
                    return "</" + name + "> does not close <" + (open.empty() ? "nothing" : open.back()) + ">" + at(i);
                open.pop_back();
                i = k + 1;
                continue;
            }
            if (open.empty() && root_seen) return "a second root element <" + name + ">" + at(i);
            root_seen = true;
            while (true) {
                while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
                if (k >= s.size()) return "unterminated tag <" + name + at(i);
                if (s.compare(k, 2, "/>") == 0) {
                    i = k + 2;
                    break;
                }
                if (s[k] == '>') {
                    open.push_back(name);
                    i = k + 1;
                    break;
                }
                std::size_t a = k;
                while (k < s.size() && name_char(s[k])) ++k;
                if (k == a || k + 1 >= s.size() || s[k] != '=' || s[k + 1] != '"')
                    return "attribute without =\"value\" in <" + name + at(a);
                const std::size_t e = s.find('"', k + 2);
                if (e == std::string::npos) return "unterminated attribute value" + at(k);
                const std::string v = s.substr(k + 2, e - k - 2);
                if (v.find('<') != std::string::npos) return "'<' in an attribute value" + at(k);
                k = e + 1;
            }
        } else if (c == '&') {
            const std::size_t e = s.find(';', i);
            const std::string ent = e == std::string::npos ? "" : s.substr(i + 1, e - i - 1);
            const bool ok = ent == "amp" || ent == "lt" || ent == "gt" || ent == "quot" || ent == "#39";
            if (!ok) return "an '&' that is no known entity" + at(i);
            i = e + 1;
        } else {
            if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) return "text outside the root" + at(i);
            ++i;
        }
    }
    if (!open.empty()) return "<" + open.back() + "> never closed";
    return root_seen ? "" : "no element";
}

/** The `<svg …>…</svg>` element with id `id` in `page` (empty when absent). */
std::string svg_with_id(const std::string& page, const std::string& id) {
    const std::size_t a = page.find("id=\"" + id + "\"");
    if (a == std::string::npos) return "";
    const std::size_t start = page.rfind("<svg", a), end = page.find("</svg>", a);
    return start == std::string::npos || end == std::string::npos ? "" : page.substr(start, end + 6 - start);
}

/** The number of x,y pairs in the `points` of the first polyline of class `cls` in `svg` (-1: none). */
int polyline_points(const std::string& svg, const std::string& cls) {
    const std::size_t a = svg.find("<polyline class=\"" + cls + "\"");
    if (a == std::string::npos) return -1;
    const std::size_t p = svg.find("points=\"", a) + 8, e = svg.find('"', p);
    int n = 0;
    for (std::size_t i = p; i < e; ++i) n += svg[i] == ',';
    return n;
}

/** The y-axis title of a plot (empty when none), its lines joined by spaces where it wraps (tspans). */
std::string y_title(const std::string& svg) {
    const std::string mark = "rotate(-90)\" text-anchor=\"middle\">";
    const std::size_t a = svg.find(mark);
    if (a == std::string::npos) return "";
    const std::string raw = svg.substr(a + mark.size(), svg.find("</text>", a) - a - mark.size());
    std::string out;
    bool tag = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw.compare(i, 7, "<tspan ") == 0 && !out.empty()) out += ' ';
        if (raw[i] == '<') tag = true;
        else if (raw[i] == '>') tag = false;
        else if (!tag) out += raw[i];
    }
    return out;
}

std::string g4(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", x);
    return b;
}

/** A real run shared by the tests of a fixture: `nhvk run CONFIG --out DIR ARGS…` with what `Run` names (its
 *  temporary folder's prefix, the config under the source tree, the arguments). */
template <class Run> class SharedRun : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new nhvk_test::TempDir(Run::prefix);
        out_ = tmp_->path() / "run";
        std::vector<std::string> args = {
            "run", std::string(NHVK_SOURCE_DIR) + "/" + Run::config, "--out", out_.string(), "--threads", "1"};
        for (const std::string& a : Run::args()) args.push_back(a);
        const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, args, tmp_->path() / "io");
        rc_ = r.rc;
        err_ = r.err;
    }
    static void TearDownTestSuite() { delete tmp_; }
    static inline nhvk_test::TempDir* tmp_ = nullptr;
    static inline fs::path out_;
    static inline int rc_ = -1;
    static inline std::string err_;
};

/** One small real run shared by the tests of this file (about a second). */
struct ParticleRun {
    static constexpr const char* prefix = "nhvk_report_";
    static constexpr const char* config = "configs/nh_particle.toml";
    static std::vector<std::string> args() { return {"--trajectories", "64", "--set", "times.count=12"}; }
};

class Report : public SharedRun<ParticleRun> {
protected:
    /** A copy of the run's folder whose summary.json and stats.csv `edit` may change. */
    fs::path copy(const std::string& name) const {
        const fs::path d = tmp_->path() / name;
        fs::remove_all(d);
        fs::create_directories(d);
        for (const char* f : {"summary.json", "stats.csv"}) fs::copy_file(out_ / f, d / f);
        return d;
    }
};

TEST_F(Report, RunWritesAWellFormedPageWithEveryPlotAndTheRunsNumbers) {
    ASSERT_EQ(rc_, 0) << err_;
    EXPECT_NE(err_.find("report.html"), std::string::npos) << "the closing summary lists report.html:\n" << err_;
    ASSERT_TRUE(fs::is_regular_file(out_ / "report.html"));
    const std::string page = read_text(out_ / "report.html");
    EXPECT_EQ(xml_problem(page), "");
    EXPECT_EQ(page.find("<script"), std::string::npos) << "no scripts";
    std::string no_ns = page; // the SVG namespace is a name, not a link
    for (std::size_t p; (p = no_ns.find("xmlns=\"http://www.w3.org/2000/svg\"")) != std::string::npos;)
        no_ns.erase(p, 34);
    for (const char* link : {"http:", "https:", "src=", "href=", "@import"})
        EXPECT_EQ(no_ns.find(link), std::string::npos) << "nothing fetched from elsewhere: " << link;
    const nlohmann::json s = nhvk_test::read_json(out_ / "summary.json");
    const std::size_t nt = s["times"].size();
    ASSERT_EQ(nt, 12u);
    // Each plot is an SVG with data; the median line of d_q and d_v has one point per output time.
    for (const char* id :
         {"plot-d_q", "plot-d_v", "plot-d_q-distribution", "plot-onset", "plot-residual", "plot-energy"})
        EXPECT_FALSE(svg_with_id(page, id).empty()) << id;
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-d_q"), "median"), static_cast<int>(nt));
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-d_v"), "median"), static_cast<int>(nt));
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-d_q"), "fit"), 2) << "the fitted t^p line";
    // Five boxes (first, last, three between) and one bar per output time with onsets.
    const std::string boxes = svg_with_id(page, "plot-d_q-distribution");
    int n_boxes = 0, n_bars = 0, onset_times = 0;
    for (std::size_t p = boxes.find("class=\"box\""); p != std::string::npos; p = boxes.find("class=\"box\"", p + 1))
        ++n_boxes;
    EXPECT_EQ(n_boxes, 5);
    const std::string onset = svg_with_id(page, "plot-onset");
    for (std::size_t p = onset.find("class=\"bar\""); p != std::string::npos; p = onset.find("class=\"bar\"", p + 1))
        ++n_bars;
    for (const auto& c : s["onset"]["counts"]) onset_times += c.get<int>() > 0;
    EXPECT_GT(onset_times, 0);
    EXPECT_EQ(n_bars, onset_times);
    // The run's numbers in the text.
    const std::string valid = std::to_string(s["trajectories"]["valid"].get<int>()),
                      requested = std::to_string(s["trajectories"]["requested"].get<int>());
    EXPECT_NE(page.find("<td>" + valid + " of " + requested + "</td>"), std::string::npos);
    EXPECT_NE(page.find("p = " + g4(s["growth_exponent"]["q"].get<double>()) + "</strong>"), std::string::npos);
    EXPECT_NE(page.find("p = " + g4(s["growth_exponent"]["v"].get<double>()) + "</strong>"), std::string::npos);
    EXPECT_NE(page.find(std::to_string(s["growth_exponent"]["fit"]["q"]["points"].get<int>()) + " points"),
              std::string::npos);
    EXPECT_NE(page.find("never exceeded: <strong>" + std::to_string(s["onset"]["never"].get<int>())),
              std::string::npos);
    EXPECT_NE(page.find("nh_particle"), std::string::npos);
    EXPECT_NE(page.find("config hash " + s["job"]["config_hash"].get<std::string>()), std::string::npos);
    EXPECT_NE(page.find("run.trajectories = 64"), std::string::npos) << "the resolved config";
    // every run's summary.json has the classification (nhvk inspect): the page shows its statements
    EXPECT_EQ(page.find("predates the classification"), std::string::npos);
    ASSERT_FALSE(s["classification"]["statements"].empty());
    for (const auto& st : s["classification"]["statements"])
        EXPECT_NE(page.find(st.get<std::string>()), std::string::npos) << st;
    EXPECT_EQ(page.find("class=\"warn\""), std::string::npos) << "nothing to warn about in this run";
}

TEST_F(Report, ReportCommandRendersTheSameBytes) {
    ASSERT_EQ(rc_, 0) << err_;
    const std::string written = read_text(out_ / "report.html");
    const fs::path other = tmp_->path() / "again.html";
    const nhvk_test::CliRun r = nhvk_test::run_captured(
        "", NHVK_BINARY, {"report", out_.string(), "--out", other.string()}, tmp_->path() / "io2");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(read_text(other), written);
    // Without --out: into the folder, the same bytes again.
    fs::remove(out_ / "report.html");
    const nhvk_test::CliRun r2 =
        nhvk_test::run_captured("", NHVK_BINARY, {"report", out_.string()}, tmp_->path() / "io3");
    ASSERT_EQ(r2.rc, 0) << r2.err;
    EXPECT_EQ(read_text(out_ / "report.html"), written);
}

TEST_F(Report, BadFolderExitsTwoNamingTheFile) {
    ASSERT_EQ(rc_, 0) << err_;
    auto report = [&](const fs::path& dir) {
        return nhvk_test::run_captured("", NHVK_BINARY, {"report", dir.string()}, tmp_->path() / "io_bad");
    };
    const fs::path empty = tmp_->path() / "empty";
    fs::create_directories(empty);
    nhvk_test::CliRun r = report(empty);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("summary.json: cannot read"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(empty / "report.html"));

    fs::path d = copy("no_stats");
    fs::remove(d / "stats.csv");
    r = report(d);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("stats.csv: cannot read"), std::string::npos) << r.err;

    d = copy("bad_json");
    std::ofstream(d / "summary.json") << "{\"schema\": ";
    r = report(d);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("summary.json: not valid JSON"), std::string::npos) << r.err;

    d = copy("no_times");
    nlohmann::json s = nhvk_test::read_json(d / "summary.json");
    s.erase("times");
    std::ofstream(d / "summary.json") << s.dump();
    r = report(d);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("summary.json: field 'times': expected a non-empty array"), std::string::npos) << r.err;

    d = copy("bad_csv");
    std::string csv = read_text(d / "stats.csv");
    const std::size_t line3 = csv.find('\n', csv.find('\n') + 1) + 1; // the second data row, line 3
    csv.replace(csv.find(',', csv.find(",d_v,", line3) + 5), 1, ",x");
    std::ofstream(d / "stats.csv") << csv;
    r = report(d);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("stats.csv:3: "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "report.html"));
}

TEST_F(Report, ShowsFieldsAndMetricsAddedLater) {
    ASSERT_EQ(rc_, 0) << err_;
    nlohmann::json s = nhvk_test::read_json(out_ / "summary.json");
    s["classification"] = {{"constraints",
                            {{{"index", 0},
                              {"velocity_dependence", "linear"},
                              {"homogeneous", true},
                              {"degree", 1},
                              {"time_dependent", false},
                              {"integrability", "nonholonomic"}}}},
                           {"system", {{"energy_conserved", true}}},
                           {"statements", {"The nonholonomic energy is conserved."}}};
    s["diagnostics"]["balance_flagged"] = true;
    s["statistics"]["population"] = "alive";
    s["growth_exponent"]["at_rounding_level"] = true;
    // The run's own balance_nh and reaction_work_nh rows are replaced by synthetic ones of known sign.
    std::string csv;
    {
        std::istringstream lines(read_text(out_ / "stats.csv"));
        for (std::string line; std::getline(lines, line);)
            if (line.find(",balance_nh,") == std::string::npos && line.find(",reaction_work_nh,") == std::string::npos)
                csv += line + "\n";
    }
    const std::size_t nt = s["times"].size();
    const std::string no_error_bars(27, ','); // the error-bar columns after alive_fraction, empty
    // New metrics: a positive one (balance_nh), a signed one (reaction_work_nh), one nhvk does not know.
    for (std::size_t i = 0; i < nt; ++i) {
        char t[32];
        std::snprintf(t, sizeof t, "%.17g", s["times"][i].get<double>());
        csv += std::to_string(i) + "," + t +
               ",balance_nh,64,0,1e-12,0,1e-13,1e-11,1e-13,1e-13,5e-13,1e-12,2e-12,5e-12,1e-11,0,1" + no_error_bars +
               "\n";
        csv += std::to_string(i) + "," + t + ",reaction_work_nh,64,0,0,1,-2,2,-2,-1.5,-0.5,0,0.5,1.5,2,0,1" +
               no_error_bars + "\n";
        csv += std::to_string(i) + "," + t + ",foo_metric,64,0,1,0,1,1,1,1,1,1,1,1,1,0,1" + no_error_bars + "\n";
    }
    const std::string page = nhvk::render_report(s.dump(2), csv);
    EXPECT_EQ(xml_problem(page), "");
    EXPECT_NE(page.find("<td>nonholonomic</td>"), std::string::npos);
    EXPECT_NE(page.find("<li>The nonholonomic energy is conserved.</li>"), std::string::npos);
    EXPECT_EQ(page.find("predates the classification"), std::string::npos);
    EXPECT_NE(page.find("class=\"warn\">Warning: the energy balance residual"), std::string::npos);
    EXPECT_NE(page.find("at rounding level: exponent meaningless"), std::string::npos);
    EXPECT_NE(page.find("the per-time statistics cover: alive"), std::string::npos);
    // balance_nh is divided by the energy scale (dimensionless): a plot of its own, not on the energy axis
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-energy"), "median metric-balance_nh"), -1);
    const std::string balance = svg_with_id(page, "plot-balance");
    EXPECT_EQ(polyline_points(balance, "median metric-balance_nh"), static_cast<int>(nt));
    EXPECT_NE(y_title(balance).find("dimensionless"), std::string::npos) << y_title(balance);
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-reaction_work"), "median metric-reaction_work_nh"), -1)
        << "signed: not on the log axis";
    const std::string work = svg_with_id(page, "plot-reaction_work-reaction_work_nh");
    // On its linear axis the median 0 is drawn at every output time.
    EXPECT_EQ(polyline_points(work, "median metric-reaction_work_nh"), static_cast<int>(nt));
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-foo_metric"), "median metric-foo_metric"), static_cast<int>(nt));

    // A run whose d_q is 0 throughout (the two dynamics coincide): the plot says so instead of an empty frame.
    for (const char* c : {"min", "p01", "p05", "p25", "p50", "p75", "p95", "p99", "max"})
        s["divergence"]["q"][c] = std::vector<double>(nt, 0.0);
    nhvk_test::Csv table = nhvk_test::parse_csv(read_text(out_ / "stats.csv"));
    std::string zero = "time_index,t,metric,count,nonfinite,mean,std,min,max,p01,p05,p25,p50,p75,p95,p99,outside_range,"
                       "alive_fraction\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        std::vector<std::string> row = table.rows[r];
        if (table.at(r, "metric") == "d_q")
            for (std::size_t c = 5; c < 16; ++c) row[c] = "0";
        for (std::size_t c = 0; c < 18; ++c) zero += (c ? "," : "") + row[c]; // the statistics, not the error bars
        zero += "\n";
    }
    const std::string flat = nhvk::render_report(s.dump(), zero);
    EXPECT_EQ(xml_problem(flat), "");
    EXPECT_TRUE(svg_with_id(flat, "plot-d_q").empty());
    EXPECT_NE(flat.find("No data to plot: no positive d_q quantile"), std::string::npos);
}

// The run table's quantile row: an exact run (the shared run fits run.exact_memory_mb) keeps no histogram, so the row
// says nothing of values outside one; a histogram-mode summary shows its count.
TEST_F(Report, QuantileRowSpeaksOfTheHistogramOnlyInHistogramMode) {
    ASSERT_EQ(rc_, 0) << err_;
    nlohmann::json s = nhvk_test::read_json(out_ / "summary.json");
    ASSERT_EQ(s["statistics"]["quantiles"], "exact");
    const std::string csv = read_text(out_ / "stats.csv");
    // Even a count written into an exact summary does not reach the page.
    s["statistics"]["values_outside_range"] = 43953;
    const std::string exact = nhvk::render_report(s.dump(), csv);
    EXPECT_EQ(exact.find("histogram's resolved window"), std::string::npos);
    EXPECT_EQ(exact.find("43953"), std::string::npos);
    EXPECT_NE(exact.find("no histogram: none lies outside its range"), std::string::npos);
    s["statistics"]["quantiles"] = "histogram";
    const std::string hist = nhvk::render_report(s.dump(), csv);
    EXPECT_NE(hist.find("values below the histogram's resolved window: 43953"), std::string::npos);
    EXPECT_EQ(hist.find("no histogram"), std::string::npos);
}

// Every metric of the table is drawn in the plot of its group, whose axis title carries the metric's unit, beside
// metrics of that unit only; balance_nh, divided by the energy scale, on a dimensionless axis and not beside the
// energy drifts. The run's rows are replaced by positive synthetic ones so that every metric is drawn on a log axis.
TEST_F(Report, EachMetricIsPlottedWithItsGroupOnAnAxisOfItsUnit) {
    ASSERT_EQ(rc_, 0) << err_;
    const std::string summary = read_text(out_ / "summary.json");
    const std::size_t nt = nhvk_test::read_json(out_ / "summary.json")["times"].size();
    nhvk_test::Csv table = nhvk_test::parse_csv(read_text(out_ / "stats.csv"));
    std::string csv = "time_index,t,metric,count,nonfinite,mean,std,min,max,p01,p05,p25,p50,p75,p95,p99,outside_range,"
                      "alive_fraction\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        std::vector<std::string> row = table.rows[r];
        for (std::size_t c = 5; c < 16; ++c) row[c] = "1e-3";
        // the statistics' 18 columns only: the report reads its columns by name and needs no error bars
        for (std::size_t c = 0; c < 18; ++c) csv += (c ? "," : "") + row[c];
        csv += "\n";
    }
    const std::string page = nhvk::render_report(summary, csv);
    EXPECT_EQ(xml_problem(page), "");
    for (const nhvk::MetricInfo& d : nhvk::metric_table) {
        SCOPED_TRACE(d.name);
        const bool divergence = d.group == nhvk::MetricGroup::divergence;
        const std::string svg =
            svg_with_id(page, "plot-" + std::string(divergence ? d.name : nhvk::metric_group_info(d.group).key));
        ASSERT_FALSE(svg.empty());
        const std::string median = divergence ? "median" : "median metric-" + std::string(d.name);
        EXPECT_EQ(polyline_points(svg, median), static_cast<int>(nt));
        EXPECT_NE(y_title(svg).find(nhvk::metric_unit_info(d.unit).description), std::string::npos) << y_title(svg);
        for (const nhvk::MetricInfo& other : nhvk::metric_table)
            if (other.unit != d.unit)
                EXPECT_EQ(polyline_points(svg, "median metric-" + std::string(other.name)), -1)
                    << other.name << " (" << nhvk::metric_unit_info(other.unit).key << ") on the same axis";
    }
    const std::string balance = svg_with_id(page, "plot-balance");
    EXPECT_NE(y_title(balance).find("dimensionless"), std::string::npos) << y_title(balance);
    EXPECT_EQ(y_title(balance).find("energy units"), std::string::npos) << y_title(balance);
    EXPECT_EQ(polyline_points(balance, "median metric-energy_nh"), -1);
}

/** How often `needle` occurs in `hay`. */
int count_of(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

/** The x-axis tick labels of a plot: the texts drawn just below its frame (the frame's bottom is at y = 330). */
std::vector<std::string> x_ticks(const std::string& svg) {
    std::vector<std::string> out;
    const std::string mark = "\" y=\"348\" text-anchor=\"middle\">";
    for (std::size_t p = svg.find(mark); p != std::string::npos; p = svg.find(mark, p + 1)) {
        const std::size_t a = p + mark.size();
        out.push_back(svg.substr(a, svg.find("</text>", a) - a));
    }
    return out;
}

/** A real two-axis product sweep (a list axis of 2 values, a linear range of 3) shared by the sweep tests; its
 *  summary.json is edited in memory for the cases a run does not produce. */
struct ProductSweepRun {
    static constexpr const char* prefix = "nhvk_report_sweep_";
    static constexpr const char* config = "tests/host/data/sweep_product.toml";
    static std::vector<std::string> args() { return {}; }
};

class ReportSweep : public SharedRun<ProductSweepRun> {
protected:
    static nlohmann::json summary() { return nhvk_test::read_json(out_ / "summary.json"); }
    static std::string render(const nlohmann::json& s) {
        return nhvk::render_report(s.dump(), read_text(out_ / "stats.csv"));
    }
    /** The ReportInputError message of rendering `s` (empty: none thrown). */
    static std::string error_of(const nlohmann::json& s) {
        try {
            render(s);
        } catch (const nhvk::ReportInputError& e) {
            return e.what();
        }
        return "";
    }
};

TEST_F(ReportSweep, RunsPageHasTheSweepSectionPlotsPerAxisAndHeatMaps) {
    ASSERT_EQ(rc_, 0) << err_;
    const std::string page = read_text(out_ / "report.html");
    EXPECT_EQ(xml_problem(page), "");
    EXPECT_EQ(nhvk::render_report(out_), page) << "nhvk report renders the same bytes from the folder";
    const nlohmann::json s = summary();
    const nlohmann::json& sw = s["sweep"];
    ASSERT_EQ(sw["axes"].size(), 2u);
    const std::size_t np = sw["points"].size(), n0 = sw["axes"][0]["values"].size(),
                      n1 = sw["axes"][1]["values"].size();
    ASSERT_EQ(np, n0 * n1);
    const std::size_t sweep_at = page.find("<h2>Sweep</h2>");
    ASSERT_NE(sweep_at, std::string::npos);
    EXPECT_LT(sweep_at, page.find("<h2>Trajectories")) << "the sweep comes before the pooled sections";
    const std::string pooled = " (pooled over the sweep's " + std::to_string(np) + " points)</h2>";
    for (const char* h :
         {"<h2>Trajectories", "<h2>Divergence of the nonholonomic and vakonomic motions", "<h2>Diagnostics"})
        EXPECT_NE(page.find(h + pooled), std::string::npos) << h;
    // Each point's row in the table, with its exponent.
    for (const auto& pt : sw["points"]) {
        const double p = pt["growth_exponent"]["q"]["exponent"].get<double>();
        char b[32];
        std::snprintf(b, sizeof b, "%.6g", p);
        EXPECT_NE(page.find("<tr><td>" + std::to_string(pt["index"].get<int>()) + "</td>"), std::string::npos);
        EXPECT_NE(page.find(std::string("<td>") + b + " ["), std::string::npos) << b;
    }
    // Per axis: the other axis' values are the series (one polyline each, through every value of this axis).
    for (std::size_t a = 0; a < 2; ++a) {
        SCOPED_TRACE(a);
        const std::size_t own = a == 0 ? n0 : n1, other = a == 0 ? n1 : n0;
        const std::string id = "plot-sweep-" + std::to_string(a) + "-";
        for (const char* k : {"exponent", "amplitude", "failure"}) {
            const std::string svg = svg_with_id(page, id + k);
            ASSERT_FALSE(svg.empty()) << k;
            EXPECT_EQ(count_of(svg, "<polyline class=\"sweep-series\""), static_cast<int>(other)) << k;
            EXPECT_EQ(polyline_points(svg, "sweep-series"), static_cast<int>(own)) << k;
        }
        EXPECT_EQ(count_of(svg_with_id(page, id + "exponent"), "class=\"error-bar\""), static_cast<int>(np))
            << "every point's exponent has its interval";
        EXPECT_EQ(count_of(page, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + id + "d_q-t"), 3)
            << "median d_q at three output times";
        // neither axis is log-spaced, and the list's 0.05 to 0.2 spans less than 1.5 decades: linear x ticks
        for (const std::string& t : x_ticks(svg_with_id(page, id + "exponent")))
            EXPECT_EQ(t.find("<tspan"), std::string::npos) << t;
    }
    for (const char* k : {"amplitude", "exponent"}) {
        const std::string heat = svg_with_id(page, std::string("plot-sweep-heat-") + k);
        ASSERT_FALSE(heat.empty()) << k;
        EXPECT_EQ(count_of(heat, "class=\"cell\""), static_cast<int>(np)) << k;
        EXPECT_GT(count_of(heat, "class=\"colour-bar\""), 0) << k;
    }
}

TEST_F(ReportSweep, LogAxesForLogSpacingAndWideLists) {
    ASSERT_EQ(rc_, 0) << err_;
    nlohmann::json s = summary();
    auto ticks = [&](std::size_t a) {
        return x_ticks(svg_with_id(render(s), "plot-sweep-" + std::to_string(a) + "-exponent"));
    };
    // A tick's value: "10<tspan …>k</tspan>" is 10^k; a real minus sign is U+2212.
    auto value = [](std::string t) {
        for (std::size_t p; (p = t.find("\u2212")) != std::string::npos;) t.replace(p, 3, "-");
        if (t.rfind("10<tspan", 0) == 0) {
            const std::size_t a = t.find('>') + 1;
            return std::pow(10.0, std::stod(t.substr(a, t.find("</tspan>") - a)));
        }
        return std::stod(t);
    };
    // A log axis: positive ticks whose steps grow (1, 2, 5 × 10^k or decades); a linear one has equal steps.
    auto log_axis = [&](const std::vector<std::string>& t) {
        if (t.size() < 3) return false;
        std::vector<double> v;
        for (const std::string& x : t) v.push_back(value(x));
        bool growing = v[0] > 0;
        for (std::size_t i = 2; i < v.size(); ++i) growing = growing && v[i] - v[i - 1] > 1.2 * (v[i - 1] - v[i - 2]);
        return growing;
    };
    ASSERT_FALSE(log_axis(ticks(1)));
    s["sweep"]["axes"][1]["spacing"] = "log";
    EXPECT_TRUE(log_axis(ticks(1))) << "a log-spaced axis is plotted on a log axis";
    // A list spanning more than 1.5 decades gets a log axis too; one spanning less does not.
    ASSERT_FALSE(log_axis(ticks(0)));
    const double low = s["sweep"]["points"][0]["values"]["mu_scale"].get<double>();
    for (auto& pt : s["sweep"]["points"])
        if (pt["values"]["mu_scale"].get<double>() == low) pt["values"]["mu_scale"] = 1e-3;
    EXPECT_TRUE(log_axis(ticks(0)));
}

// The report as the new user asked (issue 42 item 6): a swept parameter is shown as swept, not at the base
// value its points replace; a log axis follows its data's range in 1-2-5 steps instead of whole decades.
TEST_F(ReportSweep, ASweptParameterIsShownAsSweptAndLogAxesFollowTheData) {
    ASSERT_EQ(rc_, 0) << err_;
    nlohmann::json s = summary();
    s["model"]["params"] = {{"m", 1.5}, {"g", 9.81}};
    s["sweep"]["axes"][1]["key"] = "model.params.m";
    const std::string page = render(s);
    EXPECT_NE(page.find("m swept (axis initial.q.y.high)"), std::string::npos);
    EXPECT_EQ(page.find("m = 1.5"), std::string::npos) << "the base value of a swept parameter is not its value";
    EXPECT_NE(page.find("g = 9.81"), std::string::npos);
    // axis 0 (0.05 and 0.2) on a log axis: ticks at 0.05, 0.1, 0.2 (the data's range), no power of ten beyond it
    s["sweep"]["axes"][0]["spacing"] = "log";
    const std::vector<std::string> t = x_ticks(svg_with_id(render(s), "plot-sweep-0-exponent"));
    EXPECT_EQ(t, (std::vector<std::string>{"0.05", "0.1", "0.2"}));
    // the heat map says what its colours resolve: here exponents that differ by less than their intervals
    int k = 0;
    for (auto& pt : s["sweep"]["points"]) {
        pt["growth_exponent"]["q"]["exponent"] = 2.0 + 0.001 * k++;
        pt["growth_exponent"]["q"]["ci95"] = {1.9, 2.1};
    }
    const std::string heat = render(s);
    const std::size_t at = heat.find("Heat map: exponent p of d_q");
    ASSERT_NE(at, std::string::npos);
    EXPECT_NE(heat.find("less than a typical 95 % interval (median width 0.2): every difference between these cells "
                        "is within the sampling error",
                        at),
              std::string::npos);
}

TEST_F(Report, EnergyIsCalledAChangeWhereTheModelDoesNotConserveIt) {
    ASSERT_EQ(rc_, 0) << err_;
    nlohmann::json s = nhvk_test::read_json(out_ / "summary.json");
    const std::string stats = read_text(out_ / "stats.csv");
    ASSERT_TRUE(s["classification"]["system"]["energy_conserved"].get<bool>());
    std::string page = nhvk::render_report(s.dump(), stats);
    EXPECT_NE(page.find("<h3>Energy drift</h3>"), std::string::npos);
    EXPECT_EQ(page.find("Energy change"), std::string::npos);
    s["classification"]["system"]["energy_conserved"] = false;
    s["classification"]["system"]["lagrangian_time_dependent"] = true;
    page = nhvk::render_report(s.dump(), stats);
    EXPECT_EQ(page.find("Energy drift"), std::string::npos);
    EXPECT_NE(page.find("<h3>Energy change</h3>"), std::string::npos);
    EXPECT_NE(page.find("<h3>Relative energy change</h3>"), std::string::npos);
    EXPECT_NE(page.find("does not conserve the energy (summary.json classification: L depends on time)"),
              std::string::npos);
}

// Nothing is cut off at the picture's edge: a long y-axis title (d_v's unit) and a long legend entry (a fit's
// values) wrap into lines that fit their room.
TEST_F(Report, LongTitlesAndLegendEntriesWrapInsideThePicture) {
    ASSERT_EQ(rc_, 0) << err_;
    const std::string page = read_text(out_ / "report.html");
    const std::string dv = svg_with_id(page, "plot-d_v");
    ASSERT_FALSE(dv.empty());
    EXPECT_EQ(y_title(dv), "d_v (coordinate units per time unit, mixed over the coordinates)");
    std::size_t longest = 0, tspans = 0;
    for (std::size_t p = dv.find("<tspan x="); p != std::string::npos; p = dv.find("<tspan x=", p + 1)) {
        const std::size_t a = dv.find('>', p) + 1, e = dv.find("</tspan>", a);
        std::size_t n = 0; // characters, not UTF-8 bytes
        for (std::size_t i = a; i < e; ++i) n += (static_cast<unsigned char>(dv[i]) & 0xC0) != 0x80;
        longest = std::max(longest, n);
        ++tspans;
    }
    EXPECT_GE(tspans, 4u) << "the y title and the fit's legend entry each take two lines or more";
    EXPECT_LE(longest, 44u);
    // every legend text starts right of the frame, and no single-line text there runs past about 25 characters
    for (std::size_t p = dv.find("<text x=\"632\""); p != std::string::npos; p = dv.find("<text x=\"632\"", p + 1)) {
        const std::size_t a = dv.find('>', p) + 1, e = dv.find("</text>", a);
        const std::string t = dv.substr(a, e - a);
        if (t.find("<tspan") != std::string::npos) continue;
        std::size_t n = 0;
        for (const char c : t) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        EXPECT_LE(n, 25u) << t;
    }
}

TEST_F(Report, PlotsScaleToThePage) {
    ASSERT_EQ(rc_, 0) << err_;
    const std::string page = read_text(out_ / "report.html");
    EXPECT_NE(page.find("svg.plot{width:100%;height:auto;display:block}"), std::string::npos);
    EXPECT_EQ(page.find("max-width:820px"), std::string::npos);
    // every plot scales from its viewBox
    EXPECT_EQ(count_of(page, "<svg xmlns=\"http://www.w3.org/2000/svg\""), count_of(page, "viewBox=\""));
}

TEST_F(ReportSweep, MissingValuesSkippedOnePointAndRandomDesignsRender) {
    ASSERT_EQ(rc_, 0) << err_;
    nlohmann::json s = summary();
    const int own = static_cast<int>(s["sweep"]["axes"][0]["values"].size());
    // A null exponent (no fit at that point) leaves its marker out of the line.
    s["sweep"]["points"][0]["growth_exponent"]["q"]["exponent"] = nullptr;
    std::string page = render(s);
    EXPECT_EQ(xml_problem(page), "");
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-sweep-0-exponent"), "sweep-series"), own - 1);
    EXPECT_NE(page.find("1 value(s) missing"), std::string::npos);
    // One point: every plot still renders, one marker each.
    nlohmann::json one = summary();
    one["sweep"]["points"] = nlohmann::json::array({one["sweep"]["points"][0]});
    page = render(one);
    EXPECT_EQ(xml_problem(page), "");
    EXPECT_EQ(polyline_points(svg_with_id(page, "plot-sweep-0-amplitude"), "sweep-series"), 1);
    EXPECT_EQ(count_of(svg_with_id(page, "plot-sweep-heat-amplitude"), "class=\"cell\""), 1);
    // A random design: markers only (its order along one axis says nothing of the other), no heat map.
    s = summary();
    s["sweep"]["combine"] = "sobol";
    page = render(s);
    EXPECT_EQ(xml_problem(page), "");
    const std::string svg = svg_with_id(page, "plot-sweep-0-exponent");
    EXPECT_EQ(count_of(svg, "<polyline"), 0);
    EXPECT_GE(count_of(svg, "class=\"marker\""), static_cast<int>(s["sweep"]["points"].size()));
    EXPECT_TRUE(svg_with_id(page, "plot-sweep-heat-amplitude").empty());
    // A long sweep's table stops at 50 rows and says where the rest are.
    s = summary();
    while (s["sweep"]["points"].size() < 57) s["sweep"]["points"].push_back(s["sweep"]["points"][0]);
    page = render(s);
    EXPECT_NE(page.find("7 more points in <code>sweep_points.csv</code>"), std::string::npos);
}

TEST_F(ReportSweep, MalformedSweepNamesSummaryJsonAndTheField) {
    ASSERT_EQ(rc_, 0) << err_;
    auto broken = [&](const std::function<void(nlohmann::json&)>& edit) {
        nlohmann::json s = summary();
        edit(s);
        return error_of(s);
    };
    const struct {
        std::function<void(nlohmann::json&)> edit;
        std::string field;
    } cases[] = {
        {[](nlohmann::json& s) { s["sweep"] = 3; }, "'sweep'"},
        {[](nlohmann::json& s) { s["sweep"]["points"] = "none"; }, "'sweep.points'"},
        {[](nlohmann::json& s) { s["sweep"]["axes"] = nlohmann::json::array(); }, "'sweep.axes'"},
        {[](nlohmann::json& s) { s["sweep"]["axes"][1]["spacing"] = "cubic"; }, "'sweep.axes[1].spacing'"},
        {[](nlohmann::json& s) { s["sweep"]["points"][2]["values"].erase("mu_scale"); }, "'sweep.points[2].values'"},
        {[](nlohmann::json& s) { s["sweep"]["points"][1]["growth_exponent"]["q"]["exponent"] = "3"; },
         "'sweep.points[1].growth_exponent.q.exponent'"},
        {[](nlohmann::json& s) { s["sweep"]["points"][0]["onset"]["p50_ci95"] = {1.0}; },
         "'sweep.points[0].onset.p50_ci95'"},
        {[](nlohmann::json& s) { s["sweep"]["points"][0]["divergence"]["d_q"]["p50"].erase(0); },
         "'sweep.points[0].divergence.d_q.p50'"},
    };
    for (const auto& c : cases) {
        const std::string e = broken(c.edit);
        EXPECT_EQ(e.rfind("summary.json: field " + c.field + ": expected", 0), 0u) << c.field << ": " << e;
    }
}

TEST(ReportXmlCheck, FindsTheProblemsItLooksFor) {
    EXPECT_EQ(xml_problem("<!DOCTYPE html>\n<a x=\"1\"><b/>t &amp; u</a>\n"), "");
    EXPECT_NE(xml_problem("<a><b></a></b>"), "");
    EXPECT_NE(xml_problem("<a>x & y</a>"), "");
    EXPECT_NE(xml_problem("<a x=1></a>"), "");
    EXPECT_NE(xml_problem("<a>"), "");
    EXPECT_NE(xml_problem("<a>1 < 2</a>"), "");
}

} // namespace
