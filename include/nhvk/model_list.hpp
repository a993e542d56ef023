// SPDX-License-Identifier: MIT
/** @file
 *  @brief A compile-time list of model types and indexing into it.
 */
#pragma once

#include <cstddef>

namespace nhvk {

/** @brief A compile-time list of model types. */
template <class... Ms> struct ModelList { static constexpr std::size_t size = sizeof...(Ms); };

/** @brief The `I`-th type of a `ModelList`. */
template <std::size_t I, class List> struct ModelAt;
template <class M, class... Ms> struct ModelAt<0, ModelList<M, Ms...>> { using type = M; };
template <std::size_t I, class M, class... Ms> struct ModelAt<I, ModelList<M, Ms...>> {
    using type = typename ModelAt<I - 1, ModelList<Ms...>>::type;
};

} // namespace nhvk
