// SPDX-License-Identifier: MIT
#include "pipeline/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace nhvk {

std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    std::ostringstream os;
    const long long t = static_cast<long long>(s + 0.5);
    if (t >= 3600) os << t / 3600 << "h" << std::setw(2) << std::setfill('0') << (t % 3600) / 60 << "m";
    else if (t >= 60) os << t / 60 << "m" << std::setw(2) << std::setfill('0') << t % 60 << "s";
    else os << std::fixed << std::setprecision(1) << s << "s";
    return os.str();
}

Progress::Progress(Comm& comm, std::uint64_t total, std::uint64_t already, bool enabled, double every, RunLog* log)
    : comm_(comm), total_(total), already_(already), done_(already), recorded_(already), enabled_(enabled),
      tty_(::isatty(2) != 0), every_(every), log_(log), t0_(Clock::now()), last_sent_(t0_) {}

void Progress::chunk_done(std::uint64_t members) {
    done_ += members;
    report(false);
}

void Progress::record_written(std::uint64_t members) {
    recorded_ = members;
    report(false);
}

void Progress::report(bool force) {
    if (comm_.rank() == 0) {
        draw(own() + comm_.poll_progress(), force);
    } else if (force || seconds_since(last_sent_) >= 0.5) {
        last_sent_ = Clock::now();
        comm_.send_progress(own());
    }
}

void Progress::draw(ProgressCount job, bool force) {
    const double s = seconds_since(t0_);
    const bool draw = enabled_ && (force || s - last_ >= (tty_ ? 0.25 : every_));
    const bool log = log_ && (force || s - last_log_ >= 30.0);
    if (!draw && !log) return;
    // NOTE: the rate counts only the work of this process's run (a resumed run's earlier part excluded).
    const double rate = s > 0 && job.done > already_ ? static_cast<double>(job.done - already_) / s : 0.0;
    const double eta = rate > 0 ? static_cast<double>(total_ - job.done) / rate : NAN;
    char line[200];
    std::snprintf(line, sizeof line, "%llu/%llu (%5.1f%%)  recorded %llu  %.4g traj/s  ETA %s",
                  static_cast<unsigned long long>(job.done), static_cast<unsigned long long>(total_),
                  total_ ? 100.0 * static_cast<double>(job.done) / static_cast<double>(total_) : 100.0,
                  static_cast<unsigned long long>(job.recorded), rate, format_duration(eta).c_str());
    if (draw) {
        last_ = s;
        if (tty_) std::fprintf(stderr, "\r[nhvk] %s   ", line);
        else std::fprintf(stderr, "[nhvk] progress %s\n", line);
        std::fflush(stderr);
        drawn_ = true;
    }
    if (log) {
        last_log_ = s;
        log_->line(std::string("progress ") + line);
    }
}

void Progress::finish(bool complete) {
    // NOTE: the other ranks draw nothing and send nothing more (their last count went with Comm::finish_loop).
    if (complete && comm_.rank() == 0) draw(own() + comm_.poll_progress(), true);
    if (enabled_ && tty_ && drawn_) std::fprintf(stderr, "\n");
}

} // namespace nhvk
