// Shapes the conformance cases miss — 1x1 images, 1-pixel outputs, one channel and many
// channels, strided crop views as inputs, large scale factors — checked on both engines
// through properties that follow from PyTorch's definitions (a constant image stays
// constant, channels are independent, a view computes like its dense copy, nearest
// upscaling by an integer factor replicates pixels).
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace toroid {
namespace {

Tensor patterned(DType dt, const Dims& shape, Layout layout = Layout::Contiguous) {
    Tensor t = Tensor::empty(dt, shape, layout);
    std::uint32_t x = 12345;
    for (std::int64_t n = 0; n < shape[0]; ++n)
        for (std::int64_t c = 0; c < shape[1]; ++c)
            for (std::int64_t h = 0; h < shape[2]; ++h)
                for (std::int64_t w = 0; w < shape[3]; ++w) {
                    x = x * 1664525u + 1013904223u;
                    if (dt == DType::UInt8) t.at<std::uint8_t>(n, c, h, w) = static_cast<std::uint8_t>(x >> 24);
                    else t.at<float>(n, c, h, w) = static_cast<float>(x >> 8) / 16777216.0f * 10.0f - 2.0f;
                }
    return t;
}

double value(const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return t.dtype() == DType::UInt8 ? t.at<std::uint8_t>(n, c, h, w) : t.at<float>(n, c, h, w);
}

Tensor run(const std::string& engine, const Pipeline& p, const Tensor& in) {
    auto e = make_engine(engine, EngineOptions{});
    return e->prepare(p, in.spec())->run(in);
}

void expect_equal(const Tensor& a, const Tensor& b, double tol = 0) {
    ASSERT_EQ(a.shape(), b.shape());
    ASSERT_EQ(a.dtype(), b.dtype());
    const Dims& s = a.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w)
                    ASSERT_LE(std::fabs(value(a, n, c, h, w) - value(b, n, c, h, w)), tol)
                        << "at (" << n << "," << c << "," << h << "," << w << ")";
}

ResizeOp resize(ResizeMode m, std::int64_t h, std::int64_t w, bool antialias = false) {
    ResizeOp r;
    r.mode = m;
    r.size = std::array<std::int64_t, 2>{h, w};
    r.antialias = antialias;
    return r;
}

class EdgeCases : public ::testing::TestWithParam<std::string> {};

TEST_P(EdgeCases, OnePixelImageResizesToAConstant) {
    for (DType dt : {DType::UInt8, DType::Float32})
        for (ResizeMode m : {ResizeMode::Nearest, ResizeMode::NearestExact, ResizeMode::Bilinear, ResizeMode::Bicubic})
            for (bool aa : {false, true}) {
                if (aa && (m == ResizeMode::Nearest || m == ResizeMode::NearestExact)) continue;
                Tensor in = patterned(dt, {2, 3, 1, 1});
                Pipeline p{{resize(m, 5, 7, aa)}};
                Tensor out = run(GetParam(), p, in);
                ASSERT_EQ(out.shape(), (Dims{2, 3, 5, 7}));
                for (std::int64_t n = 0; n < 2; ++n)
                    for (std::int64_t c = 0; c < 3; ++c)
                        for (std::int64_t h = 0; h < 5; ++h)
                            for (std::int64_t w = 0; w < 7; ++w)
                                ASSERT_NEAR(value(out, n, c, h, w), value(in, n, c, 0, 0), dt == DType::UInt8 ? 0 : 1e-5)
                                    << resize_mode_name(m) << (aa ? " aa" : "");
            }
}

TEST_P(EdgeCases, OnePixelOutputOfAConstantImageIsThatConstant) {
    for (ResizeMode m : {ResizeMode::Nearest, ResizeMode::Bilinear, ResizeMode::Bicubic})
        for (bool aa : {false, true}) {
            if (aa && m == ResizeMode::Nearest) continue;
            Tensor in = Tensor::empty(DType::UInt8, {1, 2, 37, 23});
            for (std::int64_t c = 0; c < 2; ++c)
                for (std::int64_t h = 0; h < 37; ++h)
                    for (std::int64_t w = 0; w < 23; ++w) in.at<std::uint8_t>(0, c, h, w) = c == 0 ? 77 : 200;
            Tensor out = run(GetParam(), Pipeline{{resize(m, 1, 1, aa)}}, in);
            ASSERT_EQ(out.shape(), (Dims{1, 2, 1, 1}));
            EXPECT_EQ(out.at<std::uint8_t>(0, 0, 0, 0), 77);
            EXPECT_EQ(out.at<std::uint8_t>(0, 1, 0, 0), 200);
        }
}

// Channels do not interact: a 7-channel image gives, channel by channel, what each
// channel gives alone (C = 1 and C > 4 through the same pipeline).
TEST_P(EdgeCases, ManyChannelsMatchOneChannelAtATime) {
    for (DType dt : {DType::UInt8, DType::Float32}) {
        Tensor in = patterned(dt, {1, 7, 19, 26});
        Pipeline p{{resize(ResizeMode::Bicubic, 11, 9, true), FlipOp{{3}}}};
        Tensor all = run(GetParam(), p, in);
        for (std::int64_t c = 0; c < 7; ++c) {
            Tensor one = in.slice(1, c, 1).to_layout(Layout::Contiguous);
            Tensor got = run(GetParam(), p, one);
            expect_equal(all.slice(1, c, 1).to_layout(Layout::Contiguous), got);
        }
    }
}

// A strided crop view computes exactly like its dense copy, in either layout.
TEST_P(EdgeCases, StridedViewInputMatchesDenseCopy) {
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast})
        for (DType dt : {DType::UInt8, DType::Float32}) {
            Tensor big = patterned(dt, {2, 3, 40, 50}, l);
            Tensor view = big.slice(2, 5, 21).slice(3, 7, 30);
            ASSERT_FALSE(view.is_dense(l));
            std::vector<Pipeline> pipelines;
            pipelines.push_back(Pipeline{{resize(ResizeMode::Bilinear, 13, 17, true)}});
            pipelines.push_back(Pipeline{{resize(ResizeMode::NearestExact, 40, 9)}});
            pipelines.push_back(Pipeline{{FlipOp{{2, 3}}, CropOp{-3, 4, 20, 30}}});
            if (dt == DType::Float32) {
                AffineOp a;
                a.theta = {{{0.9, -0.2, 0.1}, {0.3, 1.1, -0.05}}};
                a.mode = GridMode::Bicubic;
                a.padding_mode = PaddingMode::Reflection;
                pipelines.push_back(Pipeline{{a}});
            }
            for (const Pipeline& p : pipelines) expect_equal(run(GetParam(), p, view), run(GetParam(), p, view.to_layout(l)));
        }
}

// Nearest upscaling by an integer factor k repeats every pixel k x k times.
TEST_P(EdgeCases, LargeIntegerScaleFactorReplicatesPixels) {
    Tensor in = patterned(DType::UInt8, {1, 2, 3, 4});
    ResizeOp r;
    r.mode = ResizeMode::Nearest;
    r.scale_factor = std::array<double, 2>{32.0, 25.0};
    Tensor out = run(GetParam(), Pipeline{{r}}, in);
    ASSERT_EQ(out.shape(), (Dims{1, 2, 96, 100}));
    for (std::int64_t c = 0; c < 2; ++c)
        for (std::int64_t h = 0; h < 96; ++h)
            for (std::int64_t w = 0; w < 100; ++w)
                ASSERT_EQ(out.at<std::uint8_t>(0, c, h, w), in.at<std::uint8_t>(0, c, h / 32, w / 25));
}

// Antialiased downscaling by a large factor averages: a two-level image becomes its mean.
TEST_P(EdgeCases, LargeDownscaleAveragesWithAntialias) {
    Tensor in = Tensor::empty(DType::Float32, {1, 1, 64, 64});
    for (std::int64_t h = 0; h < 64; ++h)
        for (std::int64_t w = 0; w < 64; ++w) in.at<float>(0, 0, h, w) = (h + w) % 2 == 0 ? 1.0f : 3.0f;
    Tensor out = run(GetParam(), Pipeline{{resize(ResizeMode::Bilinear, 2, 2, true)}}, in);
    for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t w = 0; w < 2; ++w) EXPECT_NEAR(out.at<float>(0, 0, h, w), 2.0f, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Engines, EdgeCases, ::testing::Values("reference", "compiled"));

}  // namespace
}  // namespace toroid
