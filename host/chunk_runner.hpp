// SPDX-License-Identifier: MIT
/** @file
 *  @brief Backends behind one interface (Ginkgo's executor idea): a runner owns host-visible chunk buffers in
 *         structure-of-arrays form, integrates a chunk of members, and fills its outputs. The CPU runner is the
 *         reference; the CUDA runner must reproduce it.
 */
#pragma once

#include <memory>
#include <string>

#include "nhvk/ensemble_chunk.hpp"

namespace nhvk {

/** @brief Sizes of every chunk of one run. */
struct ChunkLayout {
    int n = 0, k = 0, nt = 0;
    int n_params = 0;
    bool per_member_params = false; ///< parameter sweep: one parameter set per member
    long long capacity = 0;         ///< members per chunk (the leading dimension of every array)
};

/**
 * @brief A backend. Usage: fill the inputs of `slot(s)` (q0, v0, mu0, params with leading dimension `capacity`),
 *        `submit(s, m)`, later `wait(s)` and read its outputs. With two slots the host prepares one chunk while
 *        the device integrates the other.
 */
class ChunkRunner {
public:
    virtual ~ChunkRunner() = default;
    virtual int slots() const = 0;
    /** @brief Host-visible buffers of slot `s`; inputs are written by the caller, outputs valid after `wait(s)`. */
    virtual ChunkArgs& slot(int s) = 0;
    virtual void submit(int s, long long m) = 0;
    virtual void wait(int s) = 0;
    virtual std::string name() const = 0;
};

/** @brief Settings common to every chunk: times, t0, step control, masks, threshold (pointers are host). */
struct ChunkCommon {
    std::string model;
    Method method = Method::dopri5;
    Precision precision = Precision::f64;
    EquationsKind equations = EquationsKind::generated;
    const double* times = nullptr;
    int nt = 0;
    double t0 = 0.0;
    StepControl ctl;
    unsigned divergence_mask = ~0u;
    unsigned angle_mask = 0u;
    double onset_threshold = 1e-3;
    const double* shared_params = nullptr; ///< used when the layout has no per-member parameters
};

/** @brief The CPU reference backend: OpenMP over members (`threads` ≤ 0: all cores). */
std::unique_ptr<ChunkRunner> make_cpu_runner(const ChunkLayout& layout, const ChunkCommon& common, int threads);

/** @brief The CUDA backend: pinned buffers, two streams, one thread per trajectory. Throws without CUDA. */
std::unique_ptr<ChunkRunner> make_cuda_runner(const ChunkLayout& layout, const ChunkCommon& common);

/** @brief Run every member of a filled chunk on the CPU (used by the CPU runner and by tests). */
void run_chunk_cpu(const ChunkCommon& common, const ChunkArgs& args, int threads);

} // namespace nhvk
