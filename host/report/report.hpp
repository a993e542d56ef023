// SPDX-License-Identifier: MIT
/** @file
 *  @brief `report.html`: one self-contained page (inline SVG plots, no scripts, no network) rendered from an output
 *         folder's `summary.json` and `stats.csv` only, so that `nhvk run`, `nhvk merge` and `nhvk report DIR` give
 *         the same page for the same files (README "report.html").
 */
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace nhvk {

/** @brief `summary.json` or `stats.csv` missing or not what nhvk writes: the message names the file and what was
 *         expected (exit code 2 for `nhvk report`). */
struct ReportInputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief The page from the texts of `summary.json` and `stats.csv`; `summary_name`/`stats_name` name them in
 *         messages. Deterministic: the same texts give the same bytes. Throws ReportInputError. */
std::string render_report(const std::string& summary_json, const std::string& stats_csv,
                          const std::string& summary_name = "summary.json",
                          const std::string& stats_name = "stats.csv");

/** @brief The page from the files `dir/summary.json` and `dir/stats.csv`. Throws ReportInputError. */
std::string render_report(const std::filesystem::path& dir);

} // namespace nhvk
