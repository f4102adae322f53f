// Each op's shape rule (its OpDef's, through infer_shape): the result's dtype and shape on a
// few inputs, and the input-dependent errors, one line each; infer_shapes gives every step.
#include "ops/ops.h"

#include "op_test_support.h"
#include "ops/registry.h"

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
              R"(normalize needs float input (float32, float16 or bfloat16), got uint8 (add {"op": "convert", )"
              R"("dtype": "float32"} before it))");
    EXPECT_EQ(error_for(R"({"op": "normalize", "mean": [1, 2, 3], "std": 2})", F32, {1, 4, 5, 6}),
              "normalize: mean has 3 and std has 1 values, but the input has 4 channels (give one value per channel, "
              "or one for all)");
}

// The type table (registry.h NarrowTypes): uint16, float16 and bfloat16 keep their dtype
// through the ops that take them; the others refuse them in one line.
TEST(OpShapes, NarrowDTypesFollowTheTypeTable) {
    for (const DType t : {DType::UInt16, DType::Float16, DType::BFloat16}) {
        SCOPED_TRACE(dtype_name(t));
        EXPECT_EQ(shape_of(R"({"op": "flip", "dims": [-1]})", t, {1, 3, 5, 6}), (ShapeInfo{t, {1, 3, 5, 6}}));
        EXPECT_EQ(shape_of(R"({"op": "resize", "mode": "bicubic", "antialias": true, "size": [3, 4]})", t, {1, 3, 5, 6}),
                  (ShapeInfo{t, {1, 3, 3, 4}}));
        EXPECT_EQ(shape_of(R"({"op": "resize", "mode": "nearest", "size": [9, 2]})", t, {1, 3, 5, 6}),
                  (ShapeInfo{t, {1, 3, 9, 2}}));
        EXPECT_EQ(shape_of(R"({"op": "pad", "padding": 2, "fill": 3})", t, {1, 3, 5, 6}), (ShapeInfo{t, {1, 3, 9, 10}}));
        EXPECT_EQ(shape_of(R"({"op": "convert", "dtype": "uint8", "scale": true})", t, {1, 3, 5, 6}),
                  (ShapeInfo{U8, {1, 3, 5, 6}}));
        EXPECT_EQ(error_for(R"({"op": "invert"})", t, {1, 3, 5, 6}),
                  std::string("invert: ") + std::string(dtype_name(t)) +
                      R"( images are not supported yet (add {"op": "convert", )"
                      R"("dtype": "float32"} before it))");
    }
    // uint16 blurs and warps as torchvision does integer images (float32, rounded back); the
    // 16-bit floats are refused there, and so is the PyTorch convention of affine.
    EXPECT_EQ(shape_of(R"({"op": "gaussian_blur", "kernel_size": 3})", DType::UInt16, {1, 3, 5, 6}),
              (ShapeInfo{DType::UInt16, {1, 3, 5, 6}}));
    EXPECT_NE(error_for(R"({"op": "gaussian_blur", "kernel_size": 3})", DType::Float16, {1, 3, 5, 6}), "");
    EXPECT_NE(error_for(R"({"op": "adjust_sharpness", "factor": 2})", DType::UInt16, {1, 3, 5, 6}), "");
    EXPECT_NE(error_for(R"({"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]]})", DType::UInt16, {1, 3, 5, 6}), "");
    // F.grid_sample takes the 16-bit floats (computed in float32, rounded once), no integers.
    for (const DType t : {DType::Float16, DType::BFloat16})
        EXPECT_EQ(narrow_types(GridSampleOp{}, t), NarrowTypes::ViaFloat32);
    EXPECT_EQ(narrow_types(GridSampleOp{}, DType::UInt16), NarrowTypes::Refused);
    EXPECT_EQ(shape_of(R"({"op": "normalize", "mean": 0.5, "std": 0.25})", DType::Float16, {1, 3, 5, 6}),
              (ShapeInfo{DType::Float16, {1, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "convert", "dtype": "bfloat16"})", U8, {1, 3, 5, 6}),
              (ShapeInfo{DType::BFloat16, {1, 3, 5, 6}}));
    EXPECT_EQ(error_for(R"({"op": "normalize", "mean": 0.5, "std": 0.25})", DType::UInt16, {1, 3, 5, 6}),
              R"(normalize needs float input (float32, float16 or bfloat16), got uint16 (add {"op": "convert", )"
              R"("dtype": "float32"} before it))");
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": 1, "fill": 70000})", DType::Float16, {1, 3, 5, 6}),
              "pad: fill 70000 cannot be converted to float16 without overflow");
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
    // adjust_gamma takes any channel count; adjust_hue and autocontrast 1 or 3.
    EXPECT_EQ(shape_of(R"({"op": "adjust_gamma", "gamma": 2})", U8, {2, 4, 5, 6}), (ShapeInfo{U8, {2, 4, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "adjust_hue", "factor": 0.1})", F32, {1, 1, 5, 6}), (ShapeInfo{F32, {1, 1, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "autocontrast"})", U8, {3, 3, 5, 6}), (ShapeInfo{U8, {3, 3, 5, 6}}));
    EXPECT_EQ(shape_of(R"({"op": "equalize"})", F32, {1, 2, 5, 6}), (ShapeInfo{F32, {1, 2, 5, 6}}));  // any channels
    EXPECT_EQ(error_for(R"({"op": "adjust_hue", "factor": 0.1})", U8, {1, 4, 5, 6}),
              "adjust_hue: input image tensor permitted channel values are 1 or 3, but found 4");
    EXPECT_EQ(error_for(R"({"op": "autocontrast"})", F32, {1, 2, 5, 6}),
              "autocontrast: input image tensor permitted channel values are 1 or 3, but found 2");
}

TEST(OpShapes, Pad) {
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": [1, 2, 3, 4]})", U8, {2, 3, 5, 7}), (ShapeInfo{U8, {2, 3, 11, 11}}));
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": [-1, 2, -3, -4], "mode": "edge"})", F32, {1, 1, 5, 7}),
              (ShapeInfo{F32, {1, 1, 3, 3}}));
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": [-4, 0, -3, 0]})", U8, {1, 3, 5, 7}),
              "pad: padding [-4, 0, -3, 0] leaves a 5x0 result of a 5x7 input");
    // torch's reflection pad: each side's padding below the input's size.
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": [6, 4, 6, 4], "mode": "reflect"})", U8, {1, 3, 5, 7}),
              (ShapeInfo{U8, {1, 3, 13, 19}}));
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": [7, 0, 0, 0], "mode": "reflect"})", U8, {1, 3, 5, 7}),
              "pad: reflect padding should be less than the input's width, got padding (7, 0) for width 7");
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": [0, 0, 0, 5], "mode": "reflect"})", F32, {1, 3, 5, 7}),
              "pad: reflect padding should be less than the input's height, got padding (0, 5) for height 5");
    // torchvision's symmetric padding: at most the (cropped) size.
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": [7, 5, 7, 5], "mode": "symmetric"})", U8, {1, 3, 5, 7}),
              (ShapeInfo{U8, {1, 3, 15, 21}}));
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": [-2, 0, 6, 0], "mode": "symmetric"})", U8, {1, 3, 5, 7}),
              "pad: symmetric padding [-2, 0, 6, 0] is larger than the 5x5 image it mirrors");
    // Constant fills: one value is torch's fill_ (range-checked for uint8 where anything is
    // padded), several one per channel.
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": 1, "fill": 256})", U8, {1, 3, 5, 7}),
              "pad: fill 256 cannot be converted to uint8 without overflow");
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": 1, "fill": -0.5})", U8, {1, 3, 5, 7}),
              "pad: fill -0.5 cannot be converted to uint8 without overflow");
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": -1, "fill": 256})", U8, {1, 3, 5, 7}), (ShapeInfo{U8, {1, 3, 3, 5}}));
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": 1, "fill": 256})", F32, {1, 3, 5, 7}), (ShapeInfo{F32, {1, 3, 7, 9}}));
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": 1, "fill": 1e39})", F32, {1, 3, 5, 7}),
              "pad: fill 1e+39 cannot be converted to float32 without overflow");
    EXPECT_EQ(error_for(R"({"op": "pad", "padding": 1, "fill": [1, 2]})", U8, {1, 3, 5, 7}),
              "pad: 'fill' has 2 values but the input has 3 channels (give one value per channel, or one for all)");
    EXPECT_EQ(shape_of(R"({"op": "pad", "padding": 1, "fill": [-1, 300, 2.5]})", U8, {1, 3, 5, 7}),
              (ShapeInfo{U8, {1, 3, 7, 9}}));
}

TEST(OpShapes, PadFillValuesAreTorchvisionsConversions) {
    auto fill = [](const char* json, DType t, std::int64_t c) {
        return pad_fill_values(std::get<PadOp>(parse_one(json)), t, c);
    };
    // One value: truncated for uint8 (torch's fill_), rounded to float32 for float32.
    EXPECT_EQ(fill(R"({"op": "pad", "padding": 1, "fill": 127.99})", U8, 3), (std::vector<double>{127, 127, 127}));
    EXPECT_EQ(fill(R"({"op": "pad", "padding": 1, "fill": 0.1})", F32, 1),
              (std::vector<double>{static_cast<double>(0.1f)}));
    // One per channel: a float32 tensor converted to uint8 (truncated, then modulo 256).
    EXPECT_EQ(fill(R"({"op": "pad", "padding": 1, "fill": [-1.5, 300, 127.99999999]})", U8, 3),
              (std::vector<double>{255, 44, 128}));
    // Nothing padded: nothing filled.
    EXPECT_EQ(fill(R"({"op": "pad", "padding": [0, -1, 0, 0], "fill": 9})", U8, 1), (std::vector<double>{0}));
}

TEST(OpShapes, BlurAndSharpness) {
    EXPECT_EQ(shape_of(R"({"op": "gaussian_blur", "kernel_size": [5, 3]})", F32, {2, 1, 2, 3}),
              (ShapeInfo{F32, {2, 1, 2, 3}}));
    // torch's reflect pad: the padding (k / 2) must be below the dimension it pads.
    EXPECT_EQ(error_for(R"({"op": "gaussian_blur", "kernel_size": [7, 3]})", U8, {1, 3, 5, 3}),
              "gaussian_blur: Padding size should be less than the corresponding input dimension, but got: padding "
              "(3, 3, 1, 1) for a 5x3 input (kernel_size [7, 3])");
    EXPECT_EQ(shape_of(R"({"op": "adjust_sharpness", "factor": 2})", U8, {1, 1, 1, 1}), (ShapeInfo{U8, {1, 1, 1, 1}}));
    EXPECT_EQ(error_for(R"({"op": "adjust_sharpness", "factor": 2})", U8, {1, 2, 5, 5}),
              "adjust_sharpness: Input image tensor can have 1 or 3 channels, but found 2");
}

TEST(OpShapes, Erase) {
    EXPECT_EQ(shape_of(R"({"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": [1, 2, 3]})", U8,
                       {2, 3, 5, 7}),
              (ShapeInfo{U8, {2, 3, 5, 7}}));
    EXPECT_EQ(error_for(R"({"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": [1, 2]})", F32,
                        {2, 3, 5, 7}),
              "erase: 'value' has 2 values but the input has 3 channels (give one value per channel, or one for all)");
    EXPECT_EQ(error_for(R"({"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": -1})", U8,
                        {2, 3, 5, 7}),
              "erase: value -1 is outside the range a uint8 image can take (-1, 256)");
    // Python's slices: negative starts count from the end, the region is clipped.
    const auto region = [](std::int64_t t, std::int64_t l, std::int64_t h, std::int64_t w) {
        EraseOp op;
        op.top = t, op.left = l, op.height = h, op.width = w;
        return erase_region(op, 10, 20);
    };
    EXPECT_EQ(region(2, 3, 4, 5), (std::array<std::int64_t, 4>{2, 6, 3, 8}));
    EXPECT_EQ(region(-3, -25, 2, 10), (std::array<std::int64_t, 4>{7, 9, 0, 5}));  // -25:-15 -> 0:5
    EXPECT_EQ(region(8, 18, 5, 5), (std::array<std::int64_t, 4>{8, 10, 18, 20}));
    EXPECT_EQ(region(-2, 0, 3, 1), (std::array<std::int64_t, 4>{8, 1, 0, 1}));      // -2:1 -> 8:1, empty
    EXPECT_EQ(region(3, 4, -1, 2), (std::array<std::int64_t, 4>{3, 2, 4, 6}));      // 3:2, empty
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
              R"(normalize needs float input (float32, float16 or bfloat16), got uint8 (add {"op": "convert", )"
              R"("dtype": "float32"} before it))");
}

}  // namespace
}  // namespace toroid
