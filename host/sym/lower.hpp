// SPDX-License-Identifier: MIT
/** @file
 *  @brief Lower a derived model (host/sym/derived.hpp) to the functions of `nhvk::Generated<M>` as short statement
 *         lists over nodes of its graph: the solve strategies, the order of the temporaries and the table of
 *         parameter-only nodes are decided here; print.hpp turns the result into text.
 */
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "derived.hpp"
#include "nhvk/sym/expr.hpp"

namespace nhvk::sym {

/** @brief How a saddle-point system `[Wt −Jᵀ; J 0][a; m] = [−bt; γ]` is solved, chosen from its structure. */
enum class SolveKind {
    /// Wt is diagonal with entries that depend on the parameters alone (constant along a motion): 1/Wt_ii is a
    /// per-trajectory constant, m comes from the k×k Schur complement `J Wt⁻¹ Jᵀ m = γ + J Wt⁻¹ bt` and
    /// `a = Wt⁻¹ (Jᵀ m − bt)`. A zero or non-finite Schur complement (or 1/Wt_ii) is reported `singular`.
    schur_diagonal,
    /// Wt does not depend on μ (so it is the kinetic metric W, or W − Σμ H with H = 0 where μ would enter) and is
    /// block-diagonal, up to a permutation, with blocks of at most 3 coordinates (the connected components of its
    /// structural nonzeros): each block is inverted in closed form (adjugate over determinant), then the same k×k
    /// Schur complement as above. A block whose determinant is not larger than ε times the permanent of its absolute
    /// values (no correct digit left), or is not finite, is reported `singular`; so is a zero or non-finite 1×1 block.
    schur_blocks,
    /// anything else: the (n+k)×(n+k) LU with partial pivoting and equilibration of nhvk/linalg.hpp.
    lu,
};
const char* solve_kind_name(SolveKind s);

/** @brief The diagonal blocks of Wt: the connected components of its structural nonzeros, each with its coordinates
 *         ascending, ordered by their first coordinate. */
std::vector<std::vector<int>> diagonal_blocks(const Graph& g, const SaddleParts& s, int n);

/** @brief The solve the emitter uses for these parts. */
SolveKind choose_solve(const Graph& g, const SaddleParts& s, int n);

// ---- the statement lists: what a generated function computes, in order, with no C++ text but comments ----

/** @brief A value a statement reads (or, in `Let`, names). */
struct Ref {
    enum class Kind {
        none,       ///< no value: the missing second argument of a unary operation
        literal,    ///< the number `value`
        slot,       ///< `index`-th parameter-only value of `Consts<T>`, computed once per trajectory
        variable,   ///< the argument `var` (`index`-th entry): q, v, t, μ, a multiplier solved for, a parameter
        temp,       ///< the temporary that holds state-dependent node `index`
        param_temp, ///< the temporary that holds parameter-only node `index` (in `consts` alone)
        solution,   ///< row `index` of the last `LuSolve`'s solution
    };
    Kind kind = Kind::none;
    Var var = Var::q;
    int index = 0;
    double value = 0.0;
};

/** @brief An output argument of a generated function. */
enum class Array { a, lambda, mudot, phi, gamma, J, W, consts };

/** @brief The square system `LuSolve` solves: the whole saddle point, or its Schur complement. */
enum class System { saddle, schur };

/** @brief A comment line. */
struct Comment {
    std::string text;
};
/** @brief Declare `name` (a temporary or a multiplier) as `op` (with `value`, the exponent of `pow`) of `a`, `b`. */
struct Let {
    Ref name;
    Op op = Op::add;
    double value = 0.0;
    Ref a, b;
};
/** @brief Declare `name` as a copy of `value`. */
struct Bind {
    Ref name;
    Ref value;
};
/** @brief Assign `value` to the output `array[i]` (`array[i][j]` with `j` ≥ 0). */
struct Store {
    Array array = Array::a;
    int i = 0, j = -1;
    Ref value;
};
/** @brief One term of a permanent: `|factor| · Σ |products|`, or `Σ |products|` without a factor. */
struct PermanentTerm {
    std::optional<Ref> factor;
    std::vector<Ref> products;
};
/** @brief The function returns `singular` unless `ε·Σ bound < |value| ≤ max` (`0 < |value|` for an empty bound): the
 *         test is remembered and the body goes on; its `Return` of `ok` gives `singular` when any test failed. */
struct CheckSingular {
    Ref value;
    std::vector<PermanentTerm> bound;
};
/** @brief Solve the m×m system `A x = r` (row-major) by LU; a singular one returns `singular`. */
struct LuSolve {
    System system = System::saddle;
    int m = 0;
    std::vector<Ref> A, r;
};
/** @brief When the caller asked for it, the power of the reactions `Σ_c multipliers_c · rates_c`. */
struct ReactionPower {
    std::vector<Ref> multipliers, rates;
};
/** @brief Leave the function: with no value, with `Status::ok`, with `value`, or with the `Consts<T>` filled. */
struct Return {
    enum class What { nothing, ok, value, consts };
    What what = What::nothing;
    Ref value;
};

using Statement = std::variant<Comment, Let, Bind, Store, CheckSingular, LuSolve, ReactionPower, Return>;
using Statements = std::vector<Statement>;

/** @brief The member functions of `Generated<M>`, in the order they are printed. */
enum class FunctionKind { consts, nh_accel, vk_accel, constraint_parts, kinetic_metric, energy };

/** @brief One generated function: a statement list per variant (the last one serves every variant not before it). */
struct Function {
    FunctionKind kind = FunctionKind::consts;
    std::vector<Statements> variants;
};

/** @brief A lowered model: what its generated header says about it, and its functions. */
struct LoweredModel {
    std::string cpp_type, header; ///< as in `DerivedModel`
    int n = 0, k = 0;
    std::size_t n_params = 0, n_consts = 0;
    std::vector<int> bool_params;              ///< as in `DerivedModel` (the variant's bits)
    std::vector<SolveKind> nh_solve, vk_solve; ///< per variant
    std::vector<Function> functions;
};

/** @brief Lower `m` (adding the nodes of its solves to `g`; deterministic: the same model gives the same result). */
LoweredModel lower(Graph& g, const DerivedModel& m);

} // namespace nhvk::sym
