// SPDX-License-Identifier: MIT
// The equations of a model file: the reference AD of nhvk/dynamics.hpp (`lagrangian_parts`, `constraint_parts`,
// `energy`) run over the parsed expressions with the recording scalar, as host/sym/derive.hpp runs it over a C++
// model. The sizes are known only at run time, so instead of one `Dual<·, n>` pass with n tangents this takes one
// pass per tangent with `Dual<·, 1>`: each tangent component of a dual number is computed by the same arithmetic
// whatever the number of its siblings, so every derivative is the same expression as the C++ model's derivation gives
// (the twin tests compare the two models' trajectories).
#include <vector>

#include "modelfile/model_file.hpp"
#include "nhvk/dual.hpp"
#include "sym/parse.hpp"

namespace nhvk::modelfile {

namespace {

using sym::Expr;
using sym::Var;
using D1 = Dual<Expr, 1>;
using D2 = Dual<D1, 1>;

/** @brief The parsed expressions of one variant, evaluated with scalar `S` into the current graph. */
class Evaluator {
public:
    Evaluator(const FileModel& m, const FileVariant& fv) : m_(m), fv_(fv) {
        for (std::size_t i = 0; i < m.info.params.size(); ++i)
            p_.push_back(Expr::variable(Var::param, static_cast<int>(i)));
    }

    /** @brief L̃ = L − Σ μ_a φ_a (μ frozen; plain L when `mu` is null), as `augmented_lagrangian` forms it. */
    template <class S> S augmented(const S* q, const S* v, const S& t, const Expr* mu) const {
        std::vector<int> outs{fv_.lagrangian};
        if (mu) outs.insert(outs.end(), fv_.constraints.begin(), fv_.constraints.end());
        std::vector<S> r(outs.size());
        eval(outs, q, v, t, r.data());
        S L = r[0];
        if (mu)
            for (int a = 0; a < m_.info.k; ++a) L -= mu[a] * r[static_cast<std::size_t>(1 + a)];
        return L;
    }
    template <class S> std::vector<S> constraints(const S* q, const S* v, const S& t) const {
        std::vector<S> r(fv_.constraints.size());
        eval(fv_.constraints, q, v, t, r.data());
        return r;
    }
    std::vector<Expr> forces(const Expr* q, const Expr* v, const Expr& t) const {
        std::vector<Expr> r(static_cast<std::size_t>(m_.info.n), Expr(0.0));
        if (!fv_.forces.empty()) eval(fv_.forces, q, v, t, r.data());
        return r;
    }

private:
    template <class S> void eval(const std::vector<int>& outs, const S* q, const S* v, const S& t, S* out) const {
        std::vector<S> p;
        for (const Expr& e : p_) p.push_back(S(e));
        sym::evaluate<S>(*m_.graph, outs, q, v, t, p.data(), out);
    }
    const FileModel& m_;
    const FileVariant& fv_;
    std::vector<Expr> p_;
};

std::vector<int> ids(const std::vector<Expr>& e) {
    std::vector<int> r;
    for (const Expr& x : e) r.push_back(x.id());
    return r;
}

/** @brief `W` and `b` of `lagrangian_parts` (nhvk/dynamics.hpp), tangent by tangent. */
sym::SaddleParts saddle_parts(const Evaluator& ev, int n, const Expr* q, const Expr* v, const Expr& t, const Expr* mu,
                              const std::vector<Expr>& F) {
    std::vector<Expr> W(static_cast<std::size_t>(n * n)), b(static_cast<std::size_t>(n));
    std::vector<D2> qq(static_cast<std::size_t>(n)), vv(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        // Pass 1, inner tangent on v_i; outer tangent on v_j (W_ij) or along (δq, δv, δt) = (v, 0, 1) (j = n).
        Expr dLv(0.0);
        for (int j = 0; j <= n; ++j) {
            for (int l = 0; l < n; ++l) {
                qq[l] = D2(D1(q[l]));
                if (j == n) qq[l].d[0] = D1(v[l]);
                vv[l] = D2(D1(v[l]));
                if (l == i) vv[l].val.d[0] = Expr(1.0);
                if (j < n && l == j) vv[l].d[0] = D1(Expr(1.0));
            }
            D2 tt = D2(D1(t));
            if (j == n) tt.d[0] = D1(Expr(1.0));
            const D2 L = ev.augmented(qq.data(), vv.data(), tt, mu);
            if (j < n) W[static_cast<std::size_t>(i * n + j)] = L.d[0].d[0];
            else dLv = L.d[0].d[0];
        }
        // Pass 2, tangent on q_i: L̃_q.
        std::vector<D1> q1(static_cast<std::size_t>(n)), v1(static_cast<std::size_t>(n));
        for (int l = 0; l < n; ++l) {
            q1[l] = D1(q[l]);
            if (l == i) q1[l].d[0] = Expr(1.0);
            v1[l] = D1(v[l]);
        }
        const D1 L = ev.augmented(q1.data(), v1.data(), D1(t), mu);
        b[static_cast<std::size_t>(i)] = dLv - L.d[0] - F[static_cast<std::size_t>(i)];
    }
    return sym::SaddleParts{ids(W), ids(b)};
}

} // namespace

sym::DerivedModel derive_file_model(sym::Graph& g, const FileModel& m) {
    sym::GraphScope scope(g);
    const int n = m.info.n, k = m.info.k;
    sym::DerivedModel out;
    out.cpp_type = "nhvk::file_model::Model";
    out.header = ""; // the model's struct precedes the generated equations in the same unit
    out.n = n;
    out.k = k;
    for (const ParamInfo& p : m.info.params) out.params.push_back(p.name);
    out.bool_params = m.flags;
    std::vector<Expr> q, v, mu;
    for (int i = 0; i < n; ++i) {
        q.push_back(Expr::variable(Var::q, i));
        v.push_back(Expr::variable(Var::v, i));
    }
    for (int a = 0; a < k; ++a) mu.push_back(Expr::variable(Var::mu, a));
    const Expr t = Expr::variable(Var::t, 0);
    for (const FileVariant& fv : m.variants) {
        const Evaluator ev(m, fv);
        sym::DerivedVariant dv;
        const std::vector<Expr> F = ev.forces(q.data(), v.data(), t);
        dv.nh = saddle_parts(ev, n, q.data(), v.data(), t, nullptr, F);
        dv.vk = saddle_parts(ev, n, q.data(), v.data(), t, mu.data(), F);
        // constraint_parts: tangent j < n on v_j gives J[a][j]; the tangent along (v, 0, 1) gives −γ.
        std::vector<Expr> phi, J(static_cast<std::size_t>(k * n)), gamma;
        std::vector<D1> qq(static_cast<std::size_t>(n)), vv(static_cast<std::size_t>(n));
        for (int j = 0; j <= n; ++j) {
            for (int l = 0; l < n; ++l) {
                qq[l] = D1(q[l]);
                if (j == n) qq[l].d[0] = v[l];
                vv[l] = D1(v[l]);
                if (l == j) vv[l].d[0] = Expr(1.0);
            }
            D1 tt = D1(t);
            if (j == n) tt.d[0] = Expr(1.0);
            const std::vector<D1> ph = ev.constraints(qq.data(), vv.data(), tt);
            for (int a = 0; a < k; ++a) {
                if (j < n) J[static_cast<std::size_t>(a * n + j)] = ph[a].d[0];
                else {
                    phi.push_back(ph[a].val);
                    gamma.push_back(-ph[a].d[0]);
                }
            }
        }
        dv.phi = ids(phi);
        dv.J = ids(J);
        dv.gamma = ids(gamma);
        // energy: E = v·L_v − L of the plain Lagrangian, summed in the order of `energy` (nhvk/dynamics.hpp).
        Expr E(0.0);
        for (int j = 0; j < n; ++j) {
            std::vector<D1> v1(static_cast<std::size_t>(n));
            for (int l = 0; l < n; ++l) {
                qq[l] = D1(q[l]);
                v1[l] = D1(v[l]);
                if (l == j) v1[l].d[0] = Expr(1.0);
            }
            const D1 L = ev.augmented(qq.data(), v1.data(), D1(t), static_cast<const Expr*>(nullptr));
            if (j == 0) E = -L.val;
            E += v[static_cast<std::size_t>(j)] * L.d[0];
        }
        dv.energy = E.id();
        out.variants.push_back(std::move(dv));
    }
    return out;
}

} // namespace nhvk::modelfile
