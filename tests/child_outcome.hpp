// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: run a piece of code in a forked child with a time limit, so that a crash (a stack overflow,
 *         a hang) is an outcome the test can report and not the end of the test program.
 */
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <typeinfo>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define NHVK_CHILD_LEAK_CHECK 1
#endif

namespace nhvk_test {

/** @brief How a child ended, and the message of the exception it threw (if any). */
struct ChildOutcome {
    int status = 0; ///< as waitpid gives it
    std::string message;
    /** @brief Ended by returning (exit 0) or by the expected exception (exit 2). */
    bool clean() const { return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2); }
    /** @brief Ended by the expected exception. */
    bool refused() const { return WIFEXITED(status) && WEXITSTATUS(status) == 2; }
};

/** @brief Runs `body` in a child with `limit_s` seconds (a hang ends in SIGALRM). Exit codes: 0 returned, 2 threw
 *         `Expected` (its message on the pipe), 3 threw another exception, 4 threw `Expected` with an empty message,
 *         5 could not report, 6 leaked (AddressSanitizer builds: the child ends with _exit, which skips
 *         LeakSanitizer's check at exit, so it runs one). */
template <class Expected> ChildOutcome run_in_child(const std::function<void()>& body, unsigned limit_s) {
    int fd[2];
    if (pipe(fd) != 0) return {-1, "pipe failed"};
    const pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        alarm(limit_s);
        int code = 0;
        std::string msg;
        try {
            body();
        } catch (const Expected& e) {
            msg = e.what();
            code = msg.empty() ? 4 : 2;
        } catch (const std::exception& e) {
            msg = std::string("uncaught ") + typeid(e).name() + ": " + e.what();
            code = 3;
        }
#ifdef NHVK_CHILD_LEAK_CHECK
        if (__lsan_do_recoverable_leak_check() != 0) { // it prints the leak's stack on stderr
            msg = "leak (LeakSanitizer report above); " + msg;
            code = 6;
        }
#endif
        if (!msg.empty() && write(fd[1], msg.data(), msg.size()) < 0) code = 5;
        _exit(code);
    }
    close(fd[1]);
    ChildOutcome out;
    char buf[4096];
    for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) out.message.append(buf, static_cast<std::size_t>(n));
    close(fd[0]);
    waitpid(pid, &out.status, 0);
    return out;
}

/** @brief "hang (time limit)", "crash: signal …" or "exit N". */
inline std::string describe(const ChildOutcome& o) {
    if (WIFSIGNALED(o.status))
        return WTERMSIG(o.status) == SIGALRM ? "hang (time limit)"
                                             : std::string("crash: signal ") + strsignal(WTERMSIG(o.status));
    return "exit " + std::to_string(WEXITSTATUS(o.status));
}

} // namespace nhvk_test
