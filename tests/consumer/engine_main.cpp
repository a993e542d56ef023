// SPDX-License-Identifier: MIT
// A program outside nhvk, built against the installed nhvk::engine (libnhvk.so; tests/consumer/check_consumer.sh):
// integrates the built-in nonholonomic particle through the engine's trajectory API, and checks the motion against
// the closed form (docs/models.md): on the nonholonomic side ẏ and C = ẋ √(1 + y²) stay constant and φ = ż − y ẋ
// stays zero. Exit 0 when they do.
#include <nhvk/backend/trajectory.hpp>

#include <cmath>
#include <cstdio>

#include "model_ops.hpp" // the engine's own header (include/nhvk/host)
#include "nhvk_version.hpp"

int main() {
    if (!nhvk::find_model_ops("nh_particle")) {
        std::fprintf(stderr, "the engine has no model nh_particle\n");
        return 1;
    }
    nhvk::TrajectoryRequest req;
    req.model = "nh_particle";
    const double x = 0.2, y = -0.4, vx = 0.9, vy = 0.3;
    req.q0 = {x, y, 0.1};
    req.v0 = {vx, vy, y * vx};
    req.mu0 = {0.0};
    for (int i = 1; i <= 50; ++i) req.times.push_back(0.1 * i);
    req.method = nhvk::Method::dopri5;
    req.ctl.rtol = 1e-11;
    req.ctl.atol = 1e-13;
    const nhvk::TrajectoryResult r = nhvk::run_trajectory_cpu(req);
    if (r.rows != 51 || r.row_size != 4 * 3 + 1) {
        std::fprintf(stderr, "rows %d, row size %d\n", r.rows, r.row_size);
        return 1;
    }
    const double c0 = vx * std::sqrt(1.0 + y * y);
    double worst = 0.0;
    for (int i = 0; i < r.rows; ++i) {
        const double* s = r.states.data() + static_cast<long>(i) * r.row_size; // q_nh, v_nh first
        worst = std::fmax(worst, std::fabs(s[3] * std::sqrt(1.0 + s[1] * s[1]) - c0));
        worst = std::fmax(worst, std::fabs(s[4] - vy));
        worst = std::fmax(worst, std::fabs(s[5] - s[1] * s[3]));
    }
    const double travel = std::fabs(r.states[static_cast<long>(r.rows - 1) * r.row_size + 1] - y);
    std::printf("nhvk %s engine: nh_particle to t = 5, largest deviation from the closed form %.3g, y moved %.3g\n",
                nhvk::nhvk_version, worst, travel);
    return worst < 1e-8 && travel > 1.0 ? 0 : 1;
}
