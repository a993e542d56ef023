// SPDX-License-Identifier: MIT
/** @file
 *  @brief Print a derived model (host/sym/derived.hpp) as straight-line C++ for host and device: the header that
 *         specializes `nhvk::Generated<M>` (nhvk/generated.hpp). Two steps: lower.hpp chooses the solves and lowers
 *         each function to a statement list over the graph's nodes, print.hpp prints those lists as C++.
 */
#pragma once

#include <string>

#include "derived.hpp"
#include "lower.hpp"
#include "nhvk/sym/expr.hpp"
#include "print.hpp"

namespace nhvk::sym {

/** @brief The generated header of `m` (deterministic: the same model gives the same text). */
inline std::string emit_header(Graph& g, const DerivedModel& m) { return print_header(lower(g, m)); }

} // namespace nhvk::sym
