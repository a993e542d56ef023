// SPDX-License-Identifier: MIT
// The table of elementary functions (include/nhvk/ops.hpp), walked row by row: the dual numbers' derivative against
// central finite differences of the value, the recorded graph against the plain evaluation, the spelling the
// generated headers call against the same value, the derivative traced over the recording scalar, and the name in
// the expression language (host/sym/parse.*) printed and parsed back.
#include <nhvk/dual.hpp>
#include <nhvk/sym/expr.hpp>
#include <nhvk/trig.hpp>
#include <sym/parse.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nhvk::ops_test {
// NOTE: in namespace nhvk, as the generated headers are: an unqualified `sin` there is nhvk::sin (and `trig_sin`
// resolves), where a using-directive elsewhere would also see ::sin and be ambiguous.
/** @brief Each function of the table called by its generated spelling, for T = P (double or float). */
template <class P> const std::map<sym::Op, P (*)(P, P)>& spelled() {
#define NHVK_TEST_SPELL_UNARY(name, spelling, ...) {sym::Op::name, [](P x, P) -> P { return spelling(x); }},
#define NHVK_TEST_SPELL_BINARY(name, spelling, ...) {sym::Op::name, [](P u, P w) -> P { return spelling(u, w); }},
    static const std::map<sym::Op, P (*)(P, P)> table = {NHVK_UNARY_FUNCTIONS(NHVK_TEST_SPELL_UNARY)
                                                             NHVK_BINARY_FUNCTIONS(NHVK_TEST_SPELL_BINARY)};
#undef NHVK_TEST_SPELL_UNARY
#undef NHVK_TEST_SPELL_BINARY
    return table;
}
} // namespace nhvk::ops_test

namespace {

using nhvk::Dual;
using nhvk::dispatch::apply_function;
using nhvk::sym::Expr;
using nhvk::sym::function_ops;
using nhvk::sym::FunctionOp;
using nhvk::sym::Graph;
using nhvk::sym::GraphScope;
using nhvk::sym::Op;
using nhvk::sym::Var;

/** @brief Arguments (u, w) where every function of the table is smooth, or NaN outside its domain (skipped). */
const std::vector<std::pair<double, double>> points = {{0.3, 0.8}, {-0.6, 0.45}, {0.9, -0.35}, {2.5, 1.7}};

double value(const FunctionOp& f, double u, double w) { return apply_function<double>(f.op, u, w); }

bool smooth_around(const FunctionOp& f, double u, double w, double h) {
    for (const double du : {-2 * h, 0.0, 2 * h})
        for (const double dw : {-2 * h, 0.0, 2 * h})
            if (!std::isfinite(value(f, u + du, w + dw))) return false;
    return true;
}

TEST(OpTable, HoldsEveryFunctionOfTheLanguage) {
    // the names the model-file language documents, with their arities (issue 23)
    const std::map<std::string, int> wanted = {{"sin", 1},   {"cos", 1},  {"tan", 1},  {"asin", 1},  {"acos", 1},
                                               {"atan", 1},  {"sinh", 1}, {"cosh", 1}, {"tanh", 1},  {"exp", 1},
                                               {"log", 1},   {"sqrt", 1}, {"abs", 1},  {"asinh", 1}, {"sign", 1},
                                               {"atan2", 2}, {"min", 2},  {"max", 2}};
    std::map<std::string, int> have;
    for (const FunctionOp& f : function_ops) {
        EXPECT_TRUE(have.emplace(f.name, f.arity).second) << f.name << " twice";
        EXPECT_EQ(nhvk::sym::function_op(f.op), &f) << f.name;
    }
    EXPECT_EQ(have, wanted);
    EXPECT_EQ(nhvk::sym::function_op(Op::add), nullptr);
    EXPECT_EQ(nhvk::sym::function_op(Op::pow), nullptr);
}

TEST(OpTable, DualDerivativesMatchFiniteDifferences) {
    const double h = 1e-5;
    int checked = 0;
    for (const FunctionOp& f : function_ops) {
        for (const auto& [u, w] : points) {
            if (!smooth_around(f, u, w, h)) continue;
            using D = Dual<double, 2>;
            D du(u), dw(w);
            du.d[0] = 1.0;
            dw.d[1] = 1.0;
            const D r = apply_function<D>(f.op, du, dw);
            EXPECT_EQ(r.val, value(f, u, w)) << f.name;
            const double fd_u = (value(f, u + h, w) - value(f, u - h, w)) / (2 * h);
            EXPECT_NEAR(r.d[0], fd_u, 1e-7 * (1 + std::abs(fd_u))) << f.name << " at " << u << ", " << w;
            if (f.arity == 2) {
                const double fd_w = (value(f, u, w + h) - value(f, u, w - h)) / (2 * h);
                EXPECT_NEAR(r.d[1], fd_w, 1e-7 * (1 + std::abs(fd_w))) << f.name << " at " << u << ", " << w;
            } else {
                EXPECT_EQ(r.d[1], 0.0) << f.name << ": a unary function reads its first argument only";
            }
            // second derivative: a nested dual against the difference of first derivatives
            using D1 = Dual<double, 1>;
            using D2 = Dual<D1, 1>;
            auto first = [&](double x) {
                D1 a(x);
                a.d[0] = 1.0;
                return apply_function<D1>(f.op, a, D1(w)).d[0];
            };
            D2 x2{D1(u)};
            x2.val.d[0] = 1.0;
            x2.d[0] = D1(1.0);
            const D2 r2 = apply_function<D2>(f.op, x2, D2(D1(w)));
            const double fd2 = (first(u + h) - first(u - h)) / (2 * h);
            EXPECT_NEAR(r2.d[0].d[0], fd2, 1e-6 * (1 + std::abs(fd2))) << f.name << " second derivative at " << u;
            EXPECT_DOUBLE_EQ(r2.val.d[0], r2.d[0].val) << f.name; // both tangents see the first derivative
            ++checked;
        }
    }
    EXPECT_GE(checked, 50);
}

TEST(OpTable, GraphEvaluationAndFoldingEqualThePlainValue) {
    Graph g;
    const int x = g.variable(Var::q, 0), y = g.variable(Var::q, 1);
    for (const FunctionOp& f : function_ops) {
        const int node = f.arity == 1 ? g.unary(f.op, x) : g.binary(f.op, x, y);
        EXPECT_EQ(g.node(node).op, f.op) << f.name;
        for (const auto& [u, w] : points) {
            const double expect = value(f, u, w);
            if (!std::isfinite(expect)) continue;
            const double got = g.evaluate(node, [&](Var, int i) { return i == 0 ? u : w; });
            EXPECT_EQ(got, expect) << f.name;
            // a function of constants folds to the same value
            const int c = f.arity == 1 ? g.unary(f.op, g.constant(u)) : g.binary(f.op, g.constant(u), g.constant(w));
            ASSERT_TRUE(g.is_constant(c)) << f.name;
            EXPECT_EQ(g.node(c).value, expect) << f.name;
        }
    }
    // against the C library directly, so that the table's value columns are checked too
    EXPECT_EQ(Graph::eval_unary(Op::sin, 0.7, 0.0), std::sin(0.7));
    EXPECT_EQ(Graph::eval_unary(Op::abs, -0.7, 0.0), 0.7);
    EXPECT_EQ(Graph::eval_unary(Op::sign, -0.7, 0.0), -1.0);
    EXPECT_EQ(Graph::eval_unary(Op::sign, 0.0, 0.0), 0.0);
    EXPECT_EQ(Graph::eval_binary(Op::atan2, 0.3, -0.8), std::atan2(0.3, -0.8));
    EXPECT_EQ(Graph::eval_binary(Op::min, 0.3, -0.8), -0.8);
    EXPECT_EQ(Graph::eval_binary(Op::max, 0.3, -0.8), 0.3);
    EXPECT_TRUE(std::isnan(Graph::eval_binary(Op::min, NAN, 1.0))); // a NaN is not hidden
    EXPECT_TRUE(std::isnan(Graph::eval_binary(Op::max, 1.0, NAN)));
}

TEST(OpTable, GeneratedSpellingComputesTheSameValue) {
    for (const FunctionOp& f : function_ops) {
        const auto it = nhvk::ops_test::spelled<double>().find(f.op);
        ASSERT_NE(it, nhvk::ops_test::spelled<double>().end()) << f.name;
        const auto itf = nhvk::ops_test::spelled<float>().find(f.op);
        ASSERT_NE(itf, nhvk::ops_test::spelled<float>().end()) << f.name;
        for (const auto& [u, w] : points) {
            const double expect = value(f, u, w);
            if (!std::isfinite(expect)) continue;
            // sin and cos are spelled trig_sin/trig_cos: on the host the C library's, so equal to the bit
            EXPECT_EQ(it->second(u, w), expect) << f.spelling;
            const float ff = itf->second(static_cast<float>(u), static_cast<float>(w));
            EXPECT_NEAR(ff, expect, 1e-6 * (1 + std::abs(expect))) << f.spelling << " in float";
        }
    }
}

TEST(OpTable, DerivativeTracedOverExprEqualsTheDualOne) {
    // Dual<Expr>: the derivative as graph nodes (abs, min and max through `sign`: no branch); evaluated, it is
    // the Dual<double> derivative.
    Graph g;
    GraphScope scope(g);
    using DE = Dual<Expr, 2>;
    using D = Dual<double, 2>;
    DE xu(Expr::variable(Var::q, 0)), xw(Expr::variable(Var::q, 1));
    xu.d[0] = Expr(1.0);
    xw.d[1] = Expr(1.0);
    for (const FunctionOp& f : function_ops) {
        const DE r = apply_function<DE>(f.op, xu, xw);
        for (const auto& [u, w] : points) {
            if (!smooth_around(f, u, w, 1e-5)) continue;
            D du(u), dw(w);
            du.d[0] = 1.0;
            dw.d[1] = 1.0;
            const D expect = apply_function<D>(f.op, du, dw);
            auto vars = [&](Var, int i) { return i == 0 ? u : w; };
            EXPECT_EQ(g.evaluate(r.val.id(), vars), expect.val) << f.name;
            for (int i = 0; i < 2; ++i)
                EXPECT_NEAR(g.evaluate(r.d[i].id(), vars), expect.d[i], 1e-15 * (1 + std::abs(expect.d[i])))
                    << f.name << " d" << i;
        }
    }
}

TEST(OpTable, AbsMinMaxTakeTheSelectedBranchAndTheMeanAtATie) {
    using D = Dual<double, 2>;
    D u(-0.5), w(0.25);
    u.d[0] = 1.0;
    w.d[1] = 1.0;
    EXPECT_EQ(abs(u).d[0], -1.0);
    EXPECT_EQ(abs(w).d[1], 1.0);
    EXPECT_EQ(min(u, w).d[0], 1.0);
    EXPECT_EQ(min(u, w).d[1], 0.0);
    EXPECT_EQ(max(u, w).d[0], 0.0);
    EXPECT_EQ(max(u, w).d[1], 1.0);
    D z(0.0);
    z.d[0] = 1.0;
    EXPECT_EQ(abs(z).val, 0.0);
    EXPECT_EQ(abs(z).d[0], 0.0); // sign(0): the mean of −1 and +1
    D a(0.25);
    a.d[0] = 1.0;
    EXPECT_EQ(min(a, w).val, 0.25);
    EXPECT_EQ(min(a, w).d[0], 0.5);
    EXPECT_EQ(min(a, w).d[1], 0.5);
}

TEST(OpTable, EachFunctionRoundTripsThroughTheParser) {
    Graph g;
    nhvk::sym::ParseScope s;
    s.coords = {"x", "y"};
    const int x = g.variable(Var::q, 0), y = g.variable(Var::q, 1);
    for (const FunctionOp& f : function_ops) {
        const int node = f.arity == 1 ? g.unary(f.op, x) : g.binary(f.op, x, y);
        const std::string call = std::string(f.name) + (f.arity == 1 ? "(x)" : "(x, y)");
        EXPECT_EQ(nhvk::sym::parse_expression(g, call, s), node) << call; // the parser's name and arity
        const std::string printed = nhvk::sym::to_text(g, node, s);
        EXPECT_EQ(printed, call);
        EXPECT_EQ(nhvk::sym::parse_expression(g, printed, s), node) << printed;
        const std::string wrong = std::string(f.name) + (f.arity == 1 ? "(x, y)" : "(x)");
        try {
            nhvk::sym::parse_expression(g, wrong, s);
            ADD_FAILURE() << wrong;
        } catch (const nhvk::sym::ParseError& e) {
            EXPECT_EQ(std::string(e.what()), f.arity == 1 ? std::string(f.name) + " takes 1 argument, got 2"
                                                          : std::string(f.name) + " takes 2 arguments, got 1");
        }
    }
}

} // namespace
