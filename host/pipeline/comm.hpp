// SPDX-License-Identifier: MIT
/** @file
 *  @brief The processes of one `nhvk run`: one, or the ranks of an MPI job (`mpirun -np R nhvk run …`). MPI is
 *         started only when a launcher started this process (OpenMPI's, PMI or PMIx environment), so every other
 *         command and a plain `nhvk run` never touch it. Built without MPI (CMake `NHVK_ENABLE_MPI=OFF`, or no MPI
 *         found), a process started by a launcher of several ranks refuses to run rather than repeat the whole job
 *         R times.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nhvk {

/** @brief One thing a rank is about to do, compared across the ranks of a job: a `name`, the `value` that must be the
 *         same on every rank, and a `note` that only helps the message (a config's path beside its hash). */
struct RankField {
    std::string name, value, note;
};
using RankFields = std::vector<RankField>;

/** @brief A part of a run's progress: members done, and of them those its latest resume record holds (what a
 *         resume would keep). */
struct ProgressCount {
    std::uint64_t done = 0, recorded = 0;
};
/** @brief The counts of two parts together (this process's and the other ranks'). */
inline ProgressCount operator+(ProgressCount a, ProgressCount b) { return {a.done + b.done, a.recorded + b.recorded}; }

/** @brief The first field whose value is not the same on every rank, said with the ranks that hold each value (a few
 *         values and ranks at most), or empty when every rank agrees. A field named `error` is a rank's own problem
 *         (its config did not load, say): the first one is said instead, naming its rank. */
std::string rank_mismatch(const std::vector<RankFields>& ranks);

class Comm {
public:
    /** @brief Under a launcher of several ranks in a build with MPI (else nothing): starts MPI and makes the job's
     *         first collective, the handshake: every rank's `command` (`run`, `models`, …) and nhvk version are
     *         gathered on rank 0 and compared; a mismatch ends every rank with exit 2 (rank 0 says which rank runs
     *         what). A watchdog bounds the wait, from the start of MPI (which itself waits for every rank) to
     *         `started()`: a rank that never joins (another program, an nhvk without the handshake) makes every
     *         waiting rank exit 2 with a message after NHVK_MPI_START_SECONDS seconds (default 120). Commands other
     *         than `run` are started at once. */
    static void join_job(const std::string& command);
    /** @brief Every rank's `mine` to rank 0, which compares them (rank_mismatch) and gives every rank the verdict:
     *         empty when all agree. */
    std::string agree(const RankFields& mine);
    /** @brief The ranks have agreed: ends the watchdog of join_job. */
    void started();

    /** @brief This process's communicator (MPI_COMM_WORLD under a launcher, else a single process); MPI is
     *         finalised at exit. Throws std::runtime_error when started by a launcher of several ranks without MPI. */
    static Comm& world();

    int rank() const { return rank_; }
    int size() const { return size_; }
    /** @brief Rank and number of ranks on this node (device choice, CPU share). */
    int local_rank() const { return local_rank_; }
    int local_size() const { return local_size_; }
    bool parallel() const { return size_ > 1; }

    /** @brief Ranks > 0: this rank's counts, sent without waiting (dropped when the previous message is still in
     *         flight). */
    void send_progress(ProgressCount mine);
    /** @brief Rank 0: takes every progress message that has arrived; returns the other ranks' latest totals. */
    ProgressCount poll_progress();
    /** @brief Ranks > 0: the last message of the loop (its counts and whether it stopped early). Rank 0: receives
     *         those of every other rank, calling `on_progress(others' totals)` as messages arrive; returns whether
     *         any rank stopped early. Then every rank learns the job's answer (true: some rank stopped). */
    bool finish_loop(ProgressCount mine, bool stopped, const std::function<void(ProgressCount)>& on_progress);
    /** @brief Ranks > 0 send `bytes` to rank 0; rank 0 returns rank r's bytes from `receive(r)` in rank order. */
    void send_to_root(const std::string& bytes);
    std::string receive_from(int rank);
    /** @brief Rank 0's `value` on every rank. */
    bool broadcast(bool value);
    /** @brief Whether `value` is true on any rank, on every rank. */
    bool any(bool value);
    /** @brief Ends every rank (after a rank failed where the others would wait for it forever). */
    [[noreturn]] void abort(int code);

    ~Comm();

private:
    Comm();
    int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
    bool mpi_ = false;
    std::uint64_t sent_[2] = {0, 0}; // the counts of the progress message in flight
    bool in_flight_ = false;
    void* request_ = nullptr;         // MPI_Request of that message
    std::uint64_t* latest_ = nullptr; // rank 0: each rank's latest counts (done, recorded)
};

} // namespace nhvk
