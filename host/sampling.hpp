// SPDX-License-Identifier: MIT
/** @file
 *  @brief Initial conditions on the constraint set (PHYSICS.md §6): counter-based draws keyed by (seed, trajectory),
 *         projection of the trial velocity in the kinetic metric, optional energy shell, the vakonomic μ0.
 */
#pragma once

#include <cstdint>

namespace nhvk {

struct RunConfig;

/** @brief Why a sample could not be placed on the constraint set (counted and reported, never dropped silently). */
enum class SampleStatus : std::uint8_t {
    ok = 0,
    projection_failed = 1,    ///< Gauss–Newton did not reach |φ| ≤ tolerance
    singular_constraints = 2, ///< the projection's saddle-point matrix is singular (J rank-deficient, or W not
                              ///<   positive on ker J) at this point
    energy_unreachable = 3,   ///< no scaling of the velocity reaches the energy shell E0
    non_finite = 4,           ///< a draw or a model evaluation gave NaN/∞
};
inline constexpr int sample_status_count = 5;

/** @brief The name used in outputs. */
inline const char* sample_status_name(SampleStatus s) {
    switch (s) {
    case SampleStatus::ok: return "ok";
    case SampleStatus::projection_failed: return "projection_failed";
    case SampleStatus::singular_constraints: return "singular_constraints";
    case SampleStatus::energy_unreachable: return "energy_unreachable";
    case SampleStatus::non_finite: return "non_finite";
    }
    return "unknown";
}

/** @brief Draw members [first, first + m) of the ensemble. */
struct SampleRequest {
    const RunConfig* cfg = nullptr;
    std::uint64_t first = 0; ///< global index of the chunk's member 0
    long long m = 0;
    int threads = 0; ///< ≤ 0: all cores
};

/** @brief Where the samples go (structure of arrays, leading dimension `ld`). A member that could not be sampled
 *         gets NaN in q0 (the chunk kernel skips it) and its reason in `status`. */
struct SampleChunk {
    double* q0 = nullptr;
    double* v0 = nullptr;
    double* mu0 = nullptr;
    double* params = nullptr; ///< per-member parameters (sweeps), or nullptr
    long long ld = 0;
    std::uint8_t* status = nullptr; ///< SampleStatus per member
};

/** @brief Relative tolerance of the constraint projection and of the energy shell. */
inline constexpr double sample_tolerance = 1e-13;

} // namespace nhvk
