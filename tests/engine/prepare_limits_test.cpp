// Prepare time on long pipelines: linear in the pipeline's length, bounded by limits, and
// interruptible. Growth is checked as a ratio of two lengths measured in one process; the
// few absolute bounds are coarse (an order of magnitude and more above what the code takes,
// and as far below what exponential analyses took: 8 torchvision nearest affines once took
// over 60 s outside the compiler).
#include "engine_test_support.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "engine/engine.h"
#include "ops/pipeline_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace toroid {
namespace {

using test::random_image;

std::string chain(const std::string& op, int n) {
    std::string json = "[";
    for (int i = 0; i < n; ++i) json += (i ? ", " : "") + op;
    return json + "]";
}

const std::string kNearestAffine =
    R"({"op": "affine", "theta": [[0.98, -0.17, 1.5], [0.17, 0.98, -0.5]], "mode": "nearest", "convention": "torchvision"})";

EngineOptions quick_options() {
    EngineOptions o;
    o.tiers = Tiers::QuickOnly;  // one (scalar) build: the compiler is not what is tested
    return o;
}

double outside_compiler(const PreparedPipeline& p) {
    const PrepareStats s = p.stats();
    return s.prepare_seconds - s.compile_seconds;
}

TEST(PrepareLimits, EightNearestTorchvisionAffinesPrepareFastAndExact) {
    const Pipeline p = parse_pipeline(chain(kNearestAffine, 8), ".");
    const Tensor in = random_image(DType::UInt8, {1, 3, 40, 52}, Layout::Contiguous, 7);
    auto prepared = make_engine("compiled", quick_options())->prepare(p, in.spec());
    EXPECT_LT(outside_compiler(*prepared), 10.0);
    const Tensor want = make_engine("reference", {})->prepare(p, in.spec())->run(in);
    EXPECT_TRUE(test::identical(prepared->run(in), want));
}

// Flips of H and W alternate with flips of W: n of them flip H n/2 times and W n times.
Pipeline flip_chain(int n) {
    std::string json = "[";
    for (int i = 0; i < n; ++i) json += std::string(i ? ", " : "") + (i % 2 ? R"({"op": "flip", "dims": [-1]})"
                                                                           : R"({"op": "flip", "dims": [-2, -1]})");
    return parse_pipeline(json + "]", ".");
}

TEST(PrepareLimits, LongFlipChainPreparesInLinearTime) {
    // Four times the ops take about four times as long (a quadratic pass would take sixteen):
    // a ratio measured in one process, so a slow or busy machine slows both sides alike. The
    // best of two runs of each length keeps a passing burst of load out of the ratio.
    const Tensor in = random_image(DType::UInt8, {1, 3, 9, 11}, Layout::ChannelsLast, 3);
    EngineOptions o = quick_options();
    o.cold_prepare = true;  // every prepare does the whole analysis again
    const auto engine = make_engine("compiled", o);
    const Pipeline shorter = flip_chain(750), longer = flip_chain(3000);
    double t_shorter = 1e30, t_longer = 1e30;
    for (int round = 0; round < 2; ++round) {
        t_shorter = std::min(t_shorter, outside_compiler(*engine->prepare(shorter, in.spec())));
        t_longer = std::min(t_longer, outside_compiler(*engine->prepare(longer, in.spec())));
    }
    EXPECT_LT(t_longer, 9.0 * t_shorter) << "750 flips: " << t_shorter << " s, 3000 flips: " << t_longer << " s";
    const Tensor want = make_engine("reference", {})->prepare(longer, in.spec())->run(in);
    EXPECT_TRUE(test::identical(engine->prepare(longer, in.spec())->run(in), want));
}

TEST(PrepareLimits, TooManyOpsFailAtOnce) {
    const Pipeline p = parse_pipeline(chain(R"({"op": "flip", "dims": [-1]})", 7), ".");
    const Tensor in = random_image(DType::UInt8, {1, 3, 8, 8}, Layout::Contiguous, 1);
    EngineOptions o = quick_options();
    o.max_ops = 6;
    try {
        make_engine("compiled", o)->prepare(p, in.spec());
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has 7 ops, more than the limit of 6"), std::string::npos) << e.what();
    }
    o.max_ops = 7;
    EXPECT_NO_THROW(make_engine("compiled", o)->prepare(p, in.spec()));
}

TEST(PrepareLimits, DefaultLimitRefusesAHugeChainQuickly) {
    // 10000 nearest affines: far above the default graph-node budget; refused within seconds
    // (the decomposition alone), never compiled.
    const Pipeline p = parse_pipeline(chain(kNearestAffine, 10000), ".");
    const Tensor in = random_image(DType::UInt8, {1, 3, 16, 16}, Layout::Contiguous, 1);
    const auto start = std::chrono::steady_clock::now();
    try {
        make_engine("compiled", quick_options())->prepare(p, in.spec());
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("expression nodes, more than the limit of"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
}

TEST(PrepareLimits, GraphNodeBudgetIsAnOption) {
    const Pipeline p = parse_pipeline(chain(kNearestAffine, 2), ".");
    const Tensor in = random_image(DType::UInt8, {1, 3, 8, 8}, Layout::Contiguous, 1);
    EngineOptions o = quick_options();
    o.max_graph_nodes = 50;
    EXPECT_THROW(make_engine("compiled", o)->prepare(p, in.spec()), Error);
}

TEST(PrepareLimits, InterruptStopsAPrepareInProgress) {
    // 1500 nearest affines (under the default limits) take many seconds to schedule; an
    // interrupt from another thread ends the prepare at its next check.
    const Pipeline p = parse_pipeline(chain(kNearestAffine, 1500), ".");
    const Tensor in = random_image(DType::UInt8, {1, 3, 16, 16}, Layout::Contiguous, 1);
    EngineOptions o = quick_options();
    o.cold_prepare = true;
    std::atomic<bool> done{false};
    std::string error;
    std::chrono::steady_clock::time_point ended;
    std::thread worker([&] {
        try {
            make_engine("compiled", o)->prepare(p, in.spec());
        } catch (const Error& e) {
            error = e.what();
        }
        ended = std::chrono::steady_clock::now();
        done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const bool finished_early = done;
    const auto interrupted = std::chrono::steady_clock::now();
    interrupt_prepares();
    worker.join();
    ASSERT_FALSE(finished_early) << "the prepare ended before it was interrupted: " << error;
    EXPECT_EQ(error, "interrupted");
    EXPECT_LT(std::chrono::duration<double>(ended - interrupted).count(), 2.0);
}

TEST(PrepareLimits, AnInterruptDoesNotReachLaterPrepares) {
    interrupt_prepares();  // nothing in progress: nothing to stop
    const Pipeline p = parse_pipeline(chain(R"({"op": "flip", "dims": [-1]})", 2), ".");
    const Tensor in = random_image(DType::UInt8, {1, 3, 8, 8}, Layout::Contiguous, 1);
    EXPECT_NO_THROW(make_engine("compiled", quick_options())->prepare(p, in.spec()));
    // Outside a prepare, checks do nothing.
    EXPECT_NO_THROW(check_interrupt());
    {
        const InterruptScope scope;
        EXPECT_NO_THROW(check_interrupt());
        interrupt_prepares();
        EXPECT_THROW(check_interrupt(), Error);
    }
    EXPECT_NO_THROW(check_interrupt());
}

}  // namespace
}  // namespace toroid
