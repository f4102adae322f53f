// The affine op's torchvision convention and its fill: the compiled engines against the
// reference bit for bit (uint8 and float32, both grid sums, fills, layouts, output sizes),
// properties that follow from torchvision's definition (an integer shift moves pixels, a
// warp that leaves the image gives the fill), and the JSON fields with their errors.
#include "engine_test_support.h"

#include "core/error.h"
#include "engine/engine.h"
#include "ops/grid_math.h"
#include "ops/pipeline_json.h"
#include "runtime/cuda/cuda.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace toroid {
namespace {

Tensor patterned(DType dt, const Dims& shape, Layout layout = Layout::Contiguous, std::uint32_t seed = 7) {
    Tensor t = Tensor::empty(dt, shape, layout);
    std::uint32_t x = seed;
    for (std::int64_t n = 0; n < shape[0]; ++n)
        for (std::int64_t c = 0; c < shape[1]; ++c)
            for (std::int64_t h = 0; h < shape[2]; ++h)
                for (std::int64_t w = 0; w < shape[3]; ++w) {
                    x = x * 1664525u + 1013904223u;
                    if (dt == DType::UInt8) t.at<std::uint8_t>(n, c, h, w) = static_cast<std::uint8_t>(x >> 24);
                    else t.at<float>(n, c, h, w) = static_cast<float>(x >> 8) / 16777216.0f * 255.0f;
                }
    return t;
}

double value(const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return t.dtype() == DType::UInt8 ? t.at<std::uint8_t>(n, c, h, w) : t.at<float>(n, c, h, w);
}

Pipeline parse(const std::string& json) { return parse_pipeline(json, "."); }

Tensor run(const std::string& engine, const Pipeline& p, const Tensor& in) {
    auto e = make_engine(engine, EngineOptions{});
    return e->prepare(p, in.spec())->run(in);
}

// Bit-equal (float32 compared by bits, so that -0 and 0 or two NaNs are told apart too), or
// float32 within `float_tol` when it is set (the cuda engine: within rounding).
void expect_identical(const Tensor& a, const Tensor& b, const std::string& what, double float_tol = -1) {
    ASSERT_EQ(a.shape(), b.shape()) << what;
    ASSERT_EQ(a.dtype(), b.dtype()) << what;
    const Dims& s = a.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    if (a.dtype() == DType::UInt8) {
                        ASSERT_EQ(a.at<std::uint8_t>(n, c, h, w), b.at<std::uint8_t>(n, c, h, w))
                            << what << " at (" << n << "," << c << "," << h << "," << w << ")";
                    } else if (float_tol >= 0) {
                        ASSERT_LE(std::fabs(a.at<float>(n, c, h, w) - b.at<float>(n, c, h, w)), float_tol)
                            << what << " at (" << n << "," << c << "," << h << "," << w << ")";
                    } else {
                        std::uint32_t x = 0, y = 0;
                        std::memcpy(&x, &a.at<float>(n, c, h, w), 4);
                        std::memcpy(&y, &b.at<float>(n, c, h, w), 4);
                        ASSERT_EQ(x, y) << what << " at (" << n << "," << c << "," << h << "," << w << "): "
                                        << a.at<float>(n, c, h, w) << " vs " << b.at<float>(n, c, h, w);
                    }
                }
}

// torchvision's inverse matrix for a rotation by `deg` degrees, scale `s`, translation (tx, ty).
AffineOp rotation(double deg, double s, double tx, double ty, GridMode mode) {
    const double r = deg * 3.14159265358979323846 / 180.0;
    AffineOp a;
    a.convention = AffineConvention::Torchvision;
    a.mode = mode;
    const double m0 = std::cos(r) / s, m1 = std::sin(r) / s, m3 = -std::sin(r) / s, m4 = std::cos(r) / s;
    a.theta = {{{m0, m1, -m0 * tx - m1 * ty}, {m3, m4, -m3 * tx - m4 * ty}}};
    return a;
}

class TorchvisionAffine : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (GetParam() == "cuda" && !test::cuda_unavailable().empty()) GTEST_SKIP() << "no CUDA device: " << test::cuda_unavailable();
    }
    // The CPU engines agree with the reference bit for bit; CUDA float32 within rounding.
    double float_tol() const { return GetParam() == "cuda" ? 1e-4 : -1; }
};

TEST_P(TorchvisionAffine, CompiledMatchesReferenceBitForBit) {
    const std::vector<std::vector<double>> fills = {{}, {0.0}, {17.5}, {3.0, 250.0, 128.25}};
    int cases = 0;
    for (DType dt : {DType::UInt8, DType::Float32})
        for (GridMode mode : {GridMode::Nearest, GridMode::Bilinear})
            for (const auto& fill : fills)
                for (int fma = 0; fma < 4; ++fma) {
                    // 5 x 7 = 35 pixels: under bmm's small-matrix size, the rounded sums either way.
                    for (Dims shape : {Dims{2, 3, 29, 41}, Dims{1, 3, 5, 7}}) {
                        AffineOp a = rotation(33.0 + cases, 0.83, 2.0, -3.0, mode);
                        a.fill = fill;
                        a.grid_fma = fma & 1;
                        a.sample_fma = fma & 2;
                        const Layout layout = cases % 2 ? Layout::ChannelsLast : Layout::Contiguous;
                        const Tensor in = patterned(dt, shape, layout, static_cast<std::uint32_t>(cases + 1));
                        const Pipeline p{{a}};
                        const Tensor want = run("reference", p, in);
                        ASSERT_EQ(want.dtype(), dt);
                        expect_identical(run(GetParam(), p, in), want,
                                         fmt::format("{} {} fill {} fma {} {}x{}", dtype_name(dt), grid_mode_name(mode),
                                                     fill.size(), fma, shape[2], shape[3]),
                                         float_tol());
                        ++cases;
                    }
                }
    EXPECT_EQ(cases, 128);
}

TEST_P(TorchvisionAffine, OutputSizeAndOtherChannelCounts) {
    for (std::int64_t c : {1, 5}) {
        AffineOp a = rotation(-71.0, 1.3, 0.5, 4.0, GridMode::Bilinear);
        a.size = std::array<std::int64_t, 2>{23, 37};
        a.fill = {40.0};
        const Tensor in = patterned(DType::UInt8, {1, c, 31, 19});
        const Pipeline p{{a}};
        const Tensor want = run("reference", p, in);
        ASSERT_EQ(want.shape(), (Dims{1, c, 23, 37}));
        expect_identical(run(GetParam(), p, in), want, fmt::format("{} channels", c));
    }
}

TEST_P(TorchvisionAffine, IntegerShiftMovesPixelsAndFillsTheRest) {
    // The inverse matrix [[1, 0, 3], [0, 1, -2]] samples (x + 3, y - 2): the image moves left
    // by 3 and down by 2, and what comes in from outside is the fill.
    for (GridMode mode : {GridMode::Nearest, GridMode::Bilinear}) {
        AffineOp a;
        a.convention = AffineConvention::Torchvision;
        a.mode = mode;
        a.theta = {{{1.0, 0.0, 3.0}, {0.0, 1.0, -2.0}}};
        a.fill = {9.0, 99.0, 199.0};
        const Tensor in = patterned(DType::UInt8, {1, 3, 16, 24});
        const Tensor out = run(GetParam(), Pipeline{{a}}, in);
        for (std::int64_t c = 0; c < 3; ++c)
            for (std::int64_t h = 0; h < 16; ++h)
                for (std::int64_t w = 0; w < 24; ++w) {
                    const std::int64_t sh = h - 2, sw = w + 3;
                    const bool inside = sh >= 0 && sw < 24;
                    ASSERT_EQ(value(out, 0, c, h, w), inside ? value(in, 0, c, sh, sw) : a.fill[static_cast<std::size_t>(c)])
                        << grid_mode_name(mode) << " at (" << c << "," << h << "," << w << ")";
                }
    }
}

TEST_P(TorchvisionAffine, FillWithoutAFillIsZeroAndFloatKeepsItsType) {
    // A warp far outside the image: every pixel is the fill (bilinear: (0 - f) * 0 + f = f),
    // or 0 without one.
    for (DType dt : {DType::UInt8, DType::Float32})
        for (GridMode mode : {GridMode::Nearest, GridMode::Bilinear})
            for (bool with_fill : {false, true}) {
                AffineOp a;
                a.convention = AffineConvention::Torchvision;
                a.mode = mode;
                a.theta = {{{1.0, 0.0, 1.0e4}, {0.0, 1.0, 0.0}}};
                if (with_fill) a.fill = {77.0};
                const Tensor out = run(GetParam(), Pipeline{{a}}, patterned(dt, {1, 2, 6, 9}));
                ASSERT_EQ(out.dtype(), dt);
                for (std::int64_t c = 0; c < 2; ++c)
                    for (std::int64_t h = 0; h < 6; ++h)
                        for (std::int64_t w = 0; w < 9; ++w) ASSERT_EQ(value(out, 0, c, h, w), with_fill ? 77.0 : 0.0);
            }
}

// Named <engine>_engine, so that the GPU machine's filter (*cuda_*) picks the cuda ones.
INSTANTIATE_TEST_SUITE_P(Engines, TorchvisionAffine, ::testing::Values("reference", "compiled", "specialized", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param + "_engine"; });

TEST(TorchvisionAffineMath, GridFollowsTorchvisionsAffineGrid) {
    // Base coordinates are the pixel centres relative to the image's centre.
    EXPECT_EQ(grid::pixel_base_coord(0, 5), -2.0f);
    EXPECT_EQ(grid::pixel_base_coord(4, 5), 2.0f);
    EXPECT_EQ(grid::pixel_base_coord(0, 4), -1.5f);
    EXPECT_EQ(grid::pixel_base_coord(0, 1), 0.0f);
    // theta / (w/2, h/2), transposed.
    const auto r = grid::rescaled_theta({{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}}, 10, 8);
    EXPECT_EQ(r[0][0], 1.0f / 4.0f);
    EXPECT_EQ(r[1][0], 2.0f / 4.0f);
    EXPECT_EQ(r[2][1], 6.0f / 5.0f);
    // bmm's small-matrix loop: 6 * h * w < 400.
    EXPECT_FALSE(grid::grid_product_fused(true, 6, 11));
    EXPECT_TRUE(grid::grid_product_fused(true, 1, 67));
    EXPECT_FALSE(grid::grid_product_fused(false, 100, 100));
    // The fused and rounded sums differ where the product by needs rounding.
    const grid::Rescaled32 m{{{0.1f / 3.7f, 0.0f}, {0.7f / 3.7f, 0.0f}, {0.013f / 3.7f, 0.0f}}};
    int differ = 0;
    for (int i = 0; i < 12; ++i)
        for (int j = 0; j < 12; ++j) {
            const float bx = static_cast<float>(i) - 5.5f, by = static_cast<float>(j) - 5.5f;
            const float fused = grid::pixel_grid_point(m, bx, by, true)[0];
            const float rounded = grid::pixel_grid_point(m, bx, by, false)[0];
            EXPECT_EQ(rounded, (bx * m[0][0] + by * m[1][0]) + m[2][0]);
            EXPECT_EQ(fused, std::fma(by, m[1][0], bx * m[0][0]) + m[2][0]);
            differ += fused != rounded;
        }
    EXPECT_GT(differ, 0);
}

TEST(TorchvisionAffineJson, FieldsRoundTrip) {
    const Pipeline p = parse(
        R"([{"op": "affine", "theta": [[1, 0.5, 2], [0, 1, -3]], "mode": "nearest", "convention": "torchvision",
             "grid_fma": false, "fill": [1, 2, 3]},
            {"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "fill": 5}])");
    const auto& a = std::get<AffineOp>(p.ops[0]);
    EXPECT_EQ(a.convention, AffineConvention::Torchvision);
    EXPECT_FALSE(a.grid_fma);
    EXPECT_TRUE(a.sample_fma);
    EXPECT_EQ(a.fill, (std::vector<double>{1, 2, 3}));
    const auto& b = std::get<AffineOp>(p.ops[1]);
    EXPECT_EQ(b.convention, AffineConvention::PyTorch);
    EXPECT_EQ(b.fill, (std::vector<double>{5}));
    const Pipeline again = parse(pipeline_to_json(p));
    EXPECT_EQ(pipeline_to_json(again), pipeline_to_json(p));
    EXPECT_EQ(std::get<AffineOp>(again.ops[0]).fill, a.fill);
    EXPECT_FALSE(std::get<AffineOp>(again.ops[0]).grid_fma);
    EXPECT_TRUE(std::get<AffineOp>(again.ops[0]).sample_fma);
}

void expect_error(const std::string& json, const std::string& part) {
    try {
        parse(json);
        ADD_FAILURE() << "no error for " << json;
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}

TEST(TorchvisionAffineJson, RejectsWhatTorchvisionCannotDo) {
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "convention": "torchvision", "mode": "bicubic"}])",
                 "not bicubic");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "convention": "torchvision",
                      "padding_mode": "border"}])",
                 "pads with zeros");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "convention": "torchvision",
                      "align_corners": true}])",
                 "align_corners");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "grid_fma": true}])", "'grid_fma' needs");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "sample_fma": false}])", "'sample_fma' needs");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "fill": 1, "padding_mode": "reflection"}])",
                 "'fill' needs padding_mode 'zeros'");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "fill": 1, "mode": "bicubic"}])",
                 "'fill' works with nearest and bilinear");
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "convention": "sideways"}])",
                 "unknown convention");
}

TEST(TorchvisionAffineJson, InputDependentChecks) {
    auto shape = [](const std::string& json, DType dt, std::int64_t c) {
        return infer_shape(parse(json), ShapeInfo{dt, {1, c, 8, 8}});
    };
    const std::string tv = R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "convention": "torchvision")";
    EXPECT_EQ(shape(tv + "}]", DType::UInt8, 3).dtype, DType::UInt8);
    EXPECT_EQ(shape(tv + R"(, "fill": [1, 2, 3]}])", DType::Float32, 3).dtype, DType::Float32);
    EXPECT_THROW(shape(tv + R"(, "fill": [1, 2]}])", DType::UInt8, 3), Error);
    EXPECT_THROW(shape(tv + R"(, "fill": 256}])", DType::UInt8, 3), Error);
    EXPECT_THROW(shape(tv + R"(, "fill": -1}])", DType::UInt8, 3), Error);
    EXPECT_NO_THROW(shape(tv + R"(, "fill": -1}])", DType::Float32, 3));
    // The PyTorch convention (F.affine_grid + grid_sample) still takes float32 only.
    EXPECT_THROW(shape(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]]}])", DType::UInt8, 3), Error);
}

}  // namespace
}  // namespace toroid
