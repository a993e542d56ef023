// SPDX-License-Identifier: MIT
/** @file
 *  @brief Expression strings of a model file (issue 23) parsed into a `sym::Graph`, and a graph evaluated with any
 *         scalar (host only).
 *
 *  ## The expression language
 *
 *  An expression is built from:
 *  - **numbers**: `1`, `0.5`, `.5`, `2.`, `1e-3`, `2.5E+4` (decimal; an exponent needs digits: `1e` is an error);
 *  - **operators**, from the loosest to the tightest binding: binary `+ -` (left-associative); `* /`
 *    (left-associative); unary `-` and `+`; `^` (right-associative). So `-x^2` is `-(x^2)`, `2^3^2` is `2^9 = 512`,
 *    `a/b*c` is `(a/b)*c`, and an exponent may carry its own sign: `x^-2` is `x^(-2)`. Parentheses group.
 *    `a^b` with an exponent that folds to a constant (`x^2`, `x^(1/2)`, `x^-1`) is the power of `a`, valid for a
 *    negative `a` with an integer exponent; any other exponent (one that reads a parameter or a variable) is
 *    `exp(b*log(a))`, defined for `a > 0` only (NaN otherwise);
 *  - **functions** (the table of nhvk/ops.hpp): `sin cos tan asin acos atan sinh cosh tanh asinh exp log sqrt abs
 *    sign` of one argument, `atan2(y, x)` (the angle of the point (x, y)), `min(a, b)`, `max(a, b)`. `sign` is −1, 0
 *    or +1. `abs`, `min` and `max` are differentiated through `sign`: away from a tie the derivative is that of the
 *    selected branch, at a tie (`abs(0)`, `min(a, a)`) the mean of the two branches' (0 for `abs`);
 *  - **`if(flag, a, b)`**: `a` where the boolean parameter `flag` is true, else `b`. It is resolved when the
 *    expression is parsed, once per variant of the boolean parameters: the branch not taken is parsed and checked
 *    like the other but produces nothing. A boolean parameter may appear nowhere else;
 *  - **names**: `t` (time), `pi`, the coordinates (`x`), their velocities (`x'`: a coordinate's name immediately
 *    followed by an apostrophe, no space between), the numeric parameters and the definitions (named subexpressions
 *    parsed before) of the scope. A name is a letter or `_` followed by letters, digits or `_`; the scope's names
 *    come before the built-in ones (`is_reserved_name` tells the loader which to refuse).
 *
 *  Spaces, tabs and newlines may separate any two tokens (a TOML multi-line string is one expression); there are no
 *  comments inside an expression. Errors are `ParseError`s with the 1-based line and column of the offending token
 *  in the expression's own text.
 *
 *  **Limits.** Parentheses, function calls and exponents nest at most `max_nesting` levels deep (the parser
 *  recurses once per level); signs (`- - x`) and the terms of a sum or product are read in loops and cost no stack.
 *  A number beyond a double's range is an error, one that would underflow to 0 (`1e-400`) included. Every walk
 *  over a parsed graph here (`dependencies`, `to_text`, `evaluate`) uses an explicit stack: a graph may be as deep
 *  as it has nodes (a sum of many terms is a chain), which the model-file loader bounds.
 *
 *  A **condition** (a chart condition of a model) is `lhs > rhs`, `lhs >= rhs`, `lhs < rhs` or `lhs <= rhs`: exactly
 *  one comparison between two expressions. Two more names exist there: `margin(a, b)`, the number `a` in double
 *  precision and `b` in single precision (`a`, `b` number literals, optionally signed), and `vfloor`,
 *  `velocity_chart_margin<T>() · max(1, max_j |v_j|)` of nhvk/dynamics.hpp in the precision of the run (it reads the
 *  velocities).
 */
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nhvk/sym/expr.hpp"

namespace nhvk::sym {

/** @brief How deeply parentheses, function calls and exponents may nest in one expression (README "Adding a
 *         model"): deeper is a `ParseError` at the opening token of the level one too many. */
inline constexpr int max_nesting = 256;

/** @brief Where an expression is parsed: the names it may use and what it may depend on. */
struct ParseScope {
    std::vector<std::string> coords;                      ///< `x` is Var::q i, `x'` is Var::v i
    std::vector<std::pair<std::string, int>> params;      ///< numeric parameter name -> Var::param index
    std::vector<std::pair<std::string, bool>> flags;      ///< boolean parameters (only in if(...)), with their value
    std::vector<std::pair<std::string, int>> definitions; ///< name -> node id in the same graph
    bool allow_velocities = true; ///< false: a velocity, or a definition whose node depends on one, is an error
    bool allow_time = true;       ///< false: `t` (or a definition depending on it) is an error
    std::string context; ///< e.g. "a chart condition": used in messages ("... not allowed in a chart condition")
    /// > 0: a node made when the graph already has this many is an error at the token being read (the graph may hold
    /// other expressions: the bound is on all of them); `max_nodes_why` ends its message
    int max_nodes = 0;
    std::string max_nodes_why;
};

/** @brief A parse error: 1-based line and column of the offending token inside the expression text (a multi-line
 *         text counts its own lines; a column counts characters, not bytes). `what()` is the message alone. */
struct ParseError : std::runtime_error {
    int line = 1, column = 1;
    ParseError(const std::string& message, int line_, int column_)
        : std::runtime_error(message), line(line_), column(column_) {}
};

/** @brief Parse `text` into nodes of `g` (the current GraphScope, if any, is not used). Returns the node id. */
int parse_expression(Graph& g, const std::string& text, const ParseScope& scope);

/** @brief A condition normalized to `lhs > rhs` (`strict`) or `lhs >= rhs`: node ids of `g`. */
struct Condition {
    int lhs = -1, rhs = -1;
    bool strict = true;
};

/** @brief Parse a condition (see the file comment): `margin(a, b)` takes `a` when `double_precision`, else `b`;
 *         `vfloor` is built with `velocity_chart_margin<double>()` or `<float>()` accordingly. */
Condition parse_condition(Graph& g, const std::string& text, const ParseScope& scope, bool double_precision);

/** @brief Whether node `root` depends on a variable of kind `var` with index `index` (−1: any index). */
bool depends_on(const Graph& g, int root, Var var, int index = -1);

/** @brief Every node id that `root` depends on, `root` included, ascending (topological order). */
std::vector<int> dependencies(const Graph& g, int root);

/** @brief `root` printed in the expression language with the scope's names (fully parenthesized; numbers with 17
 *         significant digits): parsing the text with the same scope gives `root` back (a definition is printed
 *         expanded) where the graph is no deeper than `max_nesting` (each node is a level of parentheses). Throws
 *         for a variable the scope cannot name (a multiplier). */
std::string to_text(const Graph& g, int root, const ParseScope& scope);

/** @brief The names `text` uses, in order and with repeats (`x'` gives `x`), as the parser's lexer reads them,
 *         up to the first character it refuses (parsing reports that). Used to order definitions by what they use. */
std::vector<std::string> names_in(const std::string& text);

/** @brief Names the parser gives a meaning of its own (`t`, `pi`, `if`, the functions, and the condition's
 *         `margin` and `vfloor`): a model's coordinate, parameter or definition should not take one. */
bool is_reserved_name(const std::string& name);

/** @brief The nodes that `outputs` need (themselves and their arguments, transitively), in increasing id order, which
 *         is an evaluation order (an argument's id is smaller than its node's). */
inline std::vector<int> needed_nodes(const Graph& g, const std::vector<int>& outputs) {
    std::vector<char> needed(static_cast<std::size_t>(g.size()), 0);
    std::vector<int> stack(outputs.begin(), outputs.end());
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        if (needed[static_cast<std::size_t>(id)]) continue;
        needed[static_cast<std::size_t>(id)] = 1;
        const Node& nd = g.node(id);
        if (nd.a >= 0) stack.push_back(nd.a);
        if (nd.b >= 0) stack.push_back(nd.b);
    }
    std::vector<int> ids;
    for (int id = 0; id < g.size(); ++id)
        if (needed[static_cast<std::size_t>(id)]) ids.push_back(id);
    return ids;
}

/** @brief The value of a node that is not a variable (a constant, an arithmetic operator, a function of the table of
 *         nhvk/ops.hpp) from its arguments' values `a`, `b` (null where it has none), in any scalar `S`: the arithmetic
 *         of `evaluate` and of the interpreter of model files (host/modelfile/interpreted_impl.hpp). */
template <class S> S apply_operation(const Node& nd, const S* a, const S* b) {
    switch (nd.op) {
    case Op::constant:
        return S(nd.value);
    case Op::add:
        return *a + *b;
    case Op::sub:
        return *a - *b;
    case Op::mul:
        return *a * *b;
    case Op::div:
        return *a / *b;
    case Op::neg:
        return -*a;
    case Op::pow:
        // NOTE: a plain S takes the exponent in its own type (nhvk::pow(float, float)); a dual or an Expr keeps it a
        // double (the dual's pow with a constant exponent).
        if constexpr (std::is_arithmetic<S>::value) return dispatch::apply_pow(*a, S(nd.value));
        else return dispatch::apply_pow(*a, nd.value);
    default:
        return dispatch::apply_function(nd.op, *a, b ? *b : *a);
    }
}

/** @brief Evaluate nodes `outputs` of `g` with any scalar `S` (double, float, `Dual<…>`, nested duals, `sym::Expr`):
 *         the variables from `q`, `v`, `t` and `params` (a multiplier variable throws). Each node that the outputs
 *         need is evaluated once, in id order (topological); the elementary functions go through the table of
 *         nhvk/ops.hpp. With `S = sym::Expr` the values are nodes of the current GraphScope's graph, which may be
 *         another graph than `g` (or `g` itself). */
template <class S>
void evaluate(const Graph& g, const std::vector<int>& outputs, const S* q, const S* v, const S& t, const S* params,
              S* out) {
    std::vector<int> slot(static_cast<std::size_t>(g.size()), -1);
    std::vector<S> val;
    for (const int id : needed_nodes(g, outputs)) {
        // NOTE: a copy: with S = Expr recording into `g` itself, the node vector may grow (and move) below.
        const Node nd = g.node(id);
        const auto arg = [&](int i) -> const S* {
            return i >= 0 ? &val[static_cast<std::size_t>(slot[static_cast<std::size_t>(i)])] : nullptr;
        };
        if (nd.op != Op::variable) {
            // NOTE: the value first: push_back may move `val`, which the arguments point into
            S x = apply_operation(nd, arg(nd.a), arg(nd.b));
            val.push_back(std::move(x));
        } else {
            switch (nd.var) {
            case Var::q:
                val.push_back(q[nd.index]);
                break;
            case Var::v:
                val.push_back(v[nd.index]);
                break;
            case Var::t:
                val.push_back(t);
                break;
            case Var::param:
                val.push_back(params[nd.index]);
                break;
            default:
                throw std::logic_error("sym::evaluate: a multiplier variable has no value here");
            }
        }
        slot[static_cast<std::size_t>(id)] = static_cast<int>(val.size()) - 1;
    }
    for (std::size_t i = 0; i < outputs.size(); ++i)
        out[i] = val[static_cast<std::size_t>(slot[static_cast<std::size_t>(outputs[i])])];
}

} // namespace nhvk::sym
