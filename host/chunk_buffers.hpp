// SPDX-License-Identifier: MIT
/** @file
 *  @brief Where each array of a chunk lives inside one contiguous block (shared by the CPU and CUDA runners).
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "chunk_runner.hpp"

namespace nhvk {

/** @brief Byte offsets of the arrays of one chunk inside a single allocation; inputs first, then outputs. */
struct ChunkBlock {
    std::size_t q0, v0, mu0, params, metrics, status, failed, fail_index, onset;
    std::size_t input_bytes;  ///< q0 … params
    std::size_t output_bytes; ///< metrics … onset
    std::size_t total;

    explicit ChunkBlock(const ChunkLayout& L) {
        const std::size_t c = static_cast<std::size_t>(L.capacity);
        std::size_t off = 0;
        auto take = [&](std::size_t bytes) {
            const std::size_t at = off;
            off += (bytes + 255) / 256 * 256;
            return at;
        };
        q0 = take(sizeof(double) * L.n * c);
        v0 = take(sizeof(double) * L.n * c);
        mu0 = take(sizeof(double) * (L.k > 0 ? L.k : 1) * c);
        params = take(sizeof(double) * (L.per_member_params ? L.n_params : 0) * c);
        input_bytes = off;
        metrics = take(sizeof(double) * metric_count * L.nt * c);
        status = take(c);
        failed = take(c);
        fail_index = take(sizeof(std::int32_t) * c);
        onset = take(sizeof(std::int32_t) * c);
        output_bytes = off - input_bytes;
        total = off;
    }

    /** @brief Point `a`'s arrays into the block at `base`. */
    void bind(ChunkArgs& a, char* base, const ChunkLayout& L) const {
        a.ld = L.capacity;
        a.q0 = reinterpret_cast<const double*>(base + q0);
        a.v0 = reinterpret_cast<const double*>(base + v0);
        a.mu0 = reinterpret_cast<const double*>(base + mu0);
        if (L.per_member_params) {
            a.params = reinterpret_cast<const double*>(base + params);
            a.params_ld = L.capacity;
        }
        a.metrics = reinterpret_cast<double*>(base + metrics);
        a.status = reinterpret_cast<std::uint8_t*>(base + status);
        a.failed = reinterpret_cast<std::uint8_t*>(base + failed);
        a.fail_index = reinterpret_cast<std::int32_t*>(base + fail_index);
        a.onset = reinterpret_cast<std::int32_t*>(base + onset);
    }
};

/** @brief The chunk arguments that do not depend on the buffers. */
inline ChunkArgs common_args(const ChunkLayout& L, const ChunkCommon& c) {
    ChunkArgs a;
    a.nt = c.nt;
    a.t0 = c.t0;
    a.times = c.times;
    a.ctl = c.ctl;
    a.divergence_mask = c.divergence_mask;
    a.angle_mask = c.angle_mask;
    a.onset_threshold = c.onset_threshold;
    a.n_params = L.n_params;
    a.params = L.per_member_params ? nullptr : c.shared_params;
    a.params_ld = 0;
    return a;
}

} // namespace nhvk
