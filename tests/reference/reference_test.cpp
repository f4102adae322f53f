// The reference engine's dispatch: every op kind has a reference, apply() runs the one of
// the op's kind, and run() checks the whole pipeline before computing anything.
#include "reference/reference.h"

#include "../engine/engine_test_support.h"
#include "../ops/op_test_support.h"
#include "ops/registry.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

namespace toroid {
namespace {

using test::error_of;
using test::GridFolder;
using test::identical;
using test::parse_one;
using test::random_image;

TEST(ReferenceDispatch, EveryKindHasAReference) {
    for (std::size_t k = 0; k < kOpKinds; ++k)
        EXPECT_TRUE(reference::has_reference(static_cast<OpKind>(k))) << op_def(static_cast<OpKind>(k)).name();
    EXPECT_FALSE(reference::has_reference(static_cast<OpKind>(kOpKinds)));
}

TEST(ReferenceDispatch, ApplyRunsTheReferenceOfTheOpsKind) {
    const GridFolder grids(1, 3, 4);
    const Tensor u8 = random_image(DType::UInt8, {1, 3, 6, 7}, Layout::Contiguous, 11);
    const Tensor f32 = random_image(DType::Float32, {1, 3, 6, 7}, Layout::ChannelsLast, 12);
    struct Case {
        std::string json;
        const Tensor* in;
        std::function<Tensor(const Op&, const Tensor&)> direct;
    };
    const Case cases[] = {
        {R"({"op": "resize", "mode": "bilinear", "size": [4, 5]})", &u8,
         [](const Op& op, const Tensor& x) { return reference::resize(std::get<ResizeOp>(op), x); }},
        {R"({"op": "affine", "theta": [[0.9, 0.1, 0], [0, 1.1, 0.1]]})", &f32,
         [](const Op& op, const Tensor& x) { return reference::affine(std::get<AffineOp>(op), x); }},
        {R"({"op": "grid_sample", "grid": "grid.npy"})", &f32,
         [](const Op& op, const Tensor& x) { return reference::grid_sample(std::get<GridSampleOp>(op), x); }},
        {R"({"op": "flip", "dims": [3]})", &u8,
         [](const Op& op, const Tensor& x) { return reference::flip(std::get<FlipOp>(op), x); }},
        {R"({"op": "center_crop", "size": [3, 8]})", &u8,
         [](const Op& op, const Tensor& x) { return reference::crop(std::get<CropOp>(op), x); }},
        {R"({"op": "convert", "dtype": "float32", "scale": true})", &u8,
         [](const Op& op, const Tensor& x) { return reference::convert(std::get<ConvertOp>(op), x); }},
        {R"({"op": "normalize", "mean": [0.1, 0.2, 0.3], "std": 0.5})", &f32,
         [](const Op& op, const Tensor& x) { return reference::normalize(std::get<NormalizeOp>(op), x); }},
        {R"({"op": "perspective", "coefficients": [1, 0.1, -1, 0.05, 0.9, 1, 0.01, -0.005]})", &u8,
         [](const Op& op, const Tensor& x) { return reference::perspective(std::get<PerspectiveOp>(op), x); }},
        {R"({"op": "adjust_contrast", "factor": 0.5})", &u8,
         [](const Op& op, const Tensor& x) { return reference::color(std::get<ColorOp>(op), x); }},
        {R"({"op": "pad", "padding": [1, 2, 3, 4], "mode": "reflect"})", &u8,
         [](const Op& op, const Tensor& x) { return reference::pad(std::get<PadOp>(op), x); }},
        {R"({"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": [-2, 7, 9]})", &f32,
         [](const Op& op, const Tensor& x) { return reference::erase(std::get<EraseOp>(op), x); }},
        {R"({"op": "gaussian_blur", "kernel_size": [3, 5], "sigma": 1.2})", &u8,
         [](const Op& op, const Tensor& x) { return reference::blur(std::get<BlurOp>(op), x); }},
    };
    std::set<std::size_t> kinds;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.json);
        const Op op = parse_one(c.json, grids.dir());
        kinds.insert(op.index());
        const Tensor got = reference::apply(op, *c.in, 2);
        EXPECT_TRUE(identical(got, c.direct(op, *c.in)));
        const ShapeInfo want = infer_shape(op, ShapeInfo{c.in->dtype(), c.in->shape()});
        EXPECT_EQ(got.dtype(), want.dtype);
        EXPECT_EQ(got.shape(), want.shape);
        // Every case changes its input, so a dispatch to the wrong function (or none) shows.
        EXPECT_FALSE(identical(got, *c.in));
    }
    EXPECT_EQ(kinds.size(), kOpKinds);
}

TEST(ReferenceDispatch, RunChecksThePipelineFirst) {
    const Tensor u8 = random_image(DType::UInt8, {1, 3, 6, 7}, Layout::Contiguous, 13);
    const Pipeline p =
        parse_pipeline(R"([{"op": "resize", "size": [4, 4]}, {"op": "normalize", "mean": 0, "std": 1}])", ".");
    EXPECT_EQ(error_of([&] { reference::run(p, u8); }),
              R"(normalize needs float input (float32, float16 or bfloat16), got uint8 (add {"op": "convert", )"
              R"("dtype": "float32"} before it))");
    const Pipeline ok = parse_pipeline(R"([{"op": "flip", "dims": [2]}, {"op": "flip", "dims": [2]}])", ".");
    EXPECT_TRUE(identical(reference::run(ok, u8), u8));
}

}  // namespace
}  // namespace toroid
