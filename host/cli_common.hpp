// SPDX-License-Identifier: MIT
/** @file
 *  @brief Pieces shared by the sub-commands: exit codes, the usage-error exception, number-list parsing.
 */
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace nhvk {

/** @brief Documented exit codes of the `nhvk` binary (README "Exit codes"). */
enum ExitCode : int {
    exit_ok = 0,
    exit_runtime = 1,     ///< I/O failure, CUDA error, internal error
    exit_usage = 2,       ///< bad command line or bad config (the message names the option / file:line and key)
    exit_integration = 3, ///< `trajectory`: the integration of the single trajectory failed (rows so far written)
    exit_no_valid = 4,    ///< `run`: not a single trajectory of the ensemble was valid
    exit_folder_busy = 5, ///< `run`: the output folder is claimed by another live run (pipeline/output_folder.hpp)
};

/** @brief A usage error: bad option values. Mapped to exit code 2. */
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief Parse "a,b,c" into doubles; `what` names the option in the message. */
std::vector<double> parse_number_list(const std::string& text, const std::string& what);

/** @brief Parse one finite double; `what` names the option in the message. */
double parse_number(const std::string& text, const std::string& what);

/** @brief Refuses an option given with an empty value (`--out ''`): a UsageError naming the option, instead of a
 *         silent default. */
void refuse_empty_values(const CLI::App& cmd);

struct ModelInfo;

/** @brief Resolve `--param name=value` against the registry entry `info`: its defaults with the assignments applied
 *         (unknown names list the valid ones; values are checked against the parameter's range). */
std::vector<double> resolve_params(const ModelInfo& info, const std::vector<std::string>& assignments);

/** @brief The registry entry named `name`, or a UsageError naming `what` (the option) and the known models. */
const ModelInfo& require_model(const std::vector<ModelInfo>& reg, const std::string& name, const std::string& what);

/** @brief Register `nhvk models`. */
void add_models_command(CLI::App& app, int& exit_code);
/** @brief Register `nhvk trajectory`. */
void add_trajectory_command(CLI::App& app, int& exit_code);
/** @brief Register `nhvk run`. */
void add_run_command(CLI::App& app, int& exit_code);
/** @brief Register `nhvk merge`. */
void add_merge_command(CLI::App& app, int& exit_code);
/** @brief Register `nhvk inspect`. */
void add_inspect_command(CLI::App& app, int& exit_code);
/** @brief Register `nhvk report`. */
void add_report_command(CLI::App& app, int& exit_code);
/** @brief `nhvk compile`: fill the cache of compiled models ahead of the runs (host/cli_compile.cpp). */
void add_compile_command(CLI::App& app, int& exit_code);

} // namespace nhvk
