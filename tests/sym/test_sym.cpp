// SPDX-License-Identifier: MIT
// The symbolic layer (include/nhvk/sym/expr.hpp, host/sym/lower.*, print.*): hash-consing, the exact folding rules,
// graph evaluation against plain arithmetic, derivatives traced through the dual numbers against hand derivatives, and
// the emitter's choice of solve, its hoisting of parameter-only subexpressions, its statement lists and their printing.
#include <nhvk/dual.hpp>
#include <nhvk/sym/expr.hpp>
#include <sym/emit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
#include <vector>

namespace {

using nhvk::sym::Expr;
using nhvk::sym::Graph;
using nhvk::sym::GraphScope;
using nhvk::sym::Op;
using nhvk::sym::Var;

TEST(Sym, EqualExpressionsAreOneNode) {
    Graph g;
    GraphScope s(g);
    const Expr x = Expr::variable(Var::q, 0), y = Expr::variable(Var::v, 1);
    const Expr a = sin(x) * y + x, b = sin(x) * y + x;
    EXPECT_EQ(a.id(), b.id());
    EXPECT_EQ((x * y).id(), (y * x).id()); // commutative operations are stored in one order
    EXPECT_EQ((x + y).id(), (y + x).id());
    EXPECT_NE((x - y).id(), (y - x).id());
    const int before = g.size();
    (void)(sin(x) * y + x);
    EXPECT_EQ(g.size(), before);
}

TEST(Sym, FoldsStructuralZerosOnesAndConstants) {
    Graph g;
    GraphScope s(g);
    const Expr x = Expr::variable(Var::q, 0);
    EXPECT_TRUE(g.is_value((x * 0.0).id(), 0.0));
    EXPECT_EQ((x * 1.0).id(), x.id());
    EXPECT_EQ((x + 0.0).id(), x.id());
    EXPECT_EQ((0.0 + x).id(), x.id());
    EXPECT_EQ((x - 0.0).id(), x.id());
    EXPECT_TRUE(g.is_value((x - x).id(), 0.0));
    EXPECT_EQ((-(-x)).id(), x.id());
    EXPECT_EQ(((-x) * (-x)).id(), (x * x).id()); // signs move outward and cancel
    EXPECT_EQ((x / 1.0).id(), x.id());
    EXPECT_TRUE(g.is_value((Expr(2.0) * Expr(3.5)).id(), 7.0));
    EXPECT_TRUE(g.is_value(sin(Expr(0.0)).id(), 0.0));
    EXPECT_TRUE(g.is_value(pow(x, 0.0).id(), 1.0));
    // a non-finite constant is not folded (it stays an operation and evaluates at run time)
    EXPECT_FALSE(g.is_constant((Expr(1.0) / Expr(0.0)).id()));
}

TEST(Sym, EvaluatesLikePlainArithmetic) {
    Graph g;
    GraphScope s(g);
    const Expr x = Expr::variable(Var::q, 0), y = Expr::variable(Var::v, 0), p = Expr::variable(Var::param, 0);
    const Expr e = atan2(y, x) + sqrt(x * x + y * y) * exp(-p) / cosh(y) - pow(x, 3.0) + log(p) * asinh(x);
    auto vars = [](Var v, int) { return v == Var::q ? 0.7 : v == Var::v ? -1.3 : 2.5; };
    const double X = 0.7, Y = -1.3, P = 2.5;
    const double expect = std::atan2(Y, X) + std::sqrt(X * X + Y * Y) * std::exp(-P) / std::cosh(Y) - std::pow(X, 3.0) +
                          std::log(P) * std::asinh(X);
    EXPECT_NEAR(g.evaluate(e.id(), vars), expect, 1e-14);
    EXPECT_TRUE(g.dep_mask(e.id()) & (1u << static_cast<unsigned>(Var::param)));
    EXPECT_FALSE(g.dep_mask(e.id()) & (1u << static_cast<unsigned>(Var::t)));
}

TEST(Sym, DualNumbersOverExprGiveTheDerivatives) {
    // d/dx and d²/dx dy of f = x² sin(y) + x y traced through Dual<Dual<Expr>>, checked against the hand derivatives.
    Graph g;
    GraphScope s(g);
    using D1 = nhvk::Dual<Expr, 2>;
    using D2 = nhvk::Dual<D1, 2>;
    D2 x = D2(D1(Expr::variable(Var::q, 0))), y = D2(D1(Expr::variable(Var::q, 1)));
    x.val.d[0] = Expr(1.0);
    x.d[0] = D1(Expr(1.0));
    y.val.d[1] = Expr(1.0);
    y.d[1] = D1(Expr(1.0));
    const D2 f = x * x * sin(y) + x * y;
    auto at = [](Var, int i) { return i == 0 ? 0.3 : 1.1; };
    const double X = 0.3, Y = 1.1;
    EXPECT_NEAR(g.evaluate(f.val.d[0].id(), at), 2 * X * std::sin(Y) + Y, 1e-15);    // f_x
    EXPECT_NEAR(g.evaluate(f.d[1].d[0].id(), at), 2 * X * std::cos(Y) + 1.0, 1e-15); // f_xy
    EXPECT_NEAR(g.evaluate(f.d[1].d[1].id(), at), -X * X * std::sin(Y), 1e-15);      // f_yy
    EXPECT_TRUE(g.is_value(nhvk::Dual<Expr, 1>(Expr(2.0)).d[0].id(), 0.0));          // a constant's tangent is 0
}

TEST(Sym, ComparisonsAreRefused) {
    Graph g;
    GraphScope s(g);
    const Expr x = Expr::variable(Var::q, 0);
    EXPECT_THROW((void)(x < Expr(1.0)), std::logic_error);
}

/** A hand-built 2-dof model: W = diag(m, 2m), one linear constraint v0 − q1 v1 = 0, and a parameter-only term. */
nhvk::sym::DerivedModel toy(Graph& g, bool dense_w) {
    GraphScope s(g);
    const Expr m = Expr::variable(Var::param, 0), q1 = Expr::variable(Var::q, 1), v0 = Expr::variable(Var::v, 0),
               v1 = Expr::variable(Var::v, 1);
    nhvk::sym::DerivedModel d;
    d.cpp_type = "Toy";
    d.header = "toy.hpp";
    d.n = 2;
    d.k = 1;
    d.params = {"m"};
    nhvk::sym::DerivedVariant dv;
    const Expr w01 = dense_w ? q1 * m : Expr(0.0);
    dv.nh.W = {m.id(), w01.id(), w01.id(), (2.0 * m).id()};
    dv.nh.b = {(m * sin(m) * v1).id(), Expr(0.0).id()};
    dv.vk = dv.nh;
    dv.phi = {(v0 - q1 * v1).id()};
    dv.J = {Expr(1.0).id(), (-q1).id()};
    dv.gamma = {(v1 * v1).id()};
    dv.energy = (0.5 * m * v0 * v0).id();
    d.variants.push_back(dv);
    return d;
}

TEST(SymEmit, ChoosesTheSchurComplementForAConstantDiagonalMetric) {
    Graph g;
    const auto d = toy(g, false);
    EXPECT_EQ(nhvk::sym::choose_solve(g, d.variants[0].nh, 2), nhvk::sym::SolveKind::schur_diagonal);
    const std::string h = nhvk::sym::emit_header(g, d);
    EXPECT_NE(h.find("nh_solve = \"schur_diagonal\""), std::string::npos);
    EXPECT_NE(h.find("K.c["), std::string::npos) << "parameter-only terms are hoisted into Consts";
    EXPECT_NE(h.find("trig_sin(c"), std::string::npos) << "sin(m) is computed in consts(), once per trajectory, "
                                                          "through nhvk/trig.hpp";
    EXPECT_EQ(h.find("lu_solve"), std::string::npos);
    EXPECT_EQ(h, nhvk::sym::emit_header(g, d)) << "the emitter is deterministic";
}

TEST(SymEmit, InvertsASmallStateDependentBlockInClosedForm) {
    Graph g;
    const auto d = toy(g, true);
    EXPECT_EQ(nhvk::sym::choose_solve(g, d.variants[0].nh, 2), nhvk::sym::SolveKind::schur_blocks);
    const std::string h = nhvk::sym::emit_header(g, d);
    EXPECT_NE(h.find("nh_solve = \"schur_blocks\""), std::string::npos);
    EXPECT_EQ(h.find("lu_solve"), std::string::npos) << "k = 1: one division after the 2×2 block's adjugate";
    EXPECT_NE(h.find("> NumericLimits<T>::epsilon() * ("), std::string::npos)
        << "the block's determinant is checked against the permanent of its absolute values";
}

TEST(SymLower, ASchurComplementOfOneConstraintIsCheckedThenDivided) {
    Graph g;
    const nhvk::sym::LoweredModel lm = nhvk::sym::lower(g, toy(g, false));
    ASSERT_EQ(lm.functions.size(), 6u);
    const nhvk::sym::Function& nh = lm.functions[1];
    ASSERT_EQ(nh.kind, nhvk::sym::FunctionKind::nh_accel);
    ASSERT_EQ(nh.variants.size(), 1u);
    const nhvk::sym::Statements& body = nh.variants[0];
    const auto is = [&](auto tag) {
        return std::count_if(body.begin(), body.end(),
                             [](const nhvk::sym::Statement& st) { return std::holds_alternative<decltype(tag)>(st); });
    };
    EXPECT_EQ(is(nhvk::sym::LuSolve{}), 0);
    EXPECT_EQ(is(nhvk::sym::CheckSingular{}), 1);
    EXPECT_EQ(is(nhvk::sym::Store{}), 3) << "a[0], a[1], lambda[0]";
    const auto check = std::find_if(body.begin(), body.end(), [](const nhvk::sym::Statement& st) {
        return std::holds_alternative<nhvk::sym::CheckSingular>(st);
    });
    ASSERT_TRUE(check != body.end() && std::holds_alternative<nhvk::sym::Let>(*(check + 1)));
    EXPECT_EQ(std::get<nhvk::sym::Let>(*(check + 1)).op, Op::div) << "then λ = r / S";
    ASSERT_TRUE(std::holds_alternative<nhvk::sym::Return>(body.back()));
    EXPECT_EQ(std::get<nhvk::sym::Return>(body.back()).what, nhvk::sym::Return::What::ok);
}

TEST(SymPrint, PrintsAStatementListWithoutTheGraph) {
    using nhvk::sym::Ref;
    const auto temp = [](int id) { return Ref{Ref::Kind::temp, Var::q, id, 0.0}; };
    const Ref q0{Ref::Kind::variable, Var::q, 0, 0.0}, two{Ref::Kind::literal, Var::q, 0, 2.0};
    nhvk::sym::LuSolve lu{nhvk::sym::System::schur, 2, {temp(3), two, two, temp(3)}, {q0, temp(4)}};
    const nhvk::sym::Statements body = {
        nhvk::sym::Comment{"S m = r"},
        nhvk::sym::Let{temp(3), Op::mul, 0.0, q0, two},
        lu,
        nhvk::sym::Store{nhvk::sym::Array::mudot, 1, -1, Ref{Ref::Kind::solution, Var::q, 1, 0.0}},
        nhvk::sym::Return{nhvk::sym::Return::What::ok, Ref{}},
    };
    EXPECT_EQ(nhvk::sym::print_statements(body, "  "), "  // S m = r\n"
                                                       "  const T t3 = q[0] * T(2);\n"
                                                       "  T S_[2][2] = {{t3, T(2)}, {T(2), t3}};\n"
                                                       "  T r_[2] = {q[0], t4};\n"
                                                       "  if (!lu_solve(S_, r_).ok) return Status::singular;\n"
                                                       "  mudot[1] = r_[1];\n"
                                                       "  return Status::ok;\n");
}

// A CheckSingular does not leave the function: every test is remembered, the body goes on (no branch and no join in
// the right-hand side of every stage), and the `ok` return gives `singular` when any of them failed, a later one
// passing included; a body without a test returns `ok` as before.
TEST(SymPrint, CheckSingularIsRememberedUntilTheReturn) {
    using nhvk::sym::Ref;
    const auto temp = [](int id) { return Ref{Ref::Kind::temp, Var::q, id, 0.0}; };
    const Ref q0{Ref::Kind::variable, Var::q, 0, 0.0}, q1{Ref::Kind::variable, Var::q, 1, 0.0};
    const nhvk::sym::Return ok{nhvk::sym::Return::What::ok, Ref{}};
    const nhvk::sym::Statements body = {
        nhvk::sym::Let{temp(2), Op::mul, 0.0, q0, q1},
        nhvk::sym::CheckSingular{temp(2), {}},
        nhvk::sym::Let{temp(3), Op::div, 0.0, q1, temp(2)},
        nhvk::sym::CheckSingular{temp(3), {nhvk::sym::PermanentTerm{q0, {q1}}}},
        nhvk::sym::Store{nhvk::sym::Array::a, 0, -1, temp(3)},
        ok,
    };
    EXPECT_EQ(nhvk::sym::print_statements(body, "  "),
              "  bool regular_ = true; // every CheckSingular so far passed\n"
              "  const T t2 = q[0] * q[1];\n"
              "  regular_ = regular_ && abs(t2) > T(0) && abs(t2) <= NumericLimits<T>::max();\n"
              "  const T t3 = q[1] / t2;\n"
              "  regular_ = regular_ && abs(t3) > NumericLimits<T>::epsilon() * (abs(q[0]) * (abs(q[1]))) && "
              "abs(t3) <= NumericLimits<T>::max();\n"
              "  a[0] = t3;\n"
              "  return regular_ ? Status::ok : Status::singular;\n");
    const nhvk::sym::Statements plain = {nhvk::sym::Store{nhvk::sym::Array::a, 0, -1, q0}, ok};
    EXPECT_EQ(nhvk::sym::print_statements(plain, "  "), "  a[0] = q[0];\n  return Status::ok;\n");
}

/** The saddle parts of `n` coordinates whose Wt has the nonzero pattern `pattern` (row-major, symmetric), each
 *  entry depending on q (or on μ where `mu` is set). */
nhvk::sym::SaddleParts pattern_parts(Graph& g, int n, const std::vector<int>& pattern, bool mu) {
    GraphScope s(g);
    nhvk::sym::SaddleParts p;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            const Expr x = Expr::variable(mu ? Var::mu : Var::q, std::min(i, j)) + Expr(1.0 + i + j);
            p.W.push_back(pattern[static_cast<std::size_t>(i * n + j)] ? x.id() : Expr(0.0).id());
        }
        p.b.push_back(Expr::variable(Var::v, i).id());
    }
    return p;
}

TEST(SymEmit, FindsTheDiagonalBlocksOfThePattern) {
    Graph g;
    // coordinates {0, 2, 4} coupled through 0–2 and 2–4, {1} alone, {3, 5} coupled
    const std::vector<int> pattern = {1, 0, 1, 0, 0, 0, //
                                      0, 1, 0, 0, 0, 0, //
                                      1, 0, 1, 0, 1, 0, //
                                      0, 0, 0, 1, 0, 1, //
                                      0, 0, 1, 0, 1, 0, //
                                      0, 0, 0, 1, 0, 1};
    const auto p = pattern_parts(g, 6, pattern, false);
    const std::vector<std::vector<int>> expect = {{0, 2, 4}, {1}, {3, 5}};
    EXPECT_EQ(nhvk::sym::diagonal_blocks(g, p, 6), expect);
    EXPECT_EQ(nhvk::sym::choose_solve(g, p, 6), nhvk::sym::SolveKind::schur_blocks);
}

TEST(SymEmit, FallsBackToLuForALargeBlockOrAMetricThatDependsOnTheMultipliers) {
    Graph g;
    std::vector<int> dense(16, 1);
    EXPECT_EQ(nhvk::sym::choose_solve(g, pattern_parts(g, 4, dense, false), 4), nhvk::sym::SolveKind::lu)
        << "a 4×4 block goes through the LU";
    std::vector<int> diagonal(9, 0);
    for (int i = 0; i < 3; ++i) diagonal[static_cast<std::size_t>(4 * i)] = 1;
    EXPECT_EQ(nhvk::sym::choose_solve(g, pattern_parts(g, 3, diagonal, false), 3), nhvk::sym::SolveKind::schur_blocks);
    EXPECT_EQ(nhvk::sym::choose_solve(g, pattern_parts(g, 3, diagonal, true), 3), nhvk::sym::SolveKind::lu)
        << "W − Σμ H can be singular where the saddle-point matrix is not: only the LU";
    diagonal[8] = 0;
    EXPECT_EQ(nhvk::sym::choose_solve(g, pattern_parts(g, 3, diagonal, false), 3), nhvk::sym::SolveKind::lu)
        << "a zero row of Wt";
}

} // namespace
