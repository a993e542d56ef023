// SPDX-License-Identifier: MIT
// A model file's CUDA kernels compiled by NVRTC (host/modelfile/cuda_compile.hpp): no device is needed to compile, so
// these run wherever the CUDA toolkit was found at configure time. What runs the kernels is tested on a device
// (tests/kernels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "modelfile/builtin_kernels.hpp"
#include "modelfile/cuda_compile.hpp"
#include "modelfile/model_file.hpp"
#include "nhvk/backend/backend.hpp"
#include "registry.hpp"
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

/** @brief The registers ptxas gave kernel `mangled` in the CUBIN `image` (its EIATTR_REGCOUNT in .nv.info), 0 if none.
 */
int register_count(const std::string& image, const std::string& mangled) {
    const auto u16 = [&](std::size_t o) {
        return static_cast<unsigned>(std::uint8_t(image.at(o)) | std::uint8_t(image.at(o + 1)) << 8);
    };
    const auto u32 = [&](std::size_t o) { return u16(o) | u16(o + 2) << 16; };
    const auto u64 = [&](std::size_t o) { return std::uint64_t(u32(o)) | std::uint64_t(u32(o + 4)) << 32; };
    const std::uint64_t shoff = u64(0x28);
    const unsigned shentsize = u16(0x3a), shnum = u16(0x3c), shstrndx = u16(0x3e);
    const auto header = [&](unsigned i) { return static_cast<std::size_t>(shoff + std::uint64_t(i) * shentsize); };
    const std::size_t strtab = static_cast<std::size_t>(u64(header(shstrndx) + 0x18));
    const auto name = [&](unsigned i) {
        return std::string(image.c_str() + std::min<std::size_t>(strtab + u32(header(i)), image.size()));
    };
    unsigned symbol = 0; // a function's .text section names its symbol in sh_info
    bool found = false;
    for (unsigned i = 0; i < shnum; ++i)
        if (name(i) == ".text." + mangled) symbol = u32(header(i) + 0x2c), found = true;
    if (!found) return 0;
    for (unsigned i = 0; i < shnum; ++i) {
        if (name(i) != ".nv.info") continue;
        const std::size_t begin = static_cast<std::size_t>(u64(header(i) + 0x18));
        const std::size_t end = begin + static_cast<std::size_t>(u64(header(i) + 0x20));
        for (std::size_t o = begin; o + 4 <= end;) {
            const unsigned format = std::uint8_t(image.at(o)), attribute = std::uint8_t(image.at(o + 1));
            if (format != 0x04) { // attributes without a size field take 4 bytes
                o += 4;
                continue;
            }
            if (attribute == 0x2f && u32(o + 4) == symbol) return static_cast<int>(u32(o + 8)); // EIATTR_REGCOUNT
            o += 4 + u16(o + 2);
        }
    }
    return 0;
}

// The ensemble kernel's measured minimum of blocks a multiprocessor (kernels/kernel_templates.cuh,
// ensemble_min_blocks) reaches NVRTC's kernels, of a model file too (by its name): rolling_disc's double DOPRI5 kernel
// at 3 blocks of 128 threads has at most 65536 / 384 registers a thread (without the bound ptxas gives it over 200).
TEST_F(CudaCompile, TheMeasuredMinimumOfBlocksHoldsTheRegisters) {
    const std::vector<std::string> names = nhvk::modelfile::cuda_kernel_names(
        nhvk::modelfile::CudaKernels::ensemble, nhvk::Precision::f64, nhvk::Method::dopri5);
    const CudaArtefact a = compile(model("rolling_disc"), "sm_90", names);
    ASSERT_TRUE(is_elf(a.image));
    const int registers = register_count(a.image, a.lowered.at(0));
    EXPECT_GT(registers, 0) << "no register count for " << a.lowered.at(0);
    EXPECT_LE(registers, 65536 / (128 * 3));
    // NHVK_CUDA_MIN_BLOCKS overrides the table for measuring: at 1 block ptxas takes more registers than 3 blocks allow
    {
        nhvk_test::ScopedEnv one("NHVK_CUDA_MIN_BLOCKS", "1");
        const CudaArtefact b = compile(model("rolling_disc"), "sm_90", names);
        EXPECT_FALSE(b.file.cached) << "the override is part of the cache key";
        EXPECT_GT(register_count(b.image, b.lowered.at(0)), 65536 / (128 * 3));
    }
    for (const char* bad : {"0", "17", "3x", "-2", "400"}) {
        nhvk_test::ScopedEnv env("NHVK_CUDA_MIN_BLOCKS", bad);
        try {
            nhvk::jit::nvrtc_options("sm_90");
            ADD_FAILURE() << "NHVK_CUDA_MIN_BLOCKS=" << bad << " was taken";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("NHVK_CUDA_MIN_BLOCKS=\"" + std::string(bad) + "\""),
                      std::string::npos)
                << e.what();
        }
    }
    // a value of control characters is shown escaped, not written to the terminal
    nhvk_test::ScopedEnv hostile("NHVK_CUDA_MIN_BLOCKS", "\x1b[2J3");
    try {
        nhvk::jit::nvrtc_options("sm_90");
        ADD_FAILURE() << "an escape sequence was taken";
    } catch (const std::runtime_error& e) {
        const std::string w = e.what();
        EXPECT_EQ(w.find('\x1b'), std::string::npos) << w;
        EXPECT_NE(w.find("NHVK_CUDA_MIN_BLOCKS=\"\\033[2J3\""), std::string::npos) << w;
    }
}

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

// ---- the built-in models' kernels, compiled at run time (a build compiles none ahead of time unless NHVK_AOT_MODELS
// names it): each model's own header and generated equations under NVRTC, what `nhvk run --backend cuda` and
// `nhvk compile --arch` compile ----

std::vector<std::string> builtin_names() {
    std::vector<std::string> v;
    for (const nhvk::ModelInfo& m : nhvk::builtin_model_registry()) v.push_back(m.name);
    return v;
}

class BuiltinCudaCompile : public CudaCompile, public ::testing::WithParamInterface<std::string> {};

TEST_P(BuiltinCudaCompile, TheEnsembleKernelsOfTheModelsOwnTypeAreInTheCubin) {
    using nhvk::modelfile::CudaKernels;
    const std::optional<nhvk::modelfile::BuiltinKernelSource> s = nhvk::modelfile::builtin_kernel_source(GetParam());
    ASSERT_TRUE(s.has_value()) << GetParam() << " is in the registry but has no kernel source";
    EXPECT_EQ(s->name, GetParam());
    const nhvk::ModelInfo* info = nhvk::find_model(nhvk::builtin_model_registry(), GetParam());
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(s->n, info->n);
    EXPECT_EQ(s->k, info->k);
    // NOTE: RK4, the quicker compile: what is tested here is the model's own code under NVRTC; every method and
    // precision is compiled for nh_particle above
    const std::vector<std::string> names =
        nhvk::modelfile::cuda_kernel_names(CudaKernels::ensemble, nhvk::Precision::f64, nhvk::Method::rk4, s->type);
    for (const std::string& n : names) EXPECT_NE(n.find("<" + s->type), std::string::npos) << n;
    const CudaArtefact a = nhvk::modelfile::compile_builtin_cuda(*s, CudaKernels::ensemble, nhvk::Precision::f64,
                                                                 nhvk::Method::rk4, "sm_90");
    EXPECT_FALSE(a.file.cached);
    expect_kernels(a, names);
    // the sampling kernel's argument: the host's SampleSpec of a plan of the model's sizes, refused for other sizes
    nhvk::SamplingPlan plan;
    plan.q0.assign(static_cast<std::size_t>(s->n), nhvk::Distribution{});
    plan.v0.assign(static_cast<std::size_t>(s->n), nhvk::Distribution{});
    plan.mu0.assign(static_cast<std::size_t>(s->k), nhvk::Distribution{});
    const unsigned long size = s->sample_spec(nullptr, nullptr, 0);
    std::vector<unsigned char> spec(size);
    EXPECT_EQ(s->sample_spec(&plan, spec.data(), size), size);
    plan.q0.push_back(nhvk::Distribution{});
    EXPECT_THROW(s->sample_spec(&plan, spec.data(), size), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Builtins, BuiltinCudaCompile, ::testing::ValuesIn(builtin_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(BuiltinKernelSource, NamesOnlyBuiltInModels) {
    EXPECT_FALSE(nhvk::modelfile::builtin_kernel_source("no_such_model").has_value());
    EXPECT_FALSE(nhvk::modelfile::builtin_kernel_source("").has_value());
    // the unit NVRTC compiles includes the model's generated equations and the kernel templates, and nothing else
    const auto s = nhvk::modelfile::builtin_kernel_source("rolling_disc");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->type, "nhvk::models::RollingDisc");
    const std::string unit = nhvk::modelfile::emit_builtin_cuda_unit(*s);
    EXPECT_NE(unit.find("#include \"nhvk/generated/rolling_disc.hpp\""), std::string::npos) << unit;
    EXPECT_NE(unit.find("#include \"kernel_templates.cuh\""), std::string::npos) << unit;
}
