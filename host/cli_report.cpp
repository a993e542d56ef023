// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk report DIR [--out FILE]`: render `report.html` again from an output folder's summary.json and
 *         stats.csv (the page every run writes; host/report/report.hpp).
 */
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli_common.hpp"
#include "pipeline/output_folder.hpp"
#include "pipeline/partial_state.hpp"
#include "report/report.hpp"

namespace nhvk {

void add_report_command(CLI::App& app, int& exit_code) {
    auto dir = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("report", "Render report.html from an output folder's summary.json and stats.csv");
    cmd->add_option("dir", *dir, "the output folder of a run (or of nhvk merge)")->required();
    cmd->add_option("--out", *out, "where to write the page (default DIR/report.html)");
    cmd->callback([dir, out, cmd, &exit_code]() {
        refuse_empty_values(*cmd);
        // NOTE: the page must not replace what it is rendered from (any other file of the folder is the user's call)
        const std::filesystem::path d(*dir);
        if (!out->empty())
            if (const std::string p =
                    side_file_problem(*out, {(d / "summary.json").string(), (d / "stats.csv").string()}, {});
                !p.empty())
                throw UsageError("--out: " + p);
        std::string page;
        try {
            page = render_report(std::filesystem::path(*dir));
        } catch (const ReportInputError& e) {
            throw UsageError(e.what());
        }
        const std::filesystem::path target =
            out->empty() ? std::filesystem::path(*dir) / "report.html" : std::filesystem::path(*out);
        write_file_atomic(target, page);
        std::cerr << "nhvk report: wrote " << target.string() << "\n";
        exit_code = exit_ok;
    });
}

} // namespace nhvk
