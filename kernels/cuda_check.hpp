// SPDX-License-Identifier: MIT
/** @file
 *  @brief Error checking for CUDA runtime calls: a failure becomes a std::runtime_error naming the call and place.
 */
#pragma once

#include <cuda_runtime.h>

#include <sstream>
#include <stdexcept>

#define NHVK_CUDA_CHECK(expr)                                                                                          \
    do {                                                                                                               \
        const cudaError_t nhvk_err_ = (expr);                                                                          \
        if (nhvk_err_ != cudaSuccess) {                                                                                \
            std::ostringstream os_;                                                                                    \
            os_ << "CUDA error in " #expr " (" << __FILE__ << ":" << __LINE__                                          \
                << "): " << cudaGetErrorString(nhvk_err_);                                                             \
            throw std::runtime_error(os_.str());                                                                       \
        }                                                                                                              \
    } while (0)
