// SPDX-License-Identifier: MIT
// DOPRI5 with its stage vectors in columns (nhvk/stage_store.hpp), as the device runs it for the larger models in
// double, against DOPRI5 with its stages in local arrays, on the host. The columns are emulated there with the
// device's layout (one buffer shared by all the columns of a stepper, a thread's column of 128): a column that two
// vectors live in at once, a first stage not kept through a rejected step, or the state not written back at an output
// time or a failure gives different bits. Every catalogue model, both dynamics, with and without projection, through
// rejected steps and to a step limit.
#include "core_test_util.hpp"

#include <nhvk/dynamics.hpp>
#include <nhvk/generated.hpp>
#include <nhvk/generated/all.hpp>
#include <nhvk/models/all.hpp>
#include <nhvk/stage_store.hpp>
#include <nhvk/steppers.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace nhvk;

template <class List> struct AsTypes;
template <class... Ms> struct AsTypes<ModelList<Ms...>> { using type = ::testing::Types<Ms...>; };

/** @brief `Sys`, asking for its stages in columns on the host too (detail::ForcesSharedStages). */
template <class Sys> struct InColumns : Sys {
    static constexpr bool force_shared_stages = true;
    using Sys::Sys;
};

using nhvk_test::bits;

/** @brief What a DOPRI5 run leaves: the status at each output time reached, the state there, the step counts. */
struct Run {
    std::vector<Status> status;
    std::vector<double> y;
    long long steps = 0, rejected = 0;
};

template <class Sys> Run run_dopri5(const Sys& sys, const std::vector<double>& y0, const StepControl& ctl, int nt) {
    Run r;
    Dopri5<Sys, double> st;
    Status s = st.init(sys, 0.0, y0.data(), ctl);
    r.status.push_back(s);
    for (int i = 1; i <= nt && s == Status::ok; ++i) {
        s = st.advance_to(sys, 0.25 * i);
        r.status.push_back(s);
        for (int j = 0; j < Sys::dim; ++j) r.y.push_back(st.y[j]);
    }
    r.steps = st.steps;
    r.rejected = st.rejected;
    return r;
}

void expect_same(const Run& a, const Run& b, const char* what) {
    ASSERT_EQ(a.status.size(), b.status.size()) << what;
    for (std::size_t i = 0; i < a.status.size(); ++i)
        EXPECT_EQ(static_cast<int>(a.status[i]), static_cast<int>(b.status[i])) << what << ", output " << i;
    ASSERT_EQ(a.y.size(), b.y.size()) << what;
    for (std::size_t i = 0; i < a.y.size(); ++i) EXPECT_EQ(bits(a.y[i]), bits(b.y[i])) << what << ", value " << i;
    EXPECT_EQ(a.steps, b.steps) << what;
    EXPECT_EQ(a.rejected, b.rejected) << what;
}

template <class M> class SharedStages : public ::testing::Test {};
TYPED_TEST_SUITE(SharedStages, AsTypes<BuiltinModels>::type);

template <class Sys> void compare_both_forms(const typename Sys::Model& model, std::mt19937_64& rng, long long* rej) {
    static_assert(detail::uses_shared_stages<InColumns<Sys>, double, Method::dopri5>(), "the emulation is off");
    static_assert(!detail::uses_shared_stages<Sys, double, Method::dopri5>(), "the host keeps its stages in arrays");
    constexpr int n = Sys::Model::n, dim = Sys::dim;
    std::uniform_real_distribution<double> U(-0.5, 0.5);
    const Sys sys(model);
    const InColumns<Sys> cols(model);
    int progressed = 0;
    for (int draw = 0; draw < 4; ++draw) {
        std::vector<double> y0(dim, 0.0);
        for (int j = 0; j < 2 * n; ++j) y0[j] = U(rng); // |q| < 0.5 keeps the ball's Euler-angle chart
        y0[n] += 1.0; // ẋ away from 0: appell_hamel's velocity chart (ẋ² + ẏ² > 0)
        for (int j = 2 * n; j < dim; ++j) y0[j] = Sys::dynamics == Dynamics::vakonomic ? U(rng) : 0.0;
        long long plain_steps = 0;
        for (int trial = 0; trial < 3; ++trial) {
            StepControl ctl;
            ctl.rtol = 1e-9;
            ctl.atol = 1e-11;
            ctl.dt = 0.5; // a first step far too long: rejected steps from the start
            ctl.project = trial == 1;
            // NOTE: half the steps the plain run took: a step limit after some output times
            if (trial == 2) ctl.max_steps = plain_steps / 2;
            // NOTE: poisoned, so that a column read before it is written gives NaN in the column form only
            double* buf = detail::host_columns<double, dim>();
            for (int i = 0; i < shared_stage_columns * dim * device_block_size; ++i)
                buf[i] = std::numeric_limits<double>::quiet_NaN();
            const Run a = run_dopri5(sys, y0, ctl, 8), b = run_dopri5(cols, y0, ctl, 8);
            const char* what = trial == 0 ? "plain" : trial == 1 ? "projected" : "step limit";
            expect_same(a, b, what);
            *rej += a.rejected;
            if (trial == 0) {
                plain_steps = a.steps;
                // NOTE: off the constraint set some motions leave a chart or stall (step_underflow) after a few output
                // times; the comparison covers those ends too
                progressed += a.status.size() >= 3 && a.steps >= 8;
            }
            if (trial == 2 && a.status.size() == 9 && plain_steps >= 8)
                EXPECT_EQ(static_cast<int>(a.status.back()), static_cast<int>(Status::step_limit)) << what;
            // the column form did run in the columns: thread 0's column of the state (column 4) holds the last state,
            // column 0 a first stage (no NaN left there)
            if (!b.y.empty()) EXPECT_EQ(bits(buf[(4 * dim) * device_block_size]), bits(b.y[b.y.size() - dim])) << what;
            EXPECT_FALSE(std::isnan(buf[0])) << what;
        }
    }
    EXPECT_GT(progressed, 0) << "no draw got past two output times in 8 steps";
}

TYPED_TEST(SharedStages, EqualStagesInRegisters) {
    using M = TypeParam;
    using Eq = GenEquations<M, double>;
    std::mt19937_64 rng(20261129);
    long long rejected = 0;
    compare_both_forms<VakonomicSystem<M, double, Eq>>(M{}, rng, &rejected);
    compare_both_forms<BalancedNonholonomicSystem<M, double, Eq>>(M{}, rng, &rejected);
    EXPECT_GT(rejected, 0) << "no rejected step: the first stage kept through a rejection was not exercised";
}

TEST(SharedStages, BytesPerBlock) {
    // 5 columns of the larger system's dimension, 8-byte values, 128 threads; compute capability 9.0 (H100, H200)
    EXPECT_EQ(shared_stage_bytes(5, 2, 8, Method::dopri5, 90), 5u * 12u * 8u * 128u); // ball_on_turntable: 60 KiB
    EXPECT_EQ(shared_stage_bytes(4, 2, 8, Method::dopri5, 90), 5u * 10u * 8u * 128u); // rolling_disc
    EXPECT_EQ(shared_stage_bytes(6, 2, 8, Method::dopri5, 90), 5u * 14u * 8u * 128u); // parallel_velocities: 70 KiB
    EXPECT_EQ(shared_stage_bytes(6, 1, 8, Method::dopri5, 90), 5u * 14u * 8u * 128u); // nonholonomic 2n + 2 > 2n + k
    EXPECT_EQ(shared_stage_bytes(3, 1, 8, Method::dopri5, 90), 0u);                   // nh_particle: registers
    EXPECT_EQ(shared_stage_bytes(5, 2, 4, Method::dopri5, 90), 0u);                   // float: registers
    EXPECT_EQ(shared_stage_bytes(5, 2, 8, Method::rk4, 90), 0u);
    EXPECT_EQ(shared_stage_bytes(8, 3, 8, Method::dopri5, 86), 5u * 19u * 8u * 128u); // 95 KiB: within 8.6's 99
    EXPECT_EQ(shared_stage_bytes(9, 2, 8, Method::dopri5, 90), 0u);                   // 20 values: registers
    // Turing grants a block 64 KiB: the ball's 60 KiB, not parallel_velocities' 70
    EXPECT_EQ(shared_stage_bytes(5, 2, 8, Method::dopri5, 75), 5u * 12u * 8u * 128u);
    EXPECT_EQ(shared_stage_bytes(6, 2, 8, Method::dopri5, 75), 0u);
}

} // namespace
