// SPDX-License-Identifier: MIT
#include "lower.hpp"

#include "nhvk/linalg.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

namespace nhvk::sym {

const char* solve_kind_name(SolveKind s) {
    switch (s) {
    case SolveKind::schur_diagonal:
        return "schur_diagonal";
    case SolveKind::schur_blocks:
        return "schur_blocks";
    case SolveKind::lu:
        break;
    }
    return "lu";
}

namespace {

constexpr unsigned param_bit = 1u << static_cast<unsigned>(Var::param);

/** @brief A node that depends on nothing but the parameters (and is not a bare constant). */
bool is_param_level(const Graph& g, int id) { return !g.is_constant(id) && (g.dep_mask(id) & ~param_bit) == 0u; }

/** @brief The parameter-only subexpressions of one variant that the functions read: slots of `Consts<T>`. */
class ConstTable {
public:
    int slot(int id) {
        const auto it = slot_.find(id);
        if (it != slot_.end()) return it->second;
        const int s = static_cast<int>(ids_.size());
        ids_.push_back(id);
        slot_.emplace(id, s);
        return s;
    }
    const std::vector<int>& ids() const { return ids_; }

private:
    std::vector<int> ids_;
    std::map<int, int> slot_;
};

Ref literal(double x) {
    Ref r;
    r.kind = Ref::Kind::literal;
    r.value = x;
    return r;
}

Ref ref_of(Ref::Kind kind, int index, Var var = Var::q) {
    Ref r;
    r.kind = kind;
    r.var = var;
    r.index = index;
    return r;
}

Ref multiplier(int c) { return ref_of(Ref::Kind::variable, c, Var::lambda); }

/** @brief `name` declared as node `nd` of arguments `a`, `b`. */
Let let(const Ref& name, const Node& nd, const Ref& a, const Ref& b) { return Let{name, nd.op, nd.value, a, b}; }

/** @brief The statements of one generated function: named temporaries for the state-dependent nodes, in
 *         topological order, each declared once. */
class Body {
public:
    Body(const Graph& g, ConstTable& consts) : g_(g), k_(consts) {}

    /** @brief How the statements read node `id`. NOTE: the first read of a parameter-only node gives it its slot, so
     *         the slots are numbered in the order the statements are lowered. */
    Ref ref(int id) {
        const Node& nd = g_.node(id);
        if (nd.op == Op::constant) return literal(nd.value);
        if (is_param_level(g_, id)) return ref_of(Ref::Kind::slot, k_.slot(id));
        if (nd.op == Op::variable) {
            if (nd.var == Var::param) throw std::logic_error("lower: unexpected variable");
            return ref_of(Ref::Kind::variable, nd.index, nd.var);
        }
        return ref_of(Ref::Kind::temp, id);
    }
    /** @brief Declare every state-dependent node `roots` need that is not declared yet. */
    void need(const std::vector<int>& roots) {
        std::set<int> todo;
        std::vector<int> stack(roots.begin(), roots.end());
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            const Node& nd = g_.node(id);
            if (nd.op == Op::constant || nd.op == Op::variable || is_param_level(g_, id)) continue;
            if (declared_.count(id) || todo.count(id)) continue;
            todo.insert(id);
            if (nd.a >= 0) stack.push_back(nd.a);
            if (nd.b >= 0) stack.push_back(nd.b);
        }
        for (const int id : todo) { // std::set: ascending ids = topological order
            const Node& nd = g_.node(id);
            // NOTE: at most one argument of a state-dependent node is parameter-only (else the node would be), so the
            // order of these two reads does not decide any slot
            const Ref a = ref(nd.a);
            add(let(ref_of(Ref::Kind::temp, id), nd, a, nd.b >= 0 ? ref(nd.b) : Ref{}));
            declared_.insert(id);
        }
    }
    void add(Statement s) { out_.push_back(std::move(s)); }
    void comment(std::string text) { add(Comment{std::move(text)}); }
    void store(Array array, int i, int j, const Ref& value) { add(Store{array, i, j, value}); }
    void ret(Return::What what) { add(Return{what, Ref{}}); }
    /** @brief The m×m system `A x = r` from row-major node ids, solved by LU. */
    void lu_system(System system, const std::vector<int>& A, const std::vector<int>& r, int m) {
        LuSolve lu;
        lu.system = system;
        lu.m = m;
        for (const int id : A) lu.A.push_back(ref(id));
        for (const int id : r) lu.r.push_back(ref(id));
        add(std::move(lu));
    }
    Statements take() { return std::move(out_); }

private:
    const Graph& g_;
    ConstTable& k_;
    Statements out_;
    std::set<int> declared_;
};

int sum(Graph& g, const std::vector<int>& terms) {
    int s = g.constant(0.0);
    for (const int t : terms) s = g.binary(Op::add, s, t);
    return s;
}

/** @brief The nodes `(J·v)_c` of the reaction power, emitted before the solve (for rolling_disc the kernels' registers
 *         were the same with them emitted after it; bench/results/2026-11-23-kernel-resources-power.md). */
std::vector<int> emit_jv(Graph& g, Body& body, const DerivedVariant& dv, int n, int k) {
    std::vector<int> jv(static_cast<std::size_t>(k));
    for (int c = 0; c < k; ++c) {
        std::vector<int> terms;
        for (int j = 0; j < n; ++j)
            terms.push_back(g.binary(Op::mul, dv.J[static_cast<std::size_t>(c * n + j)], g.variable(Var::v, j)));
        jv[static_cast<std::size_t>(c)] = sum(g, terms);
    }
    body.need(jv);
    return jv;
}

/** @brief When asked for, the power `Σ_c m_c (J·v)_c` with the multipliers read as `mult(c)`. */
template <class Mult> void emit_power(Body& body, const std::vector<int>& jv, const Mult& mult) {
    ReactionPower p;
    for (std::size_t c = 0; c < jv.size(); ++c) {
        p.multipliers.push_back(mult(static_cast<int>(c)));
        p.rates.push_back(body.ref(jv[c]));
    }
    body.add(std::move(p));
}

// The LU path solves the system that the engine's `motion_system` (nhvk/linalg.hpp) assembles, traced here with the
// recording scalar: one assembly for the reference equations and the generated ones. It needs the sizes at compile
// time: instantiated for n ≤ max_motion_n, k ≤ max_motion_k (the catalogue's largest model has n = 6, k = 2).
constexpr int max_motion_n = 12, max_motion_k = 6;

/** @brief `motion_system(W, J, b, γ)` traced into `g` for `N` coordinates and `K` constraints: `A` (row-major) and
 *         `r` as node ids. */
template <int N, int K>
void trace_motion_system(Graph& g, const SaddleParts& s, const DerivedVariant& dv, std::vector<int>& A,
                         std::vector<int>& r) {
    GraphScope scope(g);
    Expr W[N][N], J[K][N], b[N], gamma[K], Ax[N + K][N + K], rx[N + K];
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j) W[i][j] = Expr::from_id(s.W[static_cast<std::size_t>(i * N + j)]);
        b[i] = Expr::from_id(s.b[static_cast<std::size_t>(i)]);
    }
    for (int a = 0; a < K; ++a) {
        for (int j = 0; j < N; ++j) J[a][j] = Expr::from_id(dv.J[static_cast<std::size_t>(a * N + j)]);
        gamma[a] = Expr::from_id(dv.gamma[static_cast<std::size_t>(a)]);
    }
    motion_system(W, J, b, gamma, Ax, rx);
    A.clear();
    r.clear();
    for (const auto& row : Ax)
        for (const Expr& e : row) A.push_back(e.id());
    for (const Expr& e : rx) r.push_back(e.id());
}

/** @brief `trace_motion_system<n, k>` for run-time sizes `n`, `k` (searched from `N`, `K` upwards). */
template <int N = 1, int K = 1>
void trace_motion_system_sized(Graph& g, const SaddleParts& s, const DerivedVariant& dv, int n, int k,
                               std::vector<int>& A, std::vector<int>& r) {
    if constexpr (N > max_motion_n) {
        throw std::runtime_error(
            "the generator's saddle-point assembly is instantiated for n <= " + std::to_string(max_motion_n) +
            " coordinates (raise max_motion_n in host/sym/lower.cpp)");
    } else if constexpr (K > max_motion_k) {
        throw std::runtime_error(
            "the generator's saddle-point assembly is instantiated for k <= " + std::to_string(max_motion_k) +
            " constraints (raise max_motion_k in host/sym/lower.cpp)");
    } else if (n != N) {
        trace_motion_system_sized<N + 1, K>(g, s, dv, n, k, A, r);
    } else if (k != K) {
        trace_motion_system_sized<N, K + 1>(g, s, dv, n, k, A, r);
    } else {
        trace_motion_system<N, K>(g, s, dv, A, r);
    }
}

/** @brief `Wt⁻¹` for the Schur paths as row-major node ids (−1: a structural zero). `schur_diagonal`: `1/Wt_ii`,
 *         constants per trajectory. `schur_blocks`: each diagonal block in closed form, adjugate over determinant,
 *         after a `CheckSingular` (the function returns `singular`) when the determinant is not finite or has
 *         no correct digit left: `|det| ≤ ε·per(|M|)`, where the permanent of the block's absolute values is the
 *         sum of the magnitudes of the terms the determinant cancels (and scales with rows and columns as the
 *         determinant does). */
std::vector<int> inverse_metric(Graph& g, Body& body, const SaddleParts& s, int n, SolveKind kind) {
    std::vector<int> winv(static_cast<std::size_t>(n * n), -1);
    auto at = [n](int i, int j) { return static_cast<std::size_t>(i * n + j); };
    const int one = g.constant(1.0);
    if (kind == SolveKind::schur_diagonal) {
        for (int j = 0; j < n; ++j) winv[at(j, j)] = g.binary(Op::div, one, s.W[at(j, j)]);
        return winv;
    }
    auto mul = [&](int x, int y) { return g.binary(Op::mul, x, y); };
    auto sub = [&](int x, int y) { return g.binary(Op::sub, x, y); };
    for (const std::vector<int>& blk : diagonal_blocks(g, s, n)) {
        const int b = static_cast<int>(blk.size());
        auto M = [&](int i, int j) {
            return s.W[at(blk[static_cast<std::size_t>(i)], blk[static_cast<std::size_t>(j)])];
        };
        // NOTE: a 1×1 block of the parameters alone is as in `schur_diagonal`: not checked per evaluation
        if (b == 1 && is_param_level(g, M(0, 0))) {
            winv[at(blk[0], blk[0])] = g.binary(Op::div, one, M(0, 0));
            continue;
        }
        // per(|M|) = Σ_t |f_t| · Σ_u |p_tu|: f_t = −1 stands for a factor of one
        std::vector<std::pair<int, std::vector<int>>> per;
        std::vector<int> cof(static_cast<std::size_t>(b * b)); // cofactors C_ij, row-major
        int det = M(0, 0);
        if (b == 1) {
            cof[0] = one;
        } else if (b == 2) {
            const int p = mul(M(0, 0), M(1, 1)), q = mul(M(0, 1), M(1, 0));
            det = sub(p, q);
            cof = {M(1, 1), g.unary(Op::neg, M(1, 0)), g.unary(Op::neg, M(0, 1)), M(0, 0)};
            per.push_back({-1, {p, q}});
        } else {
            // C_ij = (−1)^(i+j) times the minor without row i and column j
            auto other = [](int i) { return std::pair<int, int>{i == 0 ? 1 : 0, i == 2 ? 1 : 2}; };
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) {
                    const auto [r0, r1] = other(i);
                    const auto [c0, c1] = other(j);
                    const int p = mul(M(r0, c0), M(r1, c1)), q = mul(M(r0, c1), M(r1, c0)), minor = sub(p, q);
                    cof[static_cast<std::size_t>(i * 3 + j)] = (i + j) % 2 ? g.unary(Op::neg, minor) : minor;
                    if (i == 0) per.push_back({M(0, j), {p, q}});
                }
            det = sum(g, {mul(M(0, 0), cof[0]), mul(M(0, 1), cof[1]), mul(M(0, 2), cof[2])});
        }
        std::vector<int> roots{det};
        CheckSingular check;
        for (const auto& [f, ps] : per) {
            if (f >= 0 && g.is_value(f, 0.0)) continue;
            PermanentTerm t;
            for (const int p : ps) {
                if (g.is_value(p, 0.0)) continue;
                roots.push_back(p);
                t.products.push_back(body.ref(p));
            }
            if (t.products.empty()) continue;
            if (f >= 0) {
                roots.push_back(f);
                t.factor = body.ref(f);
            }
            check.bound.push_back(std::move(t));
        }
        body.need(roots);
        check.value = body.ref(det);
        body.add(std::move(check));
        const int rdet = g.binary(Op::div, one, det);
        for (int i = 0; i < b; ++i)
            for (int j = 0; j < b; ++j) {
                const int e = mul(cof[static_cast<std::size_t>(j * b + i)], rdet); // (M⁻¹)_ij = C_ji / det
                if (!g.is_value(e, 0.0))
                    winv[at(blk[static_cast<std::size_t>(i)], blk[static_cast<std::size_t>(j)])] = e;
            }
    }
    return winv;
}

/** @brief The statements that solve `[Wt −Jᵀ; J 0][a; m] = [−bt; γ]` into `a[]` and `mult[]` (and, with `power`, the
 *         reaction power `m·(J·v)` into `*power` when that pointer is not null), then returns ok. */
void emit_solve(Graph& g, Body& body, const SaddleParts& s, const DerivedVariant& dv, int n, int k, Array mult,
                bool power = false) {
    auto J = [&](int c, int j) { return dv.J[static_cast<std::size_t>(c * n + j)]; };
    const std::vector<int> jv = power ? emit_jv(g, body, dv, n, k) : std::vector<int>{};
    const SolveKind kind = choose_solve(g, s, n);
    if (kind != SolveKind::lu) {
        body.comment(kind == SolveKind::schur_diagonal
                         ? "[Wt −Jᵀ; J 0][a; m] = [−bt; γ] with Wt diagonal and constant: S m = γ + J Wt⁻¹ bt, "
                           "S = J Wt⁻¹ Jᵀ, a = Wt⁻¹ (Jᵀ m − bt)"
                         : "[Wt −Jᵀ; J 0][a; m] = [−bt; γ] with Wt block-diagonal (blocks inverted in closed form): "
                           "S m = γ + J Wt⁻¹ bt, S = J Wt⁻¹ Jᵀ, a = Wt⁻¹ (Jᵀ m − bt)");
        const std::vector<int> winv = inverse_metric(g, body, s, n, kind);
        // the nonzero entries (i, j) of Wt⁻¹, row-major (for a diagonal Wt: the sums below in coordinate order)
        std::vector<std::pair<int, int>> nz;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                if (winv[static_cast<std::size_t>(i * n + j)] >= 0) nz.emplace_back(i, j);
        auto w = [&](int i, int j) { return winv[static_cast<std::size_t>(i * n + j)]; };
        std::vector<int> S(static_cast<std::size_t>(k * k)), r(static_cast<std::size_t>(k));
        if (kind == SolveKind::schur_blocks) {
            // Y = Wt⁻¹ Jᵀ (n×k), then S = J Y and J Wt⁻¹ bt = Yᵀ bt (Wt⁻¹ is symmetric)
            std::vector<int> Y(static_cast<std::size_t>(n * k));
            auto y = [&](int i, int c) -> int& { return Y[static_cast<std::size_t>(i * k + c)]; };
            for (int i = 0; i < n; ++i)
                for (int c = 0; c < k; ++c) {
                    std::vector<int> terms;
                    for (const auto& [r0, j] : nz)
                        if (r0 == i) terms.push_back(g.binary(Op::mul, w(i, j), J(c, j)));
                    y(i, c) = sum(g, terms);
                }
            for (int a = 0; a < k; ++a) {
                for (int c = a; c < k; ++c) {
                    std::vector<int> terms;
                    for (int i = 0; i < n; ++i) terms.push_back(g.binary(Op::mul, J(a, i), y(i, c)));
                    S[static_cast<std::size_t>(a * k + c)] = S[static_cast<std::size_t>(c * k + a)] = sum(g, terms);
                }
                std::vector<int> terms;
                for (int i = 0; i < n; ++i)
                    terms.push_back(g.binary(Op::mul, y(i, a), s.b[static_cast<std::size_t>(i)]));
                r[static_cast<std::size_t>(a)] =
                    g.binary(Op::add, dv.gamma[static_cast<std::size_t>(a)], sum(g, terms));
            }
        } else {
            for (int a = 0; a < k; ++a) {
                for (int c = a; c < k; ++c) {
                    std::vector<int> terms;
                    for (const auto& [i, j] : nz)
                        terms.push_back(g.binary(Op::mul, g.binary(Op::mul, J(a, i), J(c, j)), w(i, j)));
                    S[static_cast<std::size_t>(a * k + c)] = S[static_cast<std::size_t>(c * k + a)] = sum(g, terms);
                }
                std::vector<int> terms;
                for (const auto& [i, j] : nz)
                    terms.push_back(
                        g.binary(Op::mul, g.binary(Op::mul, J(a, i), w(i, j)), s.b[static_cast<std::size_t>(j)]));
                r[static_cast<std::size_t>(a)] =
                    g.binary(Op::add, dv.gamma[static_cast<std::size_t>(a)], sum(g, terms));
            }
        }
        std::vector<int> roots(S);
        roots.insert(roots.end(), r.begin(), r.end());
        body.need(roots);
        if (k == 1) {
            const Ref s00 = body.ref(S[0]);
            body.add(CheckSingular{s00, {}});
            body.add(Let{multiplier(0), Op::div, 0.0, body.ref(r[0]), s00});
        } else {
            body.lu_system(System::schur, S, r, k);
            for (int a = 0; a < k; ++a) body.add(Bind{multiplier(a), ref_of(Ref::Kind::solution, a)});
        }
        // a_i = Σ_j (Wt⁻¹)_ij (Jᵀ m − bt)_j, the force (Jᵀ m − bt)_j formed where first needed
        std::vector<int> force(static_cast<std::size_t>(n), -1);
        auto force_at = [&](int j) {
            int& f = force[static_cast<std::size_t>(j)];
            if (f < 0) {
                std::vector<int> terms;
                for (int c = 0; c < k; ++c) terms.push_back(g.binary(Op::mul, J(c, j), g.variable(Var::lambda, c)));
                f = g.binary(Op::sub, sum(g, terms), s.b[static_cast<std::size_t>(j)]);
            }
            return f;
        };
        std::vector<std::vector<int>> acc_terms(static_cast<std::size_t>(n));
        for (const auto& [i, j] : nz)
            acc_terms[static_cast<std::size_t>(i)].push_back(g.binary(Op::mul, w(i, j), force_at(j)));
        std::vector<int> acc(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) acc[static_cast<std::size_t>(i)] = sum(g, acc_terms[static_cast<std::size_t>(i)]);
        body.need(acc);
        for (int i = 0; i < n; ++i) body.store(Array::a, i, -1, body.ref(acc[static_cast<std::size_t>(i)]));
        for (int c = 0; c < k; ++c) body.store(mult, c, -1, multiplier(c));
        if (power) emit_power(body, jv, multiplier);
        body.ret(Return::What::ok);
        return;
    }
    body.comment("[Wt −Jᵀ; J 0][a; m] = [−bt; γ]: LU with partial pivoting (nhvk/linalg.hpp)");
    const int m = n + k;
    std::vector<int> A, r;
    trace_motion_system_sized(g, s, dv, n, k, A, r);
    std::vector<int> roots(A);
    roots.insert(roots.end(), r.begin(), r.end());
    body.need(roots);
    body.lu_system(System::saddle, A, r, m);
    const auto x = [](int row) { return ref_of(Ref::Kind::solution, row); };
    for (int i = 0; i < n; ++i) body.store(Array::a, i, -1, x(i));
    for (int c = 0; c < k; ++c) body.store(mult, c, -1, x(n + c));
    if (power) emit_power(body, jv, [&](int c) { return x(n + c); });
    body.ret(Return::What::ok);
}

} // namespace

std::vector<std::vector<int>> diagonal_blocks(const Graph& g, const SaddleParts& s, int n) {
    std::vector<int> block(static_cast<std::size_t>(n), -1);
    std::vector<std::vector<int>> blocks;
    for (int start = 0; start < n; ++start) {
        if (block[static_cast<std::size_t>(start)] >= 0) continue;
        const int id = static_cast<int>(blocks.size());
        blocks.emplace_back();
        std::vector<int> stack{start};
        block[static_cast<std::size_t>(start)] = id;
        while (!stack.empty()) {
            const int i = stack.back();
            stack.pop_back();
            blocks.back().push_back(i);
            for (int j = 0; j < n; ++j) {
                const bool coupled = !g.is_value(s.W[static_cast<std::size_t>(i * n + j)], 0.0) ||
                                     !g.is_value(s.W[static_cast<std::size_t>(j * n + i)], 0.0);
                if (j != i && coupled && block[static_cast<std::size_t>(j)] < 0) {
                    block[static_cast<std::size_t>(j)] = id;
                    stack.push_back(j);
                }
            }
        }
        std::sort(blocks.back().begin(), blocks.back().end());
    }
    return blocks;
}

SolveKind choose_solve(const Graph& g, const SaddleParts& s, int n) {
    constexpr unsigned mu_bit = 1u << static_cast<unsigned>(Var::mu);
    constexpr std::size_t max_block = 3; // inverted in closed form; larger blocks go through the LU
    const std::vector<std::vector<int>> blocks = diagonal_blocks(g, s, n);
    bool diagonal_constant = true, mu_free = true;
    for (const std::vector<int>& blk : blocks) {
        const int i0 = blk.front();
        const int d = s.W[static_cast<std::size_t>(i0 * n + i0)];
        if (blk.size() == 1 && g.is_value(d, 0.0)) return SolveKind::lu; // a zero row of Wt: only the LU can tell
        if (blk.size() > max_block) return SolveKind::lu;
        if (blk.size() > 1 || (g.dep_mask(d) & ~param_bit) != 0u) diagonal_constant = false;
        for (const int i : blk)
            for (const int j : blk)
                if ((g.dep_mask(s.W[static_cast<std::size_t>(i * n + j)]) & mu_bit) != 0u) mu_free = false;
    }
    if (diagonal_constant) return SolveKind::schur_diagonal;
    return mu_free ? SolveKind::schur_blocks : SolveKind::lu;
}

LoweredModel lower(Graph& g, const DerivedModel& m) {
    const int n = m.n, k = m.k;
    const std::size_t nv = m.variants.size();
    std::vector<ConstTable> consts(nv);
    LoweredModel out;
    out.cpp_type = m.cpp_type;
    out.header = m.header;
    out.n = n;
    out.k = k;
    out.n_params = m.params.size();
    out.bool_params = m.bool_params;
    Function cf{FunctionKind::consts, {}}, nh{FunctionKind::nh_accel, {}}, vk{FunctionKind::vk_accel, {}},
        cp{FunctionKind::constraint_parts, {}}, km{FunctionKind::kinetic_metric, {}}, en{FunctionKind::energy, {}};
    for (std::size_t vi = 0; vi < nv; ++vi) {
        const DerivedVariant& dv = m.variants[vi];
        out.nh_solve.push_back(choose_solve(g, dv.nh, n));
        out.vk_solve.push_back(choose_solve(g, dv.vk, n));
        {
            Body b(g, consts[vi]);
            emit_solve(g, b, dv.nh, dv, n, k, Array::lambda, true);
            nh.variants.push_back(b.take());
        }
        {
            Body b(g, consts[vi]);
            emit_solve(g, b, dv.vk, dv, n, k, Array::mudot);
            vk.variants.push_back(b.take());
        }
        // NOTE: the void functions return at the end of each variant but the last, which is the else branch
        {
            Body b(g, consts[vi]);
            std::vector<int> roots(dv.phi);
            roots.insert(roots.end(), dv.J.begin(), dv.J.end());
            roots.insert(roots.end(), dv.gamma.begin(), dv.gamma.end());
            b.need(roots);
            for (int a = 0; a < k; ++a) {
                b.store(Array::phi, a, -1, b.ref(dv.phi[static_cast<std::size_t>(a)]));
                b.store(Array::gamma, a, -1, b.ref(dv.gamma[static_cast<std::size_t>(a)]));
                for (int j = 0; j < n; ++j) b.store(Array::J, a, j, b.ref(dv.J[static_cast<std::size_t>(a * n + j)]));
            }
            if (nv > 1) b.ret(Return::What::nothing);
            cp.variants.push_back(b.take());
        }
        {
            Body b(g, consts[vi]);
            b.need(dv.nh.W);
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j)
                    b.store(Array::W, i, j, b.ref(dv.nh.W[static_cast<std::size_t>(i * n + j)]));
            if (nv > 1) b.ret(Return::What::nothing);
            km.variants.push_back(b.take());
        }
        {
            Body b(g, consts[vi]);
            b.need({dv.energy});
            b.add(Return{Return::What::value, b.ref(dv.energy)});
            en.variants.push_back(b.take());
        }
    }

    // ---- consts<T>(p): the parameter-only nodes each variant's functions read, into the slots of Consts<T> ----
    for (std::size_t vi = 0; vi < nv; ++vi) {
        Statements body;
        std::set<int> todo;
        std::vector<int> stack(consts[vi].ids().begin(), consts[vi].ids().end());
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            if (g.is_constant(id) || todo.count(id)) continue;
            todo.insert(id);
            const Node& nd = g.node(id);
            if (nd.a >= 0) stack.push_back(nd.a);
            if (nd.b >= 0) stack.push_back(nd.b);
        }
        auto cref = [&](int id) {
            const Node& nd = g.node(id);
            return nd.op == Op::constant ? literal(nd.value) : ref_of(Ref::Kind::param_temp, id);
        };
        for (const int id : todo) { // std::set: ascending ids = topological order
            const Node& nd = g.node(id);
            if (nd.op == Op::variable) body.push_back(Bind{cref(id), ref_of(Ref::Kind::variable, nd.index, nd.var)});
            else body.push_back(let(cref(id), nd, cref(nd.a), nd.b >= 0 ? cref(nd.b) : Ref{}));
        }
        for (std::size_t s = 0; s < consts[vi].ids().size(); ++s)
            body.push_back(Store{Array::consts, static_cast<int>(s), -1, cref(consts[vi].ids()[s])});
        body.push_back(Return{Return::What::consts, Ref{}});
        cf.variants.push_back(std::move(body));
        out.n_consts = std::max(out.n_consts, consts[vi].ids().size());
    }
    out.functions = {std::move(cf), std::move(nh), std::move(vk), std::move(cp), std::move(km), std::move(en)};
    return out;
}

} // namespace nhvk::sym
