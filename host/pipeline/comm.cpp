// SPDX-License-Identifier: MIT
#include "pipeline/comm.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#if NHVK_HAVE_MPI
#include <mpi.h>
#endif

namespace nhvk {

namespace {

/** @brief The number of ranks a launcher announces in the environment (1 when none). */
int launcher_size() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
        if (const char* s = std::getenv(v)) {
            const int n = std::atoi(s);
            if (n > 0) return n;
        }
    }
    return std::getenv("PMIX_RANK") || std::getenv("PMI_RANK") ? 2 : 1; // a rank without a size: assume several
}

#if NHVK_HAVE_MPI
constexpr int tag_progress = 1, tag_final = 2, tag_bytes = 3;
constexpr std::size_t piece = std::size_t(1) << 30; // MPI counts are int: large states go in pieces
#endif

} // namespace

Comm& Comm::world() {
    static Comm c;
    return c;
}

Comm::Comm() {
    const int n = launcher_size();
#if NHVK_HAVE_MPI
    if (n > 1) {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        mpi_ = true;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &local_rank_);
        MPI_Comm_size(node, &local_size_);
        MPI_Comm_free(&node);
        request_ = new MPI_Request(MPI_REQUEST_NULL);
        if (rank_ == 0) latest_ = new std::uint64_t[static_cast<std::size_t>(size_)]();
    }
#else
    if (n > 1)
        throw std::runtime_error("started by an MPI launcher with " + std::to_string(n) +
                                 " ranks, but this nhvk was built without MPI: every rank would run the whole job. "
                                 "Install OpenMPI (libopenmpi-dev) and rebuild (CMake finds it; NHVK_ENABLE_MPI), or "
                                 "run one process per job with --shard i/N");
#endif
}

Comm::~Comm() {
#if NHVK_HAVE_MPI
    if (mpi_) {
        auto* r = static_cast<MPI_Request*>(request_);
        if (*r != MPI_REQUEST_NULL) MPI_Wait(r, MPI_STATUS_IGNORE);
        delete r;
        delete[] latest_;
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Finalize();
    }
#endif
}

void Comm::send_progress(std::uint64_t done) {
#if NHVK_HAVE_MPI
    if (!mpi_ || rank_ == 0) return;
    auto* r = static_cast<MPI_Request*>(request_);
    if (in_flight_) {
        int flag = 0;
        MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        if (!flag) return;
        in_flight_ = false;
    }
    sent_ = done;
    MPI_Isend(&sent_, 1, MPI_UINT64_T, 0, tag_progress, MPI_COMM_WORLD, r);
    in_flight_ = true;
#else
    (void)done;
#endif
}

std::uint64_t Comm::poll_progress() {
    std::uint64_t total = 0;
#if NHVK_HAVE_MPI
    if (!mpi_ || rank_ != 0) return 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag_progress, MPI_COMM_WORLD, &flag, &st);
        if (!flag) break;
        std::uint64_t v = 0;
        MPI_Recv(&v, 1, MPI_UINT64_T, st.MPI_SOURCE, tag_progress, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        latest_[st.MPI_SOURCE] = v;
    }
    for (int r = 1; r < size_; ++r) total += latest_[r];
#endif
    return total;
}

bool Comm::finish_loop(std::uint64_t done, bool stopped, const std::function<void(std::uint64_t)>& on_progress) {
#if NHVK_HAVE_MPI
    if (!mpi_) return stopped;
    int any = stopped ? 1 : 0;
    if (rank_ != 0) {
        auto* r = static_cast<MPI_Request*>(request_);
        if (in_flight_) MPI_Wait(r, MPI_STATUS_IGNORE);
        in_flight_ = false;
        std::uint64_t msg[2] = {done, stopped ? 1u : 0u};
        MPI_Send(msg, 2, MPI_UINT64_T, 0, tag_final, MPI_COMM_WORLD);
    } else {
        // Progress and final messages of a rank arrive in the order sent: after its final, nothing more from it.
        int finals = 0;
        while (finals < size_ - 1) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == tag_progress) {
                std::uint64_t v = 0;
                MPI_Recv(&v, 1, MPI_UINT64_T, st.MPI_SOURCE, tag_progress, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                latest_[st.MPI_SOURCE] = v;
            } else if (st.MPI_TAG == tag_final) {
                std::uint64_t msg[2] = {0, 0};
                MPI_Recv(msg, 2, MPI_UINT64_T, st.MPI_SOURCE, tag_final, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                latest_[st.MPI_SOURCE] = msg[0];
                any = any || msg[1] != 0;
                ++finals;
            } else {
                break; // not expected before the finals; leave it for its receiver
            }
            std::uint64_t others = 0;
            for (int r = 1; r < size_; ++r) others += latest_[r];
            if (on_progress) on_progress(others);
        }
    }
    MPI_Bcast(&any, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return any != 0;
#else
    (void)done;
    (void)on_progress;
    return stopped;
#endif
}

void Comm::send_to_root(const std::string& bytes) {
#if NHVK_HAVE_MPI
    if (!mpi_ || rank_ == 0) return;
    std::uint64_t n = bytes.size();
    MPI_Send(&n, 1, MPI_UINT64_T, 0, tag_bytes, MPI_COMM_WORLD);
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
        const std::size_t len = std::min(piece, bytes.size() - at);
        MPI_Send(bytes.data() + at, static_cast<int>(len), MPI_BYTE, 0, tag_bytes, MPI_COMM_WORLD);
    }
#else
    (void)bytes;
#endif
}

std::string Comm::receive_from(int rank) {
    std::string out;
#if NHVK_HAVE_MPI
    if (!mpi_ || rank_ != 0) return out;
    std::uint64_t n = 0;
    MPI_Recv(&n, 1, MPI_UINT64_T, rank, tag_bytes, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    out.resize(static_cast<std::size_t>(n));
    for (std::size_t at = 0; at < out.size(); at += piece) {
        const std::size_t len = std::min(piece, out.size() - at);
        MPI_Recv(&out[at], static_cast<int>(len), MPI_BYTE, rank, tag_bytes, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
#else
    (void)rank;
#endif
    return out;
}

bool Comm::broadcast(bool value) {
#if NHVK_HAVE_MPI
    if (!mpi_) return value;
    int v = value ? 1 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v != 0;
#else
    return value;
#endif
}

void Comm::abort(int code) {
#if NHVK_HAVE_MPI
    if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    std::exit(code);
}

} // namespace nhvk
