// SPDX-License-Identifier: MIT
#include "modelfile/interpreted.hpp"

#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "model_ops.hpp"
#include "modelfile/interpreted_impl.hpp"
#include "nhvk_interpreted_sizes.hpp"

// NOTE: each size's engine is instantiated in a unit of its own (build/gen/interpreted_<n>_<k>.cpp), so the sizes
// compile in parallel; here they are only named.
#define NHVK_INTERPRETED_EXTERN(N, K) extern template ModelOps bind<N, K>(const Program*);
namespace nhvk::modelfile::interp {
NHVK_INTERPRETED_SIZES(NHVK_INTERPRETED_EXTERN)
}
#undef NHVK_INTERPRETED_EXTERN

namespace nhvk::modelfile {

namespace {

struct Size {
    int n, k;
    ModelOps (*bind)(const interp::Program*);
};

#define NHVK_INTERPRETED_SIZE(N, K) Size{N, K, &interp::bind<N, K>},
const Size sizes[] = {NHVK_INTERPRETED_SIZES(NHVK_INTERPRETED_SIZE)};
#undef NHVK_INTERPRETED_SIZE

std::string size_list() {
    std::string s;
    for (const Size& z : sizes)
        s += (s.empty() ? "" : ", ") + ("(" + std::to_string(z.n) + ", " + std::to_string(z.k) + ")");
    return s;
}

std::vector<std::pair<int, int>> sizes_impl() {
    std::vector<std::pair<int, int>> v;
    for (const Size& z : sizes) v.emplace_back(z.n, z.k);
    return v;
}

ModelOps ops_impl(const FileModel& m) {
    for (const Size& z : sizes)
        if (z.n == m.info.n && z.k == m.info.k) {
            // NOTE: a program lives as long as the process: the ops bound to it may be held anywhere.
            static std::mutex mutex;
            static std::deque<std::unique_ptr<interp::Program>> programs;
            std::lock_guard<std::mutex> lock(mutex);
            programs.push_back(std::make_unique<interp::Program>(m));
            try {
                return z.bind(programs.back().get());
            } catch (const std::runtime_error& e) {
                throw std::runtime_error(m.source + ": model '" + m.info.name + "' cannot be interpreted: " + e.what());
            }
        }
    throw std::runtime_error(m.source + ": model '" + m.info.name + "' has " + std::to_string(m.info.n) +
                             " coordinates and " + std::to_string(m.info.k) +
                             " constraints; this nhvk interprets model files of the sizes (n, k) " + size_list() +
                             " only (CMake's NHVK_INTERPRETED_SIZES)");
}

} // namespace

#if NHVK_INTERPRETER_LINKED
std::vector<std::pair<int, int>> interpreted_sizes() { return sizes_impl(); }
ModelOps interpreted_ops(const FileModel& m) { return ops_impl(m); }
#endif

} // namespace nhvk::modelfile

#if !NHVK_INTERPRETER_LINKED
// The interpreter as a library of its own (libnhvk_interp.so, loaded by interpreted_loader.cpp when a model file is
// first interpreted): these are what the engine looks up in it.
extern "C" __attribute__((visibility("default"))) void nhvk_interpreted_ops(const nhvk::modelfile::FileModel* m,
                                                                            nhvk::ModelOps* out) {
    *out = nhvk::modelfile::ops_impl(*m);
}
extern "C" __attribute__((visibility("default"))) void nhvk_interpreted_sizes(std::vector<std::pair<int, int>>* out) {
    *out = nhvk::modelfile::sizes_impl();
}
#endif
