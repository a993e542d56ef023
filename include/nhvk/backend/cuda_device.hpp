// SPDX-License-Identifier: MIT
/** @file
 *  @brief The device of an MPI rank: the ranks on a node take its CUDA devices in turn (node-local rank modulo the
 *         device count). Defined by the CUDA backend, and as a no-op without it.
 */
#pragma once

namespace nhvk {

/** @brief Makes device `local_rank % count` current for this process; returns it (−1 without a device). */
int select_cuda_device(int local_rank);

} // namespace nhvk
