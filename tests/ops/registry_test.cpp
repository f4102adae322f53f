// The op registry: one complete OpDef per op kind, every JSON name found, and each op's
// JSON written canonically so that parse -> write -> parse gives the op back.
#include "ops/registry.h"

#include "ops/pipeline_json.h"
#include "op_test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <set>
#include <variant>

namespace toroid {
namespace {

using test::error_of;
using test::GridFolder;
using test::parse_one;

// Whether a and b are the same op: every field, and a grid's data.
bool same_op(const Op& a, const Op& b) {
    if (a.index() != b.index()) return false;
    return std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            const T& y = std::get<T>(b);
            if constexpr (std::is_same_v<T, GridSampleOp>) {
                return x.grid_path == y.grid_path && x.mode == y.mode && x.padding_mode == y.padding_mode &&
                       x.align_corners == y.align_corners && x.grid.dtype() == y.grid.dtype() &&
                       x.grid.shape() == y.grid.shape() && x.grid.nbytes() == y.grid.nbytes() &&
                       std::memcmp(x.grid.data(), y.grid.data(), x.grid.nbytes()) == 0;
            } else {
                return x == y;
            }
        },
        a);
}

// Each op with its options, every JSON name at least once.
const char* const kRoundTrips[] = {
    R"({"op": "resize", "size": [5, 7]})",
    R"({"op": "resize", "mode": "bilinear", "size": 9, "antialias": true})",
    R"({"op": "resize", "mode": "bicubic", "scale_factor": [0.5, 1.5], "align_corners": true,
        "recompute_scale_factor": true})",
    R"({"op": "resize", "mode": "nearest-exact", "smaller_edge": 256, "max_size": 300})",
    R"({"op": "resize", "mode": "bilinear", "max_size": 64, "align_corners": false})",
    R"({"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]]})",
    R"({"op": "affine", "theta": [[0.5, -0.25, 0.125], [0.1, 0.9, -0.3]], "mode": "bicubic",
        "padding_mode": "reflection", "align_corners": true, "size": [6, 8]})",
    R"({"op": "affine", "convention": "torchvision", "theta": [[1, 0.2, 3], [0, 1, -2]], "mode": "nearest",
        "fill": [1, 2, 3], "grid_fma": false, "sample_fma": false})",
    R"({"op": "affine", "theta": [[1e-7, 0, 0], [0, 1, 12345.678]], "fill": 0.5})",
    R"({"op": "grid_sample", "grid": "grid.npy"})",
    R"({"op": "grid_sample", "grid": "grid.npy", "mode": "nearest", "padding_mode": "border", "align_corners": true})",
    R"({"op": "flip", "dims": [-1, 2]})",
    R"({"op": "flip", "dims": []})",
    R"({"op": "crop", "top": -3, "left": 4, "height": 5, "width": 6})",
    R"({"op": "center_crop", "size": 7})",
    R"({"op": "center_crop", "size": [3, 9]})",
    R"({"op": "convert", "dtype": "float32", "scale": true})",
    R"({"op": "convert", "dtype": "uint8"})",
    R"({"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]})",
    R"({"op": "normalize", "mean": 0.5, "std": 2})",
    R"({"op": "perspective", "coefficients": [1, 0.1, -2, 0.05, 0.9, 3, 0.001, -0.0005]})",
    R"({"op": "perspective", "coefficients": [1, 0, 0, 0, 1, 0, 0, 0], "mode": "nearest", "fill": [1, 2, 3],
        "grid_fma": false, "sample_fma": false})",
    R"({"op": "invert"})",
    R"({"op": "posterize", "bits": 3})",
    R"({"op": "posterize", "bits": 0})",
    R"({"op": "solarize", "threshold": 128})",
    R"({"op": "solarize", "threshold": 0.25})",
    R"({"op": "adjust_brightness", "factor": 1.5})",
    R"({"op": "adjust_saturation", "factor": 0})",
    R"({"op": "adjust_contrast", "factor": 0.3})",
    R"({"op": "rgb_to_grayscale"})",
    R"({"op": "rgb_to_grayscale", "num_output_channels": 3})",
    R"({"op": "adjust_gamma", "gamma": 2.2})",
    R"({"op": "adjust_gamma", "gamma": 0.5, "gain": 1.5})",
    R"({"op": "adjust_hue", "factor": -0.25})",
    R"({"op": "autocontrast"})",
    R"({"op": "equalize"})",
    R"({"op": "pad", "padding": [1, -2, 3, 4]})",
    R"({"op": "pad", "padding": 2, "mode": "reflect"})",
    R"({"op": "pad", "padding": [1, 2], "mode": "edge", "fill": 3})",
    R"({"op": "pad", "padding": [5], "mode": "symmetric"})",
    R"({"op": "pad", "padding": [0, 1, 0, 1], "fill": [1.5, 2, 255]})",
    R"({"op": "erase", "top": 1, "left": -2, "height": 3, "width": 4, "value": 0})",
    R"({"op": "erase", "top": 0, "left": 0, "height": 0, "width": 7, "value": [0.5, -0.25, 3]})",
    R"({"op": "gaussian_blur", "kernel_size": 3})",
    R"({"op": "gaussian_blur", "kernel_size": [5, 1], "sigma": [0.3, 1.7], "lanes": 8})",
    R"({"op": "adjust_sharpness", "factor": 1.5})",
};

TEST(OpRegistry, ParseWriteParseIsIdentityForEveryOp) {
    const GridFolder grids(1, 3, 4);
    std::set<std::size_t> kinds;
    std::set<std::string> names;
    for (const char* text : kRoundTrips) {
        SCOPED_TRACE(text);
        const Op first = parse_one(text, grids.dir());
        const std::string written = pipeline_to_json(Pipeline{{first}});
        const Pipeline again = parse_pipeline(written, grids.dir());
        ASSERT_EQ(again.ops.size(), 1u);
        EXPECT_TRUE(same_op(first, again.ops[0])) << written;
        EXPECT_EQ(pipeline_to_json(again), written);
        kinds.insert(first.index());
        names.insert(std::string(op_name(first)));
    }
    // Every kind and every JSON name has a case here.
    EXPECT_EQ(kinds.size(), kOpKinds);
    for (const OpDef& d : op_defs())
        for (const OpDef::Syntax& s : d.syntax) EXPECT_TRUE(names.count(std::string(s.name))) << s.name;
}

TEST(OpRegistry, CanonicalJsonIsNlohmannsCompactFormWithSortedKeys) {
    // The writer prints straight from the structs; what it prints is what a JSON document
    // of the same values dumps (so pipeline.json files and keys keep their format).
    const GridFolder grids(1, 3, 4);
    Pipeline all;
    for (const char* text : kRoundTrips) all.ops.push_back(parse_one(text, grids.dir()));
    const std::string written = pipeline_to_json(all);
    EXPECT_EQ(nlohmann::json::parse(written).dump(), written);
    EXPECT_EQ(pipeline_to_json(parse_pipeline(R"([{"op": "flip", "dims": [3]}, {"op": "center_crop", "size": [2, 3]},
        {"op": "resize", "mode": "bilinear", "scale_factor": 2}, {"op": "convert", "dtype": "float32"}])",
                                              grids.dir())),
              R"([{"dims":[3],"op":"flip"},{"op":"center_crop","size":[2,3]},)"
              R"({"align_corners":false,"antialias":false,"mode":"bilinear","op":"resize","scale_factor":[2.0,2.0]},)"
              R"({"dtype":"float32","op":"convert","scale":false}])");
    EXPECT_EQ(pipeline_to_json(Pipeline{}), "[]");
}

TEST(OpRegistry, EveryKindHasACompleteDef) {
    ASSERT_EQ(op_defs().size(), kOpKinds);
    for (std::size_t k = 0; k < kOpKinds; ++k) {
        const OpDef& d = op_def(static_cast<OpKind>(k));
        SCOPED_TRACE(d.name());
        EXPECT_EQ(&d, &op_defs()[k]);
        EXPECT_EQ(static_cast<std::size_t>(d.kind), k);
        ASSERT_FALSE(d.syntax.empty());
        EXPECT_TRUE(d.write);
        EXPECT_TRUE(d.shape);
        for (const OpDef::Syntax& s : d.syntax) {
            EXPECT_TRUE(s.parse) << s.name;
            const FoundSyntax found = find_op_syntax(s.name);
            EXPECT_EQ(found.def, &d) << s.name;
            EXPECT_EQ(found.syntax, &s) << s.name;
        }
    }
    EXPECT_EQ(find_op_syntax("blur").def, nullptr);
    EXPECT_EQ(find_op_syntax("").syntax, nullptr);
}

TEST(OpRegistry, KindsFollowTheVariant) {
    EXPECT_EQ(op_kind(Op{ResizeOp{}}), OpKind::Resize);
    EXPECT_EQ(op_kind(Op{GridSampleOp{}}), OpKind::GridSample);
    EXPECT_EQ(op_kind(Op{NormalizeOp{}}), OpKind::Normalize);
    EXPECT_EQ(op_def(Op{CropOp{}}).name(), "crop");
    EXPECT_EQ(op_def(Op{ConvertOp{}}).name(), "convert");
}

TEST(OpRegistry, NamesComeFromTheRegistry) {
    const std::string names = "resize, affine, grid_sample, flip, crop, center_crop, convert, normalize, perspective, invert, "
                              "posterize, solarize, adjust_brightness, adjust_saturation, adjust_contrast, "
                              "rgb_to_grayscale, adjust_gamma, adjust_hue, autocontrast, equalize, pad, erase, "
                              "gaussian_blur or adjust_sharpness";
    EXPECT_EQ(op_names_text(), names);
    EXPECT_EQ(error_of([] { parse_pipeline(R"([{"op": "flip", "dims": []}, {"op": "blur"}])", "."); }),
              "op 1: unknown op 'blur' (expected " + names + ")");
    CropOp crop;
    EXPECT_EQ(op_name(Op{crop}), "crop");
    crop.center = true;
    EXPECT_EQ(op_name(Op{crop}), "center_crop");
    EXPECT_EQ(op_name(Op{AffineOp{}}), "affine");
}

TEST(OpRegistry, ParseMessagesNameTheOpAndField) {
    // The parsers moved into the op definitions; their messages stay as they were.
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "resize", "size": [5, 7], "colour": 1})"); }),
              "op 0 (resize): unknown field 'colour'");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "resize", "mode": "area", "size": 4})"); }),
              "op 0 (resize): unknown mode \"area\" (expected one of: nearest, nearest-exact, bilinear, bicubic)");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "center_crop"})"); }),
              "op 0 (center_crop): missing field 'size' ([h, w], or one number for a square)");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "affine", "theta": [[1, 0], [0, 1]]})"); }),
              "op 0 (affine): field 'theta' must be a 2x3 matrix [[a, b, c], [d, e, f]], got [[1, 0], [0, 1]]");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "normalize", "mean": 0, "std": [1, 0]})"); }),
              "op 0 (normalize): 'std' must not contain 0");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "flip", "dims": [3, -1]})"); }),
              "op 0 (flip): flip dim -1 appears more than once");
}

TEST(OpRegistry, ColorOpsCheckTheirFieldsAsTorchvisionDoes) {
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "posterize", "bits": 9})"); }),
              "op 0 (posterize): bits must be a positive integer in the range [0, 8], got 9 instead");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "posterize", "bits": 2.5})"); }),
              "op 0 (posterize): bits must be a positive integer in the range [0, 8], got 2.5 instead");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "posterize", "bits": -1})"); }),
              "op 0 (posterize): bits must be a positive integer in the range [0, 8], got -1 instead");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "posterize"})"); }), "op 0 (posterize): missing field 'bits'");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_brightness", "factor": -0.5})"); }),
              "op 0 (adjust_brightness): factor (-0.5) is not non-negative");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_contrast", "factor": "a"})"); }),
              "op 0 (adjust_contrast): field 'factor' must be a number, got \"a\"");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "rgb_to_grayscale", "num_output_channels": 2})"); }),
              "op 0 (rgb_to_grayscale): num_output_channels must be 1 or 3, got 2");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "invert", "factor": 1})"); }), "op 0 (invert): unknown field 'factor'");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "solarize"})"); }), "op 0 (solarize): missing field 'threshold'");
    // adjust_gamma, adjust_hue: torchvision's ValueErrors.
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_gamma", "gamma": -0.1})"); }),
              "op 0 (adjust_gamma): Gamma should be a non-negative real number, got -0.1");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_gamma"})"); }), "op 0 (adjust_gamma): missing field 'gamma'");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_gamma", "gamma": 1, "gain": "x"})"); }),
              "op 0 (adjust_gamma): field 'gain' must be a number, got \"x\"");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_hue", "factor": 0.6})"); }),
              "op 0 (adjust_hue): hue_factor (0.6) is not in [-0.5, 0.5]");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "adjust_hue", "factor": -0.5001})"); }),
              "op 0 (adjust_hue): hue_factor (-0.5001) is not in [-0.5, 0.5]");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "autocontrast", "factor": 1})"); }),
              "op 0 (autocontrast): unknown field 'factor'");
    // The canonical form always has the gain (default 1).
    EXPECT_EQ(pipeline_to_json(Pipeline{{parse_one(R"({"op": "adjust_gamma", "gamma": 2})")}}),
              R"([{"gain":1.0,"gamma":2.0,"op":"adjust_gamma"}])");
    EXPECT_EQ(std::get<ColorOp>(parse_one(R"({"op": "adjust_hue", "factor": 0.5})")).value, 0.5);
}

TEST(OpRegistry, PadAndEraseFields) {
    // torchvision's padding forms: one number, [left/right, top/bottom], [left, top, right, bottom].
    const PadOp one = std::get<PadOp>(parse_one(R"({"op": "pad", "padding": 3})"));
    EXPECT_EQ((std::array<std::int64_t, 4>{one.left, one.top, one.right, one.bottom}), (std::array<std::int64_t, 4>{3, 3, 3, 3}));
    EXPECT_EQ(one.mode, PadMode::Constant);
    EXPECT_EQ(one.fill, (std::vector<double>{0.0}));
    const PadOp two = std::get<PadOp>(parse_one(R"({"op": "pad", "padding": [1, 2], "mode": "symmetric"})"));
    EXPECT_EQ((std::array<std::int64_t, 4>{two.left, two.top, two.right, two.bottom}), (std::array<std::int64_t, 4>{1, 2, 1, 2}));
    EXPECT_EQ(two.mode, PadMode::Symmetric);
    const PadOp four = std::get<PadOp>(parse_one(R"({"op": "pad", "padding": [1, 2, 3, -4], "fill": [1, 2, 3]})"));
    EXPECT_EQ((std::array<std::int64_t, 4>{four.left, four.top, four.right, four.bottom}),
              (std::array<std::int64_t, 4>{1, 2, 3, -4}));
    EXPECT_EQ(pipeline_to_json(Pipeline{{four}}), R"([{"fill":[1.0,2.0,3.0],"mode":"constant","op":"pad","padding":[1,2,3,-4]}])");

    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad"})"); }),
              "op 0 (pad): missing field 'padding' ([left, top, right, bottom])");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad", "padding": [1, 2, 3]})"); }),
              "op 0 (pad): field 'padding' must be an integer or a list of 1, 2 or 4 integers ([left, top, right, "
              "bottom]), got [1, 2, 3]");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad", "padding": 1.5})"); }),
              "op 0 (pad): field 'padding' must be an integer, got 1.5");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad", "padding": [4294967296, 0]})"); }),
              "op 0 (pad): 'padding' must be within +-2^31, got 4294967296");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad", "padding": 1, "mode": "wrap"})"); }),
              "op 0 (pad): unknown mode \"wrap\" (expected one of: constant, edge, reflect, symmetric)");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad", "padding": 1, "mode": "reflect", "fill": [1, 2, 3]})"); }),
              "op 0 (pad): padding mode 'reflect' is not supported if fill is not scalar");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "pad", "padding": 1, "fill": []})"); }),
              "op 0 (pad): field 'fill' must be a non-empty list of numbers, got []");

    EXPECT_EQ(error_of([] { parse_one(R"({"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4})"); }),
              "op 0 (erase): missing field 'value'");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "erase", "top": 1, "left": 2, "width": 4, "value": 0})"); }),
              "op 0 (erase): missing field 'height'");
    EXPECT_EQ(error_of([] { parse_one(R"({"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": "random"})"); }),
              "op 0 (erase): field 'value' must be a non-empty list of numbers, got \"random\"");
}

TEST(OpRegistry, GridSampleCarriesItsGridAsData) {
    const GridFolder grids(2, 3, 4);
    const Op g = parse_one(R"({"op": "grid_sample", "grid": "grid.npy"})", grids.dir());
    const OpDef& d = op_def(g);
    ASSERT_TRUE(d.data);
    const Tensor* data = d.data(g);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(data, &std::get<GridSampleOp>(g).grid);
    EXPECT_EQ(data->shape(), (Dims{2, 3, 4, 2}));
    for (const char* other : {R"({"op": "flip", "dims": [3]})", R"({"op": "convert", "dtype": "uint8"})"}) {
        const Op op = parse_one(other);
        EXPECT_TRUE(!op_def(op).data || op_def(op).data(op) == nullptr) << other;
    }
    EXPECT_NE(error_of([] { parse_one(R"({"op": "grid_sample", "grid": "no-such-grid.npy"})"); }).find("no-such-grid.npy"),
              std::string::npos);
}

}  // namespace
}  // namespace toroid
