// The perspective op (torchvision's perspective): the compiled engines against the
// reference bit for bit (uint8 and float32, nearest and bilinear, fills, both grid sums,
// layouts), properties that follow from torchvision's definition (identity coefficients give
// the image back; a translation moves pixels and fills the rest), the grid's arithmetic, and
// the JSON fields with their errors.
#include "engine_test_support.h"

#include "core/error.h"
#include "engine/engine.h"
#include "ops/grid_math.h"
#include "ops/pipeline_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace toroid {
namespace {

using test::random_image;

Tensor run(const std::string& engine, const Pipeline& p, const Tensor& in) {
    return make_engine(engine, EngineOptions{})->prepare(p, in.spec())->run(in);
}

// uint8 equal; float32 equal by bits (CPU engines) or within `tol` (CUDA: its rounding).
void expect_same(const Tensor& a, const Tensor& b, const std::string& what, double tol = -1) {
    ASSERT_EQ(a.shape(), b.shape()) << what;
    ASSERT_EQ(a.dtype(), b.dtype()) << what;
    const Dims& s = a.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    if (a.dtype() == DType::UInt8) {
                        ASSERT_EQ(a.at<std::uint8_t>(n, c, h, w), b.at<std::uint8_t>(n, c, h, w))
                            << what << " at " << n << "," << c << "," << h << "," << w;
                    } else if (tol >= 0) {
                        ASSERT_LE(std::fabs(a.at<float>(n, c, h, w) - b.at<float>(n, c, h, w)), tol) << what;
                    } else {
                        std::uint32_t x = 0, y = 0;
                        std::memcpy(&x, &a.at<float>(n, c, h, w), 4);
                        std::memcpy(&y, &b.at<float>(n, c, h, w), 4);
                        ASSERT_EQ(x, y) << what << " at " << n << "," << c << "," << h << "," << w;
                    }
                }
}

// Coefficients of a mild keystone: what torchvision's _get_perspective_coeffs gives for
// corners moved by a few pixels (float32 values).
PerspectiveOp keystone(GridMode mode, int k) {
    PerspectiveOp p;
    p.mode = mode;
    const double c[8] = {1.08, 0.07, -2.5, -0.03, 0.95, 1.75, 0.0021 + 0.0003 * k, -0.0017};
    for (int i = 0; i < 8; ++i) p.coefficients[static_cast<std::size_t>(i)] = static_cast<float>(c[i]);
    return p;
}

class Perspective : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (GetParam() == "cuda" && !test::cuda_unavailable().empty())
            GTEST_SKIP() << "no CUDA device: " << test::cuda_unavailable();
    }
    double tol() const { return GetParam() == "cuda" ? 1e-3 : -1; }
};

TEST_P(Perspective, CompiledMatchesReferenceBitForBit) {
    const std::vector<std::vector<double>> fills = {{}, {0.0}, {200.0, 3.5, 99.0}};
    int cases = 0;
    for (DType dt : {DType::UInt8, DType::Float32})
        for (GridMode mode : {GridMode::Nearest, GridMode::Bilinear})
            for (const auto& fill : fills)
                for (int fma = 0; fma < 4; ++fma)
                    // 4 x 6 = 24 pixels: under bmm's small-matrix size, the rounded sums either way.
                    for (Dims shape : {Dims{2, 3, 27, 38}, Dims{1, 3, 4, 6}}) {
                        PerspectiveOp p = keystone(mode, cases);
                        p.fill = fill;
                        p.grid_fma = fma & 1;
                        p.sample_fma = fma & 2;
                        const Layout layout = cases % 2 ? Layout::ChannelsLast : Layout::Contiguous;
                        const Tensor in = random_image(dt, shape, layout, static_cast<std::uint64_t>(cases + 3));
                        const Pipeline pipe{{p}};
                        const Tensor want = run("reference", pipe, in);
                        ASSERT_EQ(want.dtype(), dt);
                        ASSERT_EQ(want.shape(), shape);
                        expect_same(run(GetParam(), pipe, in), want,
                                    fmt::format("{} {} fill {} fma {} {}x{}", dtype_name(dt), grid_mode_name(mode),
                                                fill.size(), fma, shape[2], shape[3]),
                                    tol());
                        ++cases;
                    }
    EXPECT_EQ(cases, 96);
}

TEST_P(Perspective, IdentityGivesTheImageBackAndATranslationMovesIt) {
    for (DType dt : {DType::UInt8, DType::Float32}) {
        const Tensor in = random_image(dt, {1, 3, 13, 21}, Layout::Contiguous, 5);
        PerspectiveOp id;
        id.mode = GridMode::Nearest;
        id.coefficients = {1, 0, 0, 0, 1, 0, 0, 0};
        expect_same(run(GetParam(), Pipeline{{id}}, in), in, "identity");
        // c = 2: output column x samples input column x + 2; the last two columns are the fill.
        PerspectiveOp shift = id;
        shift.coefficients[2] = 2;
        shift.fill = {7.0};
        const Tensor out = run(GetParam(), Pipeline{{shift}}, in);
        for (std::int64_t c = 0; c < 3; ++c)
            for (std::int64_t y = 0; y < 13; ++y)
                for (std::int64_t x = 0; x < 21; ++x) {
                    const double got = dt == DType::UInt8 ? out.at<std::uint8_t>(0, c, y, x) : out.at<float>(0, c, y, x);
                    const double want = x + 2 < 21 ? (dt == DType::UInt8 ? in.at<std::uint8_t>(0, c, y, x + 2)
                                                                         : in.at<float>(0, c, y, x + 2))
                                                   : 7.0;
                    ASSERT_EQ(got, want) << c << "," << y << "," << x;
                }
    }
}

INSTANTIATE_TEST_SUITE_P(Engines, Perspective, ::testing::Values("reference", "compiled", "specialized", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param + "_engine"; });

TEST(PerspectiveMath, GridFollowsTorchvisionsPerspectiveGrid) {
    EXPECT_EQ(grid::perspective_base_coord(0), 0.5f);
    EXPECT_EQ(grid::perspective_base_coord(9), 9.5f);
    const grid::Perspective32 p = grid::perspective_factors({1, 2, 3, 4, 5, 6, 0.5, 0.25}, 8, 10);
    EXPECT_EQ(p.numerator[0][0], 1.0f / 5.0f);  // a / (w / 2)
    EXPECT_EQ(p.numerator[2][1], 6.0f / 4.0f);  // f / (h / 2)
    EXPECT_EQ(p.denominator[2], 1.0f);
    // (num / den) - 1, the products summed in k order.
    const auto g = grid::perspective_grid_point(p, 2.5f, 1.5f, false);
    const float den = (2.5f * 0.5f + 1.5f * 0.25f) + 1.0f;
    EXPECT_EQ(g[0], ((2.5f * p.numerator[0][0] + 1.5f * p.numerator[1][0]) + p.numerator[2][0]) / den - 1.0f);
}

TEST(PerspectiveJson, FieldsAndErrors) {
    auto error_of = [](const std::string& json) -> std::string {
        try {
            parse_pipeline(json, ".");
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(error_of(R"([{"op": "perspective"}])").find("missing field 'coefficients'"), std::string::npos);
    EXPECT_NE(error_of(R"([{"op": "perspective", "coefficients": [1, 2, 3]}])").find("8 numbers"), std::string::npos);
    EXPECT_NE(error_of(R"([{"op": "perspective", "coefficients": [1, 0, 0, 0, 1, 0, 0, 0], "mode": "bicubic"}])")
                  .find("nearest and bilinear"),
              std::string::npos);
    const Pipeline p = parse_pipeline(R"([{"op": "perspective", "coefficients": [1, 0, 0, 0, 1, 0, 0, 0],
                                           "fill": [1, 2]}])",
                                      ".");
    try {
        infer_shape(p, ShapeInfo{DType::UInt8, {1, 3, 8, 8}});
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'fill' has 2 values but the input has 3 channels"), std::string::npos);
    }
    EXPECT_THROW(infer_shape(parse_pipeline(R"([{"op": "perspective", "coefficients": [1, 0, 0, 0, 1, 0, 0, 0],
                                                "fill": 300}])",
                                            "."),
                             ShapeInfo{DType::UInt8, {1, 3, 8, 8}}),
                 Error);
}

}  // namespace
}  // namespace toroid
