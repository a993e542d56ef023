// SPDX-License-Identifier: MIT
/** @file
 *  @brief The sampling stage of the CPU backend, templated on the model (instantiated in each model's generated
 *         translation unit, after its generated equations).
 */
#pragma once

#include <omp.h>

#include <cstdint>

#include "config.hpp"
#include "nhvk/backend/sample_spec.hpp"
#include "nhvk/generated.hpp"
#include "sampling.hpp"

namespace nhvk {

/** @brief Draw member `g` of the run `cfg` (for tests and tools; the backends draw whole chunks). Parameters go to
 *         `p` (room for the model's parameter count). */
template <class M>
SampleStatus sample_member(const RunConfig& cfg, std::uint64_t g, double* p, double* q, double* v, double* mu) {
    const SampleSpec<M> spec = make_sample_spec<M>(make_sampling_plan(cfg));
    return sample_member<M, GenEquations<M, double>>(spec, g, p, q, v, mu);
}

/** @brief Draw members [first, first + args.m) into the chunk's inputs on the host (OpenMP; order-independent). The
 *         projection onto the constraints uses the equations `Eq` (the generated ones; an interpreted model file has
 *         only the reference ones). */
template <class M, template <class, class> class Eq = GenEquations>
void sample_chunk_cpu(const ChunkCommon& common, const ChunkArgs& args, std::uint64_t first, int threads) {
    const int nthreads = threads > 0 ? threads : omp_get_max_threads();
    // NOTE: a chunk of a sweep is drawn point by point, each point's members as a run of that point alone draws them
    for_each_point_run(common, first, args.m,
                       [&](const SamplingPlan& plan, std::uint64_t member, long long j0, long long len) {
                           const SampleSpec<M> spec = make_sample_spec<M>(plan);
                           const ChunkArgs part = member_range(args, j0, len);
#pragma omp parallel for schedule(dynamic, 64) num_threads(nthreads)
                           for (long long j = 0; j < len; ++j)
                               sample_chunk_member<M, Eq<M, double>>(spec, part, member, j);
                       });
}

} // namespace nhvk
