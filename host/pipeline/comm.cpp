// SPDX-License-Identifier: MIT
#include "pipeline/comm.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "nhvk_version.hpp"
#include "pipeline/output_folder.hpp"
#include "stats/byte_io.hpp"

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

/** @brief This process's rank as the launcher announces it (for messages before MPI has started), or -1. */
int launcher_rank() {
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
        if (const char* s = std::getenv(v)) return std::atoi(s);
    return -1;
}

/** @brief Ends the process with exit 2 and `message` unless disarmed within `seconds`: the bound on a job's start. */
class Watchdog {
public:
    void arm(double seconds, std::string message) {
        thread_ = std::thread([this, seconds, message] {
            std::unique_lock<std::mutex> lock(m_);
            if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
            if (::write(2, message.data(), message.size()) < 0) {
                // exiting with the usage code is the report
            }
            ::_exit(2);
        });
    }
    void disarm() {
        {
            std::lock_guard<std::mutex> lock(m_);
            done_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }
    ~Watchdog() { disarm(); }

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

Watchdog& start_watchdog() {
    static Watchdog w;
    return w;
}

/** @brief NHVK_MPI_START_SECONDS, or 120 s. */
double start_seconds() {
    const char* s = std::getenv("NHVK_MPI_START_SECONDS");
    const double v = s ? std::atof(s) : 0.0;
    return v > 0 ? v : 120.0;
}

std::string encode_fields(const RankFields& f) {
    std::string out;
    bytes::put<std::uint64_t>(out, f.size());
    for (const RankField& x : f) {
        bytes::put_string(out, x.name);
        bytes::put_string(out, x.value);
        bytes::put_string(out, x.note);
    }
    return out;
}

RankFields decode_fields(const std::string& data, int rank) {
    bytes::Reader in(data, "rank " + std::to_string(rank) + "'s handshake");
    RankFields f(in.get<std::uint64_t>());
    for (RankField& x : f) {
        x.name = in.get_string();
        x.value = in.get_string();
        x.note = in.get_string();
    }
    return f;
}

#if NHVK_HAVE_MPI
constexpr int tag_progress = 1, tag_final = 2, tag_bytes = 3;
constexpr std::size_t piece = std::size_t(1) << 30; // MPI counts are int: large states go in pieces
#endif

} // namespace

std::string rank_mismatch(const std::vector<RankFields>& ranks) {
    for (std::size_t r = 0; r < ranks.size(); ++r)
        for (const RankField& f : ranks[r])
            if (f.name == "error") return "rank " + std::to_string(r) + ": " + f.value;
    const RankFields& first = ranks.front();
    for (std::size_t i = 0; i < first.size(); ++i) {
        // the ranks of each value, in order of first appearance
        std::vector<std::pair<const RankField*, std::vector<std::size_t>>> groups;
        for (std::size_t r = 0; r < ranks.size(); ++r) {
            static const RankField none{"", "(nothing)", ""};
            const RankField* f = i < ranks[r].size() && ranks[r][i].name == first[i].name ? &ranks[r][i] : &none;
            auto g =
                std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first->value == f->value; });
            if (g == groups.end()) groups.push_back({f, {r}});
            else g->second.push_back(r);
        }
        if (groups.size() == 1) continue;
        // NOTE: bounded: a few values and a few ranks of each, however large the job.
        std::string msg = "the ranks of this MPI job differ in " + first[i].name + ": ";
        for (std::size_t g = 0; g < groups.size() && g < 4; ++g) {
            const auto& rs = groups[g].second;
            msg += (g ? "; " : "") + std::string(rs.size() > 1 ? "ranks " : "rank ");
            for (std::size_t k = 0; k < rs.size() && k < 8; ++k) msg += (k ? ", " : "") + std::to_string(rs[k]);
            if (rs.size() > 8) msg += " and " + std::to_string(rs.size() - 8) + " more";
            msg += " " + groups[g].first->value + groups[g].first->note;
        }
        if (groups.size() > 4) msg += "; and " + std::to_string(groups.size() - 4) + " more values";
        return msg + ". Every rank must run the same command with the same config, options and nhvk";
    }
    return {};
}

void Comm::join_job(const std::string& command) {
#if NHVK_HAVE_MPI
    if (launcher_size() <= 1) return;
    // NOTE: before the watchdog and MPI start their threads, which inherit the blocked signals (output_folder.hpp).
    clean_up_outputs_on_signals();
    const int guess = launcher_rank();
    start_watchdog().arm(
        start_seconds(),
        "nhvk: error: " + (guess >= 0 ? "rank " + std::to_string(guess) + ": " : std::string()) +
            "the ranks of this MPI job did not all join it within " +
            std::to_string(static_cast<int>(start_seconds())) +
            " s (NHVK_MPI_START_SECONDS): every rank must run the same `nhvk " + command +
            "` of this nhvk; a rank that runs another program, or ends before it starts MPI, never joins\n");
    Comm& c = world();
    const std::string verdict =
        c.agree({{"command", "`nhvk " + command + "`", ""}, {"nhvk version", nhvk_version, ""}});
    if (!verdict.empty()) {
        if (c.rank() == 0) std::fprintf(stderr, "nhvk: error: %s\n", verdict.c_str());
        std::exit(2); // NOTE: every rank, after the same verdict: MPI ends cleanly at exit
    }
    if (command != "run") c.started();
#else
    (void)command;
#endif
}

void Comm::started() { start_watchdog().disarm(); }

std::string Comm::agree(const RankFields& mine) {
    std::string verdict;
#if NHVK_HAVE_MPI
    if (!mpi_) return verdict;
    const std::string bytes = encode_fields(mine);
    std::uint64_t n = bytes.size();
    std::vector<std::uint64_t> sizes(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    MPI_Gather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::vector<int> counts, at;
    std::string all;
    if (rank_ == 0) {
        int sum = 0;
        for (std::uint64_t s : sizes) {
            at.push_back(sum);
            counts.push_back(static_cast<int>(s));
            sum += static_cast<int>(s);
        }
        all.resize(static_cast<std::size_t>(sum));
    }
    MPI_Gatherv(bytes.data(), static_cast<int>(n), MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
    if (rank_ == 0) {
        std::vector<RankFields> ranks;
        for (int r = 0; r < size_; ++r) {
            try {
                ranks.push_back(decode_fields(all.substr(static_cast<std::size_t>(at[r]), counts[r]), r));
            } catch (const std::exception& e) {
                ranks.push_back({{"error", e.what(), ""}});
            }
        }
        verdict = rank_mismatch(ranks);
    }
    std::uint64_t len = verdict.size();
    MPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    verdict.resize(static_cast<std::size_t>(len));
    MPI_Bcast(verdict.data(), static_cast<int>(len), MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    (void)mine;
#endif
    return verdict;
}

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
        if (rank_ == 0) latest_ = new std::uint64_t[2 * static_cast<std::size_t>(size_)]();
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

void Comm::send_progress(ProgressCount mine) {
#if NHVK_HAVE_MPI
    if (!mpi_ || rank_ == 0) return;
    auto* r = static_cast<MPI_Request*>(request_);
    if (in_flight_) {
        int flag = 0;
        MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        if (!flag) return;
        in_flight_ = false;
    }
    sent_[0] = mine.done;
    sent_[1] = mine.recorded;
    MPI_Isend(sent_, 2, MPI_UINT64_T, 0, tag_progress, MPI_COMM_WORLD, r);
    in_flight_ = true;
#else
    (void)mine;
#endif
}

namespace {
[[maybe_unused]] ProgressCount others_total(const std::uint64_t* latest, int size) {
    ProgressCount t;
    for (int r = 1; r < size; ++r) {
        t.done += latest[2 * r];
        t.recorded += latest[2 * r + 1];
    }
    return t;
}
} // namespace

ProgressCount Comm::poll_progress() {
#if NHVK_HAVE_MPI
    if (!mpi_ || rank_ != 0) return {};
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag_progress, MPI_COMM_WORLD, &flag, &st);
        if (!flag) break;
        MPI_Recv(latest_ + 2 * st.MPI_SOURCE, 2, MPI_UINT64_T, st.MPI_SOURCE, tag_progress, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    return others_total(latest_, size_);
#else
    return {};
#endif
}

bool Comm::finish_loop(ProgressCount mine, bool stopped, const std::function<void(ProgressCount)>& on_progress) {
#if NHVK_HAVE_MPI
    if (!mpi_) return stopped;
    int any = stopped ? 1 : 0;
    if (rank_ != 0) {
        auto* r = static_cast<MPI_Request*>(request_);
        if (in_flight_) MPI_Wait(r, MPI_STATUS_IGNORE);
        in_flight_ = false;
        std::uint64_t msg[3] = {mine.done, mine.recorded, stopped ? 1u : 0u};
        MPI_Send(msg, 3, MPI_UINT64_T, 0, tag_final, MPI_COMM_WORLD);
    } else {
        // Progress and final messages of a rank arrive in the order sent: after its final, nothing more from it.
        int finals = 0;
        while (finals < size_ - 1) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == tag_progress) {
                MPI_Recv(latest_ + 2 * st.MPI_SOURCE, 2, MPI_UINT64_T, st.MPI_SOURCE, tag_progress, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else if (st.MPI_TAG == tag_final) {
                std::uint64_t msg[3] = {0, 0, 0};
                MPI_Recv(msg, 3, MPI_UINT64_T, st.MPI_SOURCE, tag_final, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                latest_[2 * st.MPI_SOURCE] = msg[0];
                latest_[2 * st.MPI_SOURCE + 1] = msg[1];
                any = any || msg[2] != 0;
                ++finals;
            } else {
                break; // not expected before the finals; leave it for its receiver
            }
            if (on_progress) on_progress(others_total(latest_, size_));
        }
    }
    MPI_Bcast(&any, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return any != 0;
#else
    (void)mine;
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

bool Comm::any(bool value) {
#if NHVK_HAVE_MPI
    if (!mpi_) return value;
    int v = value ? 1 : 0, r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return r != 0;
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
