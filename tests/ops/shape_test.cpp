// Each op's shape rule (its OpDef's, through infer_shape): the result's dtype and shape on a
// few inputs, and the input-dependent errors, one line each; infer_shapes gives every step.
#include "ops/ops.h"

#include "op_test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

using test::error_of;
using test::GridFolder;
using test::parse_one;

constexpr DType U8 = DType::UInt8;
constexpr DType F32 = DType::Float32;

ShapeInfo shape_of(const std::string& op_json, DType dtype, const Dims& shape,
                   const std::filesystem::path& dir = std::filesystem::temp_directory_path()) {
    return infer_shape(parse_one(op_json, dir), ShapeInfo{dtype, shape});
}

std::string error_for(const std::string& op_json, DType dtype, const Dims& shape,
                      const std::filesystem::path& dir = std::filesystem::temp_directory_path()) {
    const Op op = parse_one(op_json, dir);
    return error_of([&] { infer_shape(op, ShapeInfo{dtype, shape}); });
}

TEST(OpShapes, Resize) {
    EXPECT_EQ(shape_of(R"({"op": "resize", "size": [5, 7]})", U8, {2, 3, 10, 12}), (ShapeInfo{U8, {2, 3, 5, 7}}));
    EXPECT_EQ(shape_of(R"({"op": "resize", "mode": "bilinear", "scale_factor": 0.5})", F32, {1, 1, 9, 13}),
              (ShapeInfo{F32, {1, 1, 4, 6}}));
    // torchvision's rule: the smaller edge (here H) becomes 4, the other in proportion.
    EXPECT_EQ(shape_of(R"({"op": "resize", "smaller_edge": 4})", U8, {1, 3, 10, 20}), (ShapeInfo{U8, {1, 3, 4, 8}}));
    EXPECT_EQ(shape_of(R"({"op": "resize", "smaller_edge": 4, "max_size": 6})", U8, {1, 3, 10, 20}),
              (ShapeInfo{U8, {1, 3, 3, 6}}));
    EXPECT_NE(error_for(R"({"op": "resize", "scale_factor": 0.05})", F32, {1, 1, 10, 10}).find("has a dimension <= 0"),
              std::string::npos);
    EXPECT_EQ(error_for(R"({"op": "resize", "size": [3000000000, 1]})", U8, {1, 1, 4, 4}),
              "resize: result (1, 1, 3000000000, 1) is too large (a dimension exceeds 2147483647)");
    EXPECT_EQ(error_for(R"({"op": "resize", "size": [2000000000, 2000000000]})", U8, {1, 1, 4, 4}),
              "resize: result (1, 1, 2000000000, 2000000000) is too large to allocate");
}

TEST(OpShapes, Affine) {
    EXPECT_EQ(shape_of(R"({"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]]})", F32, {1, 3, 5, 6}),
              (ShapeInfo{F32, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "size": [6, 8]})", F32, {2, 1, 5, 6}),
              (ShapeInfo{F32, {2, 1, 6, 8}}));
    // The torchvision convention samples uint8 in float32 and gives uint8 back.
    EXPECT_EQ(shape_of(R"({"op": "affine", "convention": "torchvision", "theta": [[1, 0, 0], [0, 1, 0]], "fill": 255})",
                       U8, {1, 3, 5, 6}),
              (ShapeInfo{U8, {1, 3, 5, 6}}));
    EXPECT_EQ(error_for(R"({"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]]})", U8, {1, 3, 5, 6}),
              R"(affine needs float32 input, got uint8 (add {"op": "convert", "dtype": "float32"} before it))");
    EXPECT_EQ(error_for(R"({"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "fill": [1, 2]})", F32, {1, 3, 5, 6}),
              "affine: 'fill' has 2 values but the input has 3 channels (give one value per channel, or one for all)");
    EXPECT_EQ(error_for(R"({"op": "affine", "convention": "torchvision", "theta": [[1, 0, 0], [0, 1, 0]], "fill": 300})",
                        U8, {1, 3, 5, 6}),
              "affine: fill 300 is outside 0..255, the range of the uint8 input");
}

TEST(OpShapes, GridSample) {
    const GridFolder grids(2, 3, 4);
    const std::string op = R"({"op": "grid_sample", "grid": "grid.npy"})";
    EXPECT_EQ(shape_of(op, F32, {2, 3, 10, 10}, grids.dir()), (ShapeInfo{F32, {2, 3, 3, 4}}));
    EXPECT_EQ(shape_of(op, F32, {2, 5, 1, 1}, grids.dir()), (ShapeInfo{F32, {2, 5, 3, 4}}));
    EXPECT_EQ(error_for(op, F32, {1, 3, 10, 10}, grids.dir()),
              "grid_sample: grid 'grid.npy' has batch 2 but the input has batch 1");
    EXPECT_EQ(error_for(op, U8, {2, 3, 10, 10}, grids.dir()),
              R"(grid_sample needs float32 input, got uint8 (add {"op": "convert", "dtype": "float32"} before it))");
}

TEST(OpShapes, FlipAndCrops) {
    EXPECT_EQ(shape_of(R"({"op": "flip", "dims": [2, 3]})", U8, {2, 3, 5, 7}), (ShapeInfo{U8, {2, 3, 5, 7}}));
    EXPECT_EQ(shape_of(R"({"op": "flip", "dims": []})", F32, {1, 1, 1, 1}), (ShapeInfo{F32, {1, 1, 1, 1}}));
    // A crop's size is its own, inside the image or not.
    EXPECT_EQ(shape_of(R"({"op": "crop", "top": 1, "left": 2, "height": 3, "width": 4})", U8, {1, 3, 10, 10}),
              (ShapeInfo{U8, {1, 3, 3, 4}}));
    EXPECT_EQ(shape_of(R"({"op": "crop", "top": -3, "left": 8, "height": 5, "width": 6})", F32, {1, 3, 4, 4}),
              (ShapeInfo{F32, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "center_crop", "size": 7})", U8, {2, 4, 4, 4}), (ShapeInfo{U8, {2, 4, 7, 7}}));
    EXPECT_EQ(shape_of(R"({"op": "center_crop", "size": [2, 3]})", U8, {1, 3, 10, 10}), (ShapeInfo{U8, {1, 3, 2, 3}}));
    EXPECT_EQ(error_for(R"({"op": "flip", "dims": [1]})", U8, {1, 0, 4, 4}),
              "flip: input has a zero-size dimension (1, 0, 4, 4)");
    EXPECT_EQ(error_for(R"({"op": "center_crop", "size": 3})", U8, {1, 3, 0, 4}),
              "center_crop: input has a zero-size dimension (1, 3, 0, 4)");
}

TEST(OpShapes, ConvertAndNormalize) {
    EXPECT_EQ(shape_of(R"({"op": "convert", "dtype": "float32", "scale": true})", U8, {1, 3, 5, 6}),
              (ShapeInfo{F32, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "convert", "dtype": "uint8"})", F32, {1, 3, 5, 6}), (ShapeInfo{U8, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "convert", "dtype": "uint8"})", U8, {1, 3, 5, 6}), (ShapeInfo{U8, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "normalize", "mean": [1, 2, 3], "std": 2})", F32, {1, 3, 5, 6}),
              (ShapeInfo{F32, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "normalize", "mean": 1, "std": 2})", F32, {1, 7, 5, 6}), (ShapeInfo{F32, {1, 7, 5, 6}}));
    EXPECT_EQ(error_for(R"({"op": "normalize", "mean": 1, "std": 2})", U8, {1, 3, 5, 6}),
              R"(normalize needs float32 input, got uint8 (add {"op": "convert", "dtype": "float32"} before it))");
    EXPECT_EQ(error_for(R"({"op": "normalize", "mean": [1, 2, 3], "std": 2})", F32, {1, 4, 5, 6}),
              "normalize: mean has 3 and std has 1 values, but the input has 4 channels (give one value per channel, "
              "or one for all)");
}

TEST(OpShapes, ColorOps) {
    EXPECT_EQ(shape_of(R"({"op": "invert"})", U8, {2, 4, 5, 6}), (ShapeInfo{U8, {2, 4, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "posterize", "bits": 2})", F32, {1, 3, 5, 6}), (ShapeInfo{F32, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "rgb_to_grayscale"})", U8, {2, 3, 5, 6}), (ShapeInfo{U8, {2, 1, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "rgb_to_grayscale", "num_output_channels": 3})", F32, {1, 1, 5, 6}),
              (ShapeInfo{F32, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "adjust_contrast", "factor": 2})", F32, {1, 1, 5, 6}), (ShapeInfo{F32, {1, 1, 5, 6}}));
    // torchvision's threshold check: at most the dtype's maximum (255, or 1.0 for float).
    EXPECT_EQ(shape_of(R"({"op": "solarize", "threshold": 255})", U8, {1, 3, 5, 6}), (ShapeInfo{U8, {1, 3, 5, 6}}));
    EXPECT_EQ(error_for(R"({"op": "solarize", "threshold": 255.5})", U8, {1, 3, 5, 6}),
              "solarize: threshold should be less or equal the maximum value of the dtype (255 for uint8), but got 255.5");
    EXPECT_EQ(error_for(R"({"op": "solarize", "threshold": 2})", F32, {1, 3, 5, 6}),
              "solarize: threshold should be less or equal the maximum value of the dtype (1 for float32), but got 2");
    EXPECT_EQ(error_for(R"({"op": "adjust_saturation", "factor": 2})", U8, {1, 4, 5, 6}),
              "adjust_saturation: input image tensor permitted channel values are 1 or 3, but found 4");
    EXPECT_EQ(error_for(R"({"op": "rgb_to_grayscale"})", U8, {1, 2, 5, 6}),
              "rgb_to_grayscale: the input must have 1 or 3 channels (RGB), but found 2");
}

// A pipeline of no ops refuses a zero-size input as every op does (it ran a copy kernel over
// an empty extent, which divided by zero).
TEST(OpShapes, EmptyPipelineRefusesAZeroSizeInput) {
    const Pipeline none;
    for (const Dims& d : {Dims{1, 4, 0, 4}, Dims{1, 0, 3, 3}, Dims{0, 3, 2, 2}}) {
        EXPECT_EQ(error_of([&] { infer_shape(none, ShapeInfo{U8, d}); }).rfind("pipeline: input has a zero-size", 0), 0u);
        EXPECT_EQ(error_of([&] { infer_shapes(none, ShapeInfo{F32, d}); }).rfind("pipeline: input has a zero-size", 0),
                  0u);
    }
    EXPECT_EQ(infer_shape(none, ShapeInfo{U8, {1, 3, 2, 2}}), (ShapeInfo{U8, {1, 3, 2, 2}}));
}

TEST(OpShapes, InferShapesGivesEveryStep) {
    const Pipeline p = parse_pipeline(R"([{"op": "resize", "size": [4, 6]}, {"op": "center_crop", "size": 3},
        {"op": "convert", "dtype": "float32", "scale": true}, {"op": "normalize", "mean": 0.5, "std": 0.25}])",
                                      ".");
    const ShapeInfo in{U8, {1, 3, 10, 12}};
    const std::vector<ShapeInfo> steps = infer_shapes(p, in);
    ASSERT_EQ(steps.size(), 5u);
    EXPECT_EQ(steps[0], in);
    EXPECT_EQ(steps[1], (ShapeInfo{U8, {1, 3, 4, 6}}));
    EXPECT_EQ(steps[2], (ShapeInfo{U8, {1, 3, 3, 3}}));
    EXPECT_EQ(steps[3], (ShapeInfo{F32, {1, 3, 3, 3}}));
    EXPECT_EQ(steps[4], (ShapeInfo{F32, {1, 3, 3, 3}}));
    EXPECT_EQ(infer_shape(p, in), steps.back());
    EXPECT_EQ(infer_shapes(Pipeline{}, in), std::vector<ShapeInfo>{in});
    // The first op that rejects its input stops the inference, with its message.
    const Pipeline bad = parse_pipeline(R"([{"op": "flip", "dims": [3]}, {"op": "normalize", "mean": 0, "std": 1}])", ".");
    EXPECT_EQ(error_of([&] { infer_shapes(bad, in); }),
              R"(normalize needs float32 input, got uint8 (add {"op": "convert", "dtype": "float32"} before it))");
}

}  // namespace
}  // namespace toroid
