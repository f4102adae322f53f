// The colour ops (invert, posterize, solarize, adjust_brightness / saturation / contrast,
// rgb_to_grayscale): the reference against values worked out by hand from torchvision's
// formulas, and the compiled engine (its quick scalar tier and the full vector build)
// against the reference, bit for bit, on random images of both dtypes and layouts, one
// and three channels, batches of one and two, odd sizes around the vector width. The CUDA
// source of every such pipeline compiles with clang's CUDA front end without an SDK.
#include "engine/compiled.h"
#include "engine/cuda_engine.h"
#include "engine/engine.h"
#include "engine_test_support.h"
#include "op_table_support.h"
#include "ops/pipeline_json.h"
#include "reference/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>


namespace toroid {
namespace {

using test::identical;
using test::max_difference;
using test::random_image;

Pipeline pipeline(const std::string& json) { return parse_pipeline(json, "."); }

Tensor one_pixel(DType dt, std::vector<double> values) {
    const auto c = static_cast<std::int64_t>(values.size());
    Tensor t = Tensor::empty(dt, {1, c, 1, 1});
    for (std::int64_t k = 0; k < c; ++k) {
        if (dt == DType::UInt8) t.at<std::uint8_t>(0, k, 0, 0) = static_cast<std::uint8_t>(values[static_cast<std::size_t>(k)]);
        else t.at<float>(0, k, 0, 0) = static_cast<float>(values[static_cast<std::size_t>(k)]);
    }
    return t;
}

double at(const Tensor& t, std::int64_t c, std::int64_t h = 0, std::int64_t w = 0, std::int64_t n = 0) {
    return t.dtype() == DType::UInt8 ? t.at<std::uint8_t>(n, c, h, w) : t.at<float>(n, c, h, w);
}

// The grey value of torchvision's _rgb_to_grayscale_image in float32.
float grey(float r, float g, float b) {
    return std::fma(b, 0.114f, std::fma(g, 0.587f, r * 0.2989f));
}

TEST(ColorReference, HandWorkedValues) {
    const Tensor px = one_pixel(DType::UInt8, {200, 100, 7});
    auto run1 = [&](const std::string& op, const Tensor& in) { return reference::run(pipeline("[" + op + "]"), in); };
    // invert: 255 - x.
    EXPECT_EQ(at(run1(R"({"op": "invert"})", px), 0), 55);
    EXPECT_EQ(at(run1(R"({"op": "invert"})", px), 2), 248);
    // posterize 3 bits keeps the top 3 bits: 200 = 0b11001000 -> 0b11000000 = 192; 0 bits: 0.
    EXPECT_EQ(at(run1(R"({"op": "posterize", "bits": 3})", px), 0), 192);
    EXPECT_EQ(at(run1(R"({"op": "posterize", "bits": 3})", px), 1), 96);
    EXPECT_EQ(at(run1(R"({"op": "posterize", "bits": 0})", px), 0), 0);
    EXPECT_EQ(at(run1(R"({"op": "posterize", "bits": 8})", px), 2), 7);
    // solarize: x >= threshold inverted; the threshold is compared as float32, so
    // 100.000001 and 99.9999999999 (both float32 100) invert 100, 100.0001 does not.
    const Tensor sol = run1(R"({"op": "solarize", "threshold": 100})", px);
    EXPECT_EQ(at(sol, 0), 55);
    EXPECT_EQ(at(sol, 1), 155);
    EXPECT_EQ(at(sol, 2), 7);
    EXPECT_EQ(at(run1(R"({"op": "solarize", "threshold": 100.0001})", px), 1), 100);
    EXPECT_EQ(at(run1(R"({"op": "solarize", "threshold": 100.000001})", px), 1), 155);
    EXPECT_EQ(at(run1(R"({"op": "solarize", "threshold": 99.9999999999})", px), 1), 155);
    // brightness: float32(x * factor) clamped and truncated.
    const Tensor br = run1(R"({"op": "adjust_brightness", "factor": 1.3})", px);
    EXPECT_EQ(at(br, 0), 255);
    EXPECT_EQ(at(br, 1), static_cast<int>(100.0f * 1.3f));
    EXPECT_EQ(at(br, 2), static_cast<int>(7.0f * 1.3f));
    // grayscale: truncated; white gives 254 (the weights sum to 0.9999).
    const float gv = grey(200, 100, 7);
    EXPECT_EQ(at(run1(R"({"op": "rgb_to_grayscale"})", px), 0), static_cast<int>(gv));
    EXPECT_EQ(at(run1(R"({"op": "rgb_to_grayscale"})", one_pixel(DType::UInt8, {255, 255, 255})), 0), 254);
    const Tensor g3 = run1(R"({"op": "rgb_to_grayscale", "num_output_channels": 3})", px);
    ASSERT_EQ(g3.dim(1), 3);
    EXPECT_EQ(at(g3, 2), static_cast<int>(gv));
    // saturation: blend with floor(grey): x * f + floor(grey) * (1 - f) in one fma.
    const Tensor sat = run1(R"({"op": "adjust_saturation", "factor": 0.5})", px);
    EXPECT_EQ(at(sat, 0), static_cast<int>(std::fma(std::floor(gv), 0.5f, 200.0f * 0.5f)));
    EXPECT_EQ(at(run1(R"({"op": "adjust_saturation", "factor": 0})", px), 2), static_cast<int>(std::floor(gv)));
    // contrast on one pixel: the mean is the pixel's floored grey.
    const Tensor con = run1(R"({"op": "adjust_contrast", "factor": 2})", px);
    EXPECT_EQ(at(con, 2), 0);  // 7 * 2 - floor(grey) < 0 clamps to 0
    EXPECT_EQ(at(con, 0), 255);
}

TEST(ColorReference, ContrastMeanIsTheWholeImagesGreyMean) {
    // A 1-channel 2x2 float image: mean 0.25; factor 3 gives 3x - 0.5.
    Tensor t = Tensor::empty(DType::Float32, {1, 1, 2, 2});
    const float v[4] = {0.0f, 0.25f, 0.5f, 0.25f};
    for (int k = 0; k < 4; ++k) t.at<float>(0, 0, k / 2, k % 2) = v[k];
    const Tensor out = reference::run(pipeline(R"([{"op": "adjust_contrast", "factor": 3}])"), t);
    for (int k = 0; k < 4; ++k)
        EXPECT_FLOAT_EQ(at(out, 0, k / 2, k % 2), std::min(std::max(std::fma(0.25f, -2.0f, v[k] * 3.0f), 0.0f), 1.0f));
    // Two images of a batch have their own means: a constant image keeps its value at any factor.
    Tensor b = Tensor::empty(DType::UInt8, {2, 3, 3, 5});
    for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t c = 0; c < 3; ++c)
            for (std::int64_t h = 0; h < 3; ++h)
                for (std::int64_t w = 0; w < 5; ++w) b.at<std::uint8_t>(n, c, h, w) = n == 0 ? 40 : 200;
    const Tensor ob = reference::run(pipeline(R"([{"op": "adjust_contrast", "factor": 1.7}])"), b);
    const float m0 = std::floor(grey(40, 40, 40)), m1 = std::floor(grey(200, 200, 200));
    EXPECT_EQ(at(ob, 1, 2, 4, 0), static_cast<int>(std::fma(m0, static_cast<float>(1.0 - 1.7), 40.0f * 1.7f)));
    EXPECT_EQ(at(ob, 1, 2, 4, 1), static_cast<int>(std::fma(m1, static_cast<float>(1.0 - 1.7), 200.0f * 1.7f)));
}

const char* kColorPipelines[] = {
    R"([{"op": "invert"}])",
    R"([{"op": "posterize", "bits": 0}])",
    R"([{"op": "posterize", "bits": 3}])",
    R"([{"op": "posterize", "bits": 8}])",
    R"([{"op": "solarize", "threshold": 0.5}])",
    R"([{"op": "adjust_brightness", "factor": 0}])",
    R"([{"op": "adjust_brightness", "factor": 1.37}])",
    R"([{"op": "adjust_saturation", "factor": 0.4}])",
    R"([{"op": "adjust_saturation", "factor": 2.5}])",
    R"([{"op": "adjust_contrast", "factor": 0}])",
    R"([{"op": "adjust_contrast", "factor": 0.6}])",
    R"([{"op": "adjust_contrast", "factor": 1.8}])",
    R"([{"op": "rgb_to_grayscale"}])",
    R"([{"op": "rgb_to_grayscale", "num_output_channels": 3}])",
    // Chains: a ColorJitter order, and contrast after a resize (the mean reads a realized pass).
    R"([{"op": "adjust_brightness", "factor": 1.2}, {"op": "adjust_contrast", "factor": 0.7},
        {"op": "adjust_saturation", "factor": 1.4}, {"op": "solarize", "threshold": 0.9}])",
    R"([{"op": "resize", "size": [9, 21], "mode": "bilinear", "antialias": true}, {"op": "adjust_contrast", "factor": 1.3},
        {"op": "flip", "dims": [3]}])",
};

// Compiled (both tiers) against the reference, bit for bit.
TEST(ColorCompiled, MatchesTheReferenceBitForBit) {
    test::expect_compiled_matches_reference({std::begin(kColorPipelines), std::end(kColorPipelines)},
                                            {Dims{1, 1, 1, 1}, Dims{1, 1, 7, 37}, Dims{1, 1, 20, 70}});
}

// A new factor, threshold or bit count is a new value, not a new program.
TEST(ColorCompiled, FactorsAreRunTimeValues) {
    auto e = make_engine("compiled", EngineOptions{});
    const Tensor in = random_image(DType::UInt8, {1, 3, 12, 17}, Layout::ChannelsLast, 5);
    const CacheStats before = cache_stats();
    for (double f : {0.3, 0.9, 1.6}) {
        const std::string j = R"([{"op": "adjust_brightness", "factor": )" + std::to_string(f) +
                              R"(}, {"op": "adjust_contrast", "factor": )" + std::to_string(f) +
                              R"(}, {"op": "adjust_saturation", "factor": )" + std::to_string(2 - f) +
                              R"(}, {"op": "posterize", "bits": )" + std::to_string(static_cast<int>(f * 4)) + "}]";
        const Pipeline p = pipeline(j);
        EXPECT_TRUE(identical(e->prepare(p, in.spec())->run(in), reference::run(p, in))) << j;
    }
    // One program: a quick and a full build at most, compiled or read from the disk cache.
    const CacheStats after = cache_stats();
    EXPECT_LE(after.compiles + after.disk_hits - before.compiles - before.disk_hits, 2);
    EXPECT_GE(after.memory_hits - before.memory_hits, 2);
}

TEST(ColorCompiled, ContrastIsThreeKernels) {
    const Tensor in = random_image(DType::UInt8, {1, 3, 8, 8}, Layout::Contiguous, 3);
    auto e = make_engine("compiled", EngineOptions{});
    const std::string text = e->prepare(pipeline(R"([{"op": "adjust_contrast", "factor": 0.5}])"), in.spec())->explain();
    // Row sums, mean, blend (and, where the CPU looks bytes up in registers, the blend's
    // table per image: schedule/tabulate.h).
    EXPECT_EQ(test::kernels_computing(text), (std::vector<std::string>{"op0.row_sums", "op0.mean", "op0.adjust_contrast"}))
        << text;
    const std::string one = e->prepare(pipeline(R"([{"op": "adjust_saturation", "factor": 0.5}])"), in.spec())->explain();
    EXPECT_NE(one.find("1 kernel"), std::string::npos) << one;
}

// On CUDA the contrast mean is not fused into the blend (each of the blend's blocks would
// sum its whole image again). For uint8 the row sums and the mean are double sums of integers,
// the same in any grouping: a block of threads computes each (schedule/block_reduce.h); for
// float32 their order is their rounding: a thread each, the row sums perhaps in the mean's
// blocks.
TEST(ColorCuda, ContrastMeanIsNotFusedIntoTheBlend) {
    for (DType dt : {DType::UInt8, DType::Float32}) {
        const Dims shape{2, 3, 64, 80};
        const TensorSpec spec{dt, shape, dense_strides(shape, Layout::Contiguous)};
        const std::string src = cuda_source(pipeline(R"([{"op": "adjust_contrast", "factor": 0.5}])"), spec, "sm_90");
        if (dt == DType::UInt8) {
            EXPECT_NE(src.find("(a block-wide reduction or a histogram)"), std::string::npos) << src;
            EXPECT_NE(src.find("a double sum of integer values"), std::string::npos) << src;
        } else {
            EXPECT_NE(src.find("a sum read at one element per block"), std::string::npos);
            EXPECT_EQ(src.find("t_block_reduce<"), std::string::npos);
        }
        EXPECT_EQ(src.find("op0.mean (this block's tile"), std::string::npos) << src;
    }
}

// The CUDA sources of the colour pipelines compile with clang's CUDA front end (no SDK).
TEST(ColorCuda, SourcesCompileWithClangWithoutAnSdk) {
    test::expect_cuda_sources_compile(
        test::cuda_sources_of({std::begin(kColorPipelines), std::end(kColorPipelines)}, Dims{2, 3, 19, 45}));
}

}  // namespace
}  // namespace toroid
