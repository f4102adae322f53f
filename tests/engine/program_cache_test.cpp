// driver::ProgramCache::artifact: one make per structure however many threads ask at once,
// a failed make reported to every waiter and not kept. And the batch calls that prepare
// their images' pipelines on several threads (run_batch with a pipeline per image).
#include "engine/driver.h"
#include "engine/engine.h"
#include "ops/pipeline_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace toroid {
namespace {

struct FakeArtifact {
    int made_by = 0;
};
struct FakeInstance {};

TEST(ProgramCache, ThreadsAskingForOneStructureShareOneMake) {
    driver::ProgramCache<FakeArtifact, FakeInstance> cache;
    std::atomic<int> makes{0}, made_here{0};
    constexpr int kThreads = 8;
    std::vector<std::shared_ptr<const FakeArtifact>> got(kThreads);
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
        pool.emplace_back([&, t] {
            bool made = false;
            got[static_cast<std::size_t>(t)] = cache.artifact(
                "structure A",
                [&] {
                    ++makes;
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a compile: the others arrive
                    auto a = std::make_shared<FakeArtifact>();
                    a->made_by = t;
                    return std::shared_ptr<const FakeArtifact>(a);
                },
                made);
            if (made) ++made_here;
        });
    for (auto& th : pool) th.join();
    EXPECT_EQ(makes.load(), 1);
    EXPECT_EQ(made_here.load(), 1);
    for (const auto& a : got) EXPECT_EQ(a, got[0]);
    EXPECT_EQ(cache.find_artifact("structure A"), got[0]);
    // Another structure is made on its own.
    bool made = false;
    const auto b = cache.artifact("structure B", [] { return std::make_shared<const FakeArtifact>(); }, made);
    EXPECT_TRUE(made);
    EXPECT_NE(b, got[0]);
}

TEST(ProgramCache, AFailedMakeReachesEveryWaiterAndIsTriedAgain) {
    driver::ProgramCache<FakeArtifact, FakeInstance> cache;
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t)
        pool.emplace_back([&] {
            bool made = false;
            try {
                cache.artifact(
                    "broken",
                    []() -> std::shared_ptr<const FakeArtifact> {
                        std::this_thread::sleep_for(std::chrono::milliseconds(50));
                        throw std::runtime_error("no compiler");
                    },
                    made);
            } catch (const std::runtime_error& e) {
                EXPECT_STREQ(e.what(), "no compiler");
                ++failures;
            }
        });
    for (auto& th : pool) th.join();
    EXPECT_EQ(failures.load(), 4);
    EXPECT_EQ(cache.find_artifact("broken"), nullptr);
    bool made = false;
    const auto a = cache.artifact("broken", [] { return std::make_shared<const FakeArtifact>(); }, made);
    EXPECT_TRUE(made);
    EXPECT_NE(a, nullptr);
}

// Pipelines of one structure with different values (a crop's box, as per-image random draws
// make them), each its own engine, in one batch on 4 threads: each image gets its own crop,
// equal to running it alone.
TEST(RunBatchThreads, APipelinePerImagePreparedOnSeveralThreads) {
    constexpr int n = 24;
    std::vector<Pipeline> pipes;
    std::vector<std::unique_ptr<Engine>> engines;
    std::vector<BatchItem> items(n);
    std::vector<const Pipeline*> pp;
    std::vector<Engine*> ee;
    Tensor in = Tensor::empty(DType::UInt8, Dims{1, 1, 40, 50}, Layout::Contiguous);
    auto* px = static_cast<std::uint8_t*>(in.data());
    for (std::int64_t k = 0; k < in.numel(); ++k) px[k] = static_cast<std::uint8_t>(k * 13 + k / 50);
    for (int i = 0; i < n; ++i)
        pipes.push_back(parse_pipeline(fmt::format(
            R"([{{"op":"crop","top":{},"left":{},"height":6,"width":7}},{{"op":"convert","dtype":"float32"}}])", i,
            i + 1), "."));
    for (int i = 0; i < n; ++i) {
        EngineOptions o;
        o.threads = 1;
        engines.push_back(cache_by_spec(make_engine("compiled", o)));
        items[static_cast<std::size_t>(i)].input = in;
        items[static_cast<std::size_t>(i)].output = Tensor::empty(DType::Float32, Dims{1, 1, 6, 7}, Layout::Contiguous);
        pp.push_back(&pipes[static_cast<std::size_t>(i)]);
        ee.push_back(engines.back().get());
    }
    run_batch(pp, ee, items, 4);
    for (int i = 0; i < n; ++i) {
        const BatchItem& it = items[static_cast<std::size_t>(i)];
        ASSERT_TRUE(it.ok) << "image " << i << ": " << it.error;
        const auto* out = static_cast<const float*>(it.output.data());
        for (int y = 0; y < 6; ++y)
            for (int x = 0; x < 7; ++x)
                ASSERT_EQ(out[y * 7 + x], static_cast<float>(px[(i + y) * 50 + i + 1 + x])) << "image " << i;
    }
}

}  // namespace
}  // namespace toroid
