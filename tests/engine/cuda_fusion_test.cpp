// Fused separable passes on the GPU (schedule/gpu_fuse.h): the fused kernel's results equal
// the reference engine's (uint8 bit for bit, float32 within 1e-4) and, bit for bit, those of
// the same pair run as two kernels (TOROID_CUDA_FUSE=0), on random sizes including 1-pixel
// and very thin images, uint8 and float32, both layouts, with crops, flips, conversions and
// normalization after the resize; the form an instance keeps is measured on its first runs.
// Skipped, with the reason, where no GPU is.
#include "engine_test_support.h"

#include "core/error.h"
#include "engine/engine.h"
#include "ops/pipeline_json.h"
#include "runtime/cuda/cuda.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <atomic>
#include <random>
#include <thread>
#include <vector>
#include <string>

namespace toroid {
namespace {

std::string resize_json(const char* mode, bool antialias, std::int64_t h, std::int64_t w) {
    return fmt::format(R"({{"op": "resize", "mode": "{}", "antialias": {}, "size": [{}, {}]}})", mode,
                       antialias ? "true" : "false", h, w);
}

struct Case {
    std::string json;
    DType dtype;
    Dims shape;
    Layout layout;
};

// Runs `c` on the cuda engine (fused as the engine chooses, or with TOROID_CUDA_FUSE=0) and
// returns the result and the explain text.
std::pair<Tensor, std::string> run_cuda(const Case& c, const Tensor& in, bool unfused) {
    if (unfused) ::setenv("TOROID_CUDA_FUSE", "0", 1);
    auto prepared = make_engine("cuda", EngineOptions{})->prepare(parse_pipeline(c.json, "."), in.spec());
    if (unfused) ::unsetenv("TOROID_CUDA_FUSE");
    return {prepared->run(in), prepared->explain()};
}

// Checks `c`; whether the engine ran it fused.
bool check(const Case& c, std::uint32_t seed) {
    SCOPED_TRACE(fmt::format("{} {} ({}, {}, {}, {}) {}", c.json, dtype_name(c.dtype), c.shape[0], c.shape[1], c.shape[2],
                             c.shape[3], layout_name(c.layout)));
    const Tensor in = test::random_image(c.dtype, c.shape, c.layout, seed);
    const Tensor want = make_engine("reference", EngineOptions{})->prepare(parse_pipeline(c.json, "."), in.spec())->run(in);
    const auto [fused, how] = run_cuda(c, in, false);
    const double tolerance = want.dtype() == DType::UInt8 ? 0.0 : 1e-4;
    EXPECT_LE(test::max_difference(fused, want), tolerance);
    const auto [apart, how_apart] = run_cuda(c, in, true);
    EXPECT_TRUE(test::identical(fused, apart)) << "fused and unfused results differ\n" << how;
    if (how.find(" and kernel_") != std::string::npos) {
        EXPECT_NE(how_apart.find("run apart"), std::string::npos) << how_apart;
    }
    return how.find("run as one") != std::string::npos;
}

TEST(CudaFusion, MatchesTheReferenceAndTheTwoKernels) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    std::mt19937 rng(20261124);
    auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
    const Dims fixed_shapes[] = {{1, 3, 1, 1}, {1, 1, 1, 600}, {2, 3, 700, 1}, {1, 4, 2, 333}, {3, 3, 301, 3}};
    int fused_seen = 0;
    for (int i = 0; i < 24; ++i) {
        Dims shape = i < 5 ? fixed_shapes[i] : Dims{pick(1, 3), pick(1, 4), pick(1, 260), pick(1, 260)};
        const std::int64_t oh = pick(1, 2 * shape[2] + 3), ow = pick(1, 2 * shape[3] + 3);
        const char* mode = i % 3 == 2 ? "bicubic" : "bilinear";
        std::string json = "[" + resize_json(mode, i % 4 != 3, oh, ow);
        if (i % 2 == 1) {
            const std::int64_t top = pick(-2, oh / 2), left = pick(-2, ow / 2);
            json += fmt::format(R"(, {{"op": "crop", "top": {}, "left": {}, "height": {}, "width": {}}})", top, left,
                                pick(1, oh + 2), pick(1, ow + 2));
        }
        if (i % 3 == 1) json += i % 2 ? R"(, {"op": "flip", "dims": [-1]})" : R"(, {"op": "flip", "dims": [-2, -1]})";
        const bool normalize = i % 4 == 1;
        for (DType dt : {DType::UInt8, DType::Float32}) {
            std::string j = json;
            if (normalize) {
                if (dt == DType::UInt8) j += R"(, {"op": "convert", "dtype": "float32", "scale": true})";
                j += fmt::format(R"(, {{"op": "normalize", "mean": {}, "std": {}}})", shape[1] == 3 ? "[0.5, 0.4, 0.3]" : "[0.45]",
                                 shape[1] == 3 ? "[0.2, 0.25, 0.3]" : "[0.22]");
            }
            j += "]";
            // uint8 bilinear/bicubic is separable with or without antialias; float32 only with it.
            for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
                const Case c{j, dt, shape, layout};
                if (check(c, static_cast<std::uint32_t>(i * 4 + (dt == DType::UInt8 ? 0 : 2) + (layout == Layout::Contiguous ? 0 : 1))))
                    ++fused_seen;
            }
        }
    }
    EXPECT_GT(fused_seen, 40);  // most cases have both passes, and their tiles fit
}

// A 4K frame to a thumbnail and a large upscale: tiles with long tap runs and many blocks.
TEST(CudaFusion, LargeImages) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    const Case cases[] = {
        {"[" + resize_json("bilinear", true, 90, 160) + "]", DType::UInt8, {1, 3, 2160, 3840}, Layout::ChannelsLast},
        {"[" + resize_json("bilinear", true, 90, 160) + "]", DType::Float32, {1, 3, 2160, 3840}, Layout::Contiguous},
        {"[" + resize_json("bicubic", true, 1500, 1300) + "]", DType::Float32, {2, 3, 300, 257}, Layout::ChannelsLast},
        {"[" + resize_json("bilinear", false, 1500, 1300) + "]", DType::UInt8, {2, 3, 300, 257}, Layout::Contiguous},
    };
    std::uint32_t seed = 7;
    for (const Case& c : cases) EXPECT_TRUE(check(c, seed++));
}

// Whether a fused pair runs fused or as its two kernels is measured on an instance's first
// runs (CudaInstance::FormChoice): those runs alternate the two forms, every result is the
// same, and once the timings are in, explain says which form stays and why.
TEST(CudaFusion, TheFasterFormIsMeasuredOnTheFirstRunsAndEveryRunGivesTheSameValues) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    const Case cases[] = {
        // A small image (its tiles are small) and a large downscale of a batch.
        {"[" + resize_json("bilinear", true, 256, 256) + "]", DType::Float32, {1, 3, 500, 400}, Layout::Contiguous},
        {"[" + resize_json("bilinear", true, 300, 320) + "]", DType::UInt8, {4, 3, 1200, 1300}, Layout::ChannelsLast},
    };
    std::uint32_t seed = 11;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.json);
        const Tensor in = test::random_image(c.dtype, c.shape, c.layout, seed++);
        auto prepared = make_engine("cuda", EngineOptions{})->prepare(parse_pipeline(c.json, "."), in.spec());
        const std::string before = prepared->explain();
        ASSERT_NE(before.find("run as one"), std::string::npos) << before;
        EXPECT_NE(before.find("being measured"), std::string::npos) << before;
        const Tensor first = prepared->run(in);
        // Each run waits for its result, so the trials' timings are complete when the runs
        // after them ask.
        for (int r = 0; r < 2 * 3 + 2; ++r) EXPECT_TRUE(test::identical(prepared->run(in), first)) << "run " << r;
        const std::string after = prepared->explain();
        EXPECT_NE(after.find("measured on its first runs: fused "), std::string::npos) << after;
        EXPECT_TRUE(after.find("µs: fused") != std::string::npos || after.find("µs: as two kernels") != std::string::npos)
            << after;
    }
}

// The same, from threads at once on a fresh instance: trials run concurrently, each timed
// only once both its events are recorded; every result is the same.
TEST(CudaFusion, TheFormIsMeasuredSafelyFromManyThreads) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    const Case c{"[" + resize_json("bicubic", true, 131, 97) + "]", DType::Float32, {1, 3, 333, 222}, Layout::ChannelsLast};
    const Tensor in = test::random_image(c.dtype, c.shape, c.layout, 29);
    const Tensor want = make_engine("reference", EngineOptions{})->prepare(parse_pipeline(c.json, "."), in.spec())->run(in);
    auto prepared = make_engine("cuda", EngineOptions{})->prepare(parse_pipeline(c.json, "."), in.spec());
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int r = 0; r < 6; ++r)
                if (test::max_difference(prepared->run(in), want) > 1e-4) ++bad;
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(bad.load(), 0);
    (void)prepared->run(in);  // decides, if the threads' runs left it undecided
    EXPECT_NE(prepared->explain().find("measured on its first runs: fused "), std::string::npos) << prepared->explain();
}

}  // namespace
}  // namespace toroid
