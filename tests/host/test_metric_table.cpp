// SPDX-License-Identifier: MIT
// The metric table (include/nhvk/metrics.hpp) describes every metric of the enum, and README.md's metric table lists
// the same metrics with the same paths, units, plots and definitions, both ways (as test_config_schema.cpp holds the
// config reference to the loader's schema).
#include "ensemble.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string readme_text() {
    std::ifstream in(std::string(NHVK_SOURCE_DIR) + "/README.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/** The cells of a Markdown table row (`| a | b \| c |` → {"a", "b | c"}), trimmed; empty for a non-row. */
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') return out;
    std::string cur;
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
            cur += '|';
            ++i;
        } else if (line[i] == '|') {
            const std::size_t a = cur.find_first_not_of(' '), b = cur.find_last_not_of(' ');
            out.push_back(a == std::string::npos ? "" : cur.substr(a, b - a + 1));
            cur.clear();
        } else {
            cur += line[i];
        }
    }
    return out;
}

std::string unquote(const std::string& s) {
    return s.size() >= 2 && s.front() == '`' && s.back() == '`' ? s.substr(1, s.size() - 2) : s;
}

/** The rows of the table in README.md's "### Metrics" section, in order (header and rule left out). */
std::vector<std::vector<std::string>> readme_metric_rows() {
    const std::string text = readme_text();
    const std::size_t at = text.find("\n### Metrics\n");
    std::vector<std::vector<std::string>> rows;
    if (at == std::string::npos) return rows;
    std::istringstream in(text.substr(at + 1, text.find("\n### ", at + 1) - at - 1));
    bool header = true;
    for (std::string line; std::getline(in, line);) {
        const std::vector<std::string> c = cells(line);
        if (c.empty()) continue;
        if (header || c[0].rfind("---", 0) == 0) {
            header = false;
            continue;
        }
        rows.push_back(c);
    }
    return rows;
}

TEST(MetricTable, DescribesEveryMetricOfTheEnum) {
    std::set<std::string> names, paths;
    std::map<nhvk::MetricGroup, nhvk::MetricUnit> unit_of_group;
    for (int m = 0; m < nhvk::metric_count; ++m) {
        const nhvk::MetricInfo& d = nhvk::metric_info(m);
        SCOPED_TRACE(m);
        EXPECT_EQ(d.id, m) << "the rows in the order of the enum";
        ASSERT_NE(d.name, nullptr);
        ASSERT_NE(d.statistics, nullptr);
        ASSERT_NE(d.label, nullptr);
        ASSERT_NE(d.definition, nullptr);
        EXPECT_STREQ(nhvk::metric_name(m), d.name);
        EXPECT_TRUE(names.insert(d.name).second) << "two metrics named " << d.name;
        EXPECT_TRUE(paths.insert(d.statistics).second) << "two metrics at " << d.statistics;
        if (d.max) EXPECT_TRUE(paths.insert(d.max).second) << "two values at " << d.max;
        // stats.csv's reader (report.cpp) takes names of letters, digits and _
        EXPECT_EQ(std::string(d.name).find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos);
        EXPECT_NE(std::string(d.statistics).find('.'), std::string::npos) << "a series inside a section";
        EXPECT_GT(std::string(d.label).size(), std::string(d.name).size()) << "a label says more than the name";
        EXPECT_GT(std::string(d.definition).size(), 20u);
        EXPECT_NE(std::string(nhvk::metric_unit_info(d.unit).description), "");
        EXPECT_NE(std::string(nhvk::metric_group_info(d.group).heading), "");
        // the metrics of a group share a plot, hence an axis, hence a unit (the divergences have a plot each)
        if (d.group == nhvk::MetricGroup::divergence) continue;
        const auto [it, first] = unit_of_group.emplace(d.group, d.unit);
        EXPECT_TRUE(first || it->second == d.unit) << d.name << " has another unit than its group";
    }
    EXPECT_STREQ(nhvk::metric_name(nhvk::metric_count + nhvk::member_onset_time), "onset_time");
    EXPECT_STREQ(nhvk::metric_name(-1), "unknown");
}

// What the observer computes (member.hpp): the relative drifts and the balance residual are divided by the energy
// scale s, the reaction work is not. test_metric_units.cpp checks every unit against the observer by scaling L.
TEST(MetricTable, TheBalanceResidualIsDimensionlessAndTheWorkAnEnergy) {
    EXPECT_EQ(nhvk::metric_info(nhvk::metric_balance_nh).unit, nhvk::MetricUnit::dimensionless);
    EXPECT_EQ(nhvk::metric_info(nhvk::metric_energy_rel_nh).unit, nhvk::MetricUnit::dimensionless);
    EXPECT_EQ(nhvk::metric_info(nhvk::metric_work_nh).unit, nhvk::MetricUnit::energy);
    EXPECT_EQ(nhvk::metric_info(nhvk::metric_energy_nh).unit, nhvk::MetricUnit::energy);
}

TEST(MetricTable, ReadmeListsTheSameMetricsBothWays) {
    const std::vector<std::vector<std::string>> rows = readme_metric_rows();
    ASSERT_FALSE(rows.empty()) << "README.md: no table in a \"### Metrics\" section";
    std::map<std::string, std::vector<std::string>> documented;
    std::vector<std::string> order;
    for (const std::vector<std::string>& r : rows) {
        ASSERT_EQ(r.size(), 5u) << "README.md metric row: metric | summary.json | unit | plot | definition: " << r[0];
        documented[unquote(r[0])] = r;
        order.push_back(unquote(r[0]));
    }
    std::vector<std::string> table_order;
    for (const nhvk::MetricInfo& d : nhvk::metric_table) {
        table_order.push_back(d.name);
        const auto it = documented.find(d.name);
        if (it == documented.end()) {
            ADD_FAILURE() << "metric " << d.name << " is not in README.md's metric table";
            continue;
        }
        const std::vector<std::string>& r = it->second;
        EXPECT_EQ(unquote(r[1]), d.statistics) << d.name;
        EXPECT_EQ(r[2], nhvk::metric_unit_info(d.unit).description) << d.name;
        EXPECT_EQ(r[3], nhvk::metric_group_info(d.group).heading) << d.name;
        EXPECT_EQ(r[4], d.definition) << d.name;
    }
    for (const std::string& name : order) {
        bool known = false;
        for (const nhvk::MetricInfo& d : nhvk::metric_table) known = known || name == d.name;
        EXPECT_TRUE(known) << "README.md documents a metric '" << name << "' that nhvk does not write";
    }
    EXPECT_EQ(order, table_order) << "README.md lists the metrics in the order of stats.csv";
}

} // namespace
