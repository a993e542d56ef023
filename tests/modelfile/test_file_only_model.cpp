// SPDX-License-Identifier: MIT
// A model that exists only as a file, models/driven_rolling_disc.toml (docs/models.md, "Models that exist only as
// files"): its nonholonomic motion against the closed form derived there by hand. It is the one model with
// generalized forces, so this is also the test that the format's `forces` enter the equations with their sign.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "modelfile/interpreted.hpp"
#include "modelfile/model_file.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "nhvk/status.hpp"

#ifndef NHVK_SOURCE_DIR
#error "tests/CMakeLists.txt defines NHVK_SOURCE_DIR"
#endif

namespace {

namespace fs = std::filesystem;
using cplx = std::complex<double>;

/** The disc's parameters (not the file's defaults, so that the values reach the compiled model as parameters). */
struct Disc {
    double m = 1.3, R = 0.4, tau = 0.7, c = 0.3;
};

/** The initial state: contact point, rolling angle and rate, heading and its (constant) rate. */
struct Start {
    double x, y, theta, theta_rate, phi, w;
};

/** The closed form of docs/models.md at time t: q = (x, y, θ, φ), v = (ẋ, ẏ, θ̇, φ̇). */
struct Exact {
    double q[4], v[4];
};

Exact closed_form(const Disc& d, const Start& s, double t) {
    const double K = 0.5 * d.m * d.R * d.R + d.m * d.R * d.R; // I + m R², I = m R²/2
    const double kappa = d.c / K, u = d.tau / d.c;
    const double decay = std::exp(-kappa * t);
    const double rate = u + (s.theta_rate - u) * decay;
    const cplx i(0.0, 1.0), turn = std::exp(i * s.phi);
    // ζ = x + i y, ζ̇ = R θ̇ e^{iφ}, φ = φ0 + ω t
    const cplx zeta =
        cplx(s.x, s.y) + d.R * turn *
                             (u * (std::exp(i * s.w * t) - 1.0) / (i * s.w) +
                              (s.theta_rate - u) * (std::exp((i * s.w - kappa) * t) - 1.0) / (i * s.w - kappa));
    const double phi = s.phi + s.w * t;
    Exact e;
    e.q[0] = zeta.real();
    e.q[1] = zeta.imag();
    e.q[2] = s.theta + u * t + (s.theta_rate - u) * (1.0 - decay) / kappa;
    e.q[3] = phi;
    e.v[0] = d.R * rate * std::cos(phi);
    e.v[1] = d.R * rate * std::sin(phi);
    e.v[2] = rate;
    e.v[3] = s.w;
    return e;
}

const std::string name = "driven_rolling_disc";

fs::path model_file() { return fs::path(NHVK_SOURCE_DIR) / "models" / (name + ".toml"); }

/** The model's trajectories with `ops` (the equations `kinds`) against the closed form. */
void follows_the_closed_form(const nhvk::ModelOps* ops, const std::vector<nhvk::EquationsKind>& kinds) {
    ASSERT_NE(ops, nullptr);
    const nhvk::ModelInfo info = ops->info();
    ASSERT_EQ(info.n, 4);
    ASSERT_EQ(info.k, 2);
    ASSERT_EQ(info.params.size(), 4u);

    const Disc disc;
    std::vector<double> params(4);
    const double values[] = {disc.m, disc.R, disc.tau, disc.c};
    const char* names[] = {"m", "R", "tau", "c"};
    for (int p = 0; p < 4; ++p) {
        const int i = info.param_index(names[p]);
        ASSERT_GE(i, 0) << names[p];
        params[static_cast<std::size_t>(i)] = values[p];
    }
    // Rolling rates well away from the terminal rate τ/c = 2.33 (from above, from below, backwards), headings that
    // turn either way.
    const Start starts[] = {
        {0.0, 0.0, 0.3, 6.0, 0.2, 1.1}, {1.0, -2.0, -1.0, -1.5, 2.5, -0.7}, {-0.5, 0.4, 2.0, 0.0, -1.2, 2.3}};
    std::vector<double> times;
    for (int i = 1; i <= 40; ++i) times.push_back(8.0 * i / 40);

    for (nhvk::EquationsKind eq : kinds)
        for (const Start& s : starts) {
            SCOPED_TRACE(std::string(eq == nhvk::EquationsKind::ad ? "ad" : "generated") +
                         ", theta'0 = " + std::to_string(s.theta_rate) + ", phi'0 = " + std::to_string(s.w));
            const Exact e0 = closed_form(disc, s, 0.0);
            nhvk::TrajectoryRequest req;
            req.model = name;
            req.params = params;
            req.q0.assign(e0.q, e0.q + 4);
            req.v0.assign(e0.v, e0.v + 4);
            req.mu0 = {0.0, 0.0};
            req.times = times;
            req.method = nhvk::Method::dopri5;
            req.equations = eq;
            req.ctl.rtol = 1e-12;
            req.ctl.atol = 1e-14;
            req.ctl.dt = 0.0;
            req.ctl.min_step = 1e-16;
            const nhvk::TrajectoryResult r = ops->trajectory_cpu(req);
            ASSERT_EQ(r.outcome.status, nhvk::Status::ok) << nhvk::status_name(r.outcome.status);
            ASSERT_EQ(r.rows, static_cast<int>(times.size()) + 1);
            double worst = 0.0, rate_change = 0.0, travel = 0.0;
            for (int row = 1; row < r.rows; ++row) {
                const double t = times[static_cast<std::size_t>(row - 1)];
                const Exact e = closed_form(disc, s, t);
                const double* q = &r.states[static_cast<std::size_t>(row) * r.row_size]; // q_NH, then v_NH
                for (int j = 0; j < 4; ++j) {
                    // NOTE: relative to max(1, |value|): θ grows with t. DOPRI5 at rtol 1e-12 keeps each step's error
                    // below ~1e-12 of the state; over the ~10³ steps to t = 8 that sums to ≲ 1e-9.
                    worst = std::max(worst, std::fabs(q[j] - e.q[j]) / std::max(1.0, std::fabs(e.q[j])));
                    worst = std::max(worst, std::fabs(q[4 + j] - e.v[j]) / std::max(1.0, std::fabs(e.v[j])));
                }
                rate_change = std::max(rate_change, std::fabs(q[4 + 2] - s.theta_rate));
                travel = std::max(travel, std::hypot(q[0] - s.x, q[1] - s.y));
            }
            std::printf("    [measured] closed-form error = %.3g (rolling rate changed by %.3g)\n", worst, rate_change);
            EXPECT_LT(worst, 1e-9);
            // Guards against a vacuous pass: the torque and the friction change the rolling rate by O(1) (a model
            // without forces keeps it), and the disc travels.
            EXPECT_GT(rate_change, 1.0);
            EXPECT_GT(travel, 0.5);
        }
}

TEST(FileOnlyModel, DrivenRollingDiscFollowsItsClosedForm) {
    EXPECT_EQ(nhvk::find_builtin_model_ops(name), nullptr) << "this model should exist only as a file";
    nhvk::modelfile::register_model(nhvk::modelfile::load_model_file(model_file().string()));
    follows_the_closed_form(nhvk::modelfile::find_ops(name), {nhvk::EquationsKind::generated, nhvk::EquationsKind::ad});
}

// Where no C++ compiler runs, the file is interpreted: the same closed form (the interpreter integrates the reference
// equations whatever the request asks).
TEST(FileOnlyModel, InterpretedDrivenRollingDiscFollowsItsClosedForm) {
    const nhvk::ModelOps ops =
        nhvk::modelfile::interpreted_ops(nhvk::modelfile::load_model_file(model_file().string()));
    follows_the_closed_form(&ops, {nhvk::EquationsKind::generated, nhvk::EquationsKind::ad});
}

} // namespace
