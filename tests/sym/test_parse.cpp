// SPDX-License-Identifier: MIT
// The expression language of model files (host/sym/parse.*): precedence and associativity against values computed by
// hand, each class of error with its line and column, if(flag, a, b), conditions, dependencies, and the evaluation of
// a parsed graph with plain numbers, dual numbers (against finite differences) and the recording scalar (into a
// second graph).
#include <nhvk/dual.hpp>
#include <nhvk/dynamics.hpp>
#include <nhvk/sym/expr.hpp>
#include <sym/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using nhvk::Dual;
using nhvk::sym::Condition;
using nhvk::sym::Expr;
using nhvk::sym::Graph;
using nhvk::sym::GraphScope;
using nhvk::sym::Op;
using nhvk::sym::parse_condition;
using nhvk::sym::parse_expression;
using nhvk::sym::ParseError;
using nhvk::sym::ParseScope;
using nhvk::sym::Var;

/** @brief Coordinates x, y; parameters m (0), Omega (1), p (2); flag `rolling` (true), `free_` (false). */
ParseScope scope() {
    ParseScope s;
    s.coords = {"x", "y"};
    s.params = {{"m", 0}, {"Omega", 1}, {"p", 2}};
    s.flags = {{"rolling", true}, {"free_", false}};
    return s;
}

// the point every value test uses
constexpr double X = 1.5, Y = -0.5, VX = 0.75, VY = -2.0, T = 0.3, M = 2.0, OMEGA = 3.0, P = 1.25;

double at_point(Var v, int i) {
    switch (v) {
    case Var::q:
        return i == 0 ? X : Y;
    case Var::v:
        return i == 0 ? VX : VY;
    case Var::t:
        return T;
    case Var::param:
        return i == 0 ? M : i == 1 ? OMEGA : P;
    default:
        return NAN;
    }
}

double eval(const std::string& text, const ParseScope& s = scope()) {
    Graph g;
    const int id = parse_expression(g, text, s);
    return g.evaluate(id, at_point);
}

TEST(Parse, PrecedenceAndAssociativity) {
    EXPECT_DOUBLE_EQ(eval("1 + 2 * 3"), 7.0);
    EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3"), 9.0);
    EXPECT_DOUBLE_EQ(eval("8 - 3 - 2"), 3.0); // left-associative
    EXPECT_DOUBLE_EQ(eval("8 / 4 / 2"), 1.0); // left-associative
    EXPECT_DOUBLE_EQ(eval("8 / 4 * 2"), 4.0); // (8/4)*2
    EXPECT_DOUBLE_EQ(eval("2^3^2"), 512.0);   // right-associative: 2^9
    EXPECT_DOUBLE_EQ(eval("(2^3)^2"), 64.0);
    EXPECT_DOUBLE_EQ(eval("-2^2"), -4.0); // ^ binds tighter than unary minus
    EXPECT_DOUBLE_EQ(eval("(-2)^2"), 4.0);
    EXPECT_DOUBLE_EQ(eval("2^-1"), 0.5); // an exponent carries its own sign
    EXPECT_DOUBLE_EQ(eval("2 * 3^2"), 18.0);
    EXPECT_DOUBLE_EQ(eval("-x^2"), -2.25);
    EXPECT_DOUBLE_EQ(eval("+-+3"), -3.0);
    EXPECT_DOUBLE_EQ(eval("2 - -3"), 5.0);
    EXPECT_DOUBLE_EQ(eval("1e-3 * 2.5E+4"), 25.0);
    EXPECT_DOUBLE_EQ(eval(".5 + 2."), 2.5);
    EXPECT_DOUBLE_EQ(eval("pi"), 3.141592653589793);
    EXPECT_DOUBLE_EQ(eval("0.5*m*(x'^2 + y'^2)"), 0.5 * 2.0 * (0.75 * 0.75 + 4.0));
    EXPECT_DOUBLE_EQ(eval("x\n  + 2\n\t* y  "), 1.5 - 1.0); // newlines between tokens
    EXPECT_DOUBLE_EQ(eval("Omega*t - p"), 3.0 * 0.3 - 1.25);
    EXPECT_DOUBLE_EQ(eval("atan2(y, x)"), std::atan2(-0.5, 1.5));
    EXPECT_DOUBLE_EQ(eval("min(x, y) * max(x, y)"), -0.75);
    EXPECT_DOUBLE_EQ(eval("abs(y) + sqrt(4) + exp(0) + log(1)"), 0.5 + 2.0 + 1.0);
    EXPECT_DOUBLE_EQ(eval("sin(x)^2 + cos(x)^2"), 1.0);
    // a constant exponent is a power (valid for a negative base); any other is exp(b log a)
    EXPECT_DOUBLE_EQ(eval("y^3"), -0.125);
    EXPECT_DOUBLE_EQ(eval("x^p"), std::pow(1.5, 1.25));
    EXPECT_TRUE(std::isnan(eval("y^p")));
    Graph g;
    const int cube = parse_expression(g, "x^3", scope());
    EXPECT_EQ(g.node(cube).op, Op::pow);
    EXPECT_EQ(g.node(cube).value, 3.0);
    const int half = parse_expression(g, "x^(1/2)", scope()); // the exponent folds to a constant
    EXPECT_EQ(g.node(half).op, Op::pow);
    EXPECT_EQ(g.node(half).value, 0.5);
    const int general = parse_expression(g, "x^p", scope());
    EXPECT_EQ(g.node(general).op, Op::exp);
}

enum class As { expression, condition };

/** @brief The ParseError that parsing `text` (into `g`, or a fresh graph) throws; a test failure if none. */
ParseError error_of(const std::string& text, const ParseScope& s = scope(), As as = As::expression,
                    Graph* g = nullptr) {
    Graph fresh;
    Graph& graph = g ? *g : fresh;
    try {
        if (as == As::condition) {
            parse_condition(graph, text, s, true);
        } else {
            parse_expression(graph, text, s);
        }
    } catch (const ParseError& e) {
        return e;
    }
    ADD_FAILURE() << "no error for: " << text;
    return ParseError("", 0, 0);
}

/** @brief Parsing `text` throws a ParseError at line:column whose message contains `part`. */
void expect_error(const std::string& text, int line, int column, const std::string& part, const ParseScope& s = scope(),
                  As as = As::expression) {
    const ParseError e = error_of(text, s, as);
    EXPECT_EQ(e.line, line) << text << ": " << e.what();
    EXPECT_EQ(e.column, column) << text << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << text << ": '" << e.what() << "'";
}

void expect_condition_error(const std::string& text, int line, int column, const std::string& part) {
    expect_error(text, line, column, part, scope(), As::condition);
}

TEST(ParseErrors, UnknownNameWithSuggestion) {
    expect_error("0.5*ome", 1, 5, "unknown name 'ome'; did you mean 'Omega'?");
    expect_error("sinn(x)", 1, 1, "unknown function 'sinn'; did you mean 'sin'?");
    expect_error("x + zzzzzz", 1, 5, "unknown name 'zzzzzz'");
    expect_error("xx'", 1, 1, "unknown coordinate 'xx' in the velocity xx'; did you mean 'x'?");
    EXPECT_EQ(std::string(error_of("x + zzzzzz").what()).find("did you mean"), std::string::npos);
}

TEST(ParseErrors, WrongNumberOfArguments) {
    expect_error("atan2(x)", 1, 1, "atan2 takes 2 arguments, got 1");
    expect_error("1 + sin(x, y)", 1, 5, "sin takes 1 argument, got 2");
    expect_error("max()", 1, 1, "max takes 2 arguments, got 0");
    expect_error("if(rolling, x)", 1, 1, "if takes 3 arguments (flag, a, b), got 2");
    expect_error("if(rolling, x, y, 1)", 1, 1, "if takes 3 arguments (flag, a, b), got 4");
}

TEST(ParseErrors, FunctionWithoutCallAndCallOfANonFunction) {
    expect_error("2*sin", 1, 3, "'sin' is a function: call it as sin(...)");
    expect_error("m(x + 1)", 1, 1, "'m' is not a function");
    expect_error("x (y)", 1, 1, "'x' is not a function");
}

TEST(ParseErrors, VelocityOfANonCoordinate) {
    expect_error("m'", 1, 1, "'m' is not a coordinate: only a coordinate has a velocity");
    expect_error("1 + t'", 1, 5, "'t' is not a coordinate");
    expect_error("x '", 1, 3, "an apostrophe must follow a coordinate's name directly");
}

TEST(ParseErrors, VelocityAndTimeWhereForbidden) {
    ParseScope s = scope();
    s.allow_velocities = false;
    s.allow_time = false;
    s.context = "a chart condition";
    expect_error("x + y'", 1, 5, "velocities are not allowed in a chart condition", s);
    expect_error("sin(t)", 1, 5, "time 't' is not allowed in a chart condition", s);
    // a definition carries its dependencies
    Graph g;
    ParseScope open = scope();
    const int ekin = parse_expression(g, "0.5*m*x'^2", open);
    const int clock = parse_expression(g, "Omega*t", open);
    s.definitions = {{"Ekin", ekin}, {"phase", clock}};
    const ParseError e = error_of("x +\n Ekin", s, As::expression, &g);
    EXPECT_EQ(e.line, 2);
    EXPECT_EQ(e.column, 2);
    EXPECT_EQ(std::string(e.what()), "'Ekin' depends on the velocities, which are not allowed in a chart condition");
    const ParseError e2 = error_of("cos(phase)", s, As::expression, &g);
    EXPECT_EQ(e2.column, 5);
    EXPECT_NE(std::string(e2.what()).find("'phase' depends on time"), std::string::npos) << e2.what();
    ParseScope unnamed = scope();
    unnamed.allow_velocities = false;
    expect_error("y'", 1, 1, "velocities are not allowed in this expression", unnamed);
}

TEST(ParseErrors, BooleanParameters) {
    expect_error("if(m, 1, 2)", 1, 4, "the first argument of if(flag, a, b) must be a boolean parameter");
    expect_error("if(m, 1, 2)", 1, 4, "one of: rolling, free_");
    expect_error("if(rolling > 1, 1, 2)", 1, 12, "expected ',' or an operator, found '>'"); // a bare flag only
    expect_error("2*rolling", 1, 3, "'rolling' is a boolean parameter");
    ParseScope none = scope();
    none.flags.clear();
    expect_error("if(x, 1, 2)", 1, 4, "there are none here", none);
    // the branch not taken is still checked
    expect_error("if(rolling, 1, ome)", 1, 16, "unknown name 'ome'");
    expect_error("if(free_, 1 +, 2)", 1, 14, "expected an operand");
}

TEST(ParseErrors, Parentheses) {
    expect_error("(x + 1", 1, 1, "unbalanced parentheses: this '(' is never closed");
    expect_error("2 * (x + (1)", 1, 5, "never closed");
    expect_error("x + 1)", 1, 6, "unbalanced parentheses: ')' without a matching '('");
    expect_error("sin(x", 1, 4, "never closed");
    expect_error("()", 1, 2, "empty parentheses");
}

TEST(ParseErrors, CharactersTrailingInputAndEmptyText) {
    expect_error("x $ 1", 1, 3, "unexpected character '$'");
    expect_error("x # comment", 1, 3, "no comments");
    expect_error("x y", 1, 3, "missing operator before 'y'");
    expect_error("2x", 1, 2, "missing operator before 'x'");
    expect_error("x + * y", 1, 5, "expected an operand");
    expect_error("x +", 1, 4, "ends where an operand is expected");
    expect_error("", 1, 1, "empty expression");
    expect_error("  \n  ", 2, 3, "empty expression");
    expect_error("x, y", 1, 2, "','");
    expect_error("x +\n  2 *\n   $", 3, 4, "unexpected character '$'"); // a multi-line text counts its lines
    expect_error("x + é", 1, 5, "unexpected character 'é'");            // columns count characters
    expect_error("é + $", 1, 1, "unexpected character 'é'");
    expect_error("x > 1", 1, 3, "a comparison ('>') is allowed only in a condition");
}

TEST(ParseErrors, MalformedNumbers) {
    expect_error("1e", 1, 1, "malformed number '1e'");
    expect_error("2 * 1e+", 1, 5, "malformed number '1e+'");
    expect_error("3.5Ex", 1, 1, "malformed number '3.5Ex'");
    expect_error("1e999", 1, 1, "the number '1e999' overflows: it is above the largest double");
    expect_error("x + 1" + std::string(400, '0') + "e-10", 1, 5, "overflows");
}

// A literal below the smallest double is refused as an underflow (issue 38: it read "does not parse to a finite
// double", although it parses, to 0); the subnormals down to 4.9e-324 are numbers like any other.
TEST(ParseErrors, AnUnderflowingNumberIsRefusedAsAnUnderflow) {
    expect_error("1e-400", 1, 1, "the number '1e-400' underflows: it is below the smallest positive double");
    expect_error("2 * 0.001e-322", 1, 5, "underflows");
    expect_error("2e-324", 1, 1, "write 0 if zero is meant");
    EXPECT_EQ(eval("1e-320 * 1e300"), 1e-320 * 1e300);
    EXPECT_EQ(eval("0e-999"), 0.0); // zero written with any exponent is zero, not an underflow
    EXPECT_EQ(eval("5e-324"), 5e-324);
}

// Limits on what the parser recurses over (issue 38: 3·10^4 nested parentheses or `sin(`, and a `^` tower 2·10^4
// deep, overflowed the stack): deeper than max_nesting is an error at the level one too many, up to it parses.
TEST(ParseLimits, NestingDeeperThanTheLimitIsAnErrorAtTheLevelOneTooMany) {
    constexpr int limit = nhvk::sym::max_nesting;
    const auto nested = [](const std::string& open, const std::string& close, int depth) {
        std::string s;
        for (int i = 0; i < depth; ++i) s += open;
        s += "x";
        for (int i = 0; i < depth; ++i) s += close;
        return s;
    };
    const std::string message = "nests deeper than " + std::to_string(limit) + " levels";
    expect_error(nested("(", ")", 30000), 1, limit + 1, message);
    expect_error(nested("sin(", ")", 30000), 1, 4 * limit + 1, message);
    expect_error(nested("atan2(y, ", ")", 30000), 1, 9 * limit + 1, message);
    expect_error(nested("x^", "", 20000), 1, 2 * (limit + 1), message); // the '^' that opens the exponent too many
    expect_error(nested("x^(", ")", 20000), 1, 3 * (limit / 2 + 1) - 1, message); // both count
    EXPECT_DOUBLE_EQ(eval(nested("(", ")", limit)), X);
    EXPECT_DOUBLE_EQ(eval(nested("abs(", ")", limit)), X);
    EXPECT_DOUBLE_EQ(eval(nested("1^", "", limit)), 1.0);
}

// Signs are read in a loop (issue 38: 10^5 unary minus signs overflowed the stack of nhvk; here 10^6 overflow the
// recursion this test runs on): any number of them works.
TEST(ParseLimits, AnyNumberOfSignsParses) {
    EXPECT_DOUBLE_EQ(eval(std::string(1000000, '-') + "x"), X);
    EXPECT_DOUBLE_EQ(eval(std::string(1000001, '-') + "x"), -X);
    EXPECT_DOUBLE_EQ(eval("2^" + std::string(99999, '-') + "1"), 0.5);
    std::string mixed;
    for (int i = 0; i < 50000; ++i) mixed += "+-";
    EXPECT_DOUBLE_EQ(eval(mixed + "-y"), -Y);
}

// A flat sum of 10^5 terms is a chain 10^5 nodes deep: parsing it and every walk over it (dependencies, printing,
// the evaluation of sym::evaluate) use loops; `max_nodes` refuses it where the caller bounds the graph.
TEST(ParseLimits, AFlatSumOfManyTermsParsesAndItsGraphIsWalkedWithoutRecursion) {
    std::string sum = "x";
    for (int i = 1; i < 100000; ++i) sum += " + x*" + std::to_string(i % 7 + 2);
    Graph g;
    const int id = parse_expression(g, sum, scope());
    EXPECT_GT(g.size(), 100000);
    EXPECT_TRUE(nhvk::sym::depends_on(g, id, Var::q, 0));
    EXPECT_FALSE(nhvk::sym::depends_on(g, id, Var::q, 1));
    const std::string text = nhvk::sym::to_text(g, id, scope());
    EXPECT_NE(text.find("((x + (x * 3)) + (x * 4)) + (x * 5))"), std::string::npos) << text.substr(0, 200);
    EXPECT_EQ(std::count(text.begin(), text.end(), '+'), 99999);
    // the last terms (99999 % 7 + 2 = 6), first: once the products exist, a sum's older argument comes first
    EXPECT_EQ(text.rfind("((x * 6) + ((x * 5) + ((x * 4) + ", 0), 0u) << text.substr(0, 200);
    const double q[2] = {X, Y}, v[2] = {VX, VY}, p[3] = {M, OMEGA, P};
    double out = 0.0;
    nhvk::sym::evaluate<double>(g, {id}, q, v, T, p, &out);
    double expect = X;
    for (int i = 1; i < 100000; ++i) expect += X * (i % 7 + 2);
    EXPECT_NEAR(out, expect, 1e-9 * expect);

    ParseScope bounded = scope();
    bounded.max_nodes = 1000;
    bounded.max_nodes_why = "the caller's limit";
    const ParseError e = error_of(sum, bounded);
    EXPECT_NE(std::string(e.what()).find("the expressions grow past 1000 nodes here"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(": the caller's limit"), std::string::npos) << e.what();
    EXPECT_EQ(e.line, 1);
    EXPECT_LT(e.column, static_cast<int>(sum.size()) / 50);
}

TEST(ParseErrors, Conditions) {
    expect_condition_error("x + 1", 1, 6, "a condition needs a comparison");
    expect_condition_error("0 < x < 1", 1, 7, "exactly one comparison; this is a second one ('<')");
    expect_condition_error("x >", 1, 4, "expected an expression");
    expect_condition_error("x = 1", 1, 3, "a condition compares with >, >=, < or <=");
    expect_condition_error("margin(1e-6, m) < x", 1, 14, "must be numbers");
    expect_condition_error("margin(1e-6) < x", 1, 1, "margin takes 2 arguments, got 1");
    expect_error("margin(1, 2)", 1, 1, "unknown function 'margin'"); // only in conditions
    expect_error("vfloor", 1, 1, "unknown name 'vfloor'");
    ParseScope s = scope();
    s.allow_velocities = false;
    s.context = "a chart condition";
    expect_error("abs(x) > vfloor", 1, 10, "'vfloor' reads the velocities, which are not allowed in a chart condition",
                 s, As::condition);
}

TEST(Parse, IfSelectsAtParseTimeAndBuildsNothingForTheOtherBranch) {
    Graph g;
    const int x = g.variable(Var::q, 0), y = g.variable(Var::q, 1);
    const int before = g.size();
    EXPECT_EQ(parse_expression(g, "if(rolling, x, sin(y)*cosh(y) + 17)", scope()), x);
    EXPECT_EQ(g.size(), before); // no node of the branch not taken
    EXPECT_EQ(parse_expression(g, "if(free_, sin(x)^2 + 42, y)", scope()), y);
    EXPECT_EQ(g.size(), before);
    EXPECT_DOUBLE_EQ(eval("1 + if(rolling, 2, 3) * if(free_, 5, 7)"), 15.0);
    EXPECT_DOUBLE_EQ(eval("if(rolling, if(free_, 1, 2), 3)"), 2.0);
}

TEST(Parse, ConditionsAreNormalizedToGreater) {
    Graph g;
    const int x = g.variable(Var::q, 0);
    const int two_y = parse_expression(g, "2*y", scope());
    Condition c = parse_condition(g, "x < 2*y", scope(), true);
    EXPECT_EQ(c.lhs, two_y);
    EXPECT_EQ(c.rhs, x);
    EXPECT_TRUE(c.strict);
    c = parse_condition(g, "x <= 2*y", scope(), true);
    EXPECT_EQ(c.lhs, two_y);
    EXPECT_FALSE(c.strict);
    c = parse_condition(g, "x >= 2*y", scope(), true);
    EXPECT_EQ(c.lhs, x);
    EXPECT_EQ(c.rhs, two_y);
    EXPECT_FALSE(c.strict);
    c = parse_condition(g, "x\n>\n2*y", scope(), true);
    EXPECT_EQ(c.lhs, x);
    EXPECT_TRUE(c.strict);
    // margin(a, b): a in double precision, b in single precision
    c = parse_condition(g, "abs(x) > margin(1e-9, -1e-4)", scope(), true);
    EXPECT_TRUE(g.is_value(c.rhs, 1e-9));
    c = parse_condition(g, "abs(x) > margin(1e-9, -1e-4)", scope(), false);
    EXPECT_TRUE(g.is_value(c.rhs, -1e-4));
}

TEST(Parse, VfloorIsTheEnginesVelocityChartFloor) {
    ParseScope s = scope();
    s.coords = {"x", "y", "z"};
    for (const auto& v : std::vector<std::vector<double>>{{0.1, -0.2, 0.3}, {0.5, -7.0, 2.0}, {3.0, 0.0, -3.5}}) {
        Graph g;
        const Condition cd = parse_condition(g, "x' > vfloor", s, true);
        const Condition cf = parse_condition(g, "x' > vfloor", s, false);
        const double zero[3] = {0, 0, 0};
        double outd = 0;
        nhvk::sym::evaluate<double>(g, {cd.rhs}, zero, v.data(), 0.0, zero, &outd);
        EXPECT_EQ(outd, nhvk::velocity_chart_floor<3>(v.data()));
        const float vf[3] = {float(v[0]), float(v[1]), float(v[2])}, zf[3] = {0, 0, 0};
        float outf = 0;
        nhvk::sym::evaluate<float>(g, {cf.rhs}, zf, vf, 0.0f, zf, &outf);
        EXPECT_EQ(outf, nhvk::velocity_chart_floor<3>(vf));
    }
}

TEST(Parse, DependsOn) {
    Graph g;
    const int e = parse_expression(g, "m*x'^2 + sin(y) * t", scope());
    EXPECT_TRUE(nhvk::sym::depends_on(g, e, Var::v, 0));
    EXPECT_FALSE(nhvk::sym::depends_on(g, e, Var::v, 1));
    EXPECT_TRUE(nhvk::sym::depends_on(g, e, Var::v));
    EXPECT_TRUE(nhvk::sym::depends_on(g, e, Var::q, 1));
    EXPECT_FALSE(nhvk::sym::depends_on(g, e, Var::q, 0));
    EXPECT_TRUE(nhvk::sym::depends_on(g, e, Var::t));
    EXPECT_TRUE(nhvk::sym::depends_on(g, e, Var::param, 0));
    EXPECT_FALSE(nhvk::sym::depends_on(g, e, Var::param, 1));
    const int c = parse_expression(g, "if(free_, t, 2*pi)", scope());
    EXPECT_FALSE(nhvk::sym::depends_on(g, c, Var::t));
    const std::vector<int> deps = nhvk::sym::dependencies(g, e);
    EXPECT_EQ(deps.back(), e);
    EXPECT_TRUE(std::is_sorted(deps.begin(), deps.end()));
    EXPECT_NE(std::find(deps.begin(), deps.end(), g.variable(Var::t, 0)), deps.end());
    EXPECT_EQ(std::find(deps.begin(), deps.end(), g.variable(Var::q, 0)), deps.end());
}

/** @brief Expressions over every function and operator, with the scope's names, finite at the test point. */
const std::vector<std::string> expressions = {
    "0.5*m*(x'^2 + y'^2) - m*9.81*y + Omega*x*y' ",
    "sin(x)*cos(y) + tan(x/4) - asin(y) + acos(y/2) + atan(x') + atan2(y', x)",
    "sinh(x) * cosh(y) / (1 + tanh(x')^2) + asinh(y') + exp(-x^2) + log(x + 2) + sqrt(x^2 + y^2)",
    "abs(y') + min(x, y') - max(y, x') + sign(y) * x + x^p + (x*y)^-2 + t*Omega",
};

double graph_value(const Graph& g, int id, const double* q, const double* v, double t, const double* par) {
    return g.evaluate(id, [&](Var k, int i) {
        switch (k) {
        case Var::q:
            return q[i];
        case Var::v:
            return v[i];
        case Var::t:
            return t;
        default:
            return par[i];
        }
    });
}

TEST(Evaluate, DoubleAndFloatEqualTheGraphsOwnEvaluation) {
    Graph g;
    std::vector<int> ids;
    for (const std::string& e : expressions) ids.push_back(parse_expression(g, e, scope()));
    const double q[2] = {X, Y}, v[2] = {VX, VY}, par[3] = {M, OMEGA, P};
    std::vector<double> out(ids.size());
    nhvk::sym::evaluate<double>(g, ids, q, v, T, par, out.data());
    const float qf[2] = {float(X), float(Y)}, vf[2] = {float(VX), float(VY)},
                pf[3] = {float(M), float(OMEGA), float(P)};
    std::vector<float> outf(ids.size());
    nhvk::sym::evaluate<float>(g, ids, qf, vf, float(T), pf, outf.data());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const double expect = graph_value(g, ids[i], q, v, T, par);
        ASSERT_TRUE(std::isfinite(expect)) << expressions[i];
        EXPECT_EQ(out[i], expect) << expressions[i];
        EXPECT_NEAR(outf[i], expect, 1e-5 * (1 + std::abs(expect))) << expressions[i];
    }
}

TEST(Evaluate, DualNumbersGiveTheFiniteDifferenceDerivatives) {
    // first derivatives in all four state variables, and the second derivatives ∂²/∂v_i∂q_j through a nested dual
    Graph g;
    std::vector<int> ids;
    for (const std::string& e : expressions) ids.push_back(parse_expression(g, e, scope()));
    using D1 = Dual<double, 2>; // tangents: q
    using D2 = Dual<D1, 2>;     // tangents: v
    D2 q[2], v[2];
    const double q0[2] = {X, Y}, v0[2] = {VX, VY}, par0[3] = {M, OMEGA, P};
    for (int i = 0; i < 2; ++i) {
        q[i] = D2(D1(q0[i]));
        q[i].val.d[i] = 1.0;
        v[i] = D2(D1(v0[i]));
        v[i].d[i] = D1(1.0);
    }
    const D2 par[3] = {D2(M), D2(OMEGA), D2(P)};
    std::vector<D2> out(ids.size());
    nhvk::sym::evaluate<D2>(g, ids, q, v, D2(T), par, out.data());
    const double h = 1e-5;
    for (std::size_t e = 0; e < ids.size(); ++e) {
        auto f = [&](const double* qq, const double* vv) { return graph_value(g, ids[e], qq, vv, T, par0); };
        EXPECT_EQ(out[e].val.val, f(q0, v0)) << expressions[e];
        for (int i = 0; i < 2; ++i) {
            double qp[2] = {X, Y}, qm[2] = {X, Y}, vp[2] = {VX, VY}, vm[2] = {VX, VY};
            qp[i] += h;
            qm[i] -= h;
            vp[i] += h;
            vm[i] -= h;
            const double dq = (f(qp, v0) - f(qm, v0)) / (2 * h), dv = (f(q0, vp) - f(q0, vm)) / (2 * h);
            EXPECT_NEAR(out[e].val.d[i], dq, 1e-6 * (1 + std::abs(dq))) << expressions[e] << " d/dq" << i;
            EXPECT_NEAR(out[e].d[i].val, dv, 1e-6 * (1 + std::abs(dv))) << expressions[e] << " d/dv" << i;
            for (int j = 0; j < 2; ++j) {
                // ∂/∂q_j of ∂f/∂v_i by central differences of the exact first derivative (a D1 evaluation)
                auto dfdv = [&](const double* qq) {
                    Dual<double, 1> qd[2] = {qq[0], qq[1]}, vd[2] = {v0[0], v0[1]}, pd[3] = {M, OMEGA, P};
                    vd[i].d[0] = 1.0;
                    Dual<double, 1> r;
                    nhvk::sym::evaluate<Dual<double, 1>>(g, {ids[e]}, qd, vd, Dual<double, 1>(T), pd, &r);
                    return r.d[0];
                };
                double qa[2] = {X, Y}, qb[2] = {X, Y};
                qa[j] += h;
                qb[j] -= h;
                const double d2 = (dfdv(qa) - dfdv(qb)) / (2 * h);
                EXPECT_NEAR(out[e].d[i].d[j], d2, 1e-6 * (1 + std::abs(d2)))
                    << expressions[e] << " d2/dv" << i << "dq" << j;
            }
        }
    }
}

TEST(Evaluate, ExprIntoASecondGraphReproducesTheFunction) {
    Graph g;
    std::vector<int> ids;
    for (const std::string& e : expressions) ids.push_back(parse_expression(g, e, scope()));
    Graph g2;
    // some nodes first, so that node ids of g2 differ from those of g
    {
        GraphScope s2(g2);
        (void)(Expr::variable(Var::param, 7) * 3.0 + Expr(11.0));
    }
    GraphScope s2(g2);
    Expr q[2] = {Expr::variable(Var::q, 0), Expr::variable(Var::q, 1)};
    Expr v[2] = {Expr::variable(Var::v, 0), Expr::variable(Var::v, 1)};
    Expr par[3] = {Expr::variable(Var::param, 0), Expr::variable(Var::param, 1), Expr::variable(Var::param, 2)};
    std::vector<Expr> out(ids.size());
    nhvk::sym::evaluate<Expr>(g, ids, q, v, Expr::variable(Var::t, 0), par, out.data());
    for (const auto& pt : std::vector<std::vector<double>>{{X, Y, VX, VY}, {0.2, 0.9, -1.1, 0.4}}) {
        const double qq[2] = {pt[0], pt[1]}, vv[2] = {pt[2], pt[3]}, pp[3] = {M, OMEGA, P};
        for (std::size_t e = 0; e < ids.size(); ++e)
            EXPECT_EQ(graph_value(g2, out[e].id(), qq, vv, T, pp), graph_value(g, ids[e], qq, vv, T, pp))
                << expressions[e];
    }
    // into g itself: hash-consing gives back the very same nodes
    GraphScope s1(g);
    Expr q1[2] = {Expr::variable(Var::q, 0), Expr::variable(Var::q, 1)};
    Expr v1[2] = {Expr::variable(Var::v, 0), Expr::variable(Var::v, 1)};
    Expr p1[3] = {Expr::variable(Var::param, 0), Expr::variable(Var::param, 1), Expr::variable(Var::param, 2)};
    std::vector<Expr> same(ids.size());
    nhvk::sym::evaluate<Expr>(g, ids, q1, v1, Expr::variable(Var::t, 0), p1, same.data());
    for (std::size_t e = 0; e < ids.size(); ++e) EXPECT_EQ(same[e].id(), ids[e]) << expressions[e];
}

TEST(Evaluate, NestedDualsOverExprTraceTheDerivativesIntoASecondGraph) {
    // what the derivation of a parsed model does: Dual<Dual<Expr>> through evaluate, then the derivative nodes
    // evaluated, against the same nested duals over double
    Graph g;
    std::vector<int> ids;
    for (const std::string& e : expressions) ids.push_back(parse_expression(g, e, scope()));
    Graph g2;
    GraphScope s2(g2);
    using E1 = Dual<Expr, 2>;
    using E2 = Dual<E1, 2>;
    using D1 = Dual<double, 2>;
    using D2 = Dual<D1, 2>;
    E2 q[2], v[2];
    D2 qd[2], vd[2];
    const double q0[2] = {X, Y}, v0[2] = {VX, VY};
    for (int i = 0; i < 2; ++i) {
        q[i] = E2(E1(Expr::variable(Var::q, i)));
        q[i].val.d[i] = Expr(1.0);
        v[i] = E2(E1(Expr::variable(Var::v, i)));
        v[i].d[i] = E1(Expr(1.0));
        qd[i] = D2(D1(q0[i]));
        qd[i].val.d[i] = 1.0;
        vd[i] = D2(D1(v0[i]));
        vd[i].d[i] = D1(1.0);
    }
    const E2 par[3] = {E2(E1(Expr::variable(Var::param, 0))), E2(E1(Expr::variable(Var::param, 1))),
                       E2(E1(Expr::variable(Var::param, 2)))};
    const D2 pard[3] = {D2(M), D2(OMEGA), D2(P)};
    std::vector<E2> out(ids.size());
    std::vector<D2> outd(ids.size());
    nhvk::sym::evaluate<E2>(g, ids, q, v, E2(E1(Expr::variable(Var::t, 0))), par, out.data());
    nhvk::sym::evaluate<D2>(g, ids, qd, vd, D2(T), pard, outd.data());
    const double pp[3] = {M, OMEGA, P};
    auto ev = [&](const Expr& x) { return graph_value(g2, x.id(), q0, v0, T, pp); };
    for (std::size_t e = 0; e < ids.size(); ++e) {
        EXPECT_EQ(ev(out[e].val.val), outd[e].val.val) << expressions[e];
        for (int i = 0; i < 2; ++i) {
            EXPECT_NEAR(ev(out[e].val.d[i]), outd[e].val.d[i], 1e-14 * (1 + std::abs(outd[e].val.d[i])));
            EXPECT_NEAR(ev(out[e].d[i].val), outd[e].d[i].val, 1e-14 * (1 + std::abs(outd[e].d[i].val)));
            for (int j = 0; j < 2; ++j)
                EXPECT_NEAR(ev(out[e].d[i].d[j]), outd[e].d[i].d[j], 1e-14 * (1 + std::abs(outd[e].d[i].d[j])))
                    << expressions[e];
        }
    }
}

TEST(Parse, PrintedTextParsesBackToTheSameNode) {
    Graph g;
    for (const std::string& e : expressions) {
        const int id = parse_expression(g, e, scope());
        const std::string text = nhvk::sym::to_text(g, id, scope());
        EXPECT_EQ(parse_expression(g, text, scope()), id) << e << " printed as " << text;
    }
    const int c = parse_expression(g, "-0.1 * x^-3", scope());
    EXPECT_EQ(parse_expression(g, nhvk::sym::to_text(g, c, scope()), scope()), c);
    EXPECT_TRUE(nhvk::sym::is_reserved_name("sin"));
    EXPECT_TRUE(nhvk::sym::is_reserved_name("vfloor"));
    EXPECT_TRUE(nhvk::sym::is_reserved_name("t"));
    EXPECT_FALSE(nhvk::sym::is_reserved_name("Omega"));
}

} // namespace
