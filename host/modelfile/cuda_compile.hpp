// SPDX-License-Identifier: MIT
/** @file
 *  @brief Compile CUDA source to a CUBIN at run time with NVRTC, through the same cache as the host compiler's shared
 *         objects (runtime_compile.hpp: keyed, locked, renamed into place).
 *
 *  NVRTC is a library of the CUDA toolkit: it compiles for a named architecture without a device, so the compile step
 *  is tested on machines with no GPU. It has no host standard library, so the standard headers the kernels include
 *  are supplied as small in-memory headers mapped onto libcu++ (`cuda::std`, which NVRTC compiles).
 */
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "modelfile/runtime_compile.hpp"

namespace nhvk::jit {

/** @brief Whether this nhvk was built with NVRTC (the CUDA toolkit was found at configure time). */
bool nvrtc_available();

/** @brief NVRTC's version as "major.minor"; throws when `!nvrtc_available()`. */
std::string nvrtc_version();

/** @brief A compiled CUBIN and the mangled names of the kernels it was asked for. */
struct CudaArtefact {
    Artefact file;                    ///< the cache entry (the lowered names, then the CUBIN)
    std::vector<std::string> lowered; ///< per name expression, in order: the kernel's symbol in the CUBIN
    std::string image;                ///< the CUBIN's bytes
};

/** @brief The options NVRTC gets for `arch` (e.g. "sm_90"): nhvk's include folders (include/, kernels/), Random123's
 *         and libcu++'s, and the defines that let Random123 build under NVRTC. */
std::vector<std::string> nvrtc_options(const std::string& arch);

/** @brief Compile `source` for `arch` (e.g. "sm_90") into the cache under `kind`, or load it from there. Each of
 *         `name_expressions` (a kernel template's instantiation, e.g. `&ns::kernel<Model, double>`) is instantiated
 *         and its symbol returned. `label` names the source in messages. Throws with NVRTC's log when it fails. */
CudaArtefact compile_cuda(const std::string& source, const std::vector<std::string>& name_expressions,
                          const std::string& arch, const std::string& kind, const std::string& label,
                          const Reporter& report = {});

} // namespace nhvk::jit
