// SPDX-License-Identifier: MIT
/** @file
 *  @brief The `nhvk` command line: `models`, `trajectory`, `run`, `merge`, `inspect`, `report`.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>

#include "cli_common.hpp"
#include "nhvk_version.hpp"
#include "pipeline/comm.hpp"
#include "pipeline/output_folder.hpp"

namespace {
/** @brief Flush standard output and report a failed write (a full disk, a closed pipe, /dev/full): the results a
 *         command printed must not be lost silently. Returns false after printing the reason. */
bool flush_stdout() {
    // NOTE: the errno of the first failure is the reason (ENOSPC for /dev/full): taken before the next call resets it.
    errno = 0;
    std::cout.flush();
    int e = std::cout ? 0 : errno;
    errno = 0;
    const bool c_bad = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
    if (e == 0 && c_bad) e = errno;
    const bool bad = !std::cout || c_bad;
    if (bad)
        std::cerr << "nhvk: error: cannot write to standard output"
                  << (e != 0 ? std::string(": ") + std::strerror(e) : "") << "\n";
    return !bad;
}
} // namespace

int main(int argc, char** argv) {
    CLI::App app{"nhvk: ensembles of nonholonomic vs vakonomic motions of constrained mechanical systems"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("nhvk ") + nhvk::nhvk_version);
    int exit_code = nhvk::exit_ok;
    nhvk::add_models_command(app, exit_code);
    nhvk::add_trajectory_command(app, exit_code);
    nhvk::add_run_command(app, exit_code);
    nhvk::add_merge_command(app, exit_code);
    nhvk::add_inspect_command(app, exit_code);
    nhvk::add_report_command(app, exit_code);
    try {
        // NOTE: before parsing, so that every rank of an MPI job says which command it runs, whatever it is (a rank
        // running another command than rank 0's would otherwise leave it waiting forever).
        std::string command;
        for (int i = 1; i < argc && command.empty(); ++i)
            if (argv[i][0] != '-') command = argv[i];
        nhvk::Comm::join_job(command.empty() ? "(no command)" : command);
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        if (!flush_stdout()) return nhvk::exit_runtime;
        return rc == 0 ? nhvk::exit_ok : nhvk::exit_usage;
    } catch (const nhvk::UsageError& e) {
        std::cerr << "nhvk: error: " << e.what() << "\n";
        return nhvk::exit_usage;
    } catch (const nhvk::FolderBusy& e) {
        std::cerr << "nhvk: error: " << e.what() << "\n";
        return nhvk::exit_folder_busy;
    } catch (const std::bad_alloc&) {
        std::cerr
            << "nhvk: error: out of memory: an allocation failed (for `run`: lower run.chunk, the number of output "
               "times or run.exact_memory_mb)\n";
        return nhvk::exit_runtime;
    } catch (const std::exception& e) {
        std::cerr << "nhvk: error: " << e.what() << "\n";
        return nhvk::exit_runtime;
    }
    if (!flush_stdout()) return nhvk::exit_runtime;
    return exit_code;
}
