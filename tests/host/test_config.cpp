// SPDX-License-Identifier: MIT
// Config loading (host/config.hpp): schema, defaults, time grids, overrides and error messages.
#include "config.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nhvk::ConfigError;
using nhvk::DistKind;
using nhvk::ModelInfo;
using nhvk::RunConfig;

/** Two made-up models: enough to resolve names, sizes, boolean parameters and error listings. */
std::vector<ModelInfo> registry() {
    ModelInfo particle;
    particle.name = "fake_particle";
    particle.description = "a particle in space with one constraint";
    particle.n = 3;
    particle.k = 1;
    particle.coords = {"x", "y", "z"};
    particle.angles = {false, false, false};
    particle.params = {{"m", 1.0, false, nhvk::ParamDomain::positive}, {"g", 9.81, false}, {"lock", 0.0, true}};
    ModelInfo top;
    top.name = "fake_top";
    top.description = "two coordinates, two constraints";
    top.n = 2;
    top.k = 2;
    top.coords = {"theta", "phi"};
    top.angles = {true, false};
    top.params = {{"I", 0.5, false, nhvk::ParamDomain::non_negative}};
    return {particle, top};
}

std::string data_dir() {
#ifdef NHVK_SOURCE_DIR // set by tests/CMakeLists.txt
    return std::string(NHVK_SOURCE_DIR) + "/tests/host/data";
#else
    return (std::filesystem::path(__FILE__).parent_path() / "data").string();
#endif
}
std::string data(const std::string& name) { return data_dir() + "/" + name; }

RunConfig load(const std::string& name, const std::vector<std::string>& sets = {}) {
    return nhvk::load_config(data(name), sets, registry());
}
RunConfig parse(const std::string& text, const std::vector<std::string>& sets = {}) {
    return nhvk::parse_config(text, "inline.toml", sets, registry());
}

/** The ConfigError thrown by `f`; fails the test if none is. */
template <class F> ConfigError error_of(F f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected a ConfigError, got another exception: " << e.what();
        return ConfigError("");
    }
    ADD_FAILURE() << "expected a ConfigError, nothing was thrown";
    return ConfigError("");
}

const char* minimal = "[model]\nname = \"fake_particle\"\n[times]\nt_end = 5.0\n";

/** resolved_json → a TOML document (nulls dropped), to load it again. */
void json_into_table(toml::table& t, const std::string& key, const nlohmann::json& j);
void json_into_array(toml::array& a, const nlohmann::json& j) {
    if (j.is_object()) {
        toml::table sub;
        for (auto it = j.begin(); it != j.end(); ++it) json_into_table(sub, it.key(), it.value());
        a.push_back(std::move(sub));
    } else if (j.is_boolean()) {
        a.push_back(j.get<bool>());
    } else if (j.is_number_integer()) {
        a.push_back(j.get<std::int64_t>());
    } else if (j.is_number_float()) {
        a.push_back(j.get<double>());
    } else if (j.is_string()) {
        a.push_back(j.get<std::string>());
    }
}
void json_into_table(toml::table& t, const std::string& key, const nlohmann::json& j) {
    if (j.is_null()) return;
    if (j.is_object()) {
        toml::table sub;
        for (auto it = j.begin(); it != j.end(); ++it) json_into_table(sub, it.key(), it.value());
        t.insert(key, std::move(sub));
    } else if (j.is_array()) {
        toml::array a;
        for (const auto& e : j) json_into_array(a, e);
        t.insert(key, std::move(a));
    } else if (j.is_boolean()) {
        t.insert(key, j.get<bool>());
    } else if (j.is_number_integer()) {
        t.insert(key, j.get<std::int64_t>());
    } else if (j.is_number_float()) {
        t.insert(key, j.get<double>());
    } else if (j.is_string()) {
        t.insert(key, j.get<std::string>());
    }
}
std::string json_to_toml(const nlohmann::json& j) {
    toml::table root;
    for (auto it = j.begin(); it != j.end(); ++it) json_into_table(root, it.key(), it.value());
    std::ostringstream os;
    os << root;
    return os.str();
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------
// Good configs

TEST(Config, FullConfigResolvesEveryField) {
    const RunConfig c = load("full.toml");
    EXPECT_EQ(c.source_path, data("full.toml"));
    EXPECT_EQ(c.model.name, "fake_particle");
    EXPECT_EQ(c.model.n, 3);

    ASSERT_EQ(c.params.size(), 3u);
    ASSERT_EQ(c.param_dists.size(), 3u);
    EXPECT_EQ(c.params[0], 2.5);
    EXPECT_EQ(c.param_dists[0], nhvk::make_fixed(2.5));
    EXPECT_EQ(c.param_dists[1], nhvk::make_uniform(9.0, 10.5));
    EXPECT_EQ(c.params[1], 9.75); // a swept parameter's entry is the centre of its distribution
    EXPECT_EQ(c.params[2], 1.0);  // lock = true
    EXPECT_EQ(c.param_dists[2], nhvk::make_fixed(1.0));

    EXPECT_EQ(c.t0, 0.5);
    ASSERT_TRUE(c.energy.has_value());
    EXPECT_EQ(*c.energy, -1.25);
    ASSERT_EQ(c.q0.size(), 3u);
    EXPECT_EQ(c.q0[0], nhvk::make_uniform(-1.0, 1.0));
    EXPECT_EQ(c.q0[1], nhvk::make_normal(0.0, 0.5));
    EXPECT_EQ(c.q0[2], nhvk::make_fixed(0.25));
    ASSERT_EQ(c.v0.size(), 3u);
    EXPECT_EQ(c.v0[0], nhvk::make_fixed(3.0));
    EXPECT_EQ(c.v0[1], nhvk::make_fixed(0.0));  // missing coordinate
    EXPECT_EQ(c.v0[2], nhvk::make_fixed(-2.0)); // an integer is a number
    ASSERT_EQ(c.mu0.size(), 1u);
    EXPECT_EQ(c.mu0[0], nhvk::make_normal(0.1, 0.01));

    EXPECT_EQ(c.integrator.method, nhvk::Method::rk4);
    EXPECT_EQ(c.integrator.rtol, 1e-8);
    EXPECT_EQ(c.integrator.atol, 1e-9);
    EXPECT_EQ(c.integrator.dt, 2e-4);
    EXPECT_EQ(c.integrator.min_step, 1e-12);
    EXPECT_EQ(c.integrator.max_steps, 50000);
    EXPECT_TRUE(c.integrator.project);
    EXPECT_EQ(c.integrator.precision, nhvk::Precision::f32);

    EXPECT_EQ(c.time_grid.t_end, 5.5);
    EXPECT_EQ(c.time_grid.spacing, nhvk::Spacing::log);
    EXPECT_EQ(c.time_grid.count, 40);
    EXPECT_EQ(c.time_grid.t_first, 0.501);
    ASSERT_EQ(c.times.size(), 40u);
    EXPECT_EQ(c.times.front(), 0.501);
    EXPECT_EQ(c.times.back(), 5.5);

    EXPECT_EQ(c.divergence_coords, (std::vector<int>{2, 0}));
    EXPECT_EQ(c.onset_threshold, 1e-2);
    EXPECT_EQ(c.growth_t_max, 0.75);

    EXPECT_EQ(c.run.trajectories, 10000);
    EXPECT_EQ(c.run.seed, 12345678901ULL);
    EXPECT_EQ(c.run.backend, nhvk::Backend::cuda);
    EXPECT_EQ(c.run.chunk, 4096);
    EXPECT_EQ(c.run.threads, 8);
    EXPECT_EQ(c.run.out, "out/full");
    EXPECT_EQ(c.run.exact_memory_mb, 512);
    EXPECT_EQ(c.run.save_trajectories, 16);
    EXPECT_TRUE(c.run.save_samples);
    EXPECT_TRUE(c.run.save_members);
    EXPECT_EQ(c.run.member_metrics, (std::vector<int>{nhvk::metric_dv, nhvk::metric_energy_nh}));
    EXPECT_EQ(c.run.members_deflate, 3);
}

TEST(Config, ResolvedJsonHasTheTomlLayout) {
    const nlohmann::json j = load("full.toml").resolved_json();
    EXPECT_EQ(j["model"]["name"], "fake_particle");
    EXPECT_EQ(j["model"]["params"]["m"], 2.5);
    EXPECT_EQ(j["model"]["params"]["g"], (nlohmann::json{{"dist", "uniform"}, {"low", 9.0}, {"high", 10.5}}));
    EXPECT_EQ(j["model"]["params"]["lock"], true);
    EXPECT_EQ(j["initial"]["q"]["y"], (nlohmann::json{{"dist", "normal"}, {"mean", 0.0}, {"std", 0.5}}));
    EXPECT_EQ(j["initial"]["v"]["y"], 0.0);
    EXPECT_EQ(j["initial"]["mu"].size(), 1u);
    EXPECT_EQ(j["integrator"]["method"], "rk4");
    EXPECT_EQ(j["integrator"]["precision"], "float");
    EXPECT_EQ(j["integrator"]["equations"], "generated");
    EXPECT_EQ(j["times"]["spacing"], "log");
    EXPECT_EQ(j["times"]["t_first"], 0.501);
    EXPECT_FALSE(j["times"].contains("list"));
    EXPECT_EQ(j["divergence"]["coordinates"], (nlohmann::json{"z", "x"}));
    // the fits as resolved: the growth law's window ends at growth_t_max, no rate unless asked for
    EXPECT_EQ(j["divergence"]["fit"]["statistic"], "median");
    EXPECT_EQ(j["divergence"]["fit"]["window"][1], j["divergence"]["growth_t_max"]);
    EXPECT_TRUE(j["divergence"]["fit"]["exponent"].is_null());
    EXPECT_TRUE(j["divergence"]["rate"].is_null());
    EXPECT_EQ(j["run"]["seed"], 12345678901ULL);
    EXPECT_EQ(j["run"]["backend"], "cuda");
    EXPECT_EQ(j["run"]["member_metrics"], (nlohmann::json{"d_v", "energy_nh"}));
    // Every section, every key.
    const std::vector<std::pair<std::string, std::size_t>> sizes = {
        {"model", 2},      {"initial", 5},    {"integrator", 9},  {"times", 4},
        {"divergence", 8}, {"statistics", 3}, {"diagnostics", 1}, {"run", 12}};
    EXPECT_EQ(j.size(), sizes.size());
    for (const auto& [section, n] : sizes) EXPECT_EQ(j[section].size(), n) << section;

    const nlohmann::json d = parse(minimal).resolved_json();
    EXPECT_TRUE(d["initial"]["energy"].is_null());
    EXPECT_EQ(d["run"]["backend"], "auto");
    EXPECT_EQ(d["times"]["count"], 50);
    EXPECT_FALSE(d["times"].contains("t_first"));
}

TEST(Config, ResolvedJsonLoadsBackToTheSameConfig) {
    const std::vector<RunConfig> configs = {
        load("full.toml"),
        load("minimal.toml"),
        // NOTE: dopri5 in float needs rtol >= 1e-6 (full.toml's 1e-8 is only accepted because rk4 ignores it)
        load("full.toml",
             {"integrator.method=\"dopri5\"", "integrator.rtol=1e-5", "initial.energy=0.0", "run.backend=cpu"}),
        parse("[model]\nname = \"fake_top\"\n[model.params]\nI = { dist = \"uniform\", low = 1, high = 2 }\n"
              "[initial]\nmu = [0.5, { dist = \"uniform\", low = -1, high = 1 }]\n"
              "[times]\nt_end = 2.0\nspacing = \"list\"\nlist = [0.5, 1, 2]\n"),
        parse(std::string(minimal) + "[divergence]\ncoordinates = [\"y\", \"z\"]\nweights = { z = 2.5 }\n"
                                     "metric = \"kinetic\"\nstop_at = 2.5\n[statistics]\npopulation = \"survivors\"\n"
                                     "low_population_fraction = 0.25\nreplicas = 7\n"
                                     "[diagnostics]\nbalance_tolerance = 1e-4\n"),
    };
    for (const RunConfig& a : configs) {
        const std::string text = json_to_toml(a.resolved_json());
        const RunConfig b = nhvk::parse_config(text, "roundtrip.toml", {}, registry());
        EXPECT_EQ(a.resolved_json(), b.resolved_json()) << text;
        EXPECT_EQ(a.times, b.times);
        EXPECT_EQ(a.params, b.params);
        EXPECT_EQ(a.param_dists, b.param_dists);
        EXPECT_EQ(a.q0, b.q0);
        EXPECT_EQ(a.v0, b.v0);
        EXPECT_EQ(a.mu0, b.mu0);
        EXPECT_EQ(a.divergence_coords, b.divergence_coords);
        EXPECT_EQ(a.divergence_weights, b.divergence_weights);
        EXPECT_EQ(a.divergence_kinetic, b.divergence_kinetic);
        EXPECT_EQ(a.alive_population, b.alive_population);
        EXPECT_EQ(a.low_population_fraction, b.low_population_fraction);
        EXPECT_EQ(a.replicas, b.replicas);
        EXPECT_EQ(a.stop_at, b.stop_at);
        EXPECT_EQ(a.balance_tolerance, b.balance_tolerance);
        EXPECT_EQ(a.energy, b.energy);
    }
}

TEST(Config, DefaultsFilledWhenAbsent) {
    const RunConfig c = load("minimal.toml");
    EXPECT_EQ(c.model.name, "fake_top");
    EXPECT_EQ(c.params, (std::vector<double>{0.5}));
    EXPECT_EQ(c.param_dists, (std::vector<nhvk::Distribution>{nhvk::make_fixed(0.5)}));
    EXPECT_EQ(c.t0, 0.0);
    EXPECT_FALSE(c.energy.has_value());
    EXPECT_EQ(c.q0, (std::vector<nhvk::Distribution>(2, nhvk::make_fixed(0.0))));
    EXPECT_EQ(c.v0, (std::vector<nhvk::Distribution>(2, nhvk::make_fixed(0.0))));
    EXPECT_EQ(c.mu0, (std::vector<nhvk::Distribution>(2, nhvk::make_fixed(0.0))));

    EXPECT_EQ(c.integrator.method, nhvk::Method::dopri5);
    EXPECT_EQ(c.integrator.rtol, 1e-10);
    EXPECT_EQ(c.integrator.atol, 1e-12);
    EXPECT_EQ(c.integrator.dt, 0.0);
    EXPECT_EQ(c.integrator.min_step, 1e-14);
    // the default step budget: 100000 + 1000 per output time (README, "Step limits"); 50 output times here
    EXPECT_EQ(c.integrator.max_steps, 100000 + 1000 * 50);
    EXPECT_FALSE(c.integrator.project);
    EXPECT_EQ(c.integrator.precision, nhvk::Precision::f64);

    EXPECT_EQ(c.time_grid.spacing, nhvk::Spacing::linear);
    EXPECT_EQ(c.time_grid.count, 50);
    EXPECT_EQ(c.times.size(), 50u);

    // fake_top has an angle (theta) and a length (phi): metres and radians are not mixed unless asked, so the default
    // leaves the angle out
    EXPECT_EQ(c.divergence_coords, (std::vector<int>{1}));
    EXPECT_EQ(c.divergence_weights, (std::vector<double>{1.0, 1.0}));
    EXPECT_FALSE(c.divergence_kinetic);
    EXPECT_TRUE(c.alive_population);
    EXPECT_EQ(c.balance_tolerance, 1e-6);
    EXPECT_EQ(c.onset_threshold, 1e-3);
    // the later of t0 + 5 % of the span (0.25) and the 4th output time (0.4)
    EXPECT_EQ(c.growth_t_max, 0.4);

    EXPECT_EQ(c.run.trajectories, 1000);
    EXPECT_EQ(c.run.seed, 1u);
    EXPECT_EQ(c.run.backend, nhvk::Backend::automatic);
    EXPECT_EQ(c.run.chunk, 65536);
    EXPECT_EQ(c.run.threads, 0);
    EXPECT_EQ(c.run.out, "nhvk_out");
    EXPECT_EQ(c.run.exact_memory_mb, 1024);
    EXPECT_EQ(c.run.save_trajectories, 0);
    EXPECT_FALSE(c.run.save_samples);
    EXPECT_FALSE(c.run.save_members);
    EXPECT_EQ(c.run.member_metrics, (std::vector<int>{nhvk::metric_dq, nhvk::metric_dv}));
    EXPECT_EQ(c.run.members_deflate, 0);

    // rk4's default step
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nmethod = \"rk4\"\n").integrator.dt, 1e-3);
}

TEST(Config, ParameterForms) {
    const RunConfig c = parse(std::string(minimal) + "[model.params]\nlock = 1\ng = { dist = \"normal\", mean = 9.8, "
                                                     "std = 0.1 }\n");
    EXPECT_EQ(c.params, (std::vector<double>{1.0, 9.8, 1.0}));
    EXPECT_EQ(c.param_dists[1], nhvk::make_normal(9.8, 0.1));
    EXPECT_EQ(c.param_dists[2], nhvk::make_fixed(1.0));
    // initial.mu as one table for all components, or a bare number
    const RunConfig top = parse("[model]\nname = \"fake_top\"\n[times]\nt_end = 1\n[initial.mu]\ndist = \"uniform\"\n"
                                "low = -1\nhigh = 1\n");
    EXPECT_EQ(top.mu0, (std::vector<nhvk::Distribution>(2, nhvk::make_uniform(-1.0, 1.0))));
    const RunConfig top2 = parse("[model]\nname = \"fake_top\"\n[times]\nt_end = 1\n[initial]\nmu = 0.5\n");
    EXPECT_EQ(top2.mu0, (std::vector<nhvk::Distribution>(2, nhvk::make_fixed(0.5))));
    // a float with an integral value is an integer
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nmax_steps = 1e7\n").integrator.max_steps, 10000000);
    // save_trajectories is capped at the number of trajectories
    EXPECT_EQ(parse(std::string(minimal) + "[run]\ntrajectories = 5\nsave_trajectories = 100\n").run.save_trajectories,
              5);
}

// ---------------------------------------------------------------------------------------------------------------
// Output times

TEST(Config, LinearTimes) {
    const RunConfig c = parse(std::string(minimal) + "count = 40\n");
    ASSERT_EQ(c.times.size(), 40u);
    for (int i = 1; i <= 40; ++i) EXPECT_DOUBLE_EQ(c.times[i - 1], 5.0 * i / 40.0) << i;
    EXPECT_EQ(c.times.back(), 5.0);

    // t0 itself is not an output time; t_i = t0 + (t_end − t0)·i/count
    const RunConfig d = parse(std::string(minimal) + "count = 3\n[initial]\nt0 = 2.0\n");
    ASSERT_EQ(d.times.size(), 3u);
    EXPECT_DOUBLE_EQ(d.times[0], 3.0);
    EXPECT_DOUBLE_EQ(d.times[1], 4.0);
    EXPECT_EQ(d.times[2], 5.0);

    const RunConfig one = parse(std::string(minimal) + "count = 1\n");
    EXPECT_EQ(one.times, (std::vector<double>{5.0}));
}

TEST(Config, LogTimes) {
    const RunConfig c = parse(std::string(minimal) + "spacing = \"log\"\ncount = 40\nt_first = 1e-3\n");
    ASSERT_EQ(c.times.size(), 40u);
    EXPECT_EQ(c.times.front(), 1e-3);
    EXPECT_EQ(c.times.back(), 5.0);
    for (int i = 0; i < 40; ++i) {
        const double expect = 1e-3 * std::pow(5000.0, i / 39.0);
        EXPECT_NEAR(c.times[i], expect, 1e-14 * expect) << i;
    }
    for (int i = 2; i < 40; ++i) // geometric: constant ratio
        EXPECT_NEAR(c.times[i] / c.times[i - 1], c.times[1] / c.times[0], 1e-12);

    // default t_first = t0 + (t_end − t0)·1e-3; geometric in the elapsed time t − t0
    const RunConfig d = parse(std::string(minimal) + "spacing = \"log\"\ncount = 3\n[initial]\nt0 = 1.0\n");
    EXPECT_DOUBLE_EQ(d.time_grid.t_first, 1.004);
    ASSERT_EQ(d.times.size(), 3u);
    EXPECT_DOUBLE_EQ(d.times[0], 1.004);
    EXPECT_DOUBLE_EQ(d.times[1], 1.0 + std::sqrt(0.004 * 4.0));
    EXPECT_EQ(d.times[2], 5.0);

    const RunConfig two = parse(std::string(minimal) + "spacing = \"log\"\ncount = 2\n");
    EXPECT_EQ(two.times, (std::vector<double>{5e-3, 5.0}));
}

TEST(Config, ListTimes) {
    const RunConfig c = parse(std::string(minimal) + "spacing = \"list\"\nlist = [0.1, 0.2, 5]\n");
    EXPECT_EQ(c.times, (std::vector<double>{0.1, 0.2, 5.0}));
    EXPECT_EQ(c.time_grid.count, 3);
    EXPECT_EQ(c.growth_t_max, 5.0); // fewer than 4 output times: the last one
}

TEST(Config, TimeKeysOfAnotherSpacingAreErrors) {
    const ConfigError e = error_of([] { parse(std::string(minimal) + "list = [1.0, 5.0]\n"); });
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.key(), "times.list");
    EXPECT_NE(std::string(e.what()).find("only used with spacing = \"list\""), std::string::npos) << e.what();
    const ConfigError f = error_of([] { parse(std::string(minimal) + "t_first = 1.0\n"); });
    EXPECT_EQ(f.key(), "times.t_first");
    const ConfigError g =
        error_of([] { parse(std::string(minimal) + "spacing = \"list\"\nlist = [5.0]\ncount = 3\n"); });
    EXPECT_EQ(g.key(), "times.count");
    EXPECT_EQ(g.line(), 7);
}

// ---------------------------------------------------------------------------------------------------------------
// Overrides

TEST(Config, OverridesReplaceValues) {
    const RunConfig c = load("full.toml", {"integrator.rtol=1e-9", "run.backend=\"cpu\"", "model.params.m=4",
                                           "initial.q.x={dist=\"normal\", mean=0, std=1}", "run.seed = 7",
                                           "divergence.coordinates=[\"y\"]", "integrator.project=false"});
    EXPECT_EQ(c.integrator.rtol, 1e-9);
    EXPECT_EQ(c.run.backend, nhvk::Backend::cpu);
    EXPECT_EQ(c.params[0], 4.0);
    EXPECT_EQ(c.q0[0], nhvk::make_normal(0.0, 1.0));
    EXPECT_EQ(c.run.seed, 7u);
    EXPECT_EQ(c.divergence_coords, (std::vector<int>{1}));
    EXPECT_FALSE(c.integrator.project);
    // untouched values stay
    EXPECT_EQ(c.integrator.atol, 1e-9);
    // a bare word is a string; later overrides win
    EXPECT_EQ(load("full.toml", {"run.backend=cuda", "run.backend=auto"}).run.backend, nhvk::Backend::automatic);
}

TEST(Config, OverridesCreateTables) {
    const RunConfig c = load("minimal.toml", {"divergence.onset_threshold=0.5",
                                              "initial.v.phi={dist=\"uniform\", "
                                              "low=0, high=1}",
                                              "model.params.I=2", "times.spacing=\"list\"", "times.list=[1, 2, 5]"});
    EXPECT_EQ(c.onset_threshold, 0.5);
    EXPECT_EQ(c.v0[1], nhvk::make_uniform(0.0, 1.0));
    EXPECT_EQ(c.params[0], 2.0);
    EXPECT_EQ(c.times, (std::vector<double>{1.0, 2.0, 5.0}));
    // even the required keys can come from --set
    const RunConfig d = nhvk::parse_config("", "empty.toml", {"model.name=\"fake_top\"", "times.t_end=2"}, registry());
    EXPECT_EQ(d.model.name, "fake_top");
    EXPECT_EQ(d.times.back(), 2.0);
}

TEST(Config, ErrorsInOverridesNameTheOverride) {
    const ConfigError e = error_of([] { load("minimal.toml", {"integrator.method=\"rk5\""}); });
    EXPECT_EQ(std::string(e.what()), "--set integrator.method=\"rk5\": integrator.method: expected \"dopri5\", "
                                     "\"rk4\", \"tsit5\", \"dop853\", \"rodas5p\" or \"midpoint\", got \"rk5\"");
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.key(), "integrator.method");

    const ConfigError bare = error_of([] { load("minimal.toml", {"integrator.method=rk5"}); });
    EXPECT_EQ(std::string(bare.what()).rfind("--set integrator.method=rk5: integrator.method:", 0), 0u) << bare.what();

    const ConfigError nested =
        error_of([] { load("minimal.toml", {"initial.q.phi={dist=\"normal\",mean=0,std=-1}"}); });
    EXPECT_EQ(std::string(nested.what())
                  .rfind("--set initial.q.phi={dist=\"normal\",mean=0,std=-1}: "
                         "initial.q.phi.std: expected std >= 0, got -1",
                         0),
              0u)
        << nested.what();

    const ConfigError typo = error_of([] { load("minimal.toml", {"integrator.rtoll=1"}); });
    EXPECT_EQ(std::string(typo.what()).rfind("--set integrator.rtoll=1: integrator.rtoll: unknown key", 0), 0u)
        << typo.what();

    const ConfigError syntax = error_of([] { load("minimal.toml", {"integrator.rtol=1e-"}); });
    EXPECT_NE(std::string(syntax.what()).find("--set integrator.rtol=1e-: integrator.rtol: cannot parse"),
              std::string::npos)
        << syntax.what();

    const ConfigError no_eq = error_of([] { load("minimal.toml", {"integrator.rtol"}); });
    EXPECT_EQ(std::string(no_eq.what()), "--set integrator.rtol: expected KEY=VALUE");

    const ConfigError not_table = error_of([] { load("minimal.toml", {"model.name.x=1"}); });
    EXPECT_NE(std::string(not_table.what()).find("model.name is \"fake_top\", not a table"), std::string::npos)
        << not_table.what();

    const ConfigError bad_key = error_of([] { load("minimal.toml", {"a..b=1"}); });
    EXPECT_NE(std::string(bad_key.what()).find("invalid key"), std::string::npos) << bad_key.what();

    // A table created by an override belongs to it too.
    const ConfigError created = error_of([] { load("minimal.toml", {"initial.q.phi.dist=\"normal\""}); });
    EXPECT_EQ(std::string(created.what())
                  .rfind("--set initial.q.phi.dist=\"normal\": initial.q.phi.mean: required key is missing", 0),
              0u)
        << created.what();

    const ConfigError two_values = error_of([] { load("minimal.toml", {"times.t_end=1\nx = 2"}); });
    EXPECT_NE(std::string(two_values.what()).find("expected a single TOML value"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------------
// Bad configs: file, line, column, key and what was expected

struct BadCase {
    const char* file;
    int line;
    int column; // 0: not checked
    const char* key;
    const char* message; // a substring of what()
};

void PrintTo(const BadCase& bc, std::ostream* os) { *os << bc.file; }

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, ErrorNamesFileLineAndKey) {
    const BadCase& bc = GetParam();
    const ConfigError e = error_of([&] { load(bc.file); });
    const std::string what = e.what();
    const std::string where = data(bc.file) + ":" + std::to_string(bc.line) + ":";
    EXPECT_EQ(what.rfind(where, 0), 0u) << what << "\n  should start with " << where;
    EXPECT_EQ(e.line(), bc.line) << what;
    if (bc.column) {
        EXPECT_EQ(e.column(), bc.column) << what;
    }
    EXPECT_EQ(e.key(), bc.key) << what;
    if (*bc.key) {
        EXPECT_NE(what.find(std::string(": ") + bc.key + ": "), std::string::npos) << what;
    }
    EXPECT_NE(what.find(bc.message), std::string::npos) << what << "\n  should contain " << bc.message;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadConfig,
    ::testing::Values(
        BadCase{"bad_syntax.toml", 5, 14, "", "TOML syntax error"},
        BadCase{"bad_method.toml", 10, 10, "integrator.method",
                "expected \"dopri5\", \"rk4\", \"tsit5\", \"dop853\", \"rodas5p\" or \"midpoint\", got \"rk5\""},
        BadCase{"bad_unknown_key.toml", 9, 1, "integrator.rtoll",
                "unknown key (did you mean \"rtol\"?); allowed keys: method, rtol, atol, dt, min_step, max_steps, "
                "project, precision"},
        BadCase{"bad_unknown_section.toml", 5, 0, "integrater",
                "allowed sections: model, initial, integrator, times, divergence, statistics, diagnostics, run"},
        BadCase{"bad_unknown_model.toml", 3, 8, "model.name",
                "unknown model \"fake_partcle\" (did you mean \"fake_particle\"?); known models: fake_particle, "
                "fake_top"},
        BadCase{"bad_unknown_coord.toml", 7, 1, "initial.q.w",
                "unknown coordinate; coordinates of model \"fake_particle\": x, y, z"},
        BadCase{"bad_unknown_param.toml", 5, 1, "model.params.mass",
                "unknown parameter; parameters of model \"fake_top\": I"},
        BadCase{"bad_negative_std.toml", 7, 42, "initial.v.y.std", "expected std >= 0, got -0.5"},
        BadCase{"bad_low_ge_high.toml", 6, 8, "model.params.g.high", "expected high > low = 2, got 1"},
        BadCase{"bad_rtol.toml", 7, 8, "integrator.rtol", "expected a number > 0, got 0"},
        BadCase{"bad_t_end.toml", 7, 9, "times.t_end", "expected t_end > t0 = 2, got 1.5"},
        BadCase{"bad_list.toml", 7, 9, "times.list[2]", "expected an output time > 0.2 (strictly increasing), got 0.2"},
        BadCase{"bad_mu_length.toml", 7, 6, "initial.mu",
                "exactly 2 entries (one per constraint of \"fake_top\"), "
                "got 3 entries"},
        BadCase{"bad_type.toml", 7, 16, "run.trajectories", "expected an integer, got \"many\""},
        BadCase{"bad_missing_t_end.toml", 4, 1, "times.t_end", "required key is missing"}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
        std::string name = info.param.file;
        name = name.substr(4, name.size() - 4 - 5); // bad_X.toml → X
        return name;
    });

TEST(Config, EveryBadFixtureIsTested) {
    // A fixture added to tests/host/data without a line in BadConfig would test nothing.
    const std::vector<std::string> listed = {
        "bad_syntax.toml",        "bad_method.toml",        "bad_unknown_key.toml",   "bad_unknown_section.toml",
        "bad_unknown_model.toml", "bad_unknown_coord.toml", "bad_unknown_param.toml", "bad_negative_std.toml",
        "bad_low_ge_high.toml",   "bad_rtol.toml",          "bad_t_end.toml",         "bad_list.toml",
        "bad_mu_length.toml",     "bad_type.toml",          "bad_missing_t_end.toml"};
    int found = 0;
    for (const auto& entry : std::filesystem::directory_iterator(data_dir())) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("bad_", 0) != 0) continue;
        ++found;
        EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end()) << name << " is not in BadConfig";
    }
    EXPECT_EQ(found, static_cast<int>(listed.size()));
}

struct InlineCase {
    const char* name;
    std::string text;
    int line;
    const char* key;
    const char* message;
};

void PrintTo(const InlineCase& ic, std::ostream* os) { *os << ic.name; }

class BadInline : public ::testing::TestWithParam<InlineCase> {};

TEST_P(BadInline, ErrorNamesLineAndKey) {
    const InlineCase& ic = GetParam();
    const ConfigError e = error_of([&] { parse(ic.text); });
    const std::string what = e.what();
    const std::string where = ic.line ? "inline.toml:" + std::to_string(ic.line) + ":" : "inline.toml: ";
    EXPECT_EQ(what.rfind(where, 0), 0u) << what << "\n  should start with " << where;
    EXPECT_EQ(e.line(), ic.line) << what;
    EXPECT_EQ(e.key(), ic.key) << what;
    EXPECT_NE(what.find(ic.message), std::string::npos) << what << "\n  should contain " << ic.message;
}

const std::string head = "[model]\nname = \"fake_particle\"\n[times]\nt_end = 5.0\n"; // 4 lines

INSTANTIATE_TEST_SUITE_P(
    Cases, BadInline,
    ::testing::Values(
        InlineCase{"missing_model", "[times]\nt_end = 1.0\n", 0, "model.name",
                   "required key is missing (known models: fake_particle, fake_top)"},
        InlineCase{"model_name_type", "[model]\nname = 3\n", 2, "model.name", "expected a string, got 3"},
        InlineCase{"section_not_table", "run = 5\n" + head, 1, "run", "expected a table, got 5"},
        InlineCase{"missing_times", "[model]\nname = \"fake_particle\"\n", 0, "times.t_end", "required key is missing"},
        InlineCase{"bool_param_number", head + "[model.params]\nlock = 2\n", 6, "model.params.lock",
                   "expected true or false (a boolean parameter), got 2"},
        InlineCase{"number_param_bool", head + "[model.params]\nm = true\n", 6, "model.params.m",
                   "expected a number or a distribution (not a boolean parameter), got true"},
        InlineCase{"dist_unknown_kind", head + "[initial.q]\nx = { dist = \"gauss\", mean = 0, std = 1 }\n", 6,
                   "initial.q.x.dist", "expected \"fixed\", \"uniform\" or \"normal\", got \"gauss\""},
        InlineCase{"dist_missing_kind", head + "[initial.q]\nx = { mean = 0, std = 1 }\n", 6, "initial.q.x.dist",
                   "required key is missing"},
        InlineCase{"dist_wrong_key", head + "[initial.q]\nx = { dist = \"normal\", mean = 0, sigma = 1 }\n", 6,
                   "initial.q.x.sigma", "allowed keys for dist = \"normal\": dist, mean, std"},
        InlineCase{"dist_missing_high", head + "[initial.q]\nx = { dist = \"uniform\", low = 0 }\n", 6,
                   "initial.q.x.high", "required key is missing (dist = \"uniform\" needs low and high)"},
        InlineCase{"dist_string", head + "[initial.v]\ny = \"fast\"\n", 6, "initial.v.y",
                   "expected a number or a distribution"},
        InlineCase{"non_finite", head + "[initial]\nenergy = nan\n", 6, "initial.energy",
                   "expected a finite number, got nan"},
        InlineCase{"mu_element", "[model]\nname = \"fake_top\"\n[times]\nt_end = 1\n[initial]\nmu = [0.0, \"a\"]\n", 6,
                   "initial.mu[1]", "expected a number or a distribution"},
        InlineCase{"mu_string", head + "[initial]\nmu = \"zero\"\n", 6, "initial.mu", "expected a distribution"},
        // issue 25 item 14: draws that cannot be finite numbers are refused when the config is loaded
        InlineCase{"uniform_too_wide", head + "[initial]\nmu = { dist = \"uniform\", low = -1e308, high = 1e308 }\n", 6,
                   "initial.mu.high", "expected a uniform whose width high − low is a finite number"},
        InlineCase{"normal_too_wide", head + "[initial]\nmu = { dist = \"normal\", mean = 0, std = 1e308 }\n", 6,
                   "initial.mu.std", "expected std with |mean| + 9·std a finite number"},
        InlineCase{"atol_negative", head + "[integrator]\natol = -1e-12\n", 6, "integrator.atol",
                   "expected a number > 0 (the error scale atol + rtol·|y| must not vanish), got -1e-12"},
        // issue 7: settings that cannot be honoured are refused, not run as something else
        InlineCase{"atol_zero", head + "[integrator]\natol = 0\n", 6, "integrator.atol", "expected a number > 0"},
        InlineCase{"rk4_steps_beyond_long_long", head + "[integrator]\nmethod = \"rk4\"\ndt = 1e-300\n", 7,
                   "integrator.dt",
                   // the default max_steps for this config's 50 output times: 100000 + 1000·50
                   "expected a step that reaches the last output time within integrator.max_steps = 150000 steps "
                   "(this one needs 5"},
        InlineCase{"rk4_steps_beyond_max_steps", head + "[integrator]\nmethod = \"rk4\"\ndt = 1e-3\nmax_steps = 4999\n",
                   7, "integrator.dt", "(this one needs 5000; raise dt or max_steps)"},
        InlineCase{"rtol_below_float", head + "[integrator]\nprecision = \"float\"\nrtol = 1e-10\n", 7,
                   "integrator.rtol", "the least precision = \"float\" can reach), got 1e-10"},
        InlineCase{"rtol_below_double", head + "[integrator]\nrtol = 1e-16\n", 6, "integrator.rtol",
                   "the least precision = \"double\" can reach), got 1e-16"},
        InlineCase{"negative_mass", head + "[model.params]\nm = -1\n", 6, "model.params.m",
                   "expected a number > 0 (the range of parameter m), got -1"},
        InlineCase{"zero_mass", head + "[model.params]\nm = 0\n", 6, "model.params.m", "expected a number > 0"},
        InlineCase{"mass_sweep_below_zero", head + "[model.params]\nm = { dist = \"uniform\", low = -1, high = 1 }\n",
                   6, "model.params.m.low", "expected a number > 0 (the range of parameter m), got -1"},
        // issue 25 item 14: a fixed distribution out of range is named by its value
        InlineCase{"mass_fixed_zero", head + "[model.params]\nm = { dist = \"fixed\", value = 0 }\n", 6,
                   "model.params.m.value", "expected a number > 0 (the range of parameter m), got 0"},
        InlineCase{"mass_sweep_normal", head + "[model.params]\nm = { dist = \"normal\", mean = 1, std = 0.1 }\n", 6,
                   "model.params.m.std", "a normal with std > 0 can draw any number; use a uniform"},
        InlineCase{"negative_inertia", "[model]\nname = \"fake_top\"\n[model.params]\nI = -0.5\n[times]\nt_end = 1\n",
                   4, "model.params.I", "expected a number >= 0 (the range of parameter I), got -0.5"},
        InlineCase{"memory_overflow", head + "[run]\nexact_memory_mb = 9223372036854775807\n", 6, "run.exact_memory_mb",
                   "expected an integer in [0, 1099511627776], got 9223372036854775807"},
        InlineCase{"rk4_dt_zero", head + "[integrator]\nmethod = \"rk4\"\ndt = 0.0\n", 7, "integrator.dt",
                   "expected a step > 0 (rk4), got 0"},
        InlineCase{"max_steps_fraction", head + "[integrator]\nmax_steps = 10.5\n", 6, "integrator.max_steps",
                   "expected an integer, got 10.5"},
        InlineCase{"precision", head + "[integrator]\nprecision = \"half\"\n", 6, "integrator.precision",
                   "expected \"double\" or \"float\", got \"half\""},
        InlineCase{"equations", head + "[integrator]\nequations = \"symbolic\"\n", 6, "integrator.equations",
                   "expected \"generated\" or \"ad\", got \"symbolic\""},
        InlineCase{"project_type", head + "[integrator]\nproject = 1\n", 6, "integrator.project",
                   "expected true or false, got 1"},
        InlineCase{"spacing", head + "spacing = \"geometric\"\n", 5, "times.spacing",
                   "expected \"linear\", \"log\" or \"list\", got \"geometric\""},
        InlineCase{"log_count", head + "spacing = \"log\"\ncount = 1\n", 6, "times.count",
                   "expected an integer in [2, 1000000] (log spacing), got 1"},
        InlineCase{"linear_count", head + "count = 0\n", 5, "times.count",
                   "expected an integer in [1, 1000000], got 0"},
        InlineCase{"t_first_range", head + "spacing = \"log\"\nt_first = 6.0\n", 6, "times.t_first",
                   "expected t0 = 0 < t_first < t_end = 5, got 6"},
        InlineCase{"times_collapse", head + "spacing = \"log\"\ncount = 1000000\nt_first = 4.9999999999\n", 3, "times",
                   "output times are not strictly increasing"},
        InlineCase{"list_missing", head + "spacing = \"list\"\n", 3, "times.list", "required key is missing"},
        InlineCase{"list_empty", head + "spacing = \"list\"\nlist = []\n", 6, "times.list",
                   "expected a non-empty array of output times"},
        InlineCase{"list_before_t0", head + "spacing = \"list\"\nlist = [0.0, 5.0]\n", 6, "times.list[0]",
                   "expected an output time > t0 = 0, got 0"},
        InlineCase{"list_last", head + "spacing = \"list\"\nlist = [1.0, 4.0]\n", 6, "times.list[1]",
                   "expected the last output time to equal t_end = 5, got 4"},
        InlineCase{"divergence_unknown_coord", head + "[divergence]\ncoordinates = [\"x\", \"w\"]\n", 6,
                   "divergence.coordinates[1]",
                   "unknown coordinate \"w\"; coordinates of model \"fake_particle\": "
                   "x, y, z"},
        InlineCase{"divergence_repeat", head + "[divergence]\ncoordinates = [\"x\", \"x\"]\n", 6,
                   "divergence.coordinates[1]", "listed twice"},
        InlineCase{"divergence_empty", head + "[divergence]\ncoordinates = []\n", 6, "divergence.coordinates",
                   "expected a non-empty array"},
        InlineCase{"weights_unknown_coord", head + "[divergence]\nweights = { w = 2.0 }\n", 6, "divergence.weights.w",
                   "unknown coordinate \"w\"; coordinates of model \"fake_particle\": x, y, z"},
        InlineCase{"weights_unlisted_coord", head + "[divergence]\ncoordinates = [\"x\"]\nweights = { y = 2.0 }\n", 7,
                   "divergence.weights.y", "coordinate \"y\" is not in divergence.coordinates"},
        InlineCase{"weights_zero", head + "[divergence]\nweights = { x = 0 }\n", 6, "divergence.weights.x",
                   "expected a number > 0, got 0"},
        InlineCase{"weights_not_table", head + "[divergence]\nweights = [1, 2]\n", 6, "divergence.weights",
                   "expected a table"},
        InlineCase{"metric", head + "[divergence]\nmetric = \"riemann\"\n", 6, "divergence.metric",
                   "expected \"euclidean\" or \"kinetic\", got \"riemann\""},
        InlineCase{"population", head + "[statistics]\npopulation = \"all\"\n", 6, "statistics.population",
                   "expected \"alive\" or \"survivors\", got \"all\""},
        InlineCase{"balance_tolerance", head + "[diagnostics]\nbalance_tolerance = 0\n", 6,
                   "diagnostics.balance_tolerance", "expected a number > 0, got 0"},
        InlineCase{"diagnostics_unknown_key", head + "[diagnostics]\nbalance = true\n", 6, "diagnostics.balance",
                   "allowed keys"},
        InlineCase{"onset", head + "[divergence]\nonset_threshold = 0\n", 6, "divergence.onset_threshold",
                   "expected a number > 0, got 0"},
        InlineCase{"growth", head + "[divergence]\ngrowth_t_max = -1\n", 6, "divergence.growth_t_max",
                   "expected a time > t0 = 0, got -1"},
        InlineCase{"trajectories", head + "[run]\ntrajectories = 0\n", 6, "run.trajectories",
                   "expected an integer >= 1, got 0"},
        InlineCase{"seed", head + "[run]\nseed = -1\n", 6, "run.seed", "expected an integer >= 0, got -1"},
        InlineCase{"backend", head + "[run]\nbackend = \"gpu\"\n", 6, "run.backend",
                   "expected \"cpu\", \"cuda\" or \"auto\", got \"gpu\""},
        InlineCase{"chunk", head + "[run]\nchunk = 0\n", 6, "run.chunk", "expected an integer >= 1, got 0"},
        InlineCase{"member_metrics_unknown", head + "[run]\nmember_metrics = [\"d_v\", \"dq\"]\n", 6,
                   "run.member_metrics[1]", "unknown metric \"dq\" (did you mean \"d_q\"?)"},
        InlineCase{"member_metrics_twice", head + "[run]\nmember_metrics = [\"d_v\", \"d_v\"]\n", 6,
                   "run.member_metrics[1]", "metric \"d_v\" is listed twice"},
        InlineCase{"member_metrics_empty", head + "[run]\nmember_metrics = []\n", 6, "run.member_metrics",
                   "expected a non-empty array of metric names"},
        InlineCase{"members_deflate", head + "[run]\nmembers_deflate = 10\n", 6, "run.members_deflate",
                   "expected an integer in [0, 9] (0: not compressed), got 10"},
        InlineCase{"threads", head + "[run]\nthreads = -2\n", 6, "run.threads", "expected an integer in [0, 65536]"},
        InlineCase{"out_empty", head + "[run]\nout = \"\"\n", 6, "run.out", "expected a non-empty folder name"},
        InlineCase{"memory", head + "[run]\nexact_memory_mb = -1\n", 6, "run.exact_memory_mb",
                   "expected an integer in [0, 1099511627776], got -1"},
        InlineCase{"save_trajectories", head + "[run]\nsave_trajectories = -1\n", 6, "run.save_trajectories",
                   "expected an integer >= 0, got -1"},
        InlineCase{"save_samples", head + "[run]\nsave_samples = \"yes\"\n", 6, "run.save_samples",
                   "expected true or false, got \"yes\""},
        InlineCase{"date", head + "[initial]\nt0 = 1979-05-27\n", 6, "initial.t0", "expected a number, got a date"}),
    [](const ::testing::TestParamInfo<InlineCase>& info) { return std::string(info.param.name); });

TEST(Config, MissingFile) {
    const ConfigError e = error_of([] { nhvk::load_config(data("no_such_file.toml"), {}, registry()); });
    EXPECT_EQ(std::string(e.what()),
              "cannot open config '" + data("no_such_file.toml") + "': No such file or directory");
    const ConfigError d = error_of([] { nhvk::load_config(data_dir(), {}, registry()); });
    EXPECT_EQ(std::string(d.what()), "cannot open config '" + data_dir() + "': is a directory");
}

// Defaults that a precision cannot honour are not defaults: float runs default to rtol = 1e-6 (1e-10 is below what
// float resolves); an explicit rtol is kept.
TEST(Config, FloatPrecisionDefaultsToAReachableRtol) {
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nprecision = \"float\"\n").integrator.rtol, 1e-6);
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nprecision = \"float\"\nrtol = 1e-5\n").integrator.rtol, 1e-5);
    // rk4 ignores rtol: any rtol > 0 is accepted with it
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nmethod = \"rk4\"\nprecision = \"float\"\nrtol = 1e-12\n")
                  .integrator.rtol,
              1e-12);
}

// The same for atol: a float run defaults to 1e-8 (rtol / 100, as in double), a double run keeps 1e-12, and an
// explicit atol is kept in either.
TEST(Config, FloatPrecisionDefaultsToAnAtolItCanResolve) {
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nprecision = \"float\"\n").integrator.atol, 1e-8);
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nprecision = \"double\"\n").integrator.atol, 1e-12);
    EXPECT_EQ(parse(std::string(minimal) + "[integrator]\nprecision = \"float\"\natol = 1e-12\n").integrator.atol,
              1e-12);
}

// A parameter in its range loads (the control of the range cases in BadInline).
TEST(Config, ParametersInTheirRangesLoad) {
    const RunConfig c = parse(std::string(minimal) + "[model.params]\nm = { dist = \"uniform\", low = 0.5, high = 2 }\n"
                                                     "g = -9.81\n");
    EXPECT_EQ(c.param_dists[0], nhvk::make_uniform(0.5, 2.0));
    EXPECT_EQ(c.params[1], -9.81);
    EXPECT_EQ(parse("[model]\nname = \"fake_top\"\n[model.params]\nI = 0\n[times]\nt_end = 1\n").params[0], 0.0);
}

// Command-line options (nhvk run --out, --seed, …) set their keys with the text as typed: a string is not parsed as
// TOML, a number is the number the whole text spells, an error names the option, and an empty value is an error.
TEST(Config, OptionOverridesTakeTheTextAsTypedAndNameTheOption) {
    using O = nhvk::OptionOverride;
    const std::string weird = "a\"b\\c = d.toml\n[run]";
    const RunConfig c = nhvk::parse_config(minimal, "inline.toml", {}, registry(),
                                           {O{"--out", "run.out", weird, true}, O{"--seed", "run.seed", "17", false},
                                            O{"--trajectories", "run.trajectories", "1e3", false}});
    EXPECT_EQ(c.run.out, weird);
    EXPECT_EQ(c.run.seed, 17u);
    EXPECT_EQ(c.run.trajectories, 1000);
    // applied after --set
    EXPECT_EQ(
        nhvk::parse_config(minimal, "inline.toml", {"run.seed=3"}, registry(), {O{"--seed", "run.seed", "4", false}})
            .run.seed,
        4u);
    const auto what = [&](const O& o) {
        return std::string(error_of([&] { nhvk::parse_config(minimal, "inline.toml", {}, registry(), {o}); }).what());
    };
    EXPECT_EQ(what(O{"--seed", "run.seed", "-1", false}), "--seed: run.seed: expected an integer >= 0, got -1");
    EXPECT_EQ(what(O{"--seed", "run.seed", "1; x", false}), "--seed: run.seed: expected an integer, got \"1; x\"");
    EXPECT_EQ(what(O{"--backend", "run.backend", "gpu", true}),
              "--backend: run.backend: expected \"cpu\", \"cuda\" or \"auto\", got \"gpu\"");
    EXPECT_EQ(what(O{"--out", "run.out", "", true}), "--out: expected a non-empty value, got ''");
    EXPECT_EQ(what(O{"--chunk", "run.chunk", "", false}), "--chunk: expected a non-empty value, got ''");
}

// A config file is read with a size limit: a bigger file is refused before it is parsed.
TEST(Config, OversizedConfigFileIsRefused) {
    const std::filesystem::path p = std::filesystem::temp_directory_path() / "nhvk_test_config_oversized.toml";
    {
        std::ofstream out(p, std::ios::binary);
        out << minimal << std::string(static_cast<std::size_t>(nhvk::max_config_bytes), '#') << "\n";
    }
    const ConfigError e = error_of([&] { nhvk::load_config(p.string(), {}, registry()); });
    EXPECT_NE(std::string(e.what()).find("is larger than 16 MiB"), std::string::npos) << e.what();
    std::filesystem::remove(p);
    // /dev/zero never ends: refused at the limit, not read forever
    if (std::filesystem::exists("/dev/zero")) {
        const ConfigError z = error_of([] { nhvk::load_config("/dev/zero", {}, registry()); });
        EXPECT_NE(std::string(z.what()).find("is larger than"), std::string::npos) << z.what();
    }
}

TEST(Config, ConfigErrorIsARuntimeErrorAndMapsToExitCode2) {
    static_assert(std::is_base_of_v<std::runtime_error, ConfigError>);
    EXPECT_EQ(nhvk::config_error_exit_code, 2);
    EXPECT_STREQ(nhvk::to_string(nhvk::Method::dopri5), "dopri5");
    EXPECT_STREQ(nhvk::to_string(nhvk::Precision::f32), "float");
    EXPECT_STREQ(nhvk::to_string(nhvk::Spacing::log), "log");
    EXPECT_STREQ(nhvk::to_string(nhvk::Backend::automatic), "auto");
}

// statistics.replicas: 0 (none) or 2 … 1000 groups; one group would give no spread, and the default is 10
TEST(Config, ReplicasAreZeroOrAtLeastTwo) {
    EXPECT_EQ(parse(minimal).replicas, 10);
    EXPECT_EQ(parse(std::string(minimal) + "[statistics]\nreplicas = 0\n").replicas, 0);
    for (const char* bad : {"1", "-3", "1001", "2.5"}) {
        const ConfigError e =
            error_of([bad] { parse(std::string(minimal) + "[statistics]\nreplicas = " + bad + "\n"); });
        EXPECT_NE(std::string(e.what()).find("statistics.replicas"), std::string::npos) << bad << ": " << e.what();
    }
}
