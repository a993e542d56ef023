// SPDX-License-Identifier: MIT
/** @file
 *  @brief The sampling stage, per member: counter-based draws keyed by (seed, trajectory), projection of the trial
 *         velocity onto the constraint set in the kinetic metric, the optional energy shell, and the vakonomic μ0
 *         (docs/physics.md §6). Host and device run this same code: the CPU backend in an OpenMP loop, the CUDA backend
 *         with one thread per member.
 *
 *  A member's initial state depends only on (seed, global index): never on chunking, threads or backend. The draws
 *  are bit-identical on host and device (nhvk/rng.hpp); the projection and the energy shell are floating-point
 *  iterations, so host and device samples agree to rounding (nvcc contracts a·b + c into an fma, g++ does not).
 */
#pragma once

#include <stdint.h>

#include "nhvk/config.hpp"
#include "nhvk/distribution.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/linalg.hpp"
#include "nhvk/model_params.hpp"
#include "nhvk/rng.hpp"

namespace nhvk {

/** @brief Why a sample could not be placed on the constraint set (counted and reported, never dropped silently). */
enum class SampleStatus : uint8_t {
    ok = 0,
    projection_failed = 1,    ///< Gauss–Newton did not reach |φ| ≤ tolerance
    singular_constraints = 2, ///< the projection's saddle-point matrix is singular (J rank-deficient, or W not
                              ///<   positive on ker J) at this point
    energy_unreachable = 3,   ///< no scaling of the velocity reaches the energy shell E0
    non_finite = 4,           ///< a draw or a model evaluation gave NaN/∞
    chart_singular = 5,       ///< the placed state is outside the model's chart or breaks its source constraints
                              ///<   (`check_model_state`: e.g. parallel_velocities with ṗ1 vertical)
};
inline constexpr int sample_status_count = 6;

/** @brief The name used in outputs. */
inline const char* sample_status_name(SampleStatus s) {
    switch (s) {
    case SampleStatus::ok:
        return "ok";
    case SampleStatus::projection_failed:
        return "projection_failed";
    case SampleStatus::singular_constraints:
        return "singular_constraints";
    case SampleStatus::energy_unreachable:
        return "energy_unreachable";
    case SampleStatus::non_finite:
        return "non_finite";
    case SampleStatus::chart_singular:
        return "chart_singular";
    }
    return "unknown";
}

/** @brief Relative tolerance of the constraint projection and of the energy shell. */
inline constexpr double sample_tolerance = 1e-13;

/** @brief The sampling settings of a run of model `M`; trivially copyable (the sampling kernel takes it by value). */
template <class M> struct SampleSpec {
    uint64_t seed = 0;
    double t0 = 0.0;
    int n_params = 0;        ///< parameters drawn per member (all of the model's, fixed ones included)
    bool has_energy = false; ///< put each member on the energy shell E(q0, v0) = energy
    double energy = 0.0;
    Distribution params[max_params > 0 ? max_params : 1];
    Distribution q0[M::n], v0[M::n];
    Distribution mu0[M::k > 0 ? M::k : 1];
};

namespace sampling_detail {

/** @brief The sampler's projection: `min |v − ṽ|_W` on `φ = 0` from the trial `ṽ = v` (Gauss–Newton, 60 steps). */
template <class Eq> NHVK_HD SampleStatus project(const Eq& eq, const double* q, double* v, double t) {
    double anchor[Eq::n];
    NHVK_UNROLL
    for (int j = 0; j < Eq::n; ++j) anchor[j] = v[j];
    switch (detail::project_onto_constraints(eq, q, v, t, sample_tolerance, 60, anchor)) {
    case detail::ProjectionResult::converged:
        return SampleStatus::ok;
    case detail::ProjectionResult::singular:
        return SampleStatus::singular_constraints;
    case detail::ProjectionResult::non_finite:
        return SampleStatus::non_finite;
    default:
        return SampleStatus::projection_failed;
    }
}

/**
 * @brief Move `v` along the ray `base + s·(v − base)`, s ≥ 0, until E(q, ·) = E0 (bracketing + Illinois false
 *        position); false if E0 is not reached on the ray. With `base` the least-energy point of an affine constraint
 *        set, the whole ray stays on the set; with `base = 0` it is plain scaling (homogeneous constraints).
 */
template <class Eq>
NHVK_HD bool scale_to_energy(const Eq& eq, const double* q, double* v, double t, double E0, const double* base) {
    constexpr int n = Eq::n;
    double dir[n];
    for (int j = 0; j < n; ++j) dir[j] = v[j] - base[j];
    auto E = [&](double s) {
        double w[n];
        for (int j = 0; j < n; ++j) w[j] = base[j] + s * dir[j];
        return eq.energy(q, w, t) - E0;
    };
    const double f0 = E(0.0);
    if (!is_finite(f0)) return false;
    if (f0 == 0.0) {
        for (int j = 0; j < n; ++j) v[j] = base[j];
        return true;
    }
    if (f0 > 0.0) return false; // NOTE: E at rest already exceeds E0; scaling cannot lower it (for E increasing in s)
    double lo = 0.0, hi = 1.0, fhi = E(hi);
    for (int i = 0; i < 200 && is_finite(fhi) && fhi < 0.0; ++i) {
        lo = hi;
        hi *= 2.0;
        fhi = E(hi);
    }
    if (!is_finite(fhi) || fhi < 0.0) return false;
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
    for (int j = 0; j < n; ++j) v[j] = base[j] + s * dir[j];
    return true;
}

} // namespace sampling_detail

namespace sampling_detail {
/** @brief The draws of `q`, `v`, `μ0` of member `g`, the projection onto φ = 0 and the energy shell. */
template <class M, class Eq>
NHVK_HD SampleStatus place(const SampleSpec<M>& spec, const Eq& eq, uint64_t g, double* q, double* v, double* mu) {
    constexpr int n = M::n, k = M::k;
    const DrawKey kq = make_draw_key(spec.seed, g, Stream::q0), kv = make_draw_key(spec.seed, g, Stream::v0),
                  km = make_draw_key(spec.seed, g, Stream::mu0);
    for (int j = 0; j < n; ++j) {
        q[j] = sample(spec.q0[j], kq, static_cast<uint32_t>(j));
        v[j] = sample(spec.v0[j], kv, static_cast<uint32_t>(j));
    }
    for (int a = 0; a < k; ++a) mu[a] = sample(spec.mu0[a], km, static_cast<uint32_t>(a));
    for (int j = 0; j < n; ++j)
        if (!is_finite(q[j]) || !is_finite(v[j])) return SampleStatus::non_finite;
    const double t0 = spec.t0;
    SampleStatus s = sampling_detail::project(eq, q, v, t0);
    if (s != SampleStatus::ok || !spec.has_energy) return s;
    // Energy shell. The least-energy point of the constraint set near the origin (the projection of ṽ = 0) is the
    // base of a ray through the projected v: for linear and affine constraints the whole ray lies on the set, so one
    // 1-D solve hits E0 (for homogeneous ones the base is 0: plain scaling). E0 below the base's energy is
    // unreachable. Nonlinear constraints may leave the set along the ray: re-project and repeat.
    const double E0 = spec.energy;
    double base[n];
    for (int j = 0; j < n; ++j) base[j] = 0.0;
    if ((s = sampling_detail::project(eq, q, base, t0)) != SampleStatus::ok) return s;
    if (!(eq.energy(q, base, t0) <= E0)) return SampleStatus::energy_unreachable;
    for (int it = 0; it < 50; ++it) {
        if (!sampling_detail::scale_to_energy(eq, q, v, t0, E0, base)) return SampleStatus::energy_unreachable;
        double scale = 1.0;
        for (int j = 0; j < n; ++j) scale = abs(v[j]) > scale ? abs(v[j]) : scale;
        const double res = diagnose_with(eq, q, v, t0).residual;
        if (!is_finite(res)) return SampleStatus::non_finite;
        const double dE = abs(eq.energy(q, v, t0) - E0);
        if (res <= sample_tolerance * scale && dE <= 1e-12 * (abs(E0) > 1.0 ? abs(E0) : 1.0)) return SampleStatus::ok;
        if ((s = sampling_detail::project(eq, q, v, t0)) != SampleStatus::ok) return s;
    }
    // NOTE: scaling and re-projection did not settle on both sets at once: a failure to place the sample, not a
    // statement about the shell.
    return SampleStatus::projection_failed;
}
} // namespace sampling_detail

/**
 * @brief Draw member `g`: parameters `p` (`spec.n_params` of them), `q`, the trial velocity, its projection onto
 *        φ = 0 into `v`, the energy shell, `μ0`; a placed state outside the model's
 *        charts or off its source constraints is `chart_singular` (`check_model_state`). `Eq` is the equations type of
 * the model in double (`GenEquations` in both backends); the member's model is built from the drawn parameters.
 */
template <class M, class Eq>
NHVK_HD SampleStatus sample_member(const SampleSpec<M>& spec, uint64_t g, double* p, double* q, double* v, double* mu) {
    const DrawKey kp = make_draw_key(spec.seed, g, Stream::params);
    for (int i = 0; i < spec.n_params; ++i) p[i] = sample(spec.params[i], kp, static_cast<uint32_t>(i));
    const Eq eq(make_model<M>(spec.n_params > 0 ? p : nullptr));
    const SampleStatus s = sampling_detail::place<M>(spec, eq, g, q, v, mu);
    // NOTE: a state on φ = 0 is a state of the model only inside its charts and on its source constraints, checked
    // independently of φ (a chart can vanish identically where the source does not, e.g. parallel_velocities).
    if (s == SampleStatus::ok && check_model_state(eq.model, q, v, spec.t0) != Status::ok)
        return SampleStatus::chart_singular;
    return s;
}

/**
 * @brief Draw member `j` of a chunk whose member 0 has global index `first`, into the chunk's structure-of-arrays
 *        inputs (`q0`, `v0`, `mu0`, per-member `params` when `a.params_ld != 0`) and `a.sample_status`. A member that
 *        could not be placed gets NaN in q0: the integration stage skips it and reports it as not sampled.
 */
template <class M, class Eq>
NHVK_HD void sample_chunk_member(const SampleSpec<M>& spec, const ChunkArgs& a, uint64_t first, long long j) {
    constexpr int n = M::n, k = M::k;
    double p[max_params > 0 ? max_params : 1], q[n], v[n], mu[k > 0 ? k : 1];
    const SampleStatus s = sample_member<M, Eq>(spec, first + static_cast<uint64_t>(j), p, q, v, mu);
    a.sample_status[j] = static_cast<uint8_t>(s);
    double* q0 = const_cast<double*>(a.q0);
    double* v0 = const_cast<double*>(a.v0);
    double* mu0 = const_cast<double*>(a.mu0);
    for (int c = 0; c < n; ++c) {
        // NOTE: NaN in q0 is the chunk kernel's "skip this member" marker.
        q0[c * a.ld + j] = s == SampleStatus::ok ? q[c] : NAN;
        v0[c * a.ld + j] = v[c];
    }
    for (int c = 0; c < k; ++c) mu0[c * a.ld + j] = mu[c];
    if (a.params_ld != 0) {
        double* pm = const_cast<double*>(a.params);
        for (int i = 0; i < spec.n_params; ++i) pm[i * a.params_ld + j] = p[i];
    }
}

} // namespace nhvk
