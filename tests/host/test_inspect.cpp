// SPDX-License-Identifier: MIT
// The constraint classification (include/nhvk/classify.hpp, `nhvk inspect`, summary.json's `classification`):
// every catalogue model gets the class docs/models.md and the model headers give it (derived by hand below), hand-made
// models cover the classes the catalogue lacks, and the CLI prints, refuses and records it.
//
// Hand derivations for the rows of the table that docs/models.md does not spell out:
// - pfaffian_particle, ω = −q2 dq1 + β q1 dq2 + dq3: dω = (1 + β) dq1∧dq2, ω∧dω = (1 + β) dq1∧dq2∧dq3: not
//   integrable for β ≠ −1 (default 0.5); at β = −1, ω = d(q3 − q1 q2): exact.
// - rigid_pair, (p1 − p2)·(ṗ1 − ṗ2) = ½ d/dt |p1 − p2|²: exact, holonomic.
// - knife_edge, ω = sin φ dx − cos φ dy: ω∧dω = dx∧dφ∧dy ≠ 0; chaplygin_sleigh likewise: not integrable.
// - rolling_disc, ω1 = dx − R cos φ dθ, ω2 = dy − R sin φ dθ: each alone has ω∧dω = ±R sin/cos φ dx∧dφ∧dθ ≠ 0; on
//   D = span{∂φ, ∂θ + R cos φ ∂x + R sin φ ∂y}, (dω1, dω2)(∂φ, X) = R(sin φ, −cos φ): no constant combination
//   vanishes at every φ, so 0 integrable combinations.
// - parallel_velocities, φ1 = u_x w_y − u_y w_x (degree 2), φ2 = |u|² w_z − u_z (u·w) (degree 3): nonlinear.
// - Talamucci Ex. 2 (iv)-(vi), d = p1 − p2, s = ṗ1 + ṗ2, B the midpoint (derivations in the models' headers and
//   tests): midpoint_parallel imposes (ẑ × d)·s = 0 and (d × (ẑ × d))·s = 0, linear in v with coefficients in q; in
//   (B, d) the constraint is Ḃ = a d with ḋ free, and the brackets of ∂/∂d_j with d·∂/∂B give every ∂/∂B_j, so the
//   distribution is bracket-generating: no integrable combination; each equation alone fails ω∧dω = 0.
//   midpoint_perpendicular, ω = d·(dp1 + dp2) = 2 d·dB: ω∧dω = 4 Σ_{i≠j} d_j dB_j∧dd_i∧dB_i ≠ 0.
//   both_perpendicular, ω1 = d·dp1, ω2 = d·dp2: each fails ω∧dω = 0, the pair is not involutive, and exactly one
//   combination is integrable: ω1 − ω2 = d·dd = ½ d|d|².
// - every built-in model has an autonomous L and no applied force, so the energy is conserved exactly when every
//   constraint is homogeneous (all but ball_on_turntable, whose constraints are affine with Ω x, Ω y terms).
#include "inspect.hpp"
#include "nhvk/classify.hpp"
#include "nhvk_cli.hpp"
#include "registry.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// The catalogue: one row per model (more models are one line each).

struct Expected {
    std::string velocity;      ///< linear | affine | nonlinear
    double degree;             ///< −1: not homogeneous
    std::string integrability; ///< exact | integrating_factor | non_integrable | not_applicable
};

struct Row {
    std::string model;
    std::vector<std::string> params; ///< name=value, over the defaults
    std::vector<Expected> constraints;
    std::string integrable; ///< "true", "false" or "null"
    int combinations;       ///< −1: null
    bool energy_conserved;
    bool dynamics_must_coincide;
};

const Expected lin_nonint{"linear", 1, "non_integrable"};
const Expected lin_exact{"linear", 1, "exact"};

// clang-format off
const std::vector<Row> catalogue = {
    {"nh_particle",              {},            {lin_nonint},                                  "false", 0,  true,  false},
    {"heisenberg",               {},            {lin_nonint},                                  "false", 0,  true,  false},
    {"heisenberg",               {"sub_riemannian=true"}, {lin_nonint},                        "false", 0,  true,  false},
    {"rolling_disc",             {},            {lin_nonint, lin_nonint},                      "false", 0,  true,  false},
    {"rolling_disc",             {"alpha=0.4"}, {lin_nonint, lin_nonint},                      "false", 0,  true,  false},
    {"knife_edge",               {},            {lin_nonint},                                  "false", 0,  true,  false},
    {"chaplygin_sleigh",         {},            {lin_nonint},                                  "false", 0,  true,  false},
    {"ball_on_turntable",        {},            {{"affine", -1, "not_applicable"},
                                                 {"affine", -1, "not_applicable"}},            "false", -1, false, false},
    {"appell_hamel",             {},            {{"nonlinear", 1, "not_applicable"}},          "null",  -1, true,  false},
    {"perpendicular_velocities", {},            {{"nonlinear", 2, "not_applicable"}},          "null",  -1, true,  false},
    {"equal_speeds",             {},            {{"nonlinear", 1, "not_applicable"}},          "null",  -1, true,  false},
    {"sphere_holonomic",         {},            {lin_exact},                                   "true",  1,  true,  true},
    {"pfaffian_particle",        {},            {lin_nonint},                                  "false", 0,  true,  false},
    {"pfaffian_particle",        {"beta=-1"},   {lin_exact},                                   "true",  1,  true,  true},
    {"rigid_pair",               {},            {lin_exact},                                   "true",  1,  true,  true},
    {"parallel_velocities",      {},            {{"nonlinear", 2, "not_applicable"},
                                                 {"nonlinear", 3, "not_applicable"}},          "null",  -1, true,  false},
    {"midpoint_parallel",        {},            {lin_nonint, lin_nonint},                      "false", 0,  true,  false},
    {"midpoint_perpendicular",   {},            {lin_nonint},                                  "false", 0,  true,  false},
    {"both_perpendicular",       {},            {lin_nonint, lin_nonint},                      "false", 1,  true,  false},
};
// clang-format on

json classify_builtin(const Row& row) {
    const std::vector<nhvk::ModelInfo> reg = nhvk::model_registry();
    const nhvk::ModelInfo* info = nhvk::find_model(reg, row.model);
    EXPECT_NE(info, nullptr) << row.model;
    if (!info) return json::object();
    std::vector<double> p;
    for (const nhvk::ParamInfo& pi : info->params) p.push_back(pi.default_value);
    for (const std::string& a : row.params) {
        const std::string name = a.substr(0, a.find('=')), value = a.substr(a.find('=') + 1);
        const int i = info->param_index(name);
        EXPECT_GE(i, 0) << a;
        if (i >= 0) p[i] = value == "true" ? 1.0 : value == "false" ? 0.0 : std::stod(value);
    }
    return nhvk::classification_json(row.model, p);
}

void expect_row(const json& c, const Row& row) {
    ASSERT_EQ(c["constraints"].size(), row.constraints.size());
    for (std::size_t a = 0; a < row.constraints.size(); ++a) {
        SCOPED_TRACE("constraint " + std::to_string(a));
        const json& k = c["constraints"][a];
        const Expected& e = row.constraints[a];
        EXPECT_EQ(k["index"], a);
        EXPECT_EQ(k["velocity_dependence"], e.velocity);
        EXPECT_EQ(k["homogeneous"], e.degree >= 0);
        if (e.degree >= 0) EXPECT_EQ(k["degree"], e.degree);
        else EXPECT_TRUE(k["degree"].is_null());
        EXPECT_EQ(k["time_dependent"], false);
        EXPECT_EQ(k["integrability"], e.integrability);
    }
    const json& s = c["system"];
    EXPECT_EQ(s["integrable"].dump(), row.integrable);
    if (row.combinations < 0) EXPECT_TRUE(s["integrable_combinations"].is_null());
    else EXPECT_EQ(s["integrable_combinations"], row.combinations);
    EXPECT_EQ(s["energy_conserved"], row.energy_conserved);
    EXPECT_EQ(s["reactions_do_no_work"], row.energy_conserved); // no built-in model has ∂L/∂t or a force
    EXPECT_EQ(s["dynamics_must_coincide"], row.dynamics_must_coincide);
    EXPECT_FALSE(c["statements"].empty());
}

TEST(Inspect, EveryCatalogueModelGetsItsClass) {
    for (const Row& row : catalogue) {
        SCOPED_TRACE(row.model + (row.params.empty() ? "" : " " + row.params.front()));
        expect_row(classify_builtin(row), row);
    }
}

/** The parts of a classification that a verdict must agree with (issue 25 item 2; docs/physics.md §4.7). */
void expect_consistent(const json& c) {
    const json& s = c["system"];
    const std::size_t k = c["constraints"].size();
    bool all_linear = true, any_nonlinear = false, all_homogeneous = true, each_integrable = true;
    for (const json& x : c["constraints"]) {
        const std::string v = x["velocity_dependence"];
        all_linear = all_linear && v == "linear";
        any_nonlinear = any_nonlinear || v == "nonlinear";
        all_homogeneous = all_homogeneous && x["homogeneous"].get<bool>();
        each_integrable = each_integrable && x["integrability"] != "non_integrable";
        EXPECT_EQ(x["integrability"] != "not_applicable", v == "linear") << x;
        EXPECT_EQ(x["homogeneous"].get<bool>(), !x["degree"].is_null()) << x;
        if (v == "linear") EXPECT_EQ(x["degree"], 1) << "a linear constraint is homogeneous of degree 1: " << x;
    }
    // integrable: decided for linear constraints, never for nonlinear ones
    if (all_linear) EXPECT_FALSE(s["integrable"].is_null());
    if (any_nonlinear) EXPECT_TRUE(s["integrable"].is_null());
    EXPECT_EQ(s["integrable_combinations"].is_null(), !all_linear);
    // constraints each integrable make an integrable set; one constraint is the set
    if (all_linear && each_integrable) EXPECT_EQ(s["integrable"], true);
    if (all_linear && k == 1) EXPECT_EQ(s["integrable"], each_integrable);
    if (s["integrable"] == true) EXPECT_EQ(s["integrable_combinations"].get<int>() > 0, k > 0);
    EXPECT_EQ(s["dynamics_must_coincide"], s["integrable"] == true);
    EXPECT_EQ(s["reactions_do_no_work"], all_homogeneous);
    const bool may_conserve = all_homogeneous && !s["lagrangian_time_dependent"].get<bool>();
    if (s["has_force"] == false) EXPECT_EQ(s["energy_conserved"].get<bool>(), may_conserve);
    else if (s["energy_conserved"] == true) EXPECT_TRUE(may_conserve);
    // the statements say what the flags say
    std::string text;
    for (const json& st : c["statements"]) text += st.get<std::string>() + "\n";
    EXPECT_EQ(text.find("must coincide") != std::string::npos, s["dynamics_must_coincide"].get<bool>()) << text;
}

std::string format_double(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

/** The classification of `model` with parameter `i` (registry order) set to `value`, the others at their defaults. */
json classify_with(const nhvk::ModelInfo& info, int i, double value) {
    std::vector<double> p;
    for (const nhvk::ParamInfo& pi : info.params) p.push_back(pi.default_value);
    if (i >= 0) p[static_cast<std::size_t>(i)] = value;
    return nhvk::classification_json(info.name, p);
}

// No verdict contradicts its own parts, for every catalogue model with each parameter scaled from 1e-300 to 1e300
// within its range, and next to the degenerate value β = −1 of pfaffian_particle (issue 25 item 2).
TEST(Inspect, VerdictsNeverContradictTheirPartsAtAnyScale) {
    for (const nhvk::ModelInfo& info : nhvk::builtin_model_registry())
        for (int i = -1; i < static_cast<int>(info.params.size()); ++i) {
            const nhvk::ParamInfo* pi = i >= 0 ? &info.params[static_cast<std::size_t>(i)] : nullptr;
            if (pi && pi->is_bool) continue;
            const double base = pi && pi->default_value != 0.0 ? pi->default_value : 1.0;
            for (const double f : {1e-300, 1e-12, 1e-8, 1e-4, 1.0, 1e4, 1e8, 1e12, 1e300, -1e-8, -1.0, -1e8}) {
                if (!pi && f != 1.0) continue;
                if (pi && f < 0 && pi->domain != nhvk::ParamDomain::any) continue;
                SCOPED_TRACE(info.name + (pi ? " " + pi->name + " = " + std::to_string(base * f) : std::string()));
                expect_consistent(classify_with(info, i, base * f));
            }
        }
    const nhvk::ModelInfo* pf = nhvk::find_model(nhvk::model_registry(), "pfaffian_particle");
    ASSERT_NE(pf, nullptr);
    for (const double beta : {-0.99999999, -1.00000001, -1.0 + 1e-6, -1.0 + 1e-10, -1.0 + 1e-12, -1.0})
        for (const double m : {1e-8, 1.0, 1e8}) {
            SCOPED_TRACE("pfaffian_particle beta = " + std::to_string(beta) + ", m = " + std::to_string(m));
            json c = nhvk::classification_json("pfaffian_particle", {m, beta});
            expect_consistent(c);
        }
}

// Scaling any parameter of any catalogue model by 1e±12 (and by −1e±12 where it may be negative) leaves the class
// as it is at the defaults (the catalogue's first row of the model): every parameter of the catalogue sets a scale
// (a mass, a length, a rate, a stiffness, g, an inclination) or, for pfaffian_particle's β, a coefficient whose only
// special value is −1, so none changes the class away from its special values, which are all 0 or −1:
// ball_on_turntable's Ω = 0 (the turntable stops: linear), appell_hamel's a = 0 (ż = 0: exact) and β = −1 (exact),
// checked in SpecialParameterValuesChangeTheClass. The sampling box was fixed before (|v| ≤ 2): ball_on_turntable with
// Ω ≥ 1e12 was classed homogeneous of degree 0 and with a = 1e12 linear, appell_hamel with a ≤ 5e-13 linear and exact.
TEST(Inspect, VerdictsDoNotDependOnTheScaleOfAParameter) {
    for (const nhvk::ModelInfo& info : nhvk::builtin_model_registry()) {
        const Row* row = nullptr;
        for (const Row& r : catalogue)
            if (r.model == info.name && r.params.empty()) row = &r;
        ASSERT_NE(row, nullptr) << info.name;
        for (int i = 0; i < static_cast<int>(info.params.size()); ++i) {
            const nhvk::ParamInfo& pi = info.params[static_cast<std::size_t>(i)];
            if (pi.is_bool) continue;
            const double base = pi.default_value != 0.0 ? pi.default_value : 1.0;
            std::vector<double> factors = {1e-12, 1e12};
            if (pi.domain == nhvk::ParamDomain::any) factors.insert(factors.end(), {-1e-12, -1e12});
            for (const double f : factors) {
                SCOPED_TRACE(info.name + " " + pi.name + " = " + format_double(base * f));
                expect_row(classify_with(info, i, base * f), *row);
            }
        }
    }
    // the cases of issue 25 item 2, at and beyond the values that broke
    const std::vector<std::tuple<std::string, std::string, double>> cases = {
        {"ball_on_turntable", "Omega", 1e12},  {"ball_on_turntable", "Omega", 1e15},
        {"ball_on_turntable", "Omega", -1e14}, {"ball_on_turntable", "a", 1e12},
        {"ball_on_turntable", "a", 1e-12},     {"appell_hamel", "a", 5e-13},
        {"appell_hamel", "a", 1e-13},          {"appell_hamel", "a", -5e-13}};
    const std::vector<nhvk::ModelInfo> reg = nhvk::model_registry();
    for (const auto& [model, param, value] : cases) {
        const Row* row = nullptr;
        for (const Row& r : catalogue)
            if (r.model == model && r.params.empty()) row = &r;
        const nhvk::ModelInfo* info = nhvk::find_model(reg, model);
        ASSERT_TRUE(row && info) << model;
        SCOPED_TRACE(model + " " + param + " = " + format_double(value));
        expect_row(classify_with(*info, info->param_index(param), value), *row);
    }
}

// The parameter values where the physics changes: the class must change with them (so the test above is not passing
// by a classification that ignores its parameters).
TEST(Inspect, SpecialParameterValuesChangeTheClass) {
    const std::vector<nhvk::ModelInfo> reg = nhvk::model_registry();
    // Ω = 0: a ball rolling on a fixed plane, ẋ − a ω_y = 0, ẏ + a ω_x = 0: linear (degree 1) and still
    // nonholonomic (the ball can reach any position with any orientation)
    const nhvk::ModelInfo* ball = nhvk::find_model(reg, "ball_on_turntable");
    ASSERT_NE(ball, nullptr);
    const json b = classify_with(*ball, ball->param_index("Omega"), 0.0);
    for (const json& c : b["constraints"]) {
        EXPECT_EQ(c["velocity_dependence"], "linear") << c;
        EXPECT_EQ(c["degree"], 1) << c;
    }
    EXPECT_EQ(b["system"]["integrable"], false);
    EXPECT_EQ(b["system"]["energy_conserved"], true);
    // a = 0: ż = 0, exact; the system is holonomic and both dynamics must coincide
    const nhvk::ModelInfo* ah = nhvk::find_model(reg, "appell_hamel");
    ASSERT_NE(ah, nullptr);
    expect_row(classify_with(*ah, ah->param_index("a"), 0.0),
               Row{"appell_hamel", {"a=0"}, {lin_exact}, "true", 1, true, true});
}

TEST(Inspect, TheTableCoversEveryBuiltinModel) {
    for (const nhvk::ModelInfo& m : nhvk::builtin_model_registry()) {
        bool found = false;
        for (const Row& r : catalogue) found = found || r.model == m.name;
        EXPECT_TRUE(found) << m.name << " has no row in the classification table";
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Hand-made models: the classes the catalogue lacks.

template <int N, int K> struct TestModel : nhvk::ModelBase {
    static constexpr int n = N, k = K;
    static constexpr const char* name = "test";
    static constexpr bool angles[N] = {};
    template <class S> S lagrangian(const S*, const S* v, const S&) const {
        S L = S(0.0);
        for (int j = 0; j < N; ++j) L += S(0.5) * v[j] * v[j];
        return L;
    }
};

// φ = ẋ − y: affine (φ(q, 0) = −y), not homogeneous; its linear part dx is integrable, so whether the affine
// constraint is holonomic is left undecided; not homogeneous, so the reactions do work and E is not conserved.
struct Affine : TestModel<2, 1> {
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const { phi[0] = v[0] - q[1]; }
};

// φ = ẋ² + ẏ² − 1 (constant speed): nonlinear and not homogeneous.
struct NonlinearInhomogeneous : TestModel<2, 1> {
    template <class S> void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = v[0] * v[0] + v[1] * v[1] - 1.0;
    }
};

// φ = e^z (y ẋ + x ẏ): ω = e^z d(xy) is not closed (dω = e^z dz∧d(xy)), but ω∧dω = 0 and the integrating factor
// e^(−z) gives d(xy): integrable after an integrating factor.
struct IntegratingFactor : TestModel<3, 1> {
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = exp(q[2]) * (q[1] * v[0] + q[0] * v[1]);
    }
};

// φ = 2x ẋ + cos(y) ẏ + ż = d/dt (x² + sin y + z): exact.
struct Exact : TestModel<3, 1> {
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = 2.0 * q[0] * v[0] + cos(q[1]) * v[1] + v[2];
    }
};

// Talamucci Ex. 2 (vi): d = p1 − p2, φ1 = d·ṗ1, φ2 = d·ṗ2. Each alone is not integrable (dω1 = dω2 = Σ dp1_i∧dp2_i
// does not vanish on ker ω1), the pair is not (D is not involutive), but φ1 − φ2 = d·ḋ = ½ d/dt |d|² is exact:
// exactly one integrable combination, (1, −1).
struct BothPerpendicular : TestModel<6, 2> {
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        const S d[3] = {q[0] - q[3], q[1] - q[4], q[2] - q[5]};
        phi[0] = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
        phi[1] = d[0] * v[3] + d[1] * v[4] + d[2] * v[5];
    }
};

// φ = ẋ − t ẏ: linear, rheonomic; the homogeneity and the energy statements do not depend on the time dependence
// of φ (R·v = λ φ = 0 still).
struct Rheonomic : TestModel<2, 1> {
    template <class S> void constraints(const S*, const S* v, const S& t, S* phi) const { phi[0] = v[0] - t * v[1]; }
};

// nh_particle's constraint with a friction force F = −v (does work) or a gyroscopic one F = (−ẏ, ẋ, 0) (does none).
template <bool Friction> struct WithForce : TestModel<3, 1> {
    static constexpr bool has_force = true;
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const { phi[0] = v[2] - q[1] * v[0]; }
    template <class S> void force(const S*, const S* v, const S&, S* F) const {
        if (Friction) {
            for (int j = 0; j < 3; ++j) F[j] = -v[j];
        } else {
            F[0] = -v[1];
            F[1] = v[0];
            F[2] = 0.0;
        }
    }
};

// L = ½|v|² + t x: explicitly time-dependent.
struct TimeDependentL : TestModel<3, 1> {
    template <class S> S lagrangian(const S* q, const S* v, const S& t) const {
        return S(0.5) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + t * q[0];
    }
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const { phi[0] = v[2] - q[1] * v[0]; }
};

TEST(Inspect, HandMadeAffineConstraint) {
    const nhvk::Classification c = nhvk::classify(Affine{});
    EXPECT_EQ(c.constraints[0].velocity, nhvk::VelocityDependence::affine);
    EXPECT_FALSE(c.constraints[0].homogeneous);
    EXPECT_FALSE(c.constraints[0].degree.has_value());
    EXPECT_FALSE(c.constraints[0].time_dependent);
    EXPECT_EQ(c.constraints[0].integrability, nhvk::Integrability::not_applicable);
    EXPECT_FALSE(c.system.integrable.has_value());
    EXPECT_FALSE(c.system.reactions_do_no_work);
    EXPECT_FALSE(c.system.energy_conserved);
    EXPECT_FALSE(c.system.dynamics_must_coincide);
}

TEST(Inspect, HandMadeNonlinearInhomogeneousConstraint) {
    const nhvk::Classification c = nhvk::classify(NonlinearInhomogeneous{});
    EXPECT_EQ(c.constraints[0].velocity, nhvk::VelocityDependence::nonlinear);
    EXPECT_FALSE(c.constraints[0].homogeneous);
    EXPECT_EQ(c.constraints[0].integrability, nhvk::Integrability::not_applicable);
    EXPECT_FALSE(c.system.integrable.has_value());
    EXPECT_FALSE(c.system.integrable_combinations.has_value());
    EXPECT_FALSE(c.system.energy_conserved);
}

TEST(Inspect, HandMadeIntegratingFactor) {
    const nhvk::Classification c = nhvk::classify(IntegratingFactor{});
    EXPECT_EQ(c.constraints[0].velocity, nhvk::VelocityDependence::linear);
    EXPECT_EQ(c.constraints[0].degree.value_or(-1.0), 1.0);
    EXPECT_EQ(c.constraints[0].integrability, nhvk::Integrability::integrating_factor);
    EXPECT_EQ(c.system.integrable.value_or(!true), true);
    EXPECT_TRUE(c.system.dynamics_must_coincide);
}

TEST(Inspect, HandMadeExact) {
    const nhvk::Classification c = nhvk::classify(Exact{});
    EXPECT_EQ(c.constraints[0].integrability, nhvk::Integrability::exact);
    EXPECT_EQ(c.system.integrable.value_or(!true), true);
    EXPECT_EQ(c.system.integrable_combinations.value_or(-1), 1);
}

TEST(Inspect, NonIntegrablePairWithAnIntegrableCombination) {
    const nhvk::Classification c = nhvk::classify(BothPerpendicular{});
    ASSERT_EQ(c.constraints.size(), 2u);
    for (const nhvk::ConstraintClass& k : c.constraints) {
        EXPECT_EQ(k.velocity, nhvk::VelocityDependence::linear);
        EXPECT_EQ(k.integrability, nhvk::Integrability::non_integrable);
    }
    EXPECT_EQ(c.system.integrable.value_or(!false), false);
    EXPECT_EQ(c.system.integrable_combinations.value_or(-1), 1);
    ASSERT_EQ(c.system.combinations.size(), 1u);
    EXPECT_EQ(c.system.combinations[0], (std::vector<double>{1.0, -1.0}));
    EXPECT_FALSE(c.system.dynamics_must_coincide);
    bool said = false;
    for (const std::string& s : c.statements) said = said || s.find("phi0 - phi1") != std::string::npos;
    EXPECT_TRUE(said) << "no statement names the integrable combination phi0 - phi1";
}

// φ1 = ẋ, φ2 = ż − y ẋ, φ3 = φ1 + φ2 (rank 2). φ1 is exact; φ2 and φ3 = (1 − y) ẋ + ż are not integrable alone
// (ω∧dω = ±dx∧dy∧dz); together D = ker J = span{∂y} is 1-dimensional, hence involutive (x and z constant): integrable.
// Every c ∈ R³ has Σ c_ν dω_ν = 0 on D × D, but c = (1, 1, −1) is the trivial Σ c_ν ω_ν ≡ 0: 3 − 1 = 2 combinations.
struct RankDeficient : TestModel<3, 3> {
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[0];
        phi[1] = v[2] - q[1] * v[0];
        phi[2] = phi[0] + phi[1];
    }
};

TEST(Inspect, DependentConstraintsAreNotCountedAsCombinations) {
    const nhvk::Classification c = nhvk::classify(RankDeficient{});
    EXPECT_EQ(c.constraints[0].integrability, nhvk::Integrability::exact);
    EXPECT_EQ(c.constraints[1].integrability, nhvk::Integrability::non_integrable);
    EXPECT_EQ(c.constraints[2].integrability, nhvk::Integrability::non_integrable);
    EXPECT_EQ(c.system.integrable.value_or(false), true);
    EXPECT_EQ(c.system.integrable_combinations.value_or(-1), 2);
}

TEST(Inspect, TimeDependenceAndForces) {
    const nhvk::Classification r = nhvk::classify(Rheonomic{});
    EXPECT_TRUE(r.constraints[0].time_dependent);
    EXPECT_EQ(r.constraints[0].velocity, nhvk::VelocityDependence::linear);
    EXPECT_TRUE(r.system.energy_conserved);

    const nhvk::Classification friction = nhvk::classify(WithForce<true>{});
    EXPECT_TRUE(friction.system.has_force);
    EXPECT_FALSE(friction.system.energy_conserved);
    EXPECT_TRUE(friction.system.reactions_do_no_work);
    const nhvk::Classification gyro = nhvk::classify(WithForce<false>{});
    EXPECT_TRUE(gyro.system.energy_conserved);

    const nhvk::Classification tl = nhvk::classify(TimeDependentL{});
    EXPECT_TRUE(tl.system.lagrangian_time_dependent);
    EXPECT_FALSE(tl.system.energy_conserved);
    EXPECT_FALSE(tl.constraints[0].time_dependent);
}

// Three constraints written in coordinates whose units are scaled: x' = c x (and y' = c y), i.e. the same physics
// for every c: ż − y ẋ'/c (linear, not integrable), ẋ'/c − y (affine), ż − ½|(ẋ', ẏ')|/c (nonlinear, degree 1).
struct ScaledUnits : TestModel<3, 3> {
    double c = 1.0;
    template <class S> void constraints(const S* q, const S* v, const S&, S* phi) const {
        phi[0] = v[2] - q[1] * v[0] / S(c);
        phi[1] = v[0] / S(c) - q[1];
        phi[2] = v[2] - S(0.5) * sqrt(v[0] * v[0] + v[1] * v[1]) / S(c);
    }
    template <class T> bool in_velocity_chart(const T*, const T* v) const { return v[0] != 0.0 || v[1] != 0.0; }
};

TEST(Inspect, VerdictsDoNotDependOnTheUnitOfACoordinate) {
    auto classes = [](double c) {
        ScaledUnits m;
        m.c = c;
        const nhvk::Classification r = nhvk::classify(m);
        std::vector<std::string> out;
        for (const nhvk::ConstraintClass& k : r.constraints)
            out.push_back(std::string(nhvk::to_string(k.velocity)) + " " + (k.degree ? format_double(*k.degree) : "-") +
                          " " + nhvk::to_string(k.integrability));
        return out;
    };
    const std::vector<std::string> want = {"linear 1 non_integrable", "affine - not_applicable",
                                           "nonlinear 1 not_applicable"};
    for (const double c : {1.0, 1e-12, 1e12}) {
        SCOPED_TRACE("c = " + format_double(c));
        EXPECT_EQ(classes(c), want);
    }
}

TEST(Inspect, DeterministicForASeed) {
    EXPECT_EQ(classify_builtin(catalogue[0]).dump(), classify_builtin(catalogue[0]).dump());
}

// ---------------------------------------------------------------------------------------------------------------
// The command line.

using nhvk_test::CliRun;
namespace fs = std::filesystem;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_inspect_") {}
};

CliRun nhvk_cli(const std::vector<std::string>& args, const TempDir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

TEST(InspectCli, JsonForNhParticle) {
    TempDir tmp;
    const CliRun r = nhvk_cli({"inspect", "nh_particle", "--json"}, tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json c = json::parse(r.out);
    EXPECT_EQ(c["model"], "nh_particle");
    EXPECT_TRUE(c["params"].empty());
    EXPECT_GT(c["samples"].get<int>(), 100);
    expect_row(c, catalogue[0]);

    const CliRun text = nhvk_cli({"inspect", "pfaffian_particle", "--param", "beta=-1"}, tmp);
    ASSERT_EQ(text.rc, 0) << text.err;
    EXPECT_NE(text.out.find("exact"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("must coincide"), std::string::npos) << text.out;
}

TEST(InspectCli, BadInputExitsWithUsage) {
    TempDir tmp;
    const CliRun unknown = nhvk_cli({"inspect", "no_such_model"}, tmp);
    EXPECT_EQ(unknown.rc, 2);
    EXPECT_NE(unknown.err.find("unknown model 'no_such_model'"), std::string::npos) << unknown.err;
    EXPECT_TRUE(unknown.out.empty()) << unknown.out;
    const CliRun param = nhvk_cli({"inspect", "knife_edge", "--param", "mass=2"}, tmp);
    EXPECT_EQ(param.rc, 2);
    EXPECT_NE(param.err.find("has no parameter 'mass'"), std::string::npos) << param.err;
    const CliRun range = nhvk_cli({"inspect", "knife_edge", "--param", "m=-1"}, tmp);
    EXPECT_EQ(range.rc, 2);
    EXPECT_NE(range.err.find("--param m=-1: expected a number > 0"), std::string::npos) << range.err;
}

// A run's summary.json carries the classification at its parameters, and `nhvk merge` keeps it.
TEST(InspectCli, SummaryJsonHasClassification) {
    TempDir tmp;
    const std::string cfg = std::string(NHVK_SOURCE_DIR) + "/tests/host/data/ensemble/small.toml";
    const CliRun ins = nhvk_cli({"inspect", "nh_particle", "--json"}, tmp);
    ASSERT_EQ(ins.rc, 0) << ins.err;
    const json expected = json::parse(ins.out);
    std::vector<std::string> merge = {"merge"};
    for (int i = 0; i < 2; ++i) {
        const fs::path d = tmp.path() / ("shard" + std::to_string(i));
        const CliRun r = nhvk_cli({"run", cfg, "--out", d.string(), "--shard", std::to_string(i) + "/2", "-q"}, tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(nhvk_test::read_json(d / "summary.json")["classification"], expected);
        merge.push_back(d.string());
    }
    const fs::path merged = tmp.path() / "merged";
    merge.insert(merge.end(), {"--out", merged.string(), "-q"});
    const CliRun m = nhvk_cli(merge, tmp);
    ASSERT_EQ(m.rc, 0) << m.err;
    EXPECT_EQ(nhvk_test::read_json(merged / "summary.json")["classification"], expected);
}

} // namespace
