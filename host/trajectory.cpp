// SPDX-License-Identifier: MIT
#include "trajectory.hpp"

#include <stdexcept>

#include "nhvk/dispatch.hpp"
#include "registry.hpp"

namespace nhvk {

namespace {
template <class M, class T, template <class, class> class St> TrajectoryResult run_one(const TrajectoryRequest& req) {
    constexpr int n = M::n, k = M::k;
    const M model = make_model<M>(req.params.empty() ? nullptr : req.params.data());
    T q0[n], v0[n], mu0[k];
    for (int j = 0; j < n; ++j) {
        q0[j] = T(req.q0.at(j));
        v0[j] = T(req.v0.at(j));
    }
    for (int a = 0; a < k; ++a) mu0[a] = req.mu0.empty() ? T(0) : T(req.mu0.at(a));
    const int nt = static_cast<int>(req.times.size());
    std::vector<T> buf(static_cast<size_t>(nt + 1) * StateRecorder<M, T>::row_size(), T(0));
    StateRecorder<M, T> rec{buf.data()};
    TrajectoryResult r;
    r.outcome = integrate_member<St>(model, q0, v0, mu0, T(req.t0), req.times.data(), nt, req.ctl, rec);
    r.row_size = StateRecorder<M, T>::row_size();
    r.rows = r.outcome.status == Status::ok ? nt + 1 : r.outcome.time_index + 1;
    if (r.rows < 0) r.rows = 0;
    r.states.assign(buf.begin(), buf.end());
    return r;
}
} // namespace

TrajectoryResult run_trajectory_cpu(const TrajectoryRequest& req) {
    TrajectoryResult result;
    const bool found = visit_model(req.model, [&](auto mt) {
        using M = typename decltype(mt)::type;
        dispatch_numeric(req.method, req.precision, [&](auto tt, auto st) {
            using T = decltype(tt);
            using St = decltype(st);
            result = run_one<M, T, St::template tmpl>(req);
        });
    });
    if (!found) throw std::invalid_argument("unknown model '" + req.model + "'");
    return result;
}

} // namespace nhvk
