// SPDX-License-Identifier: MIT
// A physical law read off a sweep's own outputs (issue "Monte Carlo sweeps"): the nonholonomic centre of the ball on
// a turntable moves on a circle at the angular rate ν = k²Ω/(k² + a²) (docs/models.md; Lewis & Murray 1995), so its
// velocity (ẋ, ẏ) turns uniformly at ν with constant speed. A product sweep over Ω, k² and a runs in one job, each
// point saves a few trajectories, and the rate measured from each saved trajectory must be the law's at that point.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nhvk_test::CliRun;
using nhvk_test::Csv;

constexpr double pi = 3.14159265358979323846;
constexpr int members = 3; // per point, all saved
constexpr double t_end = 2.0;

// Ω of both signs (the sense of the orbit follows the table's), k² from a hollow-ish to a heavy-rim sphere, and
// a ≠ 1 so that k²/(k² + a²) is told apart from k²/(k² + 1). The vakonomic motions separate fast at large Ω, which
// t_end = 2 keeps within the step limit.
const std::string config = R"([model]
name = "ball_on_turntable"
[initial.q]
x = { dist = "uniform", low = -1.0, high = 1.0 }
y = { dist = "uniform", low = -1.0, high = 1.0 }
psi = { dist = "uniform", low = -3.14159, high = 3.14159 }
theta = { dist = "uniform", low = -1.0, high = 1.0 }
phi = { dist = "uniform", low = -3.14159, high = 3.14159 }
[initial.v]
psi = { dist = "normal", mean = 0.0, std = 1.0 }
theta = { dist = "normal", mean = 0.0, std = 1.0 }
phi = { dist = "normal", mean = 0.0, std = 1.0 }
[integrator]
method = "dopri5"
rtol = 1e-10
atol = 1e-12
[times]
t_end = 2.0
count = 40
[divergence]
coordinates = ["x", "y"]
[run]
trajectories = 3
save_trajectories = 3
seed = 7
[sweep]
combine = "product"
[[sweep.axes]]
key = "model.params.Omega"
values = [-2.0, 0.5, 3.0]
[[sweep.axes]]
key = "model.params.k2"
values = [0.1, 0.4, 2.5]
[[sweep.axes]]
key = "model.params.a"
values = [0.5, 1.5]
)";

/** The rate at which the direction of (ẋ, ẏ) turns, from its unwrapped angle at the first and last rows, and the
 *  largest departure of that angle from uniform turning at this rate; also the smallest speed seen. */
struct Turning {
    double rate = 0, worst_departure = 0, min_speed = 0;
};

Turning measure_turning(const Csv& c) {
    const std::size_t rows = c.rows.size();
    std::vector<double> t(rows), angle(rows);
    double min_speed = INFINITY;
    for (std::size_t r = 0; r < rows; ++r) {
        t[r] = std::stod(c.at(r, "t"));
        const double vx = std::stod(c.at(r, "nh_v0")), vy = std::stod(c.at(r, "nh_v1")); // coordinates x, y first
        min_speed = std::min(min_speed, std::hypot(vx, vy));
        double a = std::atan2(vy, vx);
        // unwrap: the output times are close enough that the direction turns by far less than π between rows
        if (r > 0) a += 2 * pi * std::round((angle[r - 1] - a) / (2 * pi));
        angle[r] = a;
    }
    Turning w;
    w.min_speed = min_speed;
    w.rate = (angle[rows - 1] - angle[0]) / (t[rows - 1] - t[0]);
    for (std::size_t r = 0; r < rows; ++r)
        w.worst_departure = std::max(w.worst_departure, std::abs(angle[r] - angle[0] - w.rate * (t[r] - t[0])));
    return w;
}

// Tolerance: the nonholonomic centre obeys the linear r'' = ν J r' (J the quarter turn), and DOPRI5 at rtol 1e-10,
// atol 1e-12 keeps each step's local error of (ẋ, ẏ) below about 1e-10 of its size, so each step turns the direction
// wrongly by at most about 1e-10 rad. Over the few hundred steps to t = 2 these add to at most a few 1e-8 rad, a rate
// error below 1e-8 over Δt ≥ 1. Measured: about 1e-13 (the errors do not add up on this linear rotation). The
// bound is 10^6 below the smallest difference a wrong law would make here (k²/(k² + 1) against k²/(k² + a²) at
// Ω = 0.5, k² = 2.5, a = 1.5: 0.05).
constexpr double rate_tolerance = 1e-8;

TEST(SweepPhysics, BallOrbitRateFollowsTheLawAtEveryPointOfAnOmegaK2RadiusSweep) {
    nhvk_test::TempDir tmp("nhvk_sweep_physics_");
    const fs::path cfg = tmp.path() / "orbit.toml";
    std::ofstream(cfg) << config;
    const fs::path out = tmp.path() / "out";
    const CliRun r =
        nhvk_test::run_captured("", NHVK_BINARY, {"run", cfg.string(), "--out", out.string(), "-q"}, tmp.path() / "io");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json points = nhvk_test::read_json(out / "summary.json")["sweep"]["points"];
    ASSERT_EQ(points.size(), 18u);
    double worst_error = 0;
    for (std::size_t p = 0; p < points.size(); ++p) {
        const nlohmann::json& v = points[p]["values"];
        const double omega = v.at("Omega").get<double>(), k2 = v.at("k2").get<double>(), a = v.at("a").get<double>();
        const double law = k2 * omega / (k2 + a * a);
        for (int i = 0; i < members; ++i) {
            // trajectory g is member g mod N of point g div N
            char name[64];
            std::snprintf(name, sizeof name, "trajectories/trajectory_%06d.csv", static_cast<int>(p) * members + i);
            SCOPED_TRACE(std::string(name) + " Omega=" + std::to_string(omega) + " k2=" + std::to_string(k2) +
                         " a=" + std::to_string(a));
            const Csv c = nhvk_test::read_csv(out / name);
            // t0 and 40 output times, fewer for a member whose vakonomic motion failed (chart_singular) before t_end
            ASSERT_GE(c.rows.size(), 11u);
            const Turning w = measure_turning(c);
            // a centre at rest has no direction to turn; the drawn states keep the speed away from 0 (the direction's
            // error is the velocity's error over the speed)
            ASSERT_GT(w.min_speed, 1e-3);
            EXPECT_NEAR(w.rate, law, rate_tolerance);
            EXPECT_LT(w.worst_departure, rate_tolerance) << "the velocity turns uniformly";
            worst_error = std::max(worst_error, std::abs(w.rate - law));
        }
    }
    std::cout << "[ orbit rate ] 18 points x " << members << " members: largest |measured - law| " << worst_error
              << '\n';
}

} // namespace
