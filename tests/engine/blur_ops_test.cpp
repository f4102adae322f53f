// gaussian_blur and adjust_sharpness: the Gaussian weights against PyTorch's own (its
// linspace and softmax, as Debian's PyTorch 1.13 computes them), values worked out by hand
// on small images, the compiled engine (quick scalar tier and full vector build) against the
// reference bit for bit on random images of both dtypes and layouts, one and three
// channels, alone and fused with the ops around them; sigma and the factor as run-time
// values; torchvision's refusals; the CUDA sources compile with clang's CUDA front end.
#include "engine/compiled.h"
#include "engine/cuda_engine.h"
#include "engine/engine.h"
#include "engine_test_support.h"
#include "op_table_support.h"
#include "ops/pipeline_json.h"
#include "reference/reference.h"

#include <gtest/gtest.h>

#include <set>

namespace toroid {
namespace {

using test::identical;
using test::max_difference;
using test::random_image;

Pipeline pipeline(const std::string& json) { return parse_pipeline(json, "."); }

// torch.softmax(-(torch.linspace(-l, l, k) / sigma) ** 2), printed by PyTorch 1.13 (AVX2).
struct Kernel1d {
    std::int64_t k;
    double sigma;
    std::vector<float> weights;
};
const Kernel1d kTorchKernels[] = {
        {3, 1.0, {0x1.18a572p-2f, 0x1.ceb51cp-2f, 0x1.18a572p-2f}},
        {5, 0.8, {0x1.674b9ap-6f, 0x1.d3fe2cp-3f, 0x1.ff1860p-2f, 0x1.d3fe2cp-3f, 0x1.674b9ap-6f}},
        {9, 1.7, {0x1.e64264p-7f, 0x1.981a76p-5f, 0x1.e4a628p-4f, 0x1.9733a8p-3f, 0x1.e41d0ap-3f, 0x1.9733a8p-3f, 0x1.e4a628p-4f, 0x1.981a76p-5f, 0x1.e64264p-7f}},
        {23, 3.8, {0x1.a1f3aep-10f, 0x1.b0681ap-9f, 0x1.a16dd0p-8f, 0x1.7801f6p-7f, 0x1.3c08f6p-6f, 0x1.efb5ccp-6f, 0x1.6ac18ep-5f, 0x1.ef665ap-5f, 0x1.3ba3a8p-4f, 0x1.774d3cp-4f, 0x1.a0625ap-4f, 0x1.af0df0p-4f, 0x1.a0625ap-4f, 0x1.774d3cp-4f, 0x1.3ba3a8p-4f, 0x1.ef6650p-5f, 0x1.6ac18ep-5f, 0x1.efb5ccp-6f, 0x1.3c08f6p-6f, 0x1.7801f6p-7f, 0x1.a16dd0p-8f, 0x1.b0681ap-9f, 0x1.a1f3aep-10f}},
};

TEST(BlurWeights, MatchPyTorchsSoftmaxBitForBit) {
    for (const Kernel1d& t : kTorchKernels) {
        BlurOp op;
        op.lanes = 8;  // Debian's PyTorch dispatches to AVX2
        op.kernel_size = {t.k, 1};
        op.sigma = {t.sigma, 0.5};
        // A 1-tap kernel is [1], so the 2-D kernel is the 1-D one.
        EXPECT_EQ(gaussian_kernel2d(op), t.weights) << "k " << t.k << " sigma " << t.sigma;
        op.kernel_size = {1, t.k};
        op.sigma = {0.5, t.sigma};
        EXPECT_EQ(gaussian_kernel2d(op), t.weights) << "k " << t.k << " sigma " << t.sigma;
    }
    // The outer product: row i is wy[i] * wx.
    BlurOp op;
    op.lanes = 8;
    op.kernel_size = {3, 5};
    op.sigma = {1.0, 0.8};
    const std::vector<float> w = gaussian_kernel2d(op);
    ASSERT_EQ(w.size(), 15u);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 3; ++j)
            EXPECT_EQ(w[i * 3 + j], kTorchKernels[1].weights[i] * kTorchKernels[0].weights[j]);
}

class BlurValues : public ::testing::TestWithParam<std::string> {
protected:
    Tensor run(const std::string& json, const Tensor& in) {
        auto engine = make_engine(GetParam(), EngineOptions{});
        return engine->prepare(pipeline(json), in.spec())->run(in);
    }
};

// A 1 x 1 x 4 x 5 uint8 image: 0 everywhere but 130 at (1, 2).
Tensor spot() {
    Tensor t = Tensor::empty(DType::UInt8, {1, 1, 4, 5});
    for (std::int64_t y = 0; y < 4; ++y)
        for (std::int64_t x = 0; x < 5; ++x) t.at<std::uint8_t>(0, 0, y, x) = y == 1 && x == 2 ? 130 : 0;
    return t;
}

TEST_P(BlurValues, GaussianSpreadsASpotThroughReflectPadding) {
    // kernel [1, 3] (a vertical kernel), sigma 1: weights w0 = w2 = 0x1.18a572p-2, w1 =
    // 0x1.ceb51cp-2. Row 0 reads rows (1, 0, 1) (reflected), row 2 reads (1, 2, 3).
    const Tensor out = run(R"([{"op": "gaussian_blur", "kernel_size": [1, 3], "sigma": 1}])", spot());
    const float w0 = 0x1.18a572p-2f, w1 = 0x1.ceb51cp-2f;
    const auto r = [](float v) { return static_cast<int>(std::nearbyint(v)); };
    EXPECT_EQ(out.at<std::uint8_t>(0, 0, 0, 2), r(130 * w0 + 130 * w0));  // both mirrored taps
    EXPECT_EQ(out.at<std::uint8_t>(0, 0, 1, 2), r(130 * w1));
    EXPECT_EQ(out.at<std::uint8_t>(0, 0, 2, 2), r(130 * w0));
    EXPECT_EQ(out.at<std::uint8_t>(0, 0, 3, 2), 0);
    for (std::int64_t y = 0; y < 4; ++y) EXPECT_EQ(out.at<std::uint8_t>(0, 0, y, 1), 0);
}

TEST_P(BlurValues, SharpnessKeepsTheBorderAndBlendsTheInterior) {
    const Tensor in = spot();
    // factor 1 leaves the image as it is; factor 0 is the 3x3 smoothing inside, rounded:
    // 130 * 5/13 = 50 at the spot, 130/13 = 10 around it, the border kept.
    EXPECT_TRUE(identical(run(R"([{"op": "adjust_sharpness", "factor": 1}])", in), in));
    const Tensor out = run(R"([{"op": "adjust_sharpness", "factor": 0}])", in);
    const int want[4][5] = {{0, 0, 0, 0, 0}, {0, 10, 50, 10, 0}, {0, 10, 10, 10, 0}, {0, 0, 0, 0, 0}};
    for (std::int64_t y = 0; y < 4; ++y)
        for (std::int64_t x = 0; x < 5; ++x) EXPECT_EQ(out.at<std::uint8_t>(0, 0, y, x), want[y][x]) << y << "," << x;
    // factor 2: 2x - blurred, clamped: the spot 2 * 130 - 50 = 210, its neighbours 0 - 10 -> 0.
    const Tensor sharp = run(R"([{"op": "adjust_sharpness", "factor": 2}])", in);
    EXPECT_EQ(sharp.at<std::uint8_t>(0, 0, 1, 2), 210);
    EXPECT_EQ(sharp.at<std::uint8_t>(0, 0, 1, 1), 0);
}

TEST_P(BlurValues, SharpnessOfFloatClampsTheWholeImageUnlessItIsTooSmall) {
    for (std::int64_t h : {2, 3}) {
        Tensor in = Tensor::empty(DType::Float32, {1, 1, h, 3});
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < 3; ++x) in.at<float>(0, 0, y, x) = 1.5f;
        const Tensor out = run(R"([{"op": "adjust_sharpness", "factor": 0.5}])", in);
        // torchvision returns a 2-row image as it is, and clamps a 3-row one everywhere.
        EXPECT_EQ(out.at<float>(0, 0, 0, 0), h == 2 ? 1.5f : 1.0f);
    }
}

INSTANTIATE_TEST_SUITE_P(Engines, BlurValues, ::testing::Values("reference", "compiled"));

const char* const kBlurPipelines[] = {
    R"([{"op": "gaussian_blur", "kernel_size": 3}])",
    R"([{"op": "gaussian_blur", "kernel_size": [5, 3], "sigma": [0.7, 1.9]}])",
    R"([{"op": "gaussian_blur", "kernel_size": [3, 7], "sigma": 0.1}])",
    R"([{"op": "gaussian_blur", "kernel_size": 9, "sigma": [1.3]}])",
    R"([{"op": "gaussian_blur", "kernel_size": [9, 3], "sigma": [2.2, 0.4], "lanes": 8}])",
    R"([{"op": "adjust_sharpness", "factor": 0}])",
    R"([{"op": "adjust_sharpness", "factor": 0.4}])",
    R"([{"op": "adjust_sharpness", "factor": 2.5}])",
    // Fused with the ops around them.
    R"([{"op": "resize", "size": [13, 29], "mode": "bilinear"},
        {"op": "gaussian_blur", "kernel_size": [3, 5], "sigma": [1.1, 0.6]}, {"op": "flip", "dims": [3]}])",
    R"([{"op": "adjust_brightness", "factor": 1.3}, {"op": "adjust_sharpness", "factor": 1.7},
        {"op": "gaussian_blur", "kernel_size": 3, "sigma": 1.5}])",
    R"([{"op": "pad", "padding": [2, 1, 0, 3], "mode": "reflect"}, {"op": "gaussian_blur", "kernel_size": 5}])",
};

// Compiled (both tiers) against the reference, bit for bit.
TEST(BlurCompiled, MatchesTheReferenceBitForBit) {
    test::expect_compiled_matches_reference({std::begin(kBlurPipelines), std::end(kBlurPipelines)},
                                            {Dims{1, 1, 5, 5}, Dims{1, 1, 7, 37}, Dims{1, 1, 20, 70}});
}

// A new sigma or factor is a new value, not a new program.
TEST(BlurCompiled, SigmaAndFactorAreRunTimeValues) {
    auto e = make_engine("compiled", EngineOptions{});
    const Tensor in = random_image(DType::UInt8, {1, 3, 12, 17}, Layout::ChannelsLast, 5);
    const CacheStats before = cache_stats();
    for (double s : {0.3, 0.9, 1.6}) {
        const std::string j = R"([{"op": "gaussian_blur", "kernel_size": [5, 3], "sigma": [)" + std::to_string(s) +
                              ", " + std::to_string(2 - s) + R"(]}, {"op": "adjust_sharpness", "factor": )" +
                              std::to_string(s) + "}]";
        const Pipeline p = pipeline(j);
        EXPECT_TRUE(identical(e->prepare(p, in.spec())->run(in), reference::run(p, in))) << j;
    }
    const CacheStats after = cache_stats();
    EXPECT_LE(after.compiles + after.disk_hits - before.compiles - before.disk_hits, 2);
    EXPECT_GE(after.memory_hits - before.memory_hits, 2);
}

void expect_error(const std::string& json, const std::string& part, const Dims& shape = {1, 3, 8, 8}) {
    try {
        const Pipeline p = pipeline(json);
        infer_shape(p, ShapeInfo{DType::UInt8, shape});
        ADD_FAILURE() << "no error for " << json;
    } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find(part), std::string::npos) << err.what();
    }
}

TEST(BlurOps, RefuseWhatTorchvisionRefuses) {
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 4}])", "kernel_size should have odd and positive integers. Got [4, 4]");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": [3, 0]}])", "kernel_size should have odd and positive integers. Got [3, 0]");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": [-3, 3]}])", "odd and positive");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": [3, 3, 3]}])", "If kernel_size is a sequence its length should be 2. Got 3");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 3, "sigma": 0}])", "sigma should have positive values. Got [0, 0]");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 3, "sigma": [1, -2]}])", "sigma should have positive values");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 3, "sigma": [1, 2, 3]}])", "If sigma is a sequence, its length should be 2. Got 3");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 3, "sigma": "x"}])", "sigma");
    expect_error(R"([{"op": "gaussian_blur"}])", "missing field 'kernel_size'");
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 101}])", "limit");
    // torch's reflect pad: each padding below the dimension it pads.
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": [3, 17]}])", "Padding size should be less than", {1, 3, 8, 20});
    expect_error(R"([{"op": "adjust_sharpness", "factor": -0.5}])", "sharpness_factor (-0.5) is not non-negative.");
    expect_error(R"([{"op": "adjust_sharpness"}])", "missing field 'factor'");
    expect_error(R"([{"op": "adjust_sharpness", "factor": 1}])", "can have 1 or 3 channels, but found 4", {1, 4, 8, 8});
}

TEST(BlurOps, JsonRoundTrips) {
    for (const char* json : kBlurPipelines) {
        const Pipeline p = pipeline(json);
        const Pipeline q = pipeline(pipeline_to_json(p));
        ASSERT_EQ(q.ops.size(), p.ops.size());
        for (std::size_t k = 0; k < p.ops.size(); ++k)
            if (const auto* b = std::get_if<BlurOp>(&p.ops[k])) {
                EXPECT_EQ(std::get<BlurOp>(q.ops[k]), *b) << json;
            }
    }
    // Below 8 taps the lanes do not matter; from 8, 16 lanes sum in order what 8 lanes sum
    // in two halves (PyTorch's AVX-512 and AVX2 softmax).
    BlurOp narrow, wide;
    narrow.lanes = 8;
    wide.lanes = 16;
    for (std::int64_t k : {3, 5, 7}) {
        narrow.kernel_size = wide.kernel_size = {k, k};
        EXPECT_EQ(gaussian_kernel2d(narrow), gaussian_kernel2d(wide));
    }
    expect_error(R"([{"op": "gaussian_blur", "kernel_size": 3, "lanes": 4}])", "lanes must be 8 (AVX2) or 16 (AVX-512), got 4");
    // The default sigma is torchvision's 0.15 k + 0.35.
    const Pipeline p = pipeline(R"([{"op": "gaussian_blur", "kernel_size": [3, 9]}])");
    EXPECT_EQ(std::get<BlurOp>(p.ops[0]).sigma, (std::array<double, 2>{3 * 0.15 + 0.35, 9 * 0.15 + 0.35}));
}

// The CUDA sources of the blur pipelines compile with clang's CUDA front end (no SDK).
TEST(BlurCuda, SourcesCompileWithClangWithoutAnSdk) {
    test::expect_cuda_sources_compile(
        test::cuda_sources_of({std::begin(kBlurPipelines), std::end(kBlurPipelines)}, Dims{2, 3, 19, 45}));
}

}  // namespace
}  // namespace toroid
