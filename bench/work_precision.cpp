// SPDX-License-Identifier: MIT
// Work–precision of the integration methods (issue 43 items 2 and 6): for one built-in model and a few members sampled
// by `nhvk run`, each adaptive method at each rtol integrates both dynamics of every member to the run's output times;
// this prints, per (method, rtol), the right-hand sides evaluated (counted at the system, not derived from step
// counts), the attempted and rejected steps, the CPU time, and the largest error of any state component at any output
// time against a reference (DOP853 at rtol 1e-14, atol 1e-16, checked against DOPRI5 at the same tolerance). With
// WITH_RODAS=1 also rodas5p, whose Jacobians' evaluations in dual numbers (one tangent each) are the last column.
// bench/work_precision.sh builds and drives it; the input file it writes:
//   model NAME
//   param NAME VALUE          (each parameter of the run)
//   times t1 t2 ...
//   member q0... v0... mu0... (n + n + k numbers, one line per member)
//   rtols r1 r2 ...
#include <nhvk/dynamics.hpp>
#include <nhvk/generated.hpp>
#include <nhvk/generated/all.hpp>
#include <nhvk/model_list.hpp>
#include <nhvk/model_params.hpp>
#include <nhvk/models/all.hpp>
#include <nhvk/steppers.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Input {
    std::string model;
    std::map<std::string, double> params;
    std::vector<double> times, rtols;
    std::vector<std::vector<double>> members;
};

Input read_input(const char* path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(std::string("cannot open ") + path);
    Input r;
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::string key;
        if (!(ls >> key)) continue;
        if (key == "model") {
            ls >> r.model;
        } else if (key == "param") {
            std::string name;
            double v;
            ls >> name >> v;
            r.params[name] = v;
        } else {
            std::vector<double> xs;
            for (double x; ls >> x;) xs.push_back(x);
            if (key == "times") r.times = xs;
            else if (key == "rtols") r.rtols = xs;
            else if (key == "member") r.members.push_back(xs);
            else throw std::runtime_error("unknown line '" + key + "' in " + path);
        }
    }
    return r;
}

/** Sets the parameters a run named, by name; the others keep the model's defaults. */
struct ParamsByName {
    const std::map<std::string, double>* p;
    template <class V> void operator()(const char* name, V& value, nhvk::ParamDomain = nhvk::ParamDomain::any) {
        const auto it = p->find(name);
        if (it != p->end()) value = static_cast<V>(it->second);
    }
    void operator()(const char* name, bool& value) {
        const auto it = p->find(name);
        if (it != p->end()) value = it->second != 0.0;
    }
};

/** Evaluations of the equations in dual numbers, one tangent each: a linearly implicit method's Jacobian columns. */
long long g_tangent_passes = 0;

/** The system in dual numbers (`rhs_jacobian` makes one per Jacobian from the model), its evaluations counted. */
template <class Sys> struct CountedTangents {
    static constexpr int dim = Sys::dim;
    Sys sys;
    template <class M> explicit CountedTangents(const M& model) : sys(model) {}
    template <class T> nhvk::Status rhs(T t, const T* y, T* dy) const {
        ++g_tangent_passes;
        return sys.rhs(t, y, dy);
    }
};

/** A system whose right-hand sides are counted. */
template <class Sys> struct Counted {
    static constexpr int dim = Sys::dim;
    static constexpr int err_dim = nhvk::detail::ErrDim<Sys>::value;
    template <class S> using rebind = CountedTangents<typename Sys::template rebind<S>>;
    Sys sys;
    mutable long long evaluations = 0;
    nhvk::Status rhs(double t, const double* y, double* dy) const {
        ++evaluations;
        return sys.rhs(t, y, dy);
    }
    nhvk::Status project(double t, double* y) const { return sys.project(t, y); }
    const auto& model() const { return sys.model(); }
};

struct Work {
    long long evaluations = 0, steps = 0, rejected = 0, failed = 0;
    long long tangent_passes = 0; ///< the Jacobians' dual-number evaluations (rodas5p)
    double seconds = 0.0;
    std::vector<double> states; ///< per member, output time and component: (q, v) of NH, then (q, v, μ) of VK
};

/** Both dynamics of every member with stepper `S` at (rtol, atol). */
template <template <class, class> class S, class M>
Work integrate(const M& model, const Input& in, double rtol, double atol) {
    using NH = Counted<nhvk::BalancedNonholonomicSystem<M, double, nhvk::GenEquations<M, double>>>;
    using VK = Counted<nhvk::VakonomicSystem<M, double, nhvk::GenEquations<M, double>>>;
    constexpr int n = M::n, k = M::k;
    Work w;
    nhvk::StepControl ctl;
    ctl.rtol = rtol;
    ctl.atol = atol;
    ctl.dt = 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    const long long passes0 = g_tangent_passes;
    for (const std::vector<double>& m : in.members) {
        const NH nh{{model}};
        const VK vk{{model}};
        double ynh[NH::dim] = {}, yvk[VK::dim] = {};
        for (int j = 0; j < n; ++j) {
            ynh[j] = yvk[j] = m[j];
            ynh[n + j] = yvk[n + j] = m[n + j];
        }
        for (int a = 0; a < k; ++a) yvk[2 * n + a] = m[2 * n + a];
        S<NH, double> a;
        S<VK, double> b;
        bool ok = a.init(nh, 0.0, ynh, ctl) == nhvk::Status::ok && b.init(vk, 0.0, yvk, ctl) == nhvk::Status::ok;
        if constexpr (nhvk::dense_stepper<S<NH, double>>) {
            a.land_last_on(in.times.back());
            b.land_last_on(in.times.back());
        }
        for (double t : in.times) {
            ok = ok && a.advance_to(nh, t) == nhvk::Status::ok && b.advance_to(vk, t) == nhvk::Status::ok;
            for (int j = 0; j < 2 * n; ++j) w.states.push_back(ok ? a.y[j] : NAN);
            for (int j = 0; j < 2 * n + k; ++j) w.states.push_back(ok ? b.y[j] : NAN);
        }
        w.failed += !ok;
        w.evaluations += nh.evaluations + vk.evaluations;
        w.steps += a.steps + b.steps;
        w.rejected += a.rejected + b.rejected;
    }
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    w.tangent_passes = g_tangent_passes - passes0;
    return w;
}

/** max |x − ref| / max(1, |ref|) over every state component at every output time of every member. */
double error(const Work& w, const Work& ref) {
    double e = 0.0;
    for (std::size_t i = 0; i < ref.states.size(); ++i) {
        const double d = std::fabs(w.states[i] - ref.states[i]) / std::max(1.0, std::fabs(ref.states[i]));
        e = std::isnan(d) ? INFINITY : std::max(e, d);
    }
    return e;
}

template <class M> int run_model(const Input& in) {
    // NOTE: rodas5p (the stiff method) only when asked (WITH_RODAS=1 in work_precision.sh): on these non-stiff models
    // it is the slowest, and the runs of every model take the longest with it
    const char* env = std::getenv("WITH_RODAS");
    const bool with_rodas = env && std::string(env) == "1";
    M model{};
    ParamsByName setter{&in.params};
    model.visit_params(setter);
    const Work ref = integrate<nhvk::Dop853>(model, in, 1e-14, 1e-16);
    const Work check = integrate<nhvk::Dopri5>(model, in, 1e-14, 1e-16);
    if (ref.failed) throw std::runtime_error("the reference failed on " + std::to_string(ref.failed) + " members");
    std::printf("# model %s: %zu members, %zu output times up to t = %g; reference dop853 rtol 1e-14 (%lld rhs), "
                "dopri5 at rtol 1e-14 within %.2e of it\n",
                M::name, in.members.size(), in.times.size(), in.times.back(), ref.evaluations, error(check, ref));
    std::printf("model,method,rtol,rhs_evaluations,steps,rejected,failed,seconds,max_error,jacobian_tangent_passes\n");
    for (double rtol : in.rtols) {
        const double atol = rtol * 1e-2;
        const auto row = [&](const char* name, const Work& w) {
            std::printf("%s,%s,%.0e,%lld,%lld,%lld,%lld,%.4f,%.3e,%lld\n", M::name, name, rtol, w.evaluations, w.steps,
                        w.rejected, w.failed, w.seconds, error(w, ref), w.tangent_passes);
        };
        row("dopri5", integrate<nhvk::Dopri5>(model, in, rtol, atol));
        row("tsit5", integrate<nhvk::Tsit5>(model, in, rtol, atol));
        row("dop853", integrate<nhvk::Dop853>(model, in, rtol, atol));
        if (with_rodas) row("rodas5p", integrate<nhvk::Rodas5p>(model, in, rtol, atol));
    }
    return 0;
}

template <std::size_t I = 0> int dispatch(const Input& in) {
    if constexpr (I == nhvk::BuiltinModels::size) {
        throw std::runtime_error("unknown model '" + in.model + "'");
    } else {
        using M = typename nhvk::ModelAt<I, nhvk::BuiltinModels>::type;
        if (in.model == M::name) return run_model<M>(in);
        return dispatch<I + 1>(in);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: work_precision INPUT\n");
        return 2;
    }
    try {
        return dispatch(read_input(argv[1]));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "work_precision: %s\n", e.what());
        return 1;
    }
}
