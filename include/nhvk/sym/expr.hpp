// SPDX-License-Identifier: MIT
/** @file
 *  @brief The symbolic layer: a scalar type `sym::Expr` that records every operation into a hash-consed expression
 *         graph with constant folding (host only).
 *
 *  nhvk derives a model's equations once, at build time, by running its ordinary forward-mode AD
 *  (`lagrangian_parts`, `constraint_parts`, `energy` of `nhvk/dynamics.hpp`) with `T = sym::Expr`: every first and
 *  second derivative becomes a node of one graph. Hash-consing makes equal subexpressions one node (common
 *  subexpression elimination for free); folding removes the exact zeros and ones the dual numbers carry (`0·x`,
 *  `x·1`, `x + 0`) and evaluates constant subexpressions. `host/sym/emit.*` prints the graph as straight-line C++.
 *
 *  The graph knows nothing of C++ models: a model whose `L` and `φ` are expression strings (parsed at run time) can
 *  build the same nodes and go through the same derivation and emitter.
 */
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "nhvk/dual.hpp"

namespace nhvk::sym {

/** @brief Operation of a node: a leaf, an arithmetic operator (`pow` raises `a` to the constant `value`), or one of
 *         the elementary functions of the table of nhvk/ops.hpp. */
enum class Op : std::uint8_t {
    constant,
    variable,
    add,
    sub,
    mul,
    div,
    neg,
    pow,
#define NHVK_OP_ENUM(name, ...) name,
    NHVK_UNARY_FUNCTIONS(NHVK_OP_ENUM) NHVK_BINARY_FUNCTIONS(NHVK_OP_ENUM)
#undef NHVK_OP_ENUM
};

/** @brief One elementary function of the table of nhvk/ops.hpp: its operation, its name in expressions, its spelling
 *         in the generated C++ and its number of arguments. */
struct FunctionOp {
    Op op;
    const char* name;
    const char* spelling;
    int arity;
};
/** @brief Every elementary function of the table, unary ones first, in the table's order. */
inline constexpr FunctionOp function_ops[] = {
#define NHVK_OP_UNARY_INFO(name, spelling, ...) {Op::name, #name, #spelling, 1},
#define NHVK_OP_BINARY_INFO(name, spelling, ...) {Op::name, #name, #spelling, 2},
    NHVK_UNARY_FUNCTIONS(NHVK_OP_UNARY_INFO) NHVK_BINARY_FUNCTIONS(NHVK_OP_BINARY_INFO)
#undef NHVK_OP_UNARY_INFO
#undef NHVK_OP_BINARY_INFO
};
/** @brief The table's entry of `op`; nullptr for the leaves and the arithmetic operators. */
inline const FunctionOp* function_op(Op op) {
    for (const FunctionOp& f : function_ops)
        if (f.op == op) return &f;
    return nullptr;
}

} // namespace nhvk::sym

namespace nhvk::dispatch {
/** @brief The elementary function `op` of the table applied to `u` (and `w` when it is binary) for any scalar `S`:
 *         double, float, a dual, `sym::Expr`. Throws for an operation that is not in the table. */
// NOTE: its own namespace, so that ordinary lookup of `sin` reaches namespace nhvk's functions (plain and dual) and
// ADL adds `sym::sin(Expr)`; inside nhvk::sym, `sym::sin(Expr)` would hide `nhvk::sin(double)`, and a double converts
// to an Expr.
template <class S> S apply_function(sym::Op op, const S& u, const S& w) {
    (void)w;
    switch (op) {
#define NHVK_APPLY_UNARY(name, ...)                                                                                    \
    case sym::Op::name:                                                                                                \
        return name(u);
#define NHVK_APPLY_BINARY(name, ...)                                                                                   \
    case sym::Op::name:                                                                                                \
        return name(u, w);
        NHVK_UNARY_FUNCTIONS(NHVK_APPLY_UNARY)
        NHVK_BINARY_FUNCTIONS(NHVK_APPLY_BINARY)
#undef NHVK_APPLY_UNARY
#undef NHVK_APPLY_BINARY
    default:
        break;
    }
    throw std::logic_error("sym: not an elementary function of the table (nhvk/ops.hpp)");
}
/** @brief `a^p` for a constant exponent (`Op::pow`), found as `apply_function`'s functions are. */
template <class S, class P> S apply_pow(const S& a, P p) { return pow(a, p); }
} // namespace nhvk::dispatch

namespace nhvk::sym {

/** @brief What a variable stands for: a coordinate, a velocity, time, a vakonomic multiplier, a model parameter, or
 *         a solved multiplier (the unknown of the k×k Schur system, used between the two stages of a solve). */
enum class Var : std::uint8_t { q, v, t, mu, param, lambda };

/** @brief One node. `a`, `b`: argument node ids (−1: none). */
struct Node {
    Op op = Op::constant;
    Var var = Var::q;
    int index = 0;
    int a = -1, b = -1;
    double value = 0.0;
};

/** @brief A hash-consed expression graph. Node ids are topologically ordered (arguments before their users). */
class Graph {
public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    const Node& node(int id) const { return nodes_.at(static_cast<std::size_t>(id)); }
    int size() const { return static_cast<int>(nodes_.size()); }
    bool is_constant(int id) const { return node(id).op == Op::constant; }
    bool is_value(int id, double c) const { return is_constant(id) && node(id).value == c; }

    int constant(double c) {
        Node n;
        n.op = Op::constant;
        n.value = c == 0.0 ? 0.0 : c; // NOTE: −0 and +0 are one node
        return intern(n);
    }
    int variable(Var v, int index) {
        Node n;
        n.op = Op::variable;
        n.var = v;
        n.index = index;
        return intern(n);
    }

    /** @brief `op(a)` with folding: constants evaluate, `−(−x) = x`. */
    int unary(Op op, int a) {
        if (is_constant(a)) {
            const double r = eval_unary(op, node(a).value, 0.0);
            if (std::isfinite(r)) return constant(r);
        }
        if (op == Op::neg && node(a).op == Op::neg) return node(a).a;
        Node n;
        n.op = op;
        n.a = a;
        return intern(n);
    }
    /** @brief `a^p` for a constant exponent. */
    int power(int a, double p) {
        if (p == 1.0) return a;
        if (p == 0.0) return constant(1.0);
        if (is_constant(a)) {
            const double r = std::pow(node(a).value, p);
            if (std::isfinite(r)) return constant(r);
        }
        Node n;
        n.op = Op::pow;
        n.a = a;
        n.value = p;
        return intern(n);
    }

    /** @brief `a op b` with the exact simplifications of IEEE arithmetic on structural zeros and ones. */
    int binary(Op op, int a, int b) {
        if (is_constant(a) && is_constant(b)) {
            const double r = eval_binary(op, node(a).value, node(b).value);
            if (std::isfinite(r)) return constant(r);
        }
        switch (op) {
        case Op::add:
            if (is_value(a, 0.0)) return b;
            if (is_value(b, 0.0)) return a;
            if (node(b).op == Op::neg) return binary(Op::sub, a, node(b).a);
            if (node(a).op == Op::neg) return binary(Op::sub, b, node(a).a);
            if (b < a) std::swap(a, b); // commutative: one canonical order
            break;
        case Op::sub:
            if (is_value(b, 0.0)) return a;
            if (is_value(a, 0.0)) return unary(Op::neg, b);
            if (a == b) return constant(0.0);
            if (node(b).op == Op::neg) return binary(Op::add, a, node(b).a);
            break;
        case Op::mul:
            if (is_value(a, 0.0) || is_value(b, 0.0)) return constant(0.0);
            if (is_value(a, 1.0)) return b;
            if (is_value(b, 1.0)) return a;
            if (is_value(a, -1.0)) return unary(Op::neg, b);
            if (is_value(b, -1.0)) return unary(Op::neg, a);
            // NOTE: signs move outward, (−x)·y = −(x·y) exactly, so that −(−…) can cancel
            if (node(a).op == Op::neg) return unary(Op::neg, binary(Op::mul, node(a).a, b));
            if (node(b).op == Op::neg) return unary(Op::neg, binary(Op::mul, a, node(b).a));
            if (b < a) std::swap(a, b);
            break;
        case Op::div:
            if (is_value(a, 0.0)) return constant(0.0);
            if (is_value(b, 1.0)) return a;
            if (is_value(b, -1.0)) return unary(Op::neg, a);
            if (node(a).op == Op::neg) return unary(Op::neg, binary(Op::div, node(a).a, b));
            if (node(b).op == Op::neg) return unary(Op::neg, binary(Op::div, a, node(b).a));
            break;
        default:
            break;
        }
        Node n;
        n.op = op;
        n.a = a;
        n.b = b;
        return intern(n);
    }

    /** @brief Bit mask over `Var` of the variables node `id` depends on. */
    unsigned dep_mask(int id) const { return deps_.at(static_cast<std::size_t>(id)); }

    /** @brief Evaluate node `id` given a value for each variable (`vars(kind, index)`). */
    double evaluate(int id, const std::function<double(Var, int)>& vars) const {
        std::vector<double> memo(nodes_.size(), 0.0);
        std::vector<char> done(nodes_.size(), 0);
        return eval_rec(id, vars, memo, done);
    }

    /** @brief `op(x)` for `neg`, `pow` (exponent `p`) and the unary functions of the table. */
    static double eval_unary(Op op, double x, double p) {
        if (op == Op::neg) return -x;
        if (op == Op::pow) return std::pow(x, p);
        if (const FunctionOp* f = function_op(op); f && f->arity == 1) return dispatch::apply_function(op, x, x);
        throw std::logic_error("sym: not a unary operation");
    }
    /** @brief `x op y` for the arithmetic operators and the binary functions of the table. */
    static double eval_binary(Op op, double x, double y) {
        switch (op) {
        case Op::add:
            return x + y;
        case Op::sub:
            return x - y;
        case Op::mul:
            return x * y;
        case Op::div:
            return x / y;
        default:
            break;
        }
        if (const FunctionOp* f = function_op(op); f && f->arity == 2) return dispatch::apply_function(op, x, y);
        throw std::logic_error("sym: not a binary operation");
    }

private:
    struct Key {
        std::uint8_t op, var;
        int index, a, b;
        std::uint64_t bits;
        bool operator==(const Key& o) const {
            return op == o.op && var == o.var && index == o.index && a == o.a && b == o.b && bits == o.bits;
        }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const {
            std::uint64_t h = 1469598103934665603ull;
            auto mix = [&](std::uint64_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
            mix(k.op);
            mix(k.var);
            mix(static_cast<std::uint64_t>(k.index));
            mix(static_cast<std::uint64_t>(static_cast<std::int64_t>(k.a)));
            mix(static_cast<std::uint64_t>(static_cast<std::int64_t>(k.b)));
            mix(k.bits);
            return static_cast<std::size_t>(h);
        }
    };

    int intern(const Node& n) {
        Key k{static_cast<std::uint8_t>(n.op),
              static_cast<std::uint8_t>(n.var),
              n.op == Op::variable ? n.index : 0,
              n.a,
              n.b,
              0};
        std::memcpy(&k.bits, &n.value, sizeof(double));
        const auto it = index_.find(k);
        if (it != index_.end()) return it->second;
        const int id = size();
        nodes_.push_back(n);
        unsigned d = 0;
        if (n.op == Op::variable) d = 1u << static_cast<unsigned>(n.var);
        if (n.a >= 0) d |= deps_[static_cast<std::size_t>(n.a)];
        if (n.b >= 0) d |= deps_[static_cast<std::size_t>(n.b)];
        deps_.push_back(d);
        index_.emplace(k, id);
        return id;
    }

    double eval_rec(int id, const std::function<double(Var, int)>& vars, std::vector<double>& memo,
                    std::vector<char>& done) const {
        const auto i = static_cast<std::size_t>(id);
        if (done[i]) return memo[i];
        const Node& n = nodes_[i];
        double r = 0.0;
        switch (n.op) {
        case Op::constant:
            r = n.value;
            break;
        case Op::variable:
            r = vars(n.var, n.index);
            break;
        default:
            if (n.b >= 0) {
                r = eval_binary(n.op, eval_rec(n.a, vars, memo, done), eval_rec(n.b, vars, memo, done));
            } else {
                r = eval_unary(n.op, eval_rec(n.a, vars, memo, done), n.value);
            }
            break;
        }
        memo[i] = r;
        done[i] = 1;
        return r;
    }

    std::vector<Node> nodes_;
    std::vector<unsigned> deps_;
    std::unordered_map<Key, int, KeyHash> index_;
};

/** @brief The graph that `Expr` operations record into (one per thread; set with `GraphScope`). */
inline Graph*& current_graph_ptr() {
    thread_local Graph* g = nullptr;
    return g;
}
inline Graph& current_graph() {
    Graph* g = current_graph_ptr();
    if (!g) throw std::logic_error("sym::Expr used outside a sym::GraphScope");
    return *g;
}

/** @brief Makes `g` the graph of this thread for its lifetime. */
class GraphScope {
public:
    explicit GraphScope(Graph& g) : saved_(current_graph_ptr()) { current_graph_ptr() = &g; }
    ~GraphScope() { current_graph_ptr() = saved_; }
    GraphScope(const GraphScope&) = delete;
    GraphScope& operator=(const GraphScope&) = delete;

private:
    Graph* saved_;
};

/** @brief A scalar that records: each value is a node of the current graph. */
class Expr {
public:
    Expr() : id_(current_graph().constant(0.0)) {}
    template <class U, std::enable_if_t<std::is_arithmetic<U>::value, int> = 0>
    Expr(U c) : id_(current_graph().constant(static_cast<double>(c))) {}
    static Expr from_id(int id) {
        Expr e(0.0);
        e.id_ = id;
        return e;
    }
    static Expr variable(Var v, int index) { return from_id(current_graph().variable(v, index)); }

    int id() const { return id_; }

    Expr& operator+=(const Expr& o) { return *this = *this + o; }
    Expr& operator-=(const Expr& o) { return *this = *this - o; }
    Expr& operator*=(const Expr& o) { return *this = *this * o; }
    Expr& operator/=(const Expr& o) { return *this = *this / o; }

    friend Expr operator+(const Expr& a) { return a; }
    friend Expr operator-(const Expr& a) { return from_id(current_graph().unary(Op::neg, a.id_)); }
    friend Expr operator+(const Expr& a, const Expr& b) { return bin(Op::add, a, b); }
    friend Expr operator-(const Expr& a, const Expr& b) { return bin(Op::sub, a, b); }
    friend Expr operator*(const Expr& a, const Expr& b) { return bin(Op::mul, a, b); }
    friend Expr operator/(const Expr& a, const Expr& b) { return bin(Op::div, a, b); }

    // NOTE: a value-dependent branch cannot be recorded in a straight-line graph; a model whose L, φ or F branches
    // on its arguments cannot be generated (its in_chart test may branch: it is evaluated at run time).
    [[noreturn]] static bool no_branch() {
        throw std::logic_error("sym: a model's L, phi or F compares values (a branch): not supported by code "
                               "generation; write it without a comparison");
    }
    friend bool operator<(const Expr&, const Expr&) { no_branch(); }
    friend bool operator>(const Expr&, const Expr&) { no_branch(); }
    friend bool operator<=(const Expr&, const Expr&) { no_branch(); }
    friend bool operator>=(const Expr&, const Expr&) { no_branch(); }

private:
    static Expr bin(Op op, const Expr& a, const Expr& b) { return from_id(current_graph().binary(op, a.id_, b.id_)); }
    int id_;
};

// The elementary functions of the table of nhvk/ops.hpp, recorded.
#define NHVK_SYM_UNARY(name, ...)                                                                                      \
    inline Expr name(const Expr& x) { return Expr::from_id(current_graph().unary(Op::name, x.id())); }
#define NHVK_SYM_BINARY(name, ...)                                                                                     \
    inline Expr name(const Expr& u, const Expr& w) {                                                                   \
        return Expr::from_id(current_graph().binary(Op::name, u.id(), w.id()));                                        \
    }
NHVK_UNARY_FUNCTIONS(NHVK_SYM_UNARY)
NHVK_BINARY_FUNCTIONS(NHVK_SYM_BINARY)
#undef NHVK_SYM_UNARY
#undef NHVK_SYM_BINARY
inline Expr sqr(const Expr& x) { return x * x; }
inline Expr pow(const Expr& x, double p) { return Expr::from_id(current_graph().power(x.id(), p)); }

} // namespace nhvk::sym

namespace nhvk {
/** @brief `sym::Expr` mixes with dual numbers like a plain number (`Dual<Expr, N>` is how the AD is traced). */
template <> struct is_scalar<sym::Expr> : std::true_type {};
} // namespace nhvk
