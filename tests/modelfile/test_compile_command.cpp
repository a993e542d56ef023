// SPDX-License-Identifier: MIT
// `nhvk compile` (host/cli_compile.cpp) fills a cache ahead of the runs: on a login node without a GPU, for the
// architecture the compute nodes have. What it writes is what a run looks up: a second `nhvk compile` of the same
// combination finds every entry, and so does a run (tests/modelfile/test_cuda_compile.cpp compiles the same units).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "modelfile/cuda_compile.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY (the path of the built nhvk)"
#endif

namespace {

namespace fs = std::filesystem;

class CompileCommand : public ::testing::Test {
protected:
    nhvk_test::CliRun nhvk(const std::vector<std::string>& args) {
        return nhvk_test::run_captured("NHVK_CACHE_DIR=" + nhvk_test::shell_quote(dir_.str("cache")), NHVK_BINARY, args,
                                       dir_.path() / ("io" + std::to_string(++calls_)));
    }
    std::vector<fs::path> entries(const std::string& kind, const std::string& ext) const {
        std::vector<fs::path> v;
        const fs::path d = dir_.path() / "cache" / kind;
        if (fs::exists(d))
            for (const auto& e : fs::directory_iterator(d))
                if (e.path().extension() == ext) v.push_back(e.path());
        return v;
    }
    nhvk_test::TempDir dir_;
    int calls_ = 0;
};

TEST_F(CompileCommand, FillsTheCacheWithABuiltInModelsKernelsForANamedArchitecture) {
    if (!nhvk::jit::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
    const std::vector<std::string> args{"compile",     "nh_particle", "--arch",   "sm_90",
                                        "--precision", "double",      "--method", "rk4"};
    const auto first = nhvk(args);
    ASSERT_EQ(first.rc, 0) << first.err;
    EXPECT_NE(first.out.find("nh_particle"), std::string::npos) << first.out;
    EXPECT_NE(first.out.find("cuda sm_90 double rk4"), std::string::npos) << first.out;
    EXPECT_NE(first.out.find("1 compiled, 0 already in the cache"), std::string::npos) << first.out;
    EXPECT_EQ(entries("cuda", ".cubin").size(), 1u);
    const auto again = nhvk(args);
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_NE(again.out.find("0 compiled, 1 already in the cache"), std::string::npos) << again.out;
    EXPECT_EQ(entries("cuda", ".cubin").size(), 1u);
    // "90" names the same architecture; --trajectory adds the trajectory kernels, one more entry
    const auto traj =
        nhvk({"compile", "nh_particle", "--arch", "90", "--precision", "double", "--method", "rk4", "--trajectory"});
    ASSERT_EQ(traj.rc, 0) << traj.err;
    EXPECT_NE(traj.out.find("1 compiled, 1 already in the cache"), std::string::npos) << traj.out;
    EXPECT_EQ(entries("cuda", ".cubin").size(), 2u);
}

TEST_F(CompileCommand, AModelFileGetsItsCpuCodeAndItsKernels) {
    const std::string file = std::string(NHVK_SOURCE_DIR) + "/models/nh_particle.toml";
    std::vector<std::string> args{"compile", file, "--precision", "double", "--method", "rk4"};
    if (nhvk::jit::nvrtc_available()) args.insert(args.end(), {"--arch", "sm_90"});
    const auto r = nhvk(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("cpu        double rk4"), std::string::npos) << r.out;
    EXPECT_EQ(entries("cpu", ".so").size(), 1u);
    if (nhvk::jit::nvrtc_available()) EXPECT_EQ(entries("cuda", ".cubin").size(), 1u);
    // --no-cpu: the kernels only (nothing new on the CPU side)
    const auto again = nhvk({"compile", file, "--precision", "double", "--method", "dopri5", "--no-cpu"});
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_EQ(entries("cpu", ".so").size(), 1u) << again.out;
}

// NVRTC needs no host compiler: a model file's kernels compile where the C++ compiler does not run, and its CPU code
// is refused with the reason and the way out.
TEST_F(CompileCommand, AModelFilesKernelsNeedNoHostCompiler) {
    if (!nhvk::jit::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
    const std::string file = std::string(NHVK_SOURCE_DIR) + "/models/knife_edge.toml";
    const std::string no_cxx = "NHVK_CXX=" + dir_.str("no-such-compiler") + " ";
    const auto run = [&](const std::vector<std::string>& args) {
        return nhvk_test::run_captured(no_cxx + "NHVK_CACHE_DIR=" + nhvk_test::shell_quote(dir_.str("cache")),
                                       NHVK_BINARY, args, dir_.path() / ("io" + std::to_string(++calls_)));
    };
    const auto cuda = run({"compile", file, "--no-cpu", "--arch", "sm_90", "--precision", "double", "--method", "rk4"});
    ASSERT_EQ(cuda.rc, 0) << cuda.err;
    EXPECT_NE(cuda.out.find("1 compiled, 0 already in the cache"), std::string::npos) << cuda.out;
    const auto cpu = run({"compile", file, "--precision", "double", "--method", "rk4"});
    EXPECT_EQ(cpu.rc, 1) << cpu.out;
    EXPECT_NE(cpu.err.find("no C++ compiler to compile it with"), std::string::npos) << cpu.err;
    EXPECT_NE(cpu.err.find("--no-cpu"), std::string::npos) << cpu.err;
    EXPECT_TRUE(entries("cpu", ".so").empty());
}

// What `nhvk compile` filled is what a run reads: on a device, a run of a built-in model after `nhvk compile` for the
// device's architecture compiles nothing (summary.json `cuda_kernels.cached`); a second run of another combination
// compiles it once. On the CPU a run has no `cuda_kernels`.
TEST_F(CompileCommand, ARunReadsWhatItFilled) {
    const std::string cfg = std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml";
    const auto cpu = nhvk({"run", cfg, "-q", "--trajectories", "50", "--backend", "cpu", "--out", dir_.str("cpu")});
    ASSERT_EQ(cpu.rc, 0) << cpu.err;
    EXPECT_TRUE(nhvk_test::read_json(dir_.path() / "cpu" / "summary.json").at("cuda_kernels").is_null());
    if (!nhvk::cuda_available()) GTEST_SKIP() << "no CUDA device: " << nhvk::cuda_unavailable_reason();
    const auto fill = nhvk({"compile", "nh_particle", "--precision", "double", "--method", "dopri5"});
    ASSERT_EQ(fill.rc, 0) << fill.err;
    EXPECT_NE(fill.out.find("1 compiled"), std::string::npos) << fill.out;
    const auto run = nhvk({"run", cfg, "--trajectories", "1000", "--backend", "cuda", "--out", dir_.str("gpu")});
    ASSERT_EQ(run.rc, 0) << run.err;
    const nlohmann::json k = nhvk_test::read_json(dir_.path() / "gpu" / "summary.json")["cuda_kernels"];
    if (k.value("compiled", "") == "ahead of time") GTEST_SKIP() << "this build compiled nh_particle ahead of time";
    EXPECT_EQ(k["compiled"], "at run time (NVRTC)") << k.dump();
    EXPECT_EQ(k["cached"], true) << k.dump();
    EXPECT_EQ(run.err.find("compiling the CUDA kernels"), std::string::npos) << run.err;
    const auto rk4 = nhvk({"run", cfg, "--trajectories", "1000", "--backend", "cuda", "--set",
                           "integrator.method=\"rk4\"", "--out", dir_.str("gpu-rk4")});
    ASSERT_EQ(rk4.rc, 0) << rk4.err;
    EXPECT_NE(rk4.err.find("nhvk: compiling the CUDA kernels of model 'nh_particle' (double, rk4)"), std::string::npos)
        << rk4.err;
    EXPECT_EQ(nhvk_test::read_json(dir_.path() / "gpu-rk4" / "summary.json")["cuda_kernels"]["cached"], false);
}

TEST_F(CompileCommand, ABuiltInModelWithoutAnArchitectureHasNothingToCompileAndSaysWhy) {
    const auto r = nhvk({"compile", "rolling_disc"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("name them with --arch"), std::string::npos) << r.out;
    EXPECT_TRUE(entries("cuda", ".cubin").empty());
}

TEST_F(CompileCommand, BadArgumentsAreRefusedBeforeAnythingCompiles) {
    const struct {
        std::vector<std::string> args;
        std::string says;
    } cases[] = {
        {{"compile", "nh_particle", "--arch", "sm_9x"}, "--arch: expected a CUDA architecture such as sm_90"},
        {{"compile", "nh_particle", "--precision", "half"}, "--precision: expected double, float or all, got 'half'"},
        {{"compile", "nh_particle", "--method", "euler"},
         "--method: expected dopri5, rk4, tsit5, dop853, rodas5p, midpoint or all, got 'euler'"},
        // the second model is unknown: the first is not compiled either
        {{"compile", "nh_particle", "no_such_model", "--arch", "sm_90"}, "no_such_model"},
        {{"compile", "missing.toml"}, "missing.toml"},
    };
    for (const auto& c : cases) {
        const auto r = nhvk(c.args);
        EXPECT_EQ(r.rc, 2) << c.args.back() << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    }
    EXPECT_TRUE(entries("cuda", ".cubin").empty());
    EXPECT_TRUE(entries("cpu", ".so").empty());
}

} // namespace
