// SPDX-License-Identifier: MIT
/** @file
 *  @brief Print a derived model (host/sym/derived.hpp) as straight-line C++ for host and device: the header that
 *         specializes `nhvk::Generated<M>` (nhvk/generated.hpp).
 */
#pragma once

#include <string>

#include "derived.hpp"
#include "nhvk/sym/expr.hpp"

namespace nhvk::sym {

/** @brief How a saddle-point system `[Wt −Jᵀ; J 0][a; m] = [−bt; γ]` is solved, chosen from its structure. */
enum class SolveKind {
    /// Wt is diagonal with entries that depend on the parameters alone (constant along a motion): 1/Wt_ii is a
    /// per-trajectory constant, m comes from the k×k Schur complement `J Wt⁻¹ Jᵀ m = γ + J Wt⁻¹ bt` and
    /// `a = Wt⁻¹ (Jᵀ m − bt)`. A zero or non-finite Schur complement (or 1/Wt_ii) is reported `singular`.
    schur_diagonal,
    /// anything else: the (n+k)×(n+k) LU with partial pivoting and equilibration of nhvk/linalg.hpp.
    lu,
};
const char* solve_kind_name(SolveKind s);

/** @brief The solve the emitter uses for these parts. */
SolveKind choose_solve(const Graph& g, const SaddleParts& s, int n);

/** @brief The generated header of `m` (deterministic: the same model gives the same text). */
std::string emit_header(Graph& g, const DerivedModel& m);

} // namespace nhvk::sym
