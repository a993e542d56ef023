// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: edits the fuzzers of configs (tests/host/test_config_fuzz.cpp) and of model files
 *         (tests/modelfile/test_model_file_fuzz.cpp) both make.
 */
#pragma once

#include <cctype>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace nhvk_test {

/** @brief Replaces a number of `s` (a run of digits, signs, dots, exponents and `_` starting at a digit that no
 *         letter or digit precedes), chosen with `rng`, by one of `numbers`; `s` stays as it is without a number. */
inline void replace_a_number(std::string& s, std::mt19937_64& rng, const std::vector<std::string>& numbers) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(s[i])) &&
            (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))))
            starts.push_back(i);
    if (starts.empty() || numbers.empty()) return;
    const std::size_t a = starts[rng() % starts.size()];
    std::size_t b = a;
    while (b < s.size() && std::strchr("0123456789.eE+-_", s[b])) ++b;
    s.replace(a, b - a, numbers[rng() % numbers.size()]);
}

} // namespace nhvk_test
