// adjust_gamma, adjust_hue, autocontrast and equalize: the reference against values worked out by
// hand from torchvision's formulas, the compiled engine (quick scalar tier, full vector
// build, and the specialized engine) against the reference bit for bit on random images of
// both dtypes and layouts, one and three channels, batches; run-time factors; and the CUDA
// sources through clang without an SDK (the IR's Pow and Min / Max reductions:
// tests/ir/reduce_pow_test.cpp, their printing: tests/codegen/tone_codegen_test.cpp).
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

Tensor pixels(DType dt, std::int64_t c, std::int64_t w, const std::vector<double>& values) {
    Tensor t = Tensor::empty(dt, {1, c, 1, w});
    for (std::int64_t k = 0; k < c * w; ++k) {
        const double v = values[static_cast<std::size_t>(k)];
        if (dt == DType::UInt8) t.at<std::uint8_t>(0, k / w, 0, k % w) = static_cast<std::uint8_t>(v);
        else t.at<float>(0, k / w, 0, k % w) = static_cast<float>(v);
    }
    return t;
}

double at(const Tensor& t, std::int64_t c, std::int64_t w = 0, std::int64_t n = 0) {
    return t.dtype() == DType::UInt8 ? t.at<std::uint8_t>(n, c, 0, w) : t.at<float>(n, c, 0, w);
}

Tensor run1(const std::string& op, const Tensor& in) { return reference::run(pipeline("[" + op + "]"), in); }

constexpr float kToFloat = static_cast<float>(1.0 / 255.0);
constexpr float kToByte = static_cast<float>(255.0 + 1.0 - 1e-3);

TEST(ToneReference, GammaByHand) {
    const Tensor px = pixels(DType::UInt8, 3, 1, {200, 100, 7});
    // gamma 2 is x * x (PyTorch's special case), scaled back by 255.999 and truncated.
    const float x200 = 200.0f * kToFloat;
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 2})", px), 0), static_cast<int>(x200 * x200 * kToByte));
    // 0.5 is sqrt; 0 gives 1 everywhere (255); 1 gives the image back.
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 0.5})", px), 1),
              static_cast<int>(std::sqrt(100.0f * kToFloat) * kToByte));
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 0})", px), 2), 255);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 1})", px), c), at(px, c));
    // 2.2 with gain 0.8: pow in double rounded to float, times float(0.8), clamped.
    const float p = static_cast<float>(std::pow(static_cast<double>(x200), static_cast<double>(2.2f)));
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 2.2, "gain": 0.8})", px), 0),
              static_cast<int>(std::min(p * 0.8f, 1.0f) * kToByte));
    // gain 3 saturates: clamped to 1 before the scale, so 255.
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 1, "gain": 3})", px), 0), 255);
    // float: no scaling, no clamp where gain is 1 (2^2 = 4 stays 4).
    const Tensor f = pixels(DType::Float32, 1, 3, {2.0, 0.25, 0.0});
    const Tensor fg = run1(R"({"op": "adjust_gamma", "gamma": 2})", f);
    EXPECT_EQ(at(fg, 0, 0), 4.0);
    EXPECT_EQ(at(fg, 0, 1), 0.0625);
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 2, "gain": 1.5})", f), 0, 0), 1.0);
    EXPECT_EQ(at(run1(R"({"op": "adjust_gamma", "gamma": 3})", f), 0, 0), 8.0);
}

TEST(ToneReference, HueByHand) {
    // Red shifted by half a turn is cyan; by -0.5 too; by 1/6 yellow (float(1/6) * 6 is 1).
    const Tensor red = pixels(DType::UInt8, 3, 1, {255, 0, 0});
    for (const char* f : {"0.5", "-0.5"}) {
        const Tensor o = run1(std::string(R"({"op": "adjust_hue", "factor": )") + f + "}", red);
        EXPECT_EQ(at(o, 0), 0) << f;
        EXPECT_EQ(at(o, 1), 255) << f;
        EXPECT_EQ(at(o, 2), 255) << f;
    }
    const Tensor y = run1(R"({"op": "adjust_hue", "factor": 0.16666666666666666})", red);
    EXPECT_EQ(at(y, 0), 255);
    EXPECT_EQ(at(y, 1), 255);
    EXPECT_EQ(at(y, 2), 0);
    // Grey has no hue: any shift gives it back (128 / 255 * 255.999 truncates to 128).
    const Tensor grey = pixels(DType::UInt8, 3, 1, {128, 128, 128});
    for (int c = 0; c < 3; ++c) EXPECT_EQ(at(run1(R"({"op": "adjust_hue", "factor": 0.3})", grey), c), 128);
    // Factor 0 does not give pure blue back exactly: h = 4 * float(1/6) + 1 is a tie that
    // rounds up to 1.66666675f, so h6 = 4.00000048f, sector 4 and f = 2^-21, and red takes
    // t = s * f * v = 2^-21.
    const Tensor blue = pixels(DType::Float32, 3, 1, {0.0, 0.0, 1.0});
    const Tensor b0 = run1(R"({"op": "adjust_hue", "factor": 0})", blue);
    EXPECT_EQ(at(b0, 0), std::ldexp(1.0, -21));
    EXPECT_EQ(at(b0, 1), 0.0);
    EXPECT_EQ(at(b0, 2), 1.0);
    // A third of a turn takes blue (h = 2/3) to red (h = 1 -> 0).
    const Tensor b3 = run1(R"({"op": "adjust_hue", "factor": 0.3333333333333333})", blue);
    EXPECT_EQ(at(b3, 0), 1.0);
    EXPECT_EQ(at(b3, 2), 0.0);
    // One channel: returned as it is.
    const Tensor one = pixels(DType::UInt8, 1, 3, {3, 90, 250});
    EXPECT_TRUE(identical(run1(R"({"op": "adjust_hue", "factor": 0.4})", one), one));
}

TEST(ToneReference, AutocontrastByHand) {
    // One channel 50, 100, 150: min 50, inv_scale = 100 * float(1/255); (x - 50) / inv_scale.
    const Tensor a = pixels(DType::UInt8, 1, 3, {50, 100, 150});
    const Tensor o = run1(R"({"op": "autocontrast"})", a);
    const float inv = 100.0f * kToFloat;
    EXPECT_EQ(at(o, 0, 0), 0);
    EXPECT_EQ(at(o, 0, 1), static_cast<int>(50.0f / inv));
    EXPECT_EQ(at(o, 0, 2), static_cast<int>(std::min(100.0f / inv, 255.0f)));
    // Each channel its own range; a constant channel is kept as it is.
    const Tensor b = pixels(DType::Float32, 3, 2, {0.2, 0.6, 0.7, 0.7, -1.0, 3.0});
    const Tensor ob = run1(R"({"op": "autocontrast"})", b);
    EXPECT_EQ(at(ob, 0, 0), 0.0);
    EXPECT_EQ(at(ob, 0, 1), 1.0);
    EXPECT_EQ(at(ob, 1, 0), static_cast<double>(0.7f));  // min == max: minimum 0, scale 1
    EXPECT_EQ(at(ob, 1, 1), static_cast<double>(0.7f));
    EXPECT_EQ(at(ob, 2, 0), 0.0);
    EXPECT_EQ(at(ob, 2, 1), 1.0);
    // Each image of a batch has its own range.
    Tensor two = Tensor::empty(DType::UInt8, {2, 1, 1, 2});
    two.at<std::uint8_t>(0, 0, 0, 0) = 10;
    two.at<std::uint8_t>(0, 0, 0, 1) = 20;
    two.at<std::uint8_t>(1, 0, 0, 0) = 0;
    two.at<std::uint8_t>(1, 0, 0, 1) = 255;
    const Tensor o2 = reference::run(pipeline(R"([{"op": "autocontrast"}])"), two);
    // 10 / (10 * float(1/255)) is 254.99998f: truncated to 254.
    EXPECT_EQ(o2.at<std::uint8_t>(0, 0, 0, 1), 254);
    EXPECT_EQ(o2.at<std::uint8_t>(0, 0, 0, 0), 0);
    EXPECT_EQ(o2.at<std::uint8_t>(1, 0, 0, 1), 255);
    EXPECT_EQ(o2.at<std::uint8_t>(1, 0, 0, 0), 0);
}

TEST(ToneReference, EqualizeByHand) {
    // 1 x 300 pixels: 100 of 10, 100 of 20, 100 of 30. The greatest value (30) has 100
    // pixels: step = (300 - 100) floordiv 255 = 0, so the image is kept.
    std::vector<double> v(300);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = 10.0 * static_cast<double>(k / 100 + 1);
    const Tensor small = pixels(DType::UInt8, 1, 300, v);
    EXPECT_TRUE(identical(run1(R"({"op": "equalize"})", small), small));
    // 1 x 1000: 600 of 10, 300 of 20, 100 of 30: step = 900 floordiv 255 = 3. lut[x] =
    // (cum[x - 1] + 1) floordiv 3: lut[10] = (0 + 1) / 3 = 0, lut[20] = (600 + 1) / 3 = 200,
    // lut[30] = (900 + 1) / 3 = 300 clamped to 255.
    std::vector<double> w(1000);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = k < 600 ? 10 : k < 900 ? 20 : 30;
    const Tensor big = pixels(DType::UInt8, 1, 1000, w);
    const Tensor o = run1(R"({"op": "equalize"})", big);
    EXPECT_EQ(at(o, 0, 0), 0);
    EXPECT_EQ(at(o, 0, 700), 200);
    EXPECT_EQ(at(o, 0, 950), 255);
    // float goes through uint8: 20 / 255 scaled up by 255.999 truncates to 20, back as 200 / 255.
    Tensor f = Tensor::empty(DType::Float32, {1, 1, 1, 1000});
    for (std::int64_t k = 0; k < 1000; ++k) f.at<float>(0, 0, 0, k) = static_cast<float>(w[static_cast<std::size_t>(k)]) / 255.0f;
    const Tensor fo = run1(R"({"op": "equalize"})", f);
    EXPECT_EQ(at(fo, 0, 700), static_cast<double>(200.0f * kToFloat));
}

TEST(ToneReference, ValidationErrors) {
    auto error_of = [](const std::string& json, const Tensor& in) -> std::string {
        try {
            reference::run(pipeline(json), in);
        } catch (const Error& e) {
            return e.what();
        }
        return "no error";
    };
    const Tensor four = random_image(DType::UInt8, {1, 4, 3, 3}, Layout::Contiguous, 1);
    EXPECT_EQ(error_of(R"([{"op": "adjust_gamma", "gamma": -1}])", four),
              "op 0 (adjust_gamma): Gamma should be a non-negative real number, got -1");
    EXPECT_EQ(error_of(R"([{"op": "adjust_hue", "factor": 0.75}])", four),
              "op 0 (adjust_hue): hue_factor (0.75) is not in [-0.5, 0.5]");
    EXPECT_EQ(error_of(R"([{"op": "adjust_hue", "factor": 0.1}])", four),
              "adjust_hue: input image tensor permitted channel values are 1 or 3, but found 4");
    EXPECT_EQ(error_of(R"([{"op": "autocontrast"}])", four),
              "autocontrast: input image tensor permitted channel values are 1 or 3, but found 4");
    EXPECT_EQ(error_of(R"([{"op": "adjust_gamma", "gamma": 2}])", four), "no error");
}

const char* kTonePipelines[] = {
    R"([{"op": "adjust_gamma", "gamma": 2.2}])",
    R"([{"op": "adjust_gamma", "gamma": 0.5, "gain": 1.3}])",
    R"([{"op": "adjust_gamma", "gamma": 3}])",
    R"([{"op": "adjust_gamma", "gamma": 0}])",
    R"([{"op": "adjust_hue", "factor": 0.27}])",
    R"([{"op": "adjust_hue", "factor": -0.5}])",
    R"([{"op": "adjust_hue", "factor": 0}])",
    R"([{"op": "autocontrast"}])",
    R"([{"op": "equalize"}])",
    // Chains: a ColorJitter order with hue, and autocontrast after a resize and before a flip.
    R"([{"op": "adjust_brightness", "factor": 1.2}, {"op": "adjust_hue", "factor": 0.1},
        {"op": "adjust_saturation", "factor": 1.4}, {"op": "adjust_contrast", "factor": 0.7}])",
    R"([{"op": "resize", "size": [9, 21], "mode": "bilinear", "antialias": true}, {"op": "autocontrast"},
        {"op": "flip", "dims": [3]}, {"op": "adjust_gamma", "gamma": 1.7}])",
    R"([{"op": "posterize", "bits": 3}, {"op": "equalize"}, {"op": "crop", "top": 1, "left": 2, "height": 3, "width": 5}])",
};

// Compiled (both tiers, and the specialized engine) against the reference, bit for bit.
TEST(ToneCompiled, MatchesTheReferenceBitForBit) {
    test::expect_compiled_matches_reference({std::begin(kTonePipelines), std::end(kTonePipelines)},
                                            {Dims{1, 1, 1, 1}, Dims{1, 1, 7, 37}, Dims{1, 1, 20, 70}},
                                            /*specialized=*/true);
}

// Every gamma, gain and hue is a value, not a program (a ColorJitter draw binds).
TEST(ToneCompiled, FactorsAreRunTimeValues) {
    auto e = make_engine("compiled", EngineOptions{});
    const Tensor in = random_image(DType::UInt8, {1, 3, 12, 17}, Layout::ChannelsLast, 5);
    const CacheStats before = cache_stats();
    for (double f : {0.3, 0.9, 1.6, 2.0}) {
        const std::string j = R"([{"op": "adjust_gamma", "gamma": )" + std::to_string(f) + R"(, "gain": )" +
                              std::to_string(f / 2 + 0.1) + R"(}, {"op": "adjust_hue", "factor": )" +
                              std::to_string(f / 4 - 0.2) + R"(}, {"op": "autocontrast"}])";
        const Pipeline p = pipeline(j);
        EXPECT_TRUE(identical(e->prepare(p, in.spec())->run(in), reference::run(p, in))) << j;
    }
    const CacheStats after = cache_stats();
    EXPECT_LE(after.compiles + after.disk_hits - before.compiles - before.disk_hits, 2);
    EXPECT_GE(after.memory_hits - before.memory_hits, 3);
}

TEST(ToneCompiled, AutocontrastIsThreeKernels) {
    const Tensor in = random_image(DType::UInt8, {2, 3, 8, 8}, Layout::Contiguous, 3);
    auto e = make_engine("compiled", EngineOptions{});
    const std::string text = e->prepare(pipeline(R"([{"op": "autocontrast"}])"), in.spec())->explain();
    // Least and greatest values, the stretch (and their lanes along rows, schedule/rfactor.h;
    // the stretch's table per channel, schedule/tabulate.h).
    EXPECT_EQ(test::kernels_computing(text), (std::vector<std::string>{"op0.min", "op0.max", "op0.autocontrast"})) << text;
    const std::string one =
        e->prepare(pipeline(R"([{"op": "adjust_gamma", "gamma": 2}, {"op": "adjust_hue", "factor": 0.2}])"), in.spec())
            ->explain();
    EXPECT_NE(one.find("1 kernel"), std::string::npos) << one;
}

// The CUDA sources of the tone pipelines compile with clang's CUDA front end (no SDK).
TEST(ToneCuda, SourcesCompileWithClangWithoutAnSdk) {
    test::expect_cuda_sources_compile(
        test::cuda_sources_of({std::begin(kTonePipelines), std::end(kTonePipelines)}, Dims{2, 3, 19, 45}));
}

}  // namespace
}  // namespace toroid
