// SPDX-License-Identifier: MIT
/** @file
 *  @brief Definitions behind `make_model_ops<M>()`; included only by the generated per-model translation units, after
 *         the model's generated equations (`nhvk/generated/<model>.hpp`).
 */
#pragma once

#include <omp.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "model_info.hpp"
#include "model_ops.hpp"
#include "nhvk/dispatch.hpp"
#include "sampling_impl.hpp"

namespace nhvk::ops_detail {

/** @brief The chunk loop of one scalar, stepper and equations. */
template <class M, class T, template <class, class> class St, template <class, class> class Eq>
void run_chunk_loop(const ChunkArgs& args, int threads) {
    const int nthreads = threads > 0 ? threads : omp_get_max_threads();
    const long long m = args.m;
    // NOTE: dynamic schedule: adaptive steps make members uneven. Results do not depend on the schedule: each member
    // writes only its own column.
#pragma omp parallel for schedule(dynamic, 16) num_threads(nthreads)
    for (long long j = 0; j < m; ++j) run_chunk_member<M, T, St, Eq>(args, j);
}

/** @brief The chunk loop with the equations `Eq` (an interpreted model file has only the reference ones). */
template <class M, template <class, class> class Eq>
void run_chunk_cpu_with(const ChunkCommon& common, const ChunkArgs& args, int threads) {
    dispatch_numeric(common.method, common.precision, [&](auto tt, auto st) {
        run_chunk_loop<M, decltype(tt), decltype(st)::template tmpl, Eq>(args, threads);
    });
}

template <class M> void run_chunk_cpu(const ChunkCommon& common, const ChunkArgs& args, int threads) {
    if (common.equations == EquationsKind::ad) run_chunk_cpu_with<M, AdEquations>(common, args, threads);
    else run_chunk_cpu_with<M, GenEquations>(common, args, threads);
}

/** @brief The trajectory's recorder, which also keeps the step counts (`nhvk trajectory --steps`; host only, so the
 *         kernels' recorder is untouched). */
template <class M, class T> struct TallyingRecorder : StateRecorder<M, T> {
    long long steps[2] = {0, 0}, rejected[2] = {0, 0};
    void tally(long long nh_steps, long long nh_rejected, long long vk_steps, long long vk_rejected) {
        steps[0] = nh_steps;
        rejected[0] = nh_rejected;
        steps[1] = vk_steps;
        rejected[1] = vk_rejected;
    }
};

template <class M, class T, template <class, class> class St, template <class, class> class Eq>
TrajectoryResult trajectory(const TrajectoryRequest& req) {
    constexpr int n = M::n, k = M::k;
    const M model = make_model<M>(req.params.empty() ? nullptr : req.params.data());
    T q0[n], v0[n], mu0[k];
    for (int j = 0; j < n; ++j) {
        q0[j] = T(req.q0.at(j));
        v0[j] = T(req.v0.at(j));
    }
    for (int a = 0; a < k; ++a) mu0[a] = req.mu0.empty() ? T(0) : T(req.mu0.at(a));
    const int nt = static_cast<int>(req.times.size());
    std::vector<T> buf(static_cast<std::size_t>(nt + 1) * StateRecorder<M, T>::row_size(), T(0));
    TallyingRecorder<M, T> rec{{buf.data()}};
    TrajectoryResult r;
    r.outcome = integrate_member<St, Eq>(model, q0, v0, mu0, T(req.t0), req.times.data(), nt, req.ctl, rec);
    for (int d = 0; d < 2; ++d) {
        r.steps[d] = rec.steps[d];
        r.rejected[d] = rec.rejected[d];
    }
    r.row_size = StateRecorder<M, T>::row_size();
    r.rows = r.outcome.status == Status::ok ? nt + 1 : r.outcome.time_index + 1;
    if (r.rows < 0) r.rows = 0;
    r.states.assign(buf.begin(), buf.end());
    return r;
}

template <class M, template <class, class> class Eq>
TrajectoryResult trajectory_cpu_with(const TrajectoryRequest& req) {
    TrajectoryResult result;
    dispatch_numeric(req.method, req.precision, [&](auto tt, auto st) {
        using T = decltype(tt);
        using St = decltype(st);
        result = trajectory<M, T, St::template tmpl, Eq>(req);
    });
    return result;
}

template <class M> TrajectoryResult trajectory_cpu(const TrajectoryRequest& req) {
    return req.equations == EquationsKind::ad ? trajectory_cpu_with<M, AdEquations>(req)
                                              : trajectory_cpu_with<M, GenEquations>(req);
}

/** @brief The saddle-point multipliers λ of the nonholonomic motion at a recorded state (NaN where singular). */
template <class Eq, class M>
void nh_lambda(const M& model, const double* q, const double* v, double t, double* lambda) {
    NonholonomicSystem<M, double, Eq> sys{model};
    double y[2 * M::n], dy[2 * M::n];
    for (int j = 0; j < M::n; ++j) {
        y[j] = q[j];
        y[M::n + j] = v[j];
    }
    if (sys.rhs(t, y, dy, lambda) != Status::ok)
        for (int a = 0; a < M::k; ++a) lambda[a] = NAN;
}

/** @brief The CSV rows; the diagnostic columns (λ, energies) come from the equations `Eq` the run integrated. */
template <class M, class Eq>
void write_trajectory_csv_with(const TrajectoryRequest& req, const TrajectoryResult& r, std::FILE* out) {
    constexpr int n = M::n, k = M::k;
    const M model = make_model<M>(req.params.empty() ? nullptr : req.params.data());
    const Eq eq(model);
    std::string h = "t";
    const char* groups[] = {"nh_q", "nh_v", "vk_q", "vk_v"};
    for (const char* g : groups)
        for (int j = 0; j < n; ++j) h += std::string(",") + g + std::to_string(j);
    for (int a = 0; a < k; ++a) h += ",vk_mu" + std::to_string(a);
    for (int a = 0; a < k; ++a) h += ",nh_res" + std::to_string(a);
    for (int a = 0; a < k; ++a) h += ",vk_res" + std::to_string(a);
    for (int a = 0; a < k; ++a) h += ",nh_lambda" + std::to_string(a);
    const std::string covers = req.divergence_label.empty() ? "" : "[" + req.divergence_label + "]";
    h += ",nh_E,vk_E,vk_E_tilde,d_q" + covers + ",d_v" + covers + "\n";
    std::fputs(h.c_str(), out);
    for (int i = 0; i < r.rows; ++i) {
        const double t = i == 0 ? req.t0 : req.times[i - 1];
        const double* row = r.states.data() + static_cast<std::size_t>(i) * r.row_size;
        const double *qn = row, *vn = row + n, *qk = row + 2 * n, *vk = row + 3 * n, *mu = row + 4 * n;
        std::fprintf(out, "%.17g", t);
        for (int j = 0; j < r.row_size; ++j) std::fprintf(out, ",%.17g", row[j]);
        double lam[k];
        nh_lambda<Eq>(model, qn, vn, t, lam);
        // NOTE: each φ_ν / |∂φ_ν/∂v| (signed), in velocity units like res_nh and res_vk: the same columns whatever
        // factor a constraint is written with.
        for (const auto* state : {row, row + 2 * n}) {
            const auto cp = eq.constraint_parts(state, state + n, t);
            double s[k];
            constraint_row_scales<n, k>(cp.J, s);
            for (int a = 0; a < k; ++a) std::fprintf(out, ",%.17g", cp.phi[a] * s[a]);
        }
        for (int a = 0; a < k; ++a) std::fprintf(out, ",%.17g", lam[a]);
        const StateDiagnostics<double> dn = diagnose_with(eq, qn, vn, t);
        const StateDiagnostics<double> dk = diagnose_with(eq, qk, vk, t, mu);
        DivergenceSpec div = req.divergence;
        for (int j = 0; j < n; ++j)
            if (M::angles[j]) div.angle_mask |= 1u << j;
        double dq = 0, dv = 0;
        divergence_between(eq, div, row, row + 2 * n, t, dq, dv);
        std::fprintf(out, ",%.17g,%.17g,%.17g,%.17g,%.17g\n", dn.energy, dk.energy, dk.vk_energy, dq, dv);
    }
}

template <class M> void write_trajectory_csv(const TrajectoryRequest& req, const TrajectoryResult& r, std::FILE* out) {
    if (req.equations == EquationsKind::ad) write_trajectory_csv_with<M, AdEquations<M, double>>(req, r, out);
    else write_trajectory_csv_with<M, GenEquations<M, double>>(req, r, out);
}

template <class M> double constraint_violation(const double* params, const double* q, const double* v, double t) {
    const auto cp = constraint_parts(make_model<M>(params), q, v, t);
    return scaled_constraint_residual<M::n, M::k>(cp.phi, cp.J);
}

template <class M> double source_violation(const double* params, const double* q, const double* v, double t) {
    return make_model<M>(params).source_residual(q, v, t);
}

template <class M> Classification classify_model(const double* params) { return classify(make_model<M>(params)); }

/** @brief A run-time choice as the types of the templates. */
template <Precision P> using ScalarOf = std::conditional_t<P == Precision::f64, double, float>;
template <Method Me> using StepperOf = StepperTag<MethodStepper<Me>::template tmpl>;
template <EquationsKind E>
using EquationsOf = std::conditional_t<E == EquationsKind::ad, EquationsTag<AdEquations>, EquationsTag<GenEquations>>;

/** @brief Throws when a request asks for other settings than the ops were compiled for (`make_model_ops_one`). */
template <class M>
void require_combination(Precision p, Method me, EquationsKind e, Precision p0, Method me0, EquationsKind e0) {
    if (p != p0 || me != me0 || e != e0)
        throw std::logic_error(std::string("model '") + M::name + "' was compiled for " +
                               combination_name(p0, me0, e0) + " only; asked for " + combination_name(p, me, e));
}

template <class M, Precision P, Method Me, EquationsKind E>
void run_chunk_one(const ChunkCommon& common, const ChunkArgs& args, int threads) {
    require_combination<M>(common.precision, common.method, common.equations, P, Me, E);
    run_chunk_loop<M, ScalarOf<P>, StepperOf<Me>::template tmpl, EquationsOf<E>::template tmpl>(args, threads);
}

template <class M, Precision P, Method Me, EquationsKind E>
TrajectoryResult trajectory_one(const TrajectoryRequest& req) {
    require_combination<M>(req.precision, req.method, req.equations, P, Me, E);
    return trajectory<M, ScalarOf<P>, StepperOf<Me>::template tmpl, EquationsOf<E>::template tmpl>(req);
}

template <class M, Precision P, Method Me, EquationsKind E>
void write_trajectory_csv_one(const TrajectoryRequest& req, const TrajectoryResult& r, std::FILE* out) {
    require_combination<M>(req.precision, req.method, req.equations, P, Me, E);
    write_trajectory_csv_with<M, typename EquationsOf<E>::template tmpl<M, double>>(req, r, out);
}

/** @brief What needs no integration: the description, the residuals and the classification. */
template <class M> ModelOps static_ops() {
    ModelOps ops{};
    ops.info = &model_info<M>;
    ops.constraint_violation = &constraint_violation<M>;
    ops.source_violation = &source_violation<M>;
    ops.classify = &classify_model<M>;
    return ops;
}

} // namespace nhvk::ops_detail

namespace nhvk {

template <class M> ModelOps make_model_ops() {
    ModelOps ops = ops_detail::static_ops<M>();
    ops.run_chunk_cpu = &ops_detail::run_chunk_cpu<M>;
    ops.trajectory_cpu = &ops_detail::trajectory_cpu<M>;
    ops.write_trajectory_csv = &ops_detail::write_trajectory_csv<M>;
    ops.sample_chunk_cpu = &sample_chunk_cpu<M>;
    return ops;
}

/** @brief The ops of model `M` integrating with one precision, method and equations alone (a request for another
 *         throws): a model file compiled for one run compiles one integrator of the eight (modelfile::Scope). */
template <class M, Precision P, Method Me, EquationsKind E> ModelOps make_model_ops_one() {
    ModelOps ops = ops_detail::static_ops<M>();
    ops.run_chunk_cpu = &ops_detail::run_chunk_one<M, P, Me, E>;
    ops.trajectory_cpu = &ops_detail::trajectory_one<M, P, Me, E>;
    ops.write_trajectory_csv = &ops_detail::write_trajectory_csv_one<M, P, Me, E>;
    ops.sample_chunk_cpu = &sample_chunk_cpu<M>;
    return ops;
}

/** @brief The ops of model `M` that need no integration (`nhvk inspect` of a model file); the others are null. */
template <class M> ModelOps make_model_ops_static() { return ops_detail::static_ops<M>(); }

} // namespace nhvk
