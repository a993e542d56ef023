// SPDX-License-Identifier: MIT
#include "pipeline/slot_pipeline.hpp"

#include <algorithm>

namespace nhvk {

Downloads HostStages::downloads(const Chunk& c) const {
    Downloads d;
    d.metrics = reduce_.needs_metrics() || samples_ != nullptr || members_ != nullptr;
    d.inputs = samples_ != nullptr || members_ != nullptr || saved_.wants(c.first, c.m);
    return d;
}

void HostStages::add(const ChunkArgs& a, const Chunk& c) {
    reduce_.add_chunk(a, c.m);
    if (samples_) samples_->add_chunk(a, c.first, c.m);
    if (members_) members_->add_chunk(a, c.first, c.m);
    if (saved_.wants(c.first, c.m)) saved_.add_chunk(a, c.first, c.m);
}

SlotPipeline::SlotPipeline(EnsembleBackend& backend, HostStages& host, Progress& progress, long long capacity,
                           const std::atomic<int>* stop, std::atomic<std::uint64_t>* finished)
    : backend_(backend), host_(host), progress_(progress), sizer_(backend.pacing(capacity), capacity), stop_(stop),
      finished_(finished), slots_(static_cast<std::size_t>(backend.slots())) {}

namespace {
double total(const StageSeconds& t) { return t.sample + t.integrate + t.reduce + t.transfer; }
} // namespace

void SlotPipeline::finish(int s) {
    backend_.wait(s);
    const auto t = Clock::now();
    const double backend_before = total(backend_.stage_seconds());
    Slot& slot = slots_[static_cast<std::size_t>(s)];
    host_.add(backend_.slot(s), slot.chunk);
    slot.busy = false;
    // NOTE: the host's own time: the backend's work the host stages waited on (a sweep point's statistics brought
    // from the device) is in the backend's stage seconds already
    const double host = std::max(0.0, seconds_since(t) - (total(backend_.stage_seconds()) - backend_before));
    host_seconds_ += host;
    // NOTE: the backend's seconds since the chunk before finished are this chunk's: a slot's stages are counted when
    // it is waited for, and the slots are waited for in the order of issue.
    const double backend = total(backend_.stage_seconds());
    sizer_.observe(slot.chunk.m, backend - backend_seconds_ + host);
    backend_seconds_ = backend;
    if (finished_) finished_->fetch_add(1);
    progress_.chunk_done(static_cast<std::uint64_t>(slot.chunk.m));
}

bool SlotPipeline::issue(const Chunk& c) {
    const int n = static_cast<int>(slots_.size());
    const int s = issued_ % n;
    if (slots_[static_cast<std::size_t>(s)].busy) finish(s);
    // NOTE: checked after the slot's chunk was finished, which may take a while (the host's part of it, or the wait
    // for the device): a stop that came meanwhile starts nothing more.
    if (stop_ && stop_->load() != 0) return false;
    slots_[static_cast<std::size_t>(s)].chunk = c;
    backend_.sample(s, c.first, c.m);
    backend_.integrate(s, c.m);
    host_.reduce(backend_, s, c);
    backend_.download(s, c.m, host_.downloads(c));
    slots_[static_cast<std::size_t>(s)].busy = true;
    ++issued_;
    return true;
}

void SlotPipeline::finish_all() {
    const int n = static_cast<int>(slots_.size());
    for (int k = 0; k < n; ++k) {
        const int s = (issued_ + k) % n;
        if (slots_[static_cast<std::size_t>(s)].busy) finish(s);
    }
}

} // namespace nhvk
