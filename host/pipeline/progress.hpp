// SPDX-License-Identifier: MIT
/** @file
 *  @brief Progress of `nhvk run`: the members this process has done, and the job's progress line on stderr and in
 *         run.log (rank 0 draws it for every rank of an MPI job); the driver's wall-clock helpers.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "pipeline/comm.hpp"
#include "pipeline/run_log.hpp"

namespace nhvk {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
/** @brief A duration for people: `4.2s`, `3m07s`, `2h05m`; `?` when not finite or negative. */
std::string format_duration(double s);

/** @brief The progress of this process's share of the job, `total` members of which `already` were done before it
 *         started (a resumed part, held by the record it resumed from). Rank 0 draws the job's counts, its own plus
 *         the latest counts the other ranks sent; the other ranks send theirs at most every 0.5 s. Drawn on a
 *         terminal as a line redrawn at most every 0.25 s; otherwise (a batch job's log) as a plain line every
 *         `every` seconds; into run.log every 30 s. The line shows the members done and, of them, those the latest
 *         resume records hold: what a `--resume` would keep if the process ended now without writing another. */
class Progress {
public:
    Progress(Comm& comm, std::uint64_t total, std::uint64_t already, bool enabled, double every, RunLog* log);
    /** @brief Members of this process's share done, the resumed part included. */
    std::uint64_t done() const { return done_; }
    /** @brief Of them, those this process's latest resume record holds. */
    std::uint64_t recorded() const { return recorded_; }
    /** @brief Both counts of this process. */
    ProgressCount own() const { return {done_, recorded_}; }
    /** @brief A chunk of `members` members finished on the host. */
    void chunk_done(std::uint64_t members);
    /** @brief A resume record now holds the first `members` members of this process's share. */
    void record_written(std::uint64_t members);
    /** @brief This process's counts: drawn with the others' on rank 0, sent to rank 0 by the other ranks. */
    void report(bool force);
    /** @brief Rank 0: draws the counts of the whole job (when due, or always with `force`). */
    void draw(ProgressCount job, bool force);
    /** @brief Ends the redrawn line on a terminal; when the job is `complete`, rank 0 first draws its count now. */
    void finish(bool complete);

private:
    Comm& comm_;
    std::uint64_t total_, already_, done_, recorded_;
    bool enabled_, tty_;
    double every_;
    RunLog* log_;
    Clock::time_point t0_, last_sent_;
    double last_ = -1e9, last_log_ = 0.0;
    bool drawn_ = false;
};

} // namespace nhvk
