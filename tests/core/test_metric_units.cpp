// SPDX-License-Identifier: MIT
// The units of the metric table (include/nhvk/metrics.hpp) against what the observer computes: multiplying the
// Lagrangian by c leaves the motions, the constraints and μ/c unchanged and multiplies every energy by c, so a metric
// in energy units is c times larger and every other one (coordinates, velocities, dimensionless) is the
// same. With c a power of two and RK4's fixed steps every operation scales exactly, so the comparison is exact.
#include "core_test_util.hpp"

#include <nhvk/member.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

/** nhvk_test::AffineModel (affine constraint: E changes and the reactions do work) with L multiplied by `c`. */
struct ScaledAffine : nhvk_test::AffineModel {
    double c = 1.0;
    template <class S> S lagrangian(const S* q, const S* v, const S& t) const {
        return S(c) * AffineModel::lagrangian(q, v, t);
    }
};

std::vector<double> metrics_of(double c) {
    ScaledAffine model;
    model.c = c;
    const double q0[3] = {0.3, -0.2, 0.1}, v0[3] = {0.4, 0.7, 0.0}, mu0[1] = {0.25 * c};
    const double v2 = q0[1] * v0[0] - model.omega * q0[0]; // φ = v2 − q1 v0 + ω q0 = 0
    const double v0c[3] = {v0[0], v0[1], v2};
    return nhvk_test::rk4_member_metrics(model, q0, v0c, mu0, 1.0 / 64);
}

TEST(MetricUnits, EnergyMetricsScaleWithTheLagrangianAndNoOthers) {
    const double c = 4.0;
    const std::vector<double> base = metrics_of(1.0), scaled = metrics_of(c);
    const int nt = int((base.size() - nhvk::member_series_count) / nhvk::metric_count);
    for (int m = 0; m < nhvk::metric_count; ++m) {
        const nhvk::MetricInfo& d = nhvk::metric_info(m);
        const bool energy = d.unit == nhvk::MetricUnit::energy;
        for (int i = 0; i < nt; ++i) {
            const double x = base[m * nt + i], y = scaled[m * nt + i];
            // the test can tell the two apart only where the metric is not 0
            EXPECT_NE(x, 0.0) << d.name << " at t[" << i << "]: choose a state where it is not 0";
            EXPECT_EQ(y, energy ? c * x : x) << d.name << " (unit " << nhvk::metric_unit_info(d.unit).key << ") at t["
                                             << i << "]: " << x << " with L, " << y << " with " << c << " L";
        }
    }
}

} // namespace
