// SPDX-License-Identifier: MIT
/** @file
 *  @brief The `nhvk` command line: `models`, `trajectory`, `run`, `merge`, `inspect`, `report`.
 */
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <string>

#include <unistd.h>

#include "cli_common.hpp"
#include "input_limits.hpp"
#include "modelfile/runtime_compile.hpp"
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

/** @brief OpenMP threads that wait passively (sleep) unless the user set OMP_WAIT_POLICY: the host phases (merge,
 *         report, the reductions between chunks) are short parallel regions, and threads spinning at their barriers
 *         take a loaded machine's cores from the threads that have work, many times over the work itself. */
void default_to_passive_waiting(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
    if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    // NOTE: libgomp reads its environment once, in a constructor that runs when it is loaded, before main: set
    // here, the variable comes too late for this process image, so the process starts its program again with it
    // set (once: the new image finds it set). Where that fails (no /proc), it goes on with the default policy.
    ::execv("/proc/self/exe", argv);
}

} // namespace

int main(int argc, char** argv) {
    default_to_passive_waiting(argv);
    // NOTE: a file-size limit (`ulimit -f`) would otherwise end the process by SIGXFSZ mid-write, leaving its
    // temporaries and lock; ignored, the write fails with EFBIG and takes the path of a full disk (outputs removed,
    // lock released, exit 1).
    std::signal(SIGXFSZ, SIG_IGN);
    // NOTE: a signal that ends a command ends a model file's compiler with it and removes its temporaries.
    nhvk::at_signal_exit(&nhvk::jit::abandon_compiles);
    CLI::App app{"nhvk: ensembles of nonholonomic vs vakonomic motions of constrained mechanical systems"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("nhvk ") + nhvk::nhvk_version);
    // NOTE: CLI11's messages repeat the offending argument, which may be megabytes long.
    app.failure_message(
        [](const CLI::App* a, const CLI::Error& e) { return nhvk::clip_message(CLI::FailureMessage::simple(a, e)); });
    int exit_code = nhvk::exit_ok;
    nhvk::add_models_command(app, exit_code);
    nhvk::add_trajectory_command(app, exit_code);
    nhvk::add_run_command(app, exit_code);
    nhvk::add_merge_command(app, exit_code);
    nhvk::add_inspect_command(app, exit_code);
    nhvk::add_report_command(app, exit_code);
    nhvk::add_compile_command(app, exit_code);
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
        std::cerr << "nhvk: error: " << nhvk::clip_message(e.what()) << "\n";
        return nhvk::exit_usage;
    } catch (const nhvk::FolderBusy& e) {
        std::cerr << "nhvk: error: " << nhvk::clip_message(e.what()) << "\n";
        return nhvk::exit_folder_busy;
    } catch (const std::bad_alloc&) {
        std::cerr
            << "nhvk: error: out of memory: an allocation failed (for `run`: fewer output times (times.count) or a "
               "smaller run.chunk; with exact quantiles a smaller run.exact_memory_mb; a [sweep] keeps every point's "
               "summaries: fewer points per run)\n";
        return nhvk::exit_runtime;
    } catch (const std::exception& e) {
        std::cerr << "nhvk: error: " << nhvk::clip_message(e.what()) << "\n";
        return nhvk::exit_runtime;
    }
    if (!flush_stdout()) return nhvk::exit_runtime;
    return exit_code;
}
