// SPDX-License-Identifier: MIT
/** @file
 *  @brief Print a derived model (host/sym/derived.hpp) as straight-line C++ for host and device: the header that
 *         specializes `nhvk::Generated<M>` (nhvk/generated.hpp).
 */
#pragma once

#include <string>
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

/** @brief The C++ of node `nd` given its arguments' names `a`, `b`: constants of the exponent wrapped as `scalar(c)`.
 *         `header`: the generated headers' form (the spelling of nhvk/ops.hpp's table, `trig_sin`, for `T` = double
 *         or float); otherwise the function's name, for code that also runs on the dual numbers (a model file's
 *         struct). */
std::string node_code(const Node& nd, const std::string& a, const std::string& b, const std::string& scalar,
                      bool header);

/** @brief The generated header of `m` (deterministic: the same model gives the same text). */
std::string emit_header(Graph& g, const DerivedModel& m);

} // namespace nhvk::sym
