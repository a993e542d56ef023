// SPDX-License-Identifier: MIT
/** @file
 *  @brief The classification of a built-in model's constraints (nhvk/classify.hpp) as JSON and text: `nhvk inspect`
 *         and the `classification` key of summary.json.
 */
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nhvk {

/** @brief The classification of the built-in model `model` at the parameters `params` (registry order, as
 *         `resolve_params` gives them) as the JSON object `nhvk inspect --json` prints. Throws std::invalid_argument
 *         for an unknown model. */
nlohmann::json classification_json(const std::string& model, const std::vector<double>& params);

/** @brief The readable text block of `nhvk inspect` for a `classification_json` object. */
std::string classification_text(const nlohmann::json& c);

} // namespace nhvk
