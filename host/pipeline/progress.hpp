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
 *         started (a resumed part). Rank 0 draws the job's count, its own members plus the latest counts the other
 *         ranks sent; the other ranks send theirs at most every 0.5 s. Drawn on a terminal as a line redrawn at most
 *         every 0.25 s; otherwise (a batch job's log) as a plain line every `every` seconds; into run.log every 30 s.
 */
class Progress {
public:
    Progress(Comm& comm, std::uint64_t total, std::uint64_t already, bool enabled, double every, RunLog* log);
    /** @brief Members of this process's share done, the resumed part included (not the chunk in progress). */
    std::uint64_t done() const { return done_; }
    /** @brief A chunk of `members` members finished on the host. */
    void chunk_done(std::uint64_t members);
    /** @brief `members` of the chunk in progress are done (the CPU backend's batches). */
    void in_chunk(std::uint64_t members);
    /** @brief The chunk in progress was given up (a stop request): its members do not count. */
    void drop_chunk() { in_chunk_ = 0; }
    /** @brief This process's count: drawn with the others' on rank 0, sent to rank 0 by the other ranks. */
    void report(bool force);
    /** @brief Rank 0: draws `job_done` members of the whole job (when due, or always with `force`). */
    void draw(std::uint64_t job_done, bool force);
    /** @brief Ends the redrawn line on a terminal; when the job is `complete`, rank 0 first draws its count now. */
    void finish(bool complete);

private:
    Comm& comm_;
    std::uint64_t total_, already_, done_, in_chunk_ = 0;
    bool enabled_, tty_;
    double every_;
    RunLog* log_;
    Clock::time_point t0_, last_sent_;
    double last_ = -1e9, last_log_ = 0.0;
    bool drawn_ = false;
};

} // namespace nhvk
