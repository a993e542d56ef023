// SPDX-License-Identifier: MIT
/** @file
 *  @brief The Levenshtein distance behind every "did you mean" of nhvk (config keys, model names, the names of a
 *         model file's expressions).
 */
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string_view>
#include <vector>

namespace nhvk {

/** @brief Insertions, deletions and substitutions that turn `a` into `b` (with `ignore_case`, letters that differ
 *         only in case are equal); O(|a|·|b|) time, O(|b|) memory. */
inline std::size_t edit_distance(std::string_view a, std::string_view b, bool ignore_case = false) {
    const auto same = [ignore_case](char x, char y) {
        return ignore_case ? std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y))
                           : x == y;
    };
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

} // namespace nhvk
