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

namespace nhvk {

class Comm {
public:
    /** @brief This process's communicator (MPI_COMM_WORLD under a launcher, else a single process); MPI is
     *         finalised at exit. Throws std::runtime_error when started by a launcher of several ranks without MPI. */
    static Comm& world();

    int rank() const { return rank_; }
    int size() const { return size_; }
    /** @brief Rank and number of ranks on this node (device choice, CPU share). */
    int local_rank() const { return local_rank_; }
    int local_size() const { return local_size_; }
    bool parallel() const { return size_ > 1; }

    /** @brief Ranks > 0: this rank's completed trajectory count, sent without waiting (dropped when the previous
     *         message is still in flight). */
    void send_progress(std::uint64_t done);
    /** @brief Rank 0: takes every progress message that has arrived; returns the other ranks' latest total. */
    std::uint64_t poll_progress();
    /** @brief Ranks > 0: the last message of the loop (its count and whether it stopped early). Rank 0: receives
     *         those of every other rank, calling `on_progress(others' total)` as messages arrive; returns whether
     *         any rank stopped early. Then every rank learns the job's answer (true: some rank stopped). */
    bool finish_loop(std::uint64_t done, bool stopped, const std::function<void(std::uint64_t)>& on_progress);
    /** @brief Ranks > 0 send `bytes` to rank 0; rank 0 returns rank r's bytes from `receive(r)` in rank order. */
    void send_to_root(const std::string& bytes);
    std::string receive_from(int rank);
    /** @brief Rank 0's `value` on every rank. */
    bool broadcast(bool value);
    /** @brief Ends every rank (after a rank failed where the others would wait for it forever). */
    [[noreturn]] void abort(int code);

    ~Comm();

private:
    Comm();
    int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
    bool mpi_ = false;
    std::uint64_t sent_ = 0; // the value of the progress message in flight
    bool in_flight_ = false;
    void* request_ = nullptr;         // MPI_Request of that message
    std::uint64_t* latest_ = nullptr; // rank 0: each rank's latest count
};

} // namespace nhvk
