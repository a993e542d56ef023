// SPDX-License-Identifier: MIT
/** @file
 *  @brief A model file integrated without a C++ compiler: its parsed expressions evaluated at run time, through the
 *         dual-number reference equations (nhvk/dynamics.hpp `AdEquations`), on the CPU.
 *
 *  The engine's templates take the sizes `n` and `k` at compile time, so nhvk carries them instantiated for a fixed
 *  set of sizes (CMake's `NHVK_INTERPRETED_SIZES`); the model itself (its expressions, parameters, names) is read at
 *  run time. This is the path `find_ops` takes where the run-time compiler cannot run (README "Adding a model").
 */
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "modelfile/model_file.hpp"

namespace nhvk {

struct ModelOps;

namespace modelfile {

/** @brief The sizes (n, k) this nhvk interprets model files of. */
std::vector<std::pair<int, int>> interpreted_sizes();

/** @brief The ops that interpret `m` (kept for the life of the process). Throws, naming the model file, when its size
 *         is not one of `interpreted_sizes()`, or when a process already holds too many interpreted models of its
 *         size (each size has a fixed number of slots). */
ModelOps interpreted_ops(const FileModel& m);

} // namespace modelfile
} // namespace nhvk
