// SPDX-License-Identifier: MIT
// A model file's CUDA kernels compiled by NVRTC (host/modelfile/cuda_compile.hpp): no device is needed to compile, so
// these run wherever the CUDA toolkit was found at configure time. What runs the kernels is tested on a device
// (tests/kernels).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "modelfile/cuda_compile.hpp"
#include "modelfile/model_file.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::jit::CudaArtefact;

class CudaCompile : public ::testing::Test {
protected:
    void SetUp() override {
        if (!nhvk::jit::nvrtc_available()) GTEST_SKIP() << "built without NVRTC (no CUDA toolkit at configure time)";
    }
    static nhvk::modelfile::FileModel model(const std::string& name) {
        return nhvk::modelfile::load_model_file(std::string(NHVK_SOURCE_DIR) + "/models/" + name + ".toml");
    }
    static std::vector<std::string> ensemble_rk4() {
        return nhvk::modelfile::cuda_kernel_names(nhvk::modelfile::CudaKernels::ensemble, nhvk::Precision::f64,
                                                  nhvk::Method::rk4);
    }
    static CudaArtefact compile(const nhvk::modelfile::FileModel& m, const std::string& arch,
                                const std::vector<std::string>& names = ensemble_rk4()) {
        return nhvk::jit::compile_cuda(nhvk::modelfile::emit_model_cuda_unit(m), names, arch, "cuda", m.source);
    }
    nhvk_test::TempDir dir_;
    // the cache is this test's folder, and the caller's setting comes back for later tests of the same process
    nhvk_test::ScopedEnv cache_{"NHVK_CACHE_DIR", dir_.str("cache")};
};

bool is_elf(const std::string& image) {
    return image.size() > 4 && image.compare(0, 4,
                                             "\x7f"
                                             "ELF") == 0;
}

// Models that together use what the emitted struct can hold: a force and a source residual (ball_on_turntable),
// coordinate and velocity charts (rolling_disc), boolean variants (sphere_holonomic), the hand-written model that
// exists only as a file (driven_rolling_disc), and the smallest (nh_particle).
class CudaCompileModel : public CudaCompile, public ::testing::WithParamInterface<const char*> {};

void expect_kernels(const CudaArtefact& a, const std::vector<std::string>& names) {
    ASSERT_TRUE(is_elf(a.image)) << "not an ELF image: " << a.file.path;
    ASSERT_EQ(a.lowered.size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(a.lowered[i].rfind("_Z", 0), 0u) << names[i] << " -> " << a.lowered[i];
        // the symbol table of the CUBIN holds each kernel's mangled name
        EXPECT_NE(a.image.find(a.lowered[i] + '\0'), std::string::npos) << a.lowered[i];
    }
}

// A run's module: the chunk and sampling kernels of one precision and method.
TEST_P(CudaCompileModel, TheEnsembleKernelsAreInTheCubin) {
    const CudaArtefact a = compile(model(GetParam()), "sm_90");
    EXPECT_FALSE(a.file.cached);
    expect_kernels(a, ensemble_rk4());
    EXPECT_TRUE(fs::exists(fs::path(a.file.path).replace_extension(".cu"))) << "the compiled source is kept";
}

INSTANTIATE_TEST_SUITE_P(Models, CudaCompileModel,
                         ::testing::Values("nh_particle", "ball_on_turntable", "rolling_disc", "sphere_holonomic",
                                           "driven_rolling_disc"));

// Every precision and method, and the trajectory kernel, of the smallest model (the others share the templates).
TEST_F(CudaCompile, EveryCombinationCompiles) {
    const auto m = model("nh_particle");
    using nhvk::modelfile::CudaKernels;
    for (const CudaKernels which : {CudaKernels::ensemble, CudaKernels::trajectory})
        for (const nhvk::Precision p : {nhvk::Precision::f64, nhvk::Precision::f32})
            for (const nhvk::Method me : {nhvk::Method::rk4, nhvk::Method::dopri5}) {
                const std::vector<std::string> names = nhvk::modelfile::cuda_kernel_names(which, p, me);
                SCOPED_TRACE(names.front());
                expect_kernels(compile(m, "sm_90", names), names);
            }
}

TEST_F(CudaCompile, SecondUseIsCachedAndAnotherArchitectureIsANewEntry) {
    const auto m = model("nh_particle");
    const CudaArtefact first = compile(m, "sm_90");
    const CudaArtefact again = compile(m, "sm_90");
    EXPECT_TRUE(again.file.cached);
    EXPECT_EQ(again.file.path, first.file.path);
    EXPECT_EQ(again.image, first.image);
    EXPECT_EQ(again.lowered, first.lowered);
    const CudaArtefact other = compile(m, "sm_80");
    EXPECT_FALSE(other.file.cached);
    EXPECT_NE(other.file.key, first.file.key);
    EXPECT_NE(other.image, first.image);
}

TEST_F(CudaCompile, ACompileErrorNamesTheSourceAndLeavesNoEntry) {
    try {
        nhvk::jit::compile_cuda("this is not CUDA;\n", {}, "sm_90", "cuda", "broken.toml");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("broken.toml: NVRTC"), std::string::npos) << what;
        EXPECT_NE(what.find("sm_90"), std::string::npos) << what;
        EXPECT_NE(what.find("log "), std::string::npos) << what;
    }
    for (const auto& f : fs::directory_iterator(dir_.path() / "cache" / "cuda"))
        EXPECT_NE(f.path().extension(), ".cubin") << f.path();
}

} // namespace
