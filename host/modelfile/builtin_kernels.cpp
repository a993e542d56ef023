// SPDX-License-Identifier: MIT
#include "modelfile/builtin_kernels.hpp"

#include <cstring>

#include "nhvk/backend/sample_spec.hpp"
#include "nhvk_builtin_models.hpp"

namespace nhvk::modelfile {

namespace {

/// What a model file's shared object exports as `sample_spec_symbol`, for a built-in model.
template <class M> unsigned long sample_spec_of(const SamplingPlan* plan, void* out, unsigned long capacity) {
    using Spec = SampleSpec<M>;
    if (plan && out && capacity >= sizeof(Spec)) {
        const Spec s = make_sample_spec<M>(*plan);
        std::memcpy(out, &s, sizeof s);
    }
    return sizeof(Spec);
}

template <class M, class... Ms> bool in_list(ModelList<Ms...>) { return (std::is_same_v<M, Ms> || ...); }

} // namespace

std::optional<BuiltinKernelSource> builtin_kernel_source(const std::string& name) {
#define NHVK_X(T, type_name, header)                                                                                   \
    if (name == T::name)                                                                                               \
        return BuiltinKernelSource{                                                                                    \
            T::name, type_name, header, T::n, T::k, &sample_spec_of<T>, in_list<T>(AotCudaModels{})};
    NHVK_BUILTIN_MODELS(NHVK_X)
#undef NHVK_X
    return std::nullopt;
}

std::string emit_builtin_cuda_unit(const BuiltinKernelSource& s) {
    // NOTE: the header names are CMake's, derived from the C++ class names of include/nhvk/models/all.hpp: no user text
    return "// The CUDA kernels of the built-in model " + s.name + ", emitted by nhvk for NVRTC\n#include \"" +
           s.header + "\"\n#include \"kernel_templates.cuh\"\n";
}

jit::CudaArtefact compile_builtin_cuda(const BuiltinKernelSource& s, CudaKernels which, Precision precision,
                                       Method method, const std::string& arch, const jit::Reporter& report) {
    return jit::compile_cuda(emit_builtin_cuda_unit(s), cuda_kernel_names(which, precision, method, s.type), arch,
                             "cuda", "built-in model '" + s.name + "'", report);
}

} // namespace nhvk::modelfile
