// SPDX-License-Identifier: MIT
#include "modelfile/cuda_compile.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "modelfile/model_file.hpp"
#include "nhvk_jit_config.hpp"
#include "nhvk_version.hpp"

#if NHVK_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace nhvk::jit {

namespace {

/** @brief The in-memory headers NVRTC gets for the standard headers the kernels' include closure names (NVRTC has no
 *         host standard library; the host's libstdc++ does not parse under it). Each maps its names onto libcu++,
 *         which NVRTC compiles; `namespace std { using namespace cuda::std; }` keeps `std::uint64_t` and the like
 *         spelled as on the host. The headers Random123's array.h includes for its host-only members (streams,
 *         exceptions, iterators) are stubs: under __CUDA_ARCH__ it uses none of them but names `std::ostream` in
 *         operators that are never called. */
struct Shim {
    const char* name;
    const char* text;
};
const Shim shims[] = {
    {"cstdint", "#pragma once\n#include <cuda/std/cstdint>\nnamespace std { using namespace cuda::std; }\n"},
    {"stdint.h", "#pragma once\n#include <cuda/std/cstdint>\nusing cuda::std::int8_t; using cuda::std::int16_t;\n"
                 "using cuda::std::int32_t; using cuda::std::int64_t; using cuda::std::uint8_t;\n"
                 "using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;\n"
                 "using cuda::std::uintptr_t; using cuda::std::size_t;\n"},
    {"cstddef", "#pragma once\n#include <cuda/std/cstddef>\nnamespace std { using namespace cuda::std; }\n"},
    {"stddef.h", "#pragma once\n#include <cuda/std/cstddef>\nusing cuda::std::size_t; using cuda::std::ptrdiff_t;\n"},
    {"type_traits", "#pragma once\n#include <cuda/std/type_traits>\nnamespace std { using namespace cuda::std; }\n"},
    {"utility", "#pragma once\n#include <cuda/std/utility>\nnamespace std { using namespace cuda::std; }\n"},
    {"limits", "#pragma once\n#include <cuda/std/limits>\nnamespace std { using namespace cuda::std; }\n"},
    {"array", "#pragma once\n#include <cuda/std/array>\nnamespace std { using namespace cuda::std; }\n"},
    {"cmath", "#pragma once\n#include <cuda/std/cmath>\nnamespace std { using namespace cuda::std; }\n"},
    {"math.h", "#pragma once\n#include <cuda/std/cmath>\n"},
    // NOTE: NVRTC defines neither the <float.h> macros nor GCC's __builtin_nan / __builtin_huge_val (linalg.hpp's
    // NumericLimits); the values are IEEE binary64/binary32's.
    {"cfloat",
     "#pragma once\n#include <cuda/std/cfloat>\n#ifndef DBL_EPSILON\n#define DBL_EPSILON 2.2204460492503131e-16\n"
     "#define DBL_MAX 1.7976931348623157e+308\n#define DBL_MIN 2.2250738585072014e-308\n"
     "#define FLT_EPSILON 1.19209290e-07F\n#define FLT_MAX 3.40282347e+38F\n#define FLT_MIN 1.17549435e-38F\n"
     "#endif\n#define __builtin_nan(s) __longlong_as_double(0x7ff8000000000000LL)\n"
     "#define __builtin_huge_val() __longlong_as_double(0x7ff0000000000000LL)\n"},
    {"algorithm", "#pragma once\n"},
    {"stdexcept", "#pragma once\n"},
    {"iterator", "#pragma once\n"},
    {"iostream", "#pragma once\nnamespace std {\nstruct ostream { template <class X> ostream& operator<<(const X&) { "
                 "return *this; } };\nstruct istream { template <class X> istream& operator>>(X&) { return *this; } "
                 "};\n}\n"},
};

/// The entry's bytes: "nhvk-cubin 1", the number of names, one lowered name per line, then the CUBIN.
std::string pack(const std::vector<std::string>& lowered, const std::string& image) {
    std::string s = "nhvk-cubin 1\n" + std::to_string(lowered.size()) + "\n";
    for (const std::string& l : lowered) s += l + "\n";
    return s + image;
}

void unpack(const std::string& bytes, const std::string& path, CudaArtefact& out) {
    std::istringstream in(bytes);
    std::string magic, line;
    std::size_t count = 0;
    if (!std::getline(in, magic) || magic != "nhvk-cubin 1" || !std::getline(in, line))
        throw std::runtime_error("'" + path + "' is not an nhvk CUBIN entry: delete it (the cache rebuilds it)");
    count = std::stoul(line);
    out.lowered.clear();
    for (std::size_t i = 0; i < count; ++i) {
        if (!std::getline(in, line))
            throw std::runtime_error("'" + path + "' is truncated: delete it (the cache rebuilds it)");
        out.lowered.push_back(line);
    }
    out.image = bytes.substr(static_cast<std::size_t>(in.tellg()));
}

#if NHVK_HAVE_NVRTC
void check(nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) throw std::runtime_error(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
}

/// One NVRTC program, destroyed on scope exit.
struct Program {
    nvrtcProgram p = nullptr;
    ~Program() {
        if (p) nvrtcDestroyProgram(&p);
    }
};
#endif

/** @brief NHVK_CUDA_MIN_BLOCKS's value: the blocks of 128 threads a multiprocessor that every ensemble kernel NVRTC
 *         compiles asks ptxas to fit (kernels/kernel_templates.cuh, ensemble_min_blocks), for measuring; 1 to 16. */
int min_blocks_from(const char* text) {
    const std::string t(text);
    if (t.size() <= 2 && t.find_first_not_of("0123456789") == std::string::npos) {
        const int b = std::stoi(t);
        if (b >= 1 && b <= 16) return b;
    }
    throw std::runtime_error("NHVK_CUDA_MIN_BLOCKS=" + modelfile::shown(t, 32) +
                             ": expected a whole number from 1 to 16 (blocks of 128 threads a multiprocessor that "
                             "the ensemble kernels compiled at run time ask for), or unset");
}

} // namespace

bool nvrtc_available() { return NHVK_HAVE_NVRTC != 0; }

std::string nvrtc_version() {
#if NHVK_HAVE_NVRTC
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    return std::to_string(major) + "." + std::to_string(minor);
#else
    throw std::runtime_error("this nhvk was built without NVRTC (no CUDA toolkit at configure time): model files run "
                             "on the CPU backend only");
#endif
}

std::vector<std::string> nvrtc_options(const std::string& arch) {
    std::vector<std::string> o{"-std=c++17", "-arch=" + arch,
                               // unannotated functions (constexpr helpers, the models' members) are device code here
                               "-default-device",
                               // the unrecognized GCC and diag pragmas of Random123 and libstdc++-style headers
                               "-diag-suppress=161",
                               // Random123's features header for nvcc expects nvcc's macros; NVRTC sets none of these
                               "-DR123_USE_SSE=0", "-DR123_STATIC_INLINE=static __inline__",
                               "-DR123_FORCE_INLINE(decl)=decl __attribute__((always_inline))"};
    // NVRTC and the CUDA runtime of one toolkit share its version number (Random123 reads it as CUDART_VERSION).
    const std::string v = nvrtc_version();
    const std::size_t dot = v.find('.');
    o.push_back("-DCUDART_VERSION=" +
                std::to_string(std::stoi(v.substr(0, dot)) * 1000 + std::stoi(v.substr(dot + 1)) * 10));
    for (const std::string& d : jit_layout().cuda_includes) o.push_back("-I" + d);
    if (const char* e = std::getenv("NHVK_CUDA_MIN_BLOCKS"); e && *e)
        o.push_back("-DNHVK_ENSEMBLE_MIN_BLOCKS=" + std::to_string(min_blocks_from(e)));
    return o;
}

CudaArtefact compile_cuda(const std::string& source, const std::vector<std::string>& name_expressions,
                          const std::string& arch, const std::string& kind, const std::string& label,
                          const Reporter& report) {
#if NHVK_HAVE_NVRTC
    const std::vector<std::string> options = nvrtc_options(arch);
    std::vector<std::string> parts{std::string(nhvk_version), "nvrtc " + nvrtc_version(),
                                   headers_hash(jit_layout().cuda_roots), source};
    parts.insert(parts.end(), options.begin(), options.end());
    parts.insert(parts.end(), name_expressions.begin(), name_expressions.end());
    for (const Shim& s : shims) parts.emplace_back(s.text);
    CudaArtefact out;
    out.file = cached_artefact(hash_hex(parts), kind, ".cubin", report, [&](const Entry& e) {
        Program prog;
        std::vector<const char*> names, texts, opts;
        for (const Shim& s : shims) {
            names.push_back(s.name);
            texts.push_back(s.text);
        }
        for (const std::string& o : options) opts.push_back(o.c_str());
        // NOTE: the program's name is nhvk's, not the label: a model file's path is user text, and NVRTC prints
        // the name into its diagnostics and line directives.
        check(nvrtcCreateProgram(&prog.p, source.c_str(), "model_file.cu", static_cast<int>(names.size()), texts.data(),
                                 names.data()),
              "nvrtcCreateProgram");
        for (const std::string& n : name_expressions) check(nvrtcAddNameExpression(prog.p, n.c_str()), n.c_str());
        const nvrtcResult r = nvrtcCompileProgram(prog.p, static_cast<int>(opts.size()), opts.data());
        std::size_t log_size = 0;
        nvrtcGetProgramLogSize(prog.p, &log_size);
        std::string log(log_size, '\0');
        if (log_size > 0) nvrtcGetProgramLog(prog.p, log.data());
        if (r != NVRTC_SUCCESS) {
            // NOTE: the source and the log stay, named in the message, for a bug report.
            const std::string src = e.stem + ".cu", log_path = e.stem + ".log";
            write_new_file(src, source);
            write_new_file(log_path, log);
            if (log.size() > 4000) log = log.substr(0, 4000) + "\n[...]";
            throw std::runtime_error(label + ": NVRTC " + nvrtc_version() + " failed on the emitted kernels for " +
                                     arch + " (" + nvrtcGetErrorString(r) + "; source " + src + ", log " + log_path +
                                     "):\n" + log);
        }
        std::vector<std::string> lowered;
        for (const std::string& n : name_expressions) {
            const char* l = nullptr;
            check(nvrtcGetLoweredName(prog.p, n.c_str(), &l), n.c_str());
            lowered.emplace_back(l);
        }
        std::size_t size = 0;
        check(nvrtcGetCUBINSize(prog.p, &size), "nvrtcGetCUBINSize");
        std::string image(size, '\0');
        check(nvrtcGetCUBIN(prog.p, image.data()), "nvrtcGetCUBIN");
        write_new_file(e.tmp, pack(lowered, image));
        // The source under the entry's own name, for a user who wants to read what was compiled.
        const std::string src = e.stem + ".cu";
        write_new_file(src, source);
        e.publish(src, ".cu");
    });
    unpack(out.file.bytes, out.file.path, out);
    out.file.bytes = std::string();
    if (out.lowered.size() != name_expressions.size())
        throw std::runtime_error("'" + out.file.path + "' holds " + std::to_string(out.lowered.size()) +
                                 " kernels, expected " + std::to_string(name_expressions.size()) +
                                 ": delete it (the cache rebuilds it)");
    return out;
#else
    (void)source, (void)name_expressions, (void)arch, (void)kind, (void)label, (void)report;
    nvrtc_version(); // throws the explanation
    return {};
#endif
}

} // namespace nhvk::jit
