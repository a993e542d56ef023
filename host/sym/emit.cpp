// SPDX-License-Identifier: MIT
#include "emit.hpp"

#include "nhvk/linalg.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace nhvk::sym {

std::string node_code(const Node& nd, const std::string& a, const std::string& b, const std::string& scalar,
                      bool header) {
    const auto number = [](double x) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", x);
        return std::string(buf);
    };
    switch (nd.op) {
    case Op::add:
        return a + " + " + b;
    case Op::sub:
        return a + " - " + b;
    case Op::mul:
        return a + " * " + b;
    case Op::div:
        return a + " / " + b;
    case Op::neg:
        return "-" + a;
    case Op::pow:
        if (nd.value == 2.0) return a + " * " + a;
        if (nd.value == 0.5) return "sqrt(" + a + ")";
        if (nd.value == -1.0) return scalar + "(1) / " + a;
        // NOTE: outside the headers the exponent stays a plain number: pow(Dual, number) is the power rule, while
        // pow(Dual, Dual) is exp(p log a), NaN for a negative base (x^3 at x < 0).
        return "pow(" + a + ", " + (header ? scalar + "(" + number(nd.value) + ")" : number(nd.value)) + ")";
    default:
        break;
    }
    // the elementary functions: their spelling in the table of nhvk/ops.hpp (headers), or their name, which namespace
    // nhvk overloads for every scalar type (plain numbers and the dual numbers)
    if (const FunctionOp* f = function_op(nd.op))
        return std::string(header ? f->spelling : f->name) + "(" + a + (f->arity == 2 ? ", " + b : std::string()) + ")";
    throw std::logic_error("emit: unexpected node");
}

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

std::string literal(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return std::string("T(") + buf + ")";
}

/** @brief The right-hand side of one node given the names of its arguments (the generated headers' form). */
std::string node_expr(const Node& nd, const std::string& a, const std::string& b) {
    return node_code(nd, a, b, "T", true);
}

/** @brief The parameter-only subexpressions of one variant that the functions read: slots of `Consts<T>::c`. */
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

/** @brief The body of one generated function: named temporaries for the state-dependent nodes, in topological
 *         order, each emitted once. */
class Body {
public:
    Body(const Graph& g, ConstTable& consts, std::string indent) : g_(g), k_(consts), in_(std::move(indent)) {}

    std::string ref(int id) {
        const Node& nd = g_.node(id);
        if (nd.op == Op::constant) return literal(nd.value);
        if (is_param_level(g_, id)) return "K.c[" + std::to_string(k_.slot(id)) + "]";
        if (nd.op == Op::variable) {
            switch (nd.var) {
            case Var::q:
                return "q[" + std::to_string(nd.index) + "]";
            case Var::v:
                return "v[" + std::to_string(nd.index) + "]";
            case Var::t:
                return "t";
            case Var::mu:
                return "mu[" + std::to_string(nd.index) + "]";
            case Var::lambda:
                return "lam_" + std::to_string(nd.index);
            case Var::param:
                break;
            }
            throw std::logic_error("emit: unexpected variable");
        }
        return "t" + std::to_string(id);
    }
    /** @brief Emit every state-dependent node `roots` need that is not emitted yet. */
    void need(const std::vector<int>& roots) {
        std::set<int> todo;
        std::vector<int> stack(roots.begin(), roots.end());
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            const Node& nd = g_.node(id);
            if (nd.op == Op::constant || nd.op == Op::variable || is_param_level(g_, id)) continue;
            if (emitted_.count(id) || todo.count(id)) continue;
            todo.insert(id);
            if (nd.a >= 0) stack.push_back(nd.a);
            if (nd.b >= 0) stack.push_back(nd.b);
        }
        for (const int id : todo) { // std::set: ascending ids = topological order
            const Node& nd = g_.node(id);
            line("const T t" + std::to_string(id) + " = " +
                 node_expr(nd, ref(nd.a), nd.b >= 0 ? ref(nd.b) : std::string()) + ";");
            emitted_.insert(id);
        }
    }
    void line(const std::string& s) { os_ << in_ << s << '\n'; }
    /** @brief `T NAME[m][m] = {…}; T r_[m] = {…};` from row-major node ids, then the LU solve (singular: return). */
    void lu_system(const std::string& name, const std::vector<int>& A, const std::vector<int>& r, int m) {
        const std::string sm = std::to_string(m);
        std::string init = "T " + name + "[" + sm + "][" + sm + "] = {";
        for (int i = 0; i < m; ++i) {
            init += i ? ", {" : "{";
            for (int j = 0; j < m; ++j) init += (j ? ", " : "") + ref(A[static_cast<std::size_t>(i * m + j)]);
            init += "}";
        }
        line(init + "};");
        std::string rr = "T r_[" + sm + "] = {";
        for (int i = 0; i < m; ++i) rr += (i ? ", " : "") + ref(r[static_cast<std::size_t>(i)]);
        line(rr + "};");
        line("if (!lu_solve(" + name + ", r_).ok) return Status::singular;");
    }
    std::string str() const { return os_.str(); }

private:
    const Graph& g_;
    ConstTable& k_;
    std::string in_;
    std::ostringstream os_;
    std::set<int> emitted_;
};

/** @brief The strings of `v` separated by `sep`. */
std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : std::string()) + v[i];
    return s;
}

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

/** @brief `if (power) *power = Σ_c m_c (J·v)_c;` with the multipliers named by `mult_name(c)`. */
template <class Name> void emit_power(Body& body, const std::vector<int>& jv, const Name& mult_name) {
    std::string p = "T(0)";
    for (std::size_t c = 0; c < jv.size(); ++c) p += " + " + mult_name(static_cast<int>(c)) + " * " + body.ref(jv[c]);
    body.line("if (power) *power = " + p + "; // the power of the reactions, λ·(J·v)");
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
            " coordinates (raise max_motion_n in host/sym/emit.cpp)");
    } else if constexpr (K > max_motion_k) {
        throw std::runtime_error(
            "the generator's saddle-point assembly is instantiated for k <= " + std::to_string(max_motion_k) +
            " constraints (raise max_motion_k in host/sym/emit.cpp)");
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
 *         after the code that returns `singular` when the determinant is not finite or has no correct digit left:
 *         `|det| ≤ ε·per(|M|)`, where the permanent of the block's absolute values is the sum of the magnitudes of
 *         the terms the determinant cancels (and scales with rows and columns as the determinant does). */
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
        std::vector<std::string> terms;
        for (const auto& [f, ps] : per) {
            if (f >= 0 && g.is_value(f, 0.0)) continue;
            std::vector<std::string> inner;
            for (const int p : ps) {
                if (g.is_value(p, 0.0)) continue;
                roots.push_back(p);
                inner.push_back("abs(" + body.ref(p) + ")");
            }
            if (inner.empty()) continue;
            std::string t = join(inner, " + ");
            if (f >= 0) {
                roots.push_back(f);
                t = "abs(" + body.ref(f) + ") * (" + t + ")";
            }
            terms.push_back(t);
        }
        body.need(roots);
        const std::string d = body.ref(det);
        const std::string bound =
            terms.empty() ? std::string("T(0)") : "NumericLimits<T>::epsilon() * (" + join(terms, " + ") + ")";
        // NOTE: one test for the bound, ±∞ and NaN (NaN fails both comparisons)
        body.line("if (!(abs(" + d + ") > " + bound + " && abs(" + d +
                  ") <= NumericLimits<T>::max())) return Status::singular;");
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

/** @brief The code that solves `[Wt −Jᵀ; J 0][a; m] = [−bt; γ]` into `a[]` and `mult[]` (and, with `power`, the
 *         reaction power `m·(J·v)` into `*power` when that pointer is not null), then returns ok. */
void emit_solve(Graph& g, Body& body, const SaddleParts& s, const DerivedVariant& dv, int n, int k, const char* mult,
                bool power = false) {
    const std::string M(mult);
    auto J = [&](int c, int j) { return dv.J[static_cast<std::size_t>(c * n + j)]; };
    const std::vector<int> jv = power ? emit_jv(g, body, dv, n, k) : std::vector<int>{};
    const SolveKind kind = choose_solve(g, s, n);
    if (kind != SolveKind::lu) {
        body.line(kind == SolveKind::schur_diagonal
                      ? "// [Wt −Jᵀ; J 0][a; m] = [−bt; γ] with Wt diagonal and constant: S m = γ + J Wt⁻¹ bt, "
                        "S = J Wt⁻¹ Jᵀ, a = Wt⁻¹ (Jᵀ m − bt)"
                      : "// [Wt −Jᵀ; J 0][a; m] = [−bt; γ] with Wt block-diagonal (blocks inverted in closed form): "
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
            const std::string s00 = body.ref(S[0]);
            // NOTE: one test for 0, ±∞ and NaN (NaN fails both comparisons)
            body.line("if (!(abs(" + s00 + ") > T(0) && abs(" + s00 +
                      ") <= NumericLimits<T>::max())) return Status::singular;");
            body.line("const T lam_0 = " + body.ref(r[0]) + " / " + s00 + ";");
        } else {
            body.lu_system("S_", S, r, k);
            for (int a = 0; a < k; ++a)
                body.line("const T lam_" + std::to_string(a) + " = r_[" + std::to_string(a) + "];");
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
        for (int i = 0; i < n; ++i)
            body.line("a[" + std::to_string(i) + "] = " + body.ref(acc[static_cast<std::size_t>(i)]) + ";");
        for (int c = 0; c < k; ++c) body.line(M + "[" + std::to_string(c) + "] = lam_" + std::to_string(c) + ";");
        if (power) emit_power(body, jv, [](int c) { return "lam_" + std::to_string(c); });
        body.line("return Status::ok;");
        return;
    }
    body.line("// [Wt −Jᵀ; J 0][a; m] = [−bt; γ]: LU with partial pivoting (nhvk/linalg.hpp)");
    const int m = n + k;
    std::vector<int> A, r;
    trace_motion_system_sized(g, s, dv, n, k, A, r);
    std::vector<int> roots(A);
    roots.insert(roots.end(), r.begin(), r.end());
    body.need(roots);
    body.lu_system("A_", A, r, m);
    for (int i = 0; i < n; ++i) body.line("a[" + std::to_string(i) + "] = r_[" + std::to_string(i) + "];");
    for (int c = 0; c < k; ++c) body.line(M + "[" + std::to_string(c) + "] = r_[" + std::to_string(n + c) + "];");
    if (power) emit_power(body, jv, [n](int c) { return "r_[" + std::to_string(n + c) + "]"; });
    body.line("return Status::ok;");
}

/** @brief One generated member function: its signature, and one body per variant. */
struct Function {
    std::string signature;
    std::string prologue; ///< `(void)x;` for arguments a body may not read
    std::vector<std::string> bodies;
};

std::string assemble(const Function& f) {
    std::ostringstream os;
    os << "    template <class T>\n    " << f.signature << " {\n" << f.prologue;
    if (f.bodies.size() == 1) {
        os << f.bodies[0];
    } else {
        // NOTE: the last variant is the else branch, so every path returns or assigns every output.
        for (std::size_t v = 0; v + 1 < f.bodies.size(); ++v)
            os << "        if (K.variant == " << v << ") {\n" << f.bodies[v] << "        }\n";
        os << "        {\n" << f.bodies.back() << "        }\n";
    }
    os << "    }\n";
    return os.str();
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

std::string emit_header(Graph& g, const DerivedModel& m) {
    const int n = m.n, k = m.k;
    const std::size_t nv = m.variants.size();
    std::vector<ConstTable> consts(nv);
    const std::string ind = nv == 1 ? "        " : "            ";
    Function nh{
        "NHVK_HD NHVK_FORCEINLINE static Status nh_accel(const Consts<T>& K, const T* q, const T* v, T t, T* a, "
        "T* lambda, T* power = nullptr)",
        "        (void)K; (void)q; (void)v; (void)t; (void)power;\n",
        {}};
    Function vk{"NHVK_HD NHVK_FORCEINLINE static Status vk_accel(const Consts<T>& K, const T* q, const T* v, "
                "const T* mu, T t, T* a, T* mudot)",
                "        (void)K; (void)q; (void)v; (void)mu; (void)t;\n",
                {}};
    Function cp{"NHVK_HD NHVK_FORCEINLINE static void constraint_parts(const Consts<T>& K, const T* q, const T* v, "
                "T t, T (&phi)[" +
                    std::to_string(k) + "], T (&J)[" + std::to_string(k) + "][" + std::to_string(n) + "], T (&gamma)[" +
                    std::to_string(k) + "])",
                "        (void)K; (void)q; (void)v; (void)t;\n",
                {}};
    Function km{"NHVK_HD NHVK_FORCEINLINE static void kinetic_metric(const Consts<T>& K, const T* q, const T* v, T t, "
                "T (&W)[" +
                    std::to_string(n) + "][" + std::to_string(n) + "])",
                "        (void)K; (void)q; (void)v; (void)t;\n",
                {}};
    Function en{"NHVK_HD NHVK_FORCEINLINE static T energy(const Consts<T>& K, const T* q, const T* v, T t)",
                "        (void)K; (void)q; (void)v; (void)t;\n",
                {}};
    std::vector<std::string> nh_kinds, vk_kinds;
    for (std::size_t vi = 0; vi < nv; ++vi) {
        const DerivedVariant& dv = m.variants[vi];
        nh_kinds.push_back(solve_kind_name(choose_solve(g, dv.nh, n)));
        vk_kinds.push_back(solve_kind_name(choose_solve(g, dv.vk, n)));
        {
            Body b(g, consts[vi], ind);
            emit_solve(g, b, dv.nh, dv, n, k, "lambda", true);
            nh.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            emit_solve(g, b, dv.vk, dv, n, k, "mudot");
            vk.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            std::vector<int> roots(dv.phi);
            roots.insert(roots.end(), dv.J.begin(), dv.J.end());
            roots.insert(roots.end(), dv.gamma.begin(), dv.gamma.end());
            b.need(roots);
            for (int a = 0; a < k; ++a) {
                b.line("phi[" + std::to_string(a) + "] = " + b.ref(dv.phi[static_cast<std::size_t>(a)]) + ";");
                b.line("gamma[" + std::to_string(a) + "] = " + b.ref(dv.gamma[static_cast<std::size_t>(a)]) + ";");
                for (int j = 0; j < n; ++j)
                    b.line("J[" + std::to_string(a) + "][" + std::to_string(j) +
                           "] = " + b.ref(dv.J[static_cast<std::size_t>(a * n + j)]) + ";");
            }
            if (nv > 1) b.line("return;");
            cp.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            b.need(dv.nh.W);
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j)
                    b.line("W[" + std::to_string(i) + "][" + std::to_string(j) +
                           "] = " + b.ref(dv.nh.W[static_cast<std::size_t>(i * n + j)]) + ";");
            if (nv > 1) b.line("return;");
            km.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            b.need({dv.energy});
            b.line("return " + b.ref(dv.energy) + ";");
            en.bodies.push_back(b.str());
        }
    }

    // ---- Consts<T> and consts<T>(p): the parameter-only nodes each variant's functions read ----
    std::size_t n_consts = 0;
    for (const ConstTable& c : consts) n_consts = std::max(n_consts, c.ids().size());
    Function cf{"NHVK_HD NHVK_FORCEINLINE static Consts<T> consts(const double* p)", "", {}};
    std::string variant_expr = "0";
    for (std::size_t b = 0; b < m.bool_params.size(); ++b)
        variant_expr += " + (p[" + std::to_string(m.bool_params[b]) + "] != 0.0 ? " + std::to_string(1u << b) + " : 0)";
    cf.prologue = "        (void)p;\n        Consts<T> K{};\n        K.variant = " + variant_expr + ";\n";
    for (std::size_t vi = 0; vi < nv; ++vi) {
        std::ostringstream os;
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
            return nd.op == Op::constant ? literal(nd.value) : "c" + std::to_string(id);
        };
        for (const int id : todo) {
            const Node& nd = g.node(id);
            const std::string rhs = nd.op == Op::variable
                                        ? "T(p[" + std::to_string(nd.index) + "])"
                                        : node_expr(nd, cref(nd.a), nd.b >= 0 ? cref(nd.b) : std::string());
            os << ind << "const T c" << id << " = " << rhs << ";\n";
        }
        for (std::size_t s = 0; s < consts[vi].ids().size(); ++s)
            os << ind << "K.c[" << s << "] = c" << consts[vi].ids()[s] << ";\n";
        if (nv > 1) os << ind << "return K;\n";
        cf.bodies.push_back(os.str());
    }
    if (nv == 1) cf.bodies[0] += "        return K;\n";

    std::ostringstream os;
    os << "// SPDX-License-Identifier: MIT\n"
       << "// Generated by nhvk-codegen from " << (m.header.empty() ? std::string("a model file") : m.header)
       << " (host/sym/): do not edit; edit the model and rebuild.\n"
       << "// The equations of " << m.cpp_type << " derived once by the reference AD over a symbolic scalar, folded "
       << "and\n// with common subexpressions shared. Saddle-point solves (per variant): nonholonomic "
       << join(nh_kinds, ",") << ", vakonomic " << join(vk_kinds, ",") << ".\n"
       << "#pragma once\n\n#include \"nhvk/generated.hpp\"\n"
       // NOTE: no header for a model file's model: its struct precedes these equations in one unit.
       << (m.header.empty() ? std::string() : "#include \"" + m.header + "\"\n") << "\nnamespace nhvk {\n\n"
       << "template <> struct Generated<" << m.cpp_type << "> {\n"
       << "    static constexpr int n = " << n << ", k = " << k << ", n_params = " << m.params.size()
       << ", n_variants = " << nv << ", n_consts = " << n_consts << ";\n"
       << "    static constexpr const char* nh_solve = \"" << join(nh_kinds, ",") << "\";\n"
       << "    static constexpr const char* vk_solve = \"" << join(vk_kinds, ",") << "\";\n"
       << "    /** @brief Parameter-only subexpressions, evaluated once per trajectory. */\n"
       << "    template <class T> struct Consts {\n        int variant;\n        T c[" << (n_consts ? n_consts : 1)
       << "];\n    };\n\n";
    os << assemble(cf) << '\n'
       << assemble(nh) << '\n'
       << assemble(vk) << '\n'
       << assemble(cp) << '\n'
       << assemble(km) << '\n'
       << assemble(en);
    os << "};\n\n} // namespace nhvk\n";
    return os.str();
}

} // namespace nhvk::sym
