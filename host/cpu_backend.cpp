// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CPU reference backend: the same per-member code as the CUDA kernel, in an OpenMP loop.
 */
#include <stdexcept>
#include <vector>

#include "chunk_buffers.hpp"
#include "chunk_runner.hpp"
#include "model_ops.hpp"

namespace nhvk {

void run_chunk_cpu(const ChunkCommon& common, const ChunkArgs& args, int threads) {
    const ModelOps* ops = find_model_ops(common.model);
    if (!ops) throw std::invalid_argument("unknown model '" + common.model + "'");
    ops->run_chunk_cpu(common, args, threads);
}

namespace {
class CpuRunner final : public ChunkRunner {
public:
    CpuRunner(const ChunkLayout& L, const ChunkCommon& c, int threads)
        : layout_(L), common_(c), threads_(threads), block_(L), storage_(block_.total / sizeof(double) + 1) {
        args_ = common_args(L, c);
        block_.bind(args_, reinterpret_cast<char*>(storage_.data()), L);
    }
    int slots() const override { return 1; }
    ChunkArgs& slot(int) override { return args_; }
    void submit(int, long long m) override {
        args_.m = m;
        run_chunk_cpu(common_, args_, threads_);
    }
    void wait(int) override {}
    std::string name() const override { return "cpu"; }

private:
    ChunkLayout layout_;
    ChunkCommon common_;
    int threads_;
    ChunkBlock block_;
    std::vector<double> storage_;
    ChunkArgs args_;
};
} // namespace

std::unique_ptr<ChunkRunner> make_cpu_runner(const ChunkLayout& layout, const ChunkCommon& common, int threads) {
    return std::make_unique<CpuRunner>(layout, common, threads);
}

} // namespace nhvk
