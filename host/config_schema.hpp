// SPDX-License-Identifier: MIT
/** @file
 *  @brief The config schema: the sections and keys the loader (config.cpp) accepts, the one list it checks keys
 *         against. README.md's config reference documents it; tests/host/test_config_schema.cpp checks both ways.
 */
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nhvk {

/** @brief One table of the config schema and the keys it accepts, in the order of README.md's config reference. */
struct ConfigTable {
    std::string name;              ///< "" for the top level, else a section ("run") or a distribution kind ("uniform")
    std::vector<std::string> keys; ///< every key the loader accepts there; any other is refused
};

/** @brief The sections of the config and their keys: the top level ("") lists the sections. The one list the loader
 *  checks keys against (a key not here is an error naming the allowed ones); README.md documents it, and
 *  tests/host/test_config_schema.cpp checks the two against each other. The tables keyed by the model
 *  (model.params: its parameters; initial.q, initial.v: its coordinates) and initial.mu (a distribution, a number
 *  or an array) are not listed. */
const std::vector<ConfigTable>& config_sections();

/** @brief The keys of each distribution kind ("fixed", "uniform", "normal"), each with `dist`. */
const std::vector<ConfigTable>& distribution_kinds();

/** @brief The keys of `name` in `tables`; throws std::logic_error for a name not there (a programming error). */
const std::vector<std::string>& config_keys(const std::vector<ConfigTable>& tables, std::string_view name);

} // namespace nhvk
