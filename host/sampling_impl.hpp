// SPDX-License-Identifier: MIT
/** @file
 *  @brief The sampler, templated on the model (instantiated in each model's generated translation unit).
 */
#pragma once

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "config.hpp"
#include "nhvk/distribution.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/model_params.hpp"
#include "nhvk/rng.hpp"
#include "sampling.hpp"

namespace nhvk {

namespace sampling_detail {

template <class M> double max_abs_phi(const M& model, const double* q, const double* v, double t) {
    double phi[M::k], worst = 0.0;
    model.constraints(q, v, t, phi);
    for (int a = 0; a < M::k; ++a) {
        if (!std::isfinite(phi[a])) return NAN;
        worst = std::max(worst, std::fabs(phi[a]));
    }
    return worst;
}

/**
 * @brief `min |v − ṽ|_W subject to φ(q, v, t) = 0` by Gauss–Newton on the KKT system
 *        `[W Jᵀ; J 0][Δ; ν] = [−W(v − ṽ); −φ]` (one step is exact for linear constraints). `v` enters as ṽ.
 */
template <class M> SampleStatus project(const M& model, const double* q, double* v, double t) {
    constexpr int n = M::n, k = M::k;
    double vt[n];
    std::copy(v, v + n, vt);
    for (int it = 0; it < 60; ++it) {
        const ConstraintParts<M, double> cp = constraint_parts(model, q, v, t);
        double scale = 1.0, worst = 0.0;
        for (int j = 0; j < n; ++j) scale = std::max(scale, std::fabs(v[j]));
        for (int a = 0; a < k; ++a) {
            if (!std::isfinite(cp.phi[a])) return SampleStatus::non_finite;
            worst = std::max(worst, std::fabs(cp.phi[a]));
        }
        if (worst <= sample_tolerance * scale) return SampleStatus::ok;
        const LagrangianParts<M, double> lp = lagrangian_parts(model, q, v, t, static_cast<const double*>(nullptr));
        Eigen::Matrix<double, n + k, n + k> K = Eigen::Matrix<double, n + k, n + k>::Zero();
        Eigen::Matrix<double, n + k, 1> r;
        for (int i = 0; i < n; ++i) {
            double wd = 0.0;
            for (int j = 0; j < n; ++j) {
                K(i, j) = lp.W[i][j];
                wd += lp.W[i][j] * (v[j] - vt[j]);
            }
            for (int a = 0; a < k; ++a) K(i, n + a) = K(n + a, i) = cp.J[a][i];
            r(i) = -wd;
        }
        for (int a = 0; a < k; ++a) r(n + a) = -cp.phi[a];
        if (!K.allFinite() || !r.allFinite()) return SampleStatus::non_finite;
        Eigen::FullPivLU<Eigen::Matrix<double, n + k, n + k>> lu(K);
        lu.setThreshold(1e-12);
        if (!lu.isInvertible()) return SampleStatus::singular_constraints;
        const Eigen::Matrix<double, n + k, 1> d = lu.solve(r);
        for (int j = 0; j < n; ++j) v[j] += d(j);
    }
    return SampleStatus::projection_failed;
}

/**
 * @brief Move `v` along the ray `base + s·(v − base)`, s ≥ 0, until E(q, ·) = E0 (bracketing + Illinois false
 *        position); false if E0 is not reached on the ray. With `base` the least-energy point of an affine constraint
 *        set, the whole ray stays on the set; with `base = 0` it is plain scaling (homogeneous constraints).
 */
template <class M>
bool scale_to_energy(const M& model, const double* q, double* v, double t, double E0, const double* base) {
    constexpr int n = M::n;
    double dir[n];
    for (int j = 0; j < n; ++j) dir[j] = v[j] - base[j];
    auto point = [&](double s, double* w) {
        for (int j = 0; j < n; ++j) w[j] = base[j] + s * dir[j];
    };
    auto E = [&](double s) {
        double w[n];
        point(s, w);
        return energy(model, q, w, t) - E0;
    };
    const double f0 = E(0.0);
    if (!std::isfinite(f0)) return false;
    if (f0 == 0.0) {
        point(0.0, v);
        return true;
    }
    if (f0 > 0.0) return false; // NOTE: E at rest already exceeds E0; scaling cannot lower it (for E increasing in s)
    double lo = 0.0, hi = 1.0, fhi = E(hi);
    for (int i = 0; i < 200 && std::isfinite(fhi) && fhi < 0.0; ++i) {
        lo = hi;
        hi *= 2.0;
        fhi = E(hi);
    }
    if (!std::isfinite(fhi) || fhi < 0.0) return false;
    double flo = E(lo);
    // Illinois false position: converges superlinearly and stays bracketed.
    int side = 0;
    double s = hi;
    for (int i = 0; i < 200; ++i) {
        s = (lo * fhi - hi * flo) / (fhi - flo);
        if (!(s > lo && s < hi)) s = 0.5 * (lo + hi);
        const double fs = E(s);
        if (fs == 0.0 || (hi - lo) <= 4e-16 * hi) break;
        if ((fs < 0.0) == (flo < 0.0)) {
            lo = s;
            flo = fs;
            if (side == -1) fhi *= 0.5;
            side = -1;
        } else {
            hi = s;
            fhi = fs;
            if (side == 1) flo *= 0.5;
            side = 1;
        }
    }
    point(s, v);
    return true;
}

} // namespace sampling_detail

/**
 * @brief Draw one member: parameters, q0, trial velocity, projection onto φ = 0, energy shell, μ0. Depends only on
 *        (seed, global index): never on chunking, threads or backend.
 */
template <class M>
SampleStatus sample_member(const RunConfig& cfg, std::uint64_t g, double* params, double* q, double* v, double* mu) {
    constexpr int n = M::n, k = M::k;
    const std::uint64_t seed = cfg.run.seed;
    const int np = static_cast<int>(cfg.params.size());
    const DrawKey kp = make_draw_key(seed, g, Stream::params);
    for (int i = 0; i < np; ++i) params[i] = sample(cfg.param_dists[i], kp, static_cast<std::uint32_t>(i));
    const M model = make_model<M>(np > 0 ? params : nullptr);
    const DrawKey kq = make_draw_key(seed, g, Stream::q0), kv = make_draw_key(seed, g, Stream::v0),
                  km = make_draw_key(seed, g, Stream::mu0);
    for (int j = 0; j < n; ++j) {
        q[j] = sample(cfg.q0[j], kq, static_cast<std::uint32_t>(j));
        v[j] = sample(cfg.v0[j], kv, static_cast<std::uint32_t>(j));
    }
    for (int a = 0; a < k; ++a) mu[a] = sample(cfg.mu0[a], km, static_cast<std::uint32_t>(a));
    for (int j = 0; j < n; ++j)
        if (!std::isfinite(q[j]) || !std::isfinite(v[j])) return SampleStatus::non_finite;
    const double t0 = cfg.t0;
    SampleStatus s = sampling_detail::project(model, q, v, t0);
    if (s != SampleStatus::ok || !cfg.energy) return s;
    // Energy shell. The least-energy point of the constraint set near the origin (the projection of ṽ = 0) is the
    // base of a ray through the projected v: for linear and affine constraints the whole ray lies on the set, so one
    // 1-D solve hits E0 (for homogeneous ones the base is 0: plain scaling). E0 below the base's energy is
    // unreachable. Nonlinear constraints may leave the set along the ray: re-project and repeat.
    const double E0 = *cfg.energy;
    double base[n];
    for (int j = 0; j < n; ++j) base[j] = 0.0;
    if ((s = sampling_detail::project(model, q, base, t0)) != SampleStatus::ok) return s;
    if (!(energy(model, q, base, t0) <= E0)) return SampleStatus::energy_unreachable;
    for (int it = 0; it < 50; ++it) {
        if (!sampling_detail::scale_to_energy(model, q, v, t0, E0, base)) return SampleStatus::energy_unreachable;
        double scale = 1.0;
        for (int j = 0; j < n; ++j) scale = std::max(scale, std::fabs(v[j]));
        const double res = sampling_detail::max_abs_phi(model, q, v, t0);
        if (!std::isfinite(res)) return SampleStatus::non_finite;
        const double dE = std::fabs(energy(model, q, v, t0) - E0);
        if (res <= sample_tolerance * scale && dE <= 1e-12 * std::max(1.0, std::fabs(E0))) return SampleStatus::ok;
        if ((s = sampling_detail::project(model, q, v, t0)) != SampleStatus::ok) return s;
    }
    // NOTE: scaling and re-projection did not settle on both sets at once: a failure to place the sample, not a
    // statement about the shell.
    return SampleStatus::projection_failed;
}

/** @brief Draw members [first, first + m) into `out` (OpenMP; order-independent). */
template <class M> void sample_chunk(const SampleRequest& req, SampleChunk& out) {
    const RunConfig& cfg = *req.cfg;
    const int nthreads = req.threads > 0 ? req.threads : omp_get_max_threads();
    const long long ld = out.ld;
    const int np = static_cast<int>(cfg.params.size());
#pragma omp parallel for schedule(dynamic, 64) num_threads(nthreads)
    for (long long j = 0; j < req.m; ++j) {
        double p[max_params > 0 ? max_params : 1], q[M::n], v[M::n], mu[M::k > 0 ? M::k : 1];
        const SampleStatus s = sample_member<M>(cfg, req.first + static_cast<std::uint64_t>(j), p, q, v, mu);
        out.status[j] = static_cast<std::uint8_t>(s);
        for (int c = 0; c < M::n; ++c) {
            // NOTE: NaN in q0 is the chunk kernel's "skip this member" marker.
            out.q0[c * ld + j] = s == SampleStatus::ok ? q[c] : NAN;
            out.v0[c * ld + j] = v[c];
        }
        for (int a = 0; a < M::k; ++a) out.mu0[a * ld + j] = mu[a];
        if (out.params)
            for (int i = 0; i < np; ++i) out.params[i * ld + j] = p[i];
    }
}

} // namespace nhvk
