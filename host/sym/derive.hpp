// SPDX-License-Identifier: MIT
/** @file
 *  @brief Derive a C++ model's equations symbolically: run the reference AD of nhvk/dynamics.hpp once with the
 *         recording scalar `sym::Expr` (the model's parameters are symbols too: compile with
 *         `NHVK_SYMBOLIC_PARAMS`, see nhvk/param.hpp).
 */
#pragma once

#if !defined(NHVK_SYMBOLIC_PARAMS)
#error "host/sym/derive.hpp needs NHVK_SYMBOLIC_PARAMS (model parameters must be symbols)"
#endif

#include <stdexcept>
#include <string>
#include <type_traits>

#include "derived.hpp"
#include "nhvk/dynamics.hpp"
#include "nhvk/sym/expr.hpp"

namespace nhvk::sym {

namespace derive_detail {
/** @brief Names the parameters and makes each numeric one a symbol `param[i]`; records the boolean ones. */
struct ParamSymbols {
    DerivedModel* out;
    int i = 0;
    void operator()(const char* name, Expr& value, ParamDomain = ParamDomain::any) {
        value = Expr::variable(Var::param, i++);
        out->params.emplace_back(name);
    }
    void operator()(const char* name, bool&) {
        out->bool_params.push_back(i++);
        out->params.emplace_back(name);
    }
    // NOTE: a parameter declared `double` would be folded into the generated code as its default value and ignored
    // at run time: refuse it at build time.
    template <class V> void operator()(const char*, V&, ParamDomain = ParamDomain::any) {
        static_assert(sizeof(V) == 0, "a model parameter must be declared `nhvk::Param` (or `bool`), not a plain "
                                      "number: see nhvk/param.hpp");
    }
};
/** @brief Sets the boolean parameters from the bits of a variant number. */
struct BoolSetter {
    unsigned bits;
    int bit = 0;
    void operator()(const char*, Expr&, ParamDomain = ParamDomain::any) {}
    void operator()(const char*, bool& value) { value = ((bits >> bit++) & 1u) != 0; }
    template <class V> void operator()(const char*, V&, ParamDomain = ParamDomain::any) {}
};
inline std::vector<int> ids(const Expr* e, int count) {
    std::vector<int> r;
    for (int i = 0; i < count; ++i) r.push_back(e[i].id());
    return r;
}
} // namespace derive_detail

/** @brief Trace every part of model `M` into `g`. */
template <class M> DerivedModel derive(Graph& g, const std::string& cpp_type, const std::string& header) {
    static_assert(std::is_same<Param, Expr>::value, "model parameters must be symbols (NHVK_SYMBOLIC_PARAMS)");
    constexpr int n = M::n, k = M::k;
    GraphScope scope(g);
    DerivedModel out;
    out.cpp_type = cpp_type;
    out.header = header;
    out.n = n;
    out.k = k;
    M model{};
    model.visit_params(derive_detail::ParamSymbols{&out});
    if (out.bool_params.size() > 4) throw std::runtime_error(cpp_type + ": more than 4 boolean parameters");
    const unsigned n_variants = 1u << out.bool_params.size();
    Expr q[n], v[n], mu[k];
    for (int i = 0; i < n; ++i) {
        q[i] = Expr::variable(Var::q, i);
        v[i] = Expr::variable(Var::v, i);
    }
    for (int a = 0; a < k; ++a) mu[a] = Expr::variable(Var::mu, a);
    const Expr t = Expr::variable(Var::t, 0);
    for (unsigned bits = 0; bits < n_variants; ++bits) {
        model.visit_params(derive_detail::BoolSetter{bits});
        DerivedVariant dv;
        const LagrangianParts<M, Expr> nh = lagrangian_parts(model, q, v, t, static_cast<const Expr*>(nullptr));
        const LagrangianParts<M, Expr> vk = lagrangian_parts(model, q, v, t, static_cast<const Expr*>(mu));
        const ConstraintParts<M, Expr> cp = constraint_parts(model, q, v, t);
        dv.nh.W = derive_detail::ids(&nh.W[0][0], n * n);
        dv.nh.b = derive_detail::ids(nh.b, n);
        dv.vk.W = derive_detail::ids(&vk.W[0][0], n * n);
        dv.vk.b = derive_detail::ids(vk.b, n);
        dv.phi = derive_detail::ids(cp.phi, k);
        dv.J = derive_detail::ids(&cp.J[0][0], k * n);
        dv.gamma = derive_detail::ids(cp.gamma, k);
        dv.energy = energy(model, q, v, t).id();
        out.variants.push_back(std::move(dv));
    }
    return out;
}

} // namespace nhvk::sym
