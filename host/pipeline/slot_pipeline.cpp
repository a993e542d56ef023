// SPDX-License-Identifier: MIT
#include "pipeline/slot_pipeline.hpp"

namespace nhvk {

Downloads HostStages::downloads(const Chunk& c) const {
    Downloads d;
    d.metrics = reduce_.on_host() || samples_ != nullptr;
    d.inputs = samples_ != nullptr || saved_.wants(c.first, c.m);
    return d;
}

void HostStages::add(const ChunkArgs& a, const Chunk& c) {
    reduce_.add_chunk(a, c.m);
    if (samples_) samples_->add_chunk(a, c.first, c.m);
    if (saved_.wants(c.first, c.m)) saved_.add_chunk(a, c.first, c.m);
}

SlotPipeline::SlotPipeline(EnsembleBackend& backend, HostStages& host, Progress& progress, const bool& cut)
    : backend_(backend), host_(host), progress_(progress), cut_(cut),
      slots_(static_cast<std::size_t>(backend.slots())) {}

void SlotPipeline::finish(int s) {
    backend_.wait(s);
    const auto t = Clock::now();
    Slot& slot = slots_[static_cast<std::size_t>(s)];
    host_.add(backend_.slot(s), slot.chunk);
    slot.busy = false;
    host_seconds_ += seconds_since(t);
    progress_.chunk_done(static_cast<std::uint64_t>(slot.chunk.m));
}

bool SlotPipeline::issue(const Chunk& c) {
    const int n = static_cast<int>(slots_.size());
    const int s = issued_ % n;
    if (slots_[static_cast<std::size_t>(s)].busy) finish(s);
    slots_[static_cast<std::size_t>(s)].chunk = c;
    backend_.sample(s, c.first, c.m);
    backend_.integrate(s, c.m);
    if (cut_) return false;
    if (host_.reduce_on_backend()) backend_.reduce(s, c.m);
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
