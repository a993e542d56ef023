// SPDX-License-Identifier: MIT
// The interpreter of model files is a library of its own, libnhvk_interp.so beside libnhvk.so (CMakeLists.txt,
// NHVK_SHARED_ENGINE): each of its sizes instantiates the whole CPU engine again, and only a machine without a C++
// compiler needs it. Loaded here at its first use.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>

#include "model_ops.hpp"
#include "modelfile/interpreted.hpp"

namespace nhvk::modelfile {

namespace {

struct Interpreter {
    void (*ops)(const FileModel*, ModelOps*) = nullptr;
    void (*sizes)(std::vector<std::pair<int, int>>*) = nullptr;
};

const Interpreter& interpreter() {
    static std::mutex mutex;
    static Interpreter loaded;
    std::lock_guard<std::mutex> lock(mutex);
    if (loaded.ops) return loaded;
    // NOTE: beside this library, wherever it is (the build tree's lib/, an install's lib/)
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&interpreter), &info) == 0 || !info.dli_fname)
        throw std::runtime_error("the interpreter of model files: cannot tell where libnhvk.so is");
    const std::string path = (std::filesystem::path(info.dli_fname).parent_path() / "libnhvk_interp.so").string();
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        throw std::runtime_error("the interpreter of model files (" + path +
                                 ") cannot be loaded: " + (e ? e : "unknown error") +
                                 "; build it (cmake --build BUILD --target nhvk_interp, part of the default build) "
                                 "or install a C++ compiler");
    }
    loaded.ops = reinterpret_cast<void (*)(const FileModel*, ModelOps*)>(::dlsym(h, "nhvk_interpreted_ops"));
    loaded.sizes = reinterpret_cast<void (*)(std::vector<std::pair<int, int>>*)>(::dlsym(h, "nhvk_interpreted_sizes"));
    if (!loaded.ops || !loaded.sizes) {
        loaded = Interpreter{};
        throw std::runtime_error(path + " is not nhvk's interpreter of model files (its entry points are missing)");
    }
    return loaded;
}

} // namespace

std::vector<std::pair<int, int>> interpreted_sizes() {
    std::vector<std::pair<int, int>> v;
    interpreter().sizes(&v);
    return v;
}

ModelOps interpreted_ops(const FileModel& m) {
    ModelOps ops{};
    interpreter().ops(&m, &ops);
    return ops;
}

} // namespace nhvk::modelfile
