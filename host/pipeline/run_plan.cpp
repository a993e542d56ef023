// SPDX-License-Identifier: MIT
#include "pipeline/run_plan.hpp"

#include "sampling.hpp"

namespace nhvk {

SamplingPlan make_sampling_plan(const RunConfig& cfg) {
    SamplingPlan p;
    p.seed = cfg.run.seed;
    p.t0 = cfg.t0;
    p.q0 = cfg.q0;
    p.v0 = cfg.v0;
    p.mu0 = cfg.mu0;
    p.params = cfg.param_dists;
    p.energy = cfg.energy;
    return p;
}

DivergenceSpec divergence_spec(const RunConfig& cfg) {
    DivergenceSpec d;
    for (int j = 0; j < max_divergence_coords; ++j) d.weight[j] = 0.0;
    for (int i : cfg.divergence_coords)
        d.weight[i] = cfg.divergence_weights.empty() ? 1.0 : cfg.divergence_weights[static_cast<std::size_t>(i)];
    for (int i = 0; i < cfg.model.n; ++i)
        if (cfg.model.angles[i]) d.angle_mask |= 1u << i;
    d.kinetic = cfg.divergence_kinetic;
    return d;
}

RunPlan make_run_plan(const RunConfig& cfg, long long capacity) {
    RunPlan plan;
    ChunkLayout& L = plan.layout;
    L.n = cfg.model.n;
    L.k = cfg.model.k;
    L.nt = static_cast<int>(cfg.times.size());
    L.n_params = static_cast<int>(cfg.params.size());
    for (const Distribution& d : cfg.param_dists)
        L.per_member_params = L.per_member_params || d.kind != DistKind::fixed;
    L.capacity = capacity;
    ChunkCommon& c = plan.common;
    c.model = cfg.model.name;
    c.method = cfg.integrator.method;
    c.precision = cfg.integrator.precision;
    c.equations = cfg.integrator.equations;
    c.times = cfg.times.data();
    c.nt = L.nt;
    c.t0 = cfg.t0;
    c.ctl.rtol = cfg.integrator.rtol;
    c.ctl.atol = cfg.integrator.atol;
    c.ctl.dt = cfg.integrator.dt;
    c.ctl.min_step = cfg.integrator.min_step;
    c.ctl.max_steps = cfg.integrator.max_steps;
    c.ctl.project = cfg.integrator.project;
    c.divergence = divergence_spec(cfg);
    c.alive_population = cfg.alive_population;
    c.replicas = cfg.replicas;
    c.stop_at = cfg.stop_at;
    c.onset_threshold = cfg.onset_threshold;
    c.shared_params = cfg.params.empty() ? nullptr : cfg.params.data();
    c.sampling = make_sampling_plan(cfg);
    if (cfg.sweep) {
        // NOTE: a swept model parameter differs between points, so the members carry their own parameters
        for (const RunConfig& point : cfg.sweep->configs) {
            c.points.push_back(make_sampling_plan(point));
            for (const Distribution& d : point.param_dists)
                L.per_member_params = L.per_member_params || d.kind != DistKind::fixed;
        }
        for (const SweepAxis& a : cfg.sweep->axes)
            L.per_member_params = L.per_member_params || a.key.rfind("model.params.", 0) == 0;
        c.point_size = static_cast<std::uint64_t>(cfg.run.trajectories);
    }
    return plan;
}

} // namespace nhvk
