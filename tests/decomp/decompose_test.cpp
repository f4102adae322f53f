// The primitive graph of each op's decomposition, structurally: how many tables and
// computed tensors it adds, which are realized, what the result's body is made of (sums,
// selects, casts, gathers of the input). Each expectation is read from decomp/*.cpp; the
// values themselves are tested against the reference by the engine tests.
#include "decomp/decompose.h"

#include "../ops/op_test_support.h"
#include "ir/expr.h"
#include "ops/registry.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

using test::error_of;
using test::GridFolder;

constexpr DType U8 = DType::UInt8;
constexpr DType F32 = DType::Float32;

TensorSpec spec(DType dt, const Dims& shape, Layout layout = Layout::Contiguous) {
    return TensorSpec{dt, shape, dense_strides(shape, layout)};
}

// What a graph holds and what its result's body is made of.
struct Census {
    int inputs = 0, tables = 0, computes = 0, realized = 0;
    std::vector<ir::Type> table_types;
    ir::GraphTensor output;  // a copy: the graph may be a temporary

    explicit Census(const ir::Graph& g) {
        for (const ir::GraphTensor& t : g.tensors()) {
            if (t.kind == ir::TensorKind::Input) ++inputs;
            if (t.kind == ir::TensorKind::Constant) {
                ++tables;
                table_types.push_back(t.type);
            }
            if (t.kind == ir::TensorKind::Compute) {
                ++computes;
                if (t.realize) ++realized;
            }
        }
        output = g.at(g.output);
    }
    int tables_of(ir::Type type) const {
        return static_cast<int>(std::count(table_types.begin(), table_types.end(), type));
    }
};

// Distinct nodes of `op` in e.
int count(const ir::Expr& e, ir::Op op) {
    int n = 0;
    ir::visit(e, [&](const ir::Expr& x) { n += x->op == op ? 1 : 0; });
    return n;
}

// Distinct loads of graph tensor `tensor` in e (0 is the pipeline's input).
int loads_of(const ir::Expr& e, int tensor) {
    int n = 0;
    ir::visit(e, [&](const ir::Expr& x) { n += x->op == ir::Op::Load && x->buffer == tensor ? 1 : 0; });
    return n;
}

ir::Graph decompose_json(const std::string& json, const TensorSpec& in,
                         const std::filesystem::path& dir = std::filesystem::temp_directory_path()) {
    return decomp::decompose(parse_pipeline(json, dir), in);
}

TEST(DecomposeOps, EveryKindHasADecomposition) {
    for (std::size_t k = 0; k < kOpKinds; ++k)
        EXPECT_TRUE(decomp::has_decomposition(static_cast<OpKind>(k))) << op_def(static_cast<OpKind>(k)).name();
    EXPECT_FALSE(decomp::has_decomposition(static_cast<OpKind>(kOpKinds)));
}

TEST(DecomposeOps, Flip) {
    const ir::Graph g = decompose_json(R"([{"op": "flip", "dims": [2, 3]}])", spec(U8, {1, 3, 8, 10}));
    const Census c(g);
    EXPECT_EQ(c.inputs, 1);
    EXPECT_EQ(c.tables, 0);
    EXPECT_EQ(c.computes, 1);
    EXPECT_EQ(c.output.name, "op0.flip");
    EXPECT_EQ(c.output.origin, "op 0 (flip)");
    // An index rewrite: one read of the input, (size - 1) - i along each flipped dim.
    const ir::Expr& body = c.output.body;
    EXPECT_EQ(body->op, ir::Op::Load);
    EXPECT_EQ(loads_of(body, 0), 1);
    EXPECT_EQ(count(body, ir::Op::Sub), 4);
    const ir::Graph one = decompose_json(R"([{"op": "flip", "dims": [3]}])", spec(U8, {1, 3, 8, 10}));
    EXPECT_EQ(count(Census(one).output.body, ir::Op::Sub), 2);
}

TEST(DecomposeOps, CropInsideIsAShiftedReadOutsideIsMasked) {
    for (const char* inside : {R"([{"op": "crop", "top": 1, "left": 2, "height": 4, "width": 5}])",
                               R"([{"op": "center_crop", "size": [4, 5]}])"}) {
        SCOPED_TRACE(inside);
        const Census c(decompose_json(inside, spec(F32, {1, 3, 8, 10})));
        EXPECT_EQ(c.tables, 0);
        EXPECT_EQ(c.computes, 1);
        EXPECT_EQ(c.output.body->op, ir::Op::Load);
        EXPECT_EQ(count(c.output.body, ir::Op::Select), 0);
        EXPECT_EQ(count(c.output.body, ir::Op::Min), 0);
    }
    for (const char* outside : {R"([{"op": "crop", "top": -2, "left": 2, "height": 4, "width": 5}])",
                                R"([{"op": "center_crop", "size": [12, 5]}])"}) {
        SCOPED_TRACE(outside);
        const Census c(decompose_json(outside, spec(U8, {1, 3, 8, 10})));
        EXPECT_EQ(c.tables, 0);
        EXPECT_EQ(c.computes, 1);
        // Zeros outside: a select over a clamped read (min(max(...)) on H and W).
        EXPECT_EQ(c.output.body->op, ir::Op::Select);
        EXPECT_EQ(loads_of(c.output.body, 0), 1);
        EXPECT_EQ(count(c.output.body, ir::Op::Min), 2);
        EXPECT_EQ(count(c.output.body, ir::Op::Max), 2);
    }
}

// A chain of crops reads the pipeline's input once, whatever its length: offsets add up and
// the windows of valid rows and columns intersect (four parameters), so the result's body
// has the size of one crop's.
TEST(DecomposeOps, ChainOfCropsIsOneReadOfTheInput) {
    const TensorSpec in = spec(U8, {1, 3, 8, 10});
    std::string inside = "[", outside = "[";
    for (int k = 0; k < 200; ++k) {
        inside += std::string(k ? "," : "") + (k % 2 ? R"({"op": "crop", "top": 1, "left": 1, "height": 6, "width": 8})"
                                                     : R"({"op": "crop", "top": -1, "left": -1, "height": 8, "width": 10})");
        outside += std::string(k ? "," : "") + (k % 2 ? R"({"op": "crop", "top": 2, "left": 2, "height": 8, "width": 10})"
                                                      : R"({"op": "crop", "top": -2, "left": -2, "height": 8, "width": 10})");
    }
    // Each pair moves the region back where it was: inside the image throughout.
    const Census a(decompose_json(inside + "]", in));
    EXPECT_EQ(a.output.body->op, ir::Op::Load);
    EXPECT_EQ(a.output.body->buffer, 0);
    EXPECT_EQ(count(a.output.body, ir::Op::Select), 0);
    // Each pair shifts by (-2, -2) then (2, 2) within the same extent: the last two rows and
    // columns read past the image and stay zero, one mask of four comparisons.
    const Census b(decompose_json(outside + "]", in));
    ASSERT_EQ(b.output.body->op, ir::Op::Select);
    EXPECT_EQ(loads_of(b.output.body, 0), 1);
    EXPECT_EQ(b.output.body->args[1]->buffer, 0);
    EXPECT_EQ(count(b.output.body, ir::Op::Lt) + count(b.output.body, ir::Op::Le), 4);
    // A region wholly outside the image is zeros, read from nothing.
    const Census z(decompose_json(R"([{"op": "crop", "top": 20, "left": 0, "height": 4, "width": 4},
                                      {"op": "crop", "top": -1, "left": -1, "height": 6, "width": 6}])", in));
    EXPECT_EQ(z.output.body->op, ir::Op::Const);
}

TEST(DecomposeOps, BlurReadsARealizedPaddedCopyWithOneFmaPerTap) {
    const TensorSpec in = spec(U8, {1, 3, 8, 10});
    // A realized reflect-padded copy, then one chain of ky * kx fused multiply-adds of a
    // weight table: a single Fma reduction (a loop however large the kernel), one load of
    // the padded copy and one of the weights per tap.
    const Census blur(decompose_json(R"([{"op": "gaussian_blur", "kernel_size": [5, 3], "sigma": [0.7, 1.2]}])", in));
    EXPECT_EQ(blur.computes, 2);
    EXPECT_EQ(blur.realized, 1);
    EXPECT_EQ(blur.tables_of(ir::Type::F32), 1);
    EXPECT_EQ(count(blur.output.body, ir::Op::Fma), 0);
    ASSERT_EQ(count(blur.output.body, ir::Op::Sum), 1);
    ir::Expr chain;
    ir::visit(blur.output.body, [&](const ir::Expr& e) { if (e->op == ir::Op::Sum) chain = e; });
    EXPECT_EQ(ir::reduce_kind(chain), ir::Reduce::Fma);
    EXPECT_EQ(ir::const_extent(chain), 15);
    EXPECT_EQ(count(chain->args[0], ir::Op::Load), 2);
    EXPECT_EQ(blur.output.body->op, ir::Op::Cast);
    EXPECT_EQ(loads_of(blur.output.body, 0), 0);  // the taps read the padded copy, not the input
    // A new sigma, or a new input size, is the same structure; a new kernel size is not.
    const auto structure = [](const std::string& json, const Dims& shape) {
        return decompose_json(json, spec(U8, shape)).structure();
    };
    EXPECT_EQ(structure(R"([{"op": "gaussian_blur", "kernel_size": 3, "sigma": 0.4}])", {1, 3, 8, 10}),
              structure(R"([{"op": "gaussian_blur", "kernel_size": 3, "sigma": 1.9}])", {1, 3, 17, 9}));
    EXPECT_NE(structure(R"([{"op": "gaussian_blur", "kernel_size": 3}])", {1, 3, 8, 10}),
              structure(R"([{"op": "gaussian_blur", "kernel_size": 5}])", {1, 3, 8, 10}));
    // Sharpness: one pointwise body of nine taps selecting the blend inside; the factor a table.
    const Census sharp(decompose_json(R"([{"op": "adjust_sharpness", "factor": 1.5}])", in));
    EXPECT_EQ(sharp.computes, 1);
    EXPECT_EQ(sharp.realized, 0);
    EXPECT_EQ(sharp.tables_of(ir::Type::F32), 1);
    EXPECT_EQ(sharp.output.body->op, ir::Op::Select);
    EXPECT_EQ(count(sharp.output.body, ir::Op::Fma), 10);
}

TEST(DecomposeOps, PadRemapsIndicesOnTheSidesThatPad) {
    const TensorSpec in = spec(U8, {1, 3, 8, 10});
    // Only negative padding: a shifted read, no table, no mask.
    const Census crop(decompose_json(R"([{"op": "pad", "padding": [-1, -2, 0, -3]}])", in));
    EXPECT_EQ(crop.tables, 0);
    EXPECT_EQ(crop.computes, 1);
    EXPECT_EQ(crop.output.body->op, ir::Op::Load);
    // Constant: the fill table (of the image's dtype) where the clamped read is outside.
    const Census constant(decompose_json(R"([{"op": "pad", "padding": [1, 2, 3, 4], "fill": [1, 2, 3]}])", in));
    EXPECT_EQ(constant.tables, 1);
    EXPECT_EQ(constant.tables_of(ir::Type::U8), 1);
    EXPECT_EQ(constant.output.body->op, ir::Op::Select);
    EXPECT_EQ(loads_of(constant.output.body, 0), 1);
    EXPECT_EQ(count(constant.output.body, ir::Op::Min), 2);
    // Padding along W only: H is read as it is.
    const Census w_only(decompose_json(R"([{"op": "pad", "padding": [1, 0, 2, -1], "fill": 7}])", spec(F32, {1, 3, 8, 10})));
    EXPECT_EQ(w_only.tables_of(ir::Type::F32), 1);
    EXPECT_EQ(count(w_only.output.body, ir::Op::Min), 1);
    // Edge, reflect, symmetric: one read through clamps and mirrors, no table, no select.
    for (const char* mode : {"edge", "reflect", "symmetric"}) {
        SCOPED_TRACE(mode);
        const Census c(decompose_json(
            std::string(R"([{"op": "pad", "padding": [1, 2, 3, 4], "mode": ")") + mode + R"("}])", in));
        EXPECT_EQ(c.tables, 0);
        EXPECT_EQ(c.computes, 1);
        EXPECT_EQ(c.output.body->op, ir::Op::Load);
        EXPECT_EQ(count(c.output.body, ir::Op::Select), 0);
        EXPECT_EQ(loads_of(c.output.body, 0), 1);
    }
    // The paddings and the output size are parameters: one structure for every padding
    // that pads the same sides, and for every input size.
    const auto structure = [](const std::string& json, const Dims& shape) {
        return decompose_json(json, spec(U8, shape)).structure();
    };
    for (const char* mode : {"constant", "edge", "reflect", "symmetric"}) {
        SCOPED_TRACE(mode);
        const std::string m = mode;
        EXPECT_EQ(structure(R"([{"op": "pad", "padding": [1, 2, 3, 4], "mode": ")" + m + R"("}])", {1, 3, 8, 10}),
                  structure(R"([{"op": "pad", "padding": [4, 3, -2, 1], "mode": ")" + m + R"("}])", {1, 3, 17, 9}));
    }
}

TEST(DecomposeOps, EraseSelectsTheValueInARunTimeRegion) {
    const Census c(decompose_json(R"([{"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": [1, 2, 3]}])",
                                  spec(F32, {1, 3, 8, 10})));
    EXPECT_EQ(c.tables, 1);
    EXPECT_EQ(c.tables_of(ir::Type::F32), 1);
    EXPECT_EQ(c.computes, 1);
    EXPECT_EQ(c.output.body->op, ir::Op::Select);
    EXPECT_EQ(loads_of(c.output.body, 0), 1);
    // Any region, empty or not, and any value: one structure.
    EXPECT_EQ(decompose_json(R"([{"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": 0}])",
                             spec(U8, {1, 3, 8, 10}))
                  .structure(),
              decompose_json(R"([{"op": "erase", "top": -5, "left": 0, "height": 0, "width": 40, "value": 9}])",
                             spec(U8, {1, 3, 12, 10}))
                  .structure());
}

TEST(DecomposeOps, Convert) {
    const Census scale(decompose_json(R"([{"op": "convert", "dtype": "float32", "scale": true}])", spec(U8, {1, 3, 4, 4})));
    EXPECT_EQ(scale.computes, 1);
    EXPECT_EQ(scale.output.type, ir::Type::F32);
    EXPECT_EQ(scale.output.body->op, ir::Op::Mul);
    EXPECT_EQ(count(scale.output.body, ir::Op::Cast), 1);
    const Census plain(decompose_json(R"([{"op": "convert", "dtype": "float32"}])", spec(U8, {1, 3, 4, 4})));
    EXPECT_EQ(plain.output.body->op, ir::Op::Cast);
    const Census back(decompose_json(R"([{"op": "convert", "dtype": "uint8", "scale": true}])", spec(F32, {1, 3, 4, 4})));
    EXPECT_EQ(back.output.type, ir::Type::U8);
    EXPECT_EQ(back.output.body->op, ir::Op::SatCast);
    EXPECT_EQ(count(back.output.body, ir::Op::Mul), 1);
    const Census same(decompose_json(R"([{"op": "convert", "dtype": "uint8"}])", spec(U8, {1, 3, 4, 4})));
    EXPECT_EQ(same.output.body->op, ir::Op::Load);
}

TEST(DecomposeOps, Normalize) {
    const ir::Graph g = decompose_json(R"([{"op": "normalize", "mean": [1, 2, 3], "std": 0.5}])", spec(F32, {1, 3, 4, 4}));
    const Census c(g);
    // mean and std as per-channel tables: (x - mean[c]) / std[c].
    EXPECT_EQ(c.tables, 2);
    EXPECT_EQ(c.tables_of(ir::Type::F32), 2);
    EXPECT_EQ(c.computes, 1);
    EXPECT_EQ(c.output.body->op, ir::Op::Div);
    EXPECT_EQ(c.output.body->args[0]->op, ir::Op::Sub);
    EXPECT_EQ(count(c.output.body, ir::Op::Load), 3);
}

TEST(DecomposeOps, ToneOps) {
    // adjust_gamma: one pointwise tensor, a Pow by the run-time exponent (a float table).
    const Census gam(decompose_json(R"([{"op": "adjust_gamma", "gamma": 2.2, "gain": 0.9}])", spec(U8, {1, 3, 4, 4})));
    EXPECT_EQ(gam.computes, 1);
    EXPECT_EQ(gam.tables_of(ir::Type::F32), 1);
    EXPECT_EQ(count(gam.output.body, ir::Op::Pow), 1);
    EXPECT_EQ(gam.output.body->op, ir::Op::SatCast);  // to_dtype back to uint8
    // adjust_hue: pointwise over the pixel's 3 channels, an int32 table of torchvision's
    // vpqt selection; a 1-channel image is the input as it is.
    const Census hue(decompose_json(R"([{"op": "adjust_hue", "factor": 0.2}])", spec(F32, {1, 3, 4, 4})));
    EXPECT_EQ(hue.computes, 1);
    EXPECT_EQ(hue.tables_of(ir::Type::I32), 1);
    EXPECT_EQ(loads_of(hue.output.body, 0), 3);
    const Census hue1(decompose_json(R"([{"op": "adjust_hue", "factor": 0.2}])", spec(F32, {1, 1, 4, 4})));
    EXPECT_EQ(hue1.output.body->op, ir::Op::Load);
    // autocontrast: two realized (N, C, 1, 1) tensors, a Min and a Max over rows of columns.
    const ir::Graph g = decompose_json(R"([{"op": "autocontrast"}])", spec(U8, {2, 3, 4, 5}));
    const Census ac(g);
    EXPECT_EQ(ac.computes, 3);
    EXPECT_EQ(ac.realized, 2);
    for (const char* name : {"op0.min", "op0.max"}) {
        const auto it = std::find_if(g.tensors().begin(), g.tensors().end(),
                                     [&](const ir::GraphTensor& t) { return t.name == name; });
        ASSERT_NE(it, g.tensors().end()) << name;
        EXPECT_TRUE(it->realize);
        EXPECT_EQ(it->shape[1].get(), g.at(0).shape[1].get());  // per channel
        EXPECT_EQ(count(it->body, ir::Op::Sum), 2);
        EXPECT_EQ(ir::reduce_kind(it->body), std::string(name) == "op0.min" ? ir::Reduce::Min : ir::Reduce::Max);
        EXPECT_EQ(loads_of(ac.output.body, it->id), 1);
    }
    // equalize: three realized int32 tensors (the greatest value, its count, the cumulative
    // counts per value, (N, C, 256, 1)); the output gathers the cumulative count at x - 1.
    const ir::Graph eg = decompose_json(R"([{"op": "equalize"}])", spec(U8, {1, 3, 4, 5}));
    const Census eq(eg);
    EXPECT_EQ(eq.computes, 4);
    EXPECT_EQ(eq.realized, 3);
    const auto cum = std::find_if(eg.tensors().begin(), eg.tensors().end(),
                                  [](const ir::GraphTensor& t) { return t.name == "op0.cum"; });
    ASSERT_NE(cum, eg.tensors().end());
    EXPECT_EQ(cum->type, ir::Type::I32);
    EXPECT_TRUE(ir::is_const(cum->shape[2], 256));
    EXPECT_EQ(loads_of(eq.output.body, cum->id), 1);
}

TEST(DecomposeOps, ColorOpsArePointwiseButContrast) {
    // Saturation: one computed tensor mixing the pixel's 3 channels (3 loads of the input
    // for the grey value, one for the pixel), factors as a float table, truncated to uint8.
    const Census sat(decompose_json(R"([{"op": "adjust_saturation", "factor": 0.5}])", spec(U8, {1, 3, 4, 4})));
    EXPECT_EQ(sat.computes, 1);
    EXPECT_EQ(sat.tables_of(ir::Type::F32), 1);
    EXPECT_EQ(sat.output.body->op, ir::Op::Cast);
    EXPECT_EQ(loads_of(sat.output.body, 0), 4);
    EXPECT_EQ(count(sat.output.body, ir::Op::Fma), 3);  // two for grey, one for the blend
    EXPECT_EQ(count(sat.output.body, ir::Op::Floor), 1);
    // Contrast: the mean is a realized (N, 1, 1, 1) tensor summing the realized row sums
    // (N, 1, H, 1), each a sum over the row's columns (rows sum in parallel).
    const ir::Graph g = decompose_json(R"([{"op": "adjust_contrast", "factor": 1.5}])", spec(F32, {2, 3, 4, 5}));
    const Census con(g);
    EXPECT_EQ(con.computes, 3);
    EXPECT_EQ(con.realized, 2);
    const auto rows = std::find_if(g.tensors().begin(), g.tensors().end(),
                                   [](const ir::GraphTensor& t) { return t.name == "op0.row_sums"; });
    ASSERT_NE(rows, g.tensors().end());
    EXPECT_TRUE(rows->realize);
    EXPECT_EQ(rows->type, ir::Type::F64);
    EXPECT_EQ(rows->shape[2].get(), g.at(0).shape[2].get());  // one sum per row
    EXPECT_TRUE(ir::is_const(rows->shape[3], 1));
    EXPECT_EQ(count(rows->body, ir::Op::Sum), 1);
    const auto it = std::find_if(g.tensors().begin(), g.tensors().end(),
                                 [](const ir::GraphTensor& t) { return t.name == "op0.mean"; });
    ASSERT_NE(it, g.tensors().end());
    const ir::GraphTensor& mean = *it;
    EXPECT_TRUE(mean.realize);
    EXPECT_EQ(mean.shape[0].get(), g.at(0).shape[0].get());  // the input's batch size
    for (std::size_t d = 1; d < 4; ++d) EXPECT_TRUE(ir::is_const(mean.shape[d], 1));
    EXPECT_EQ(count(mean.body, ir::Op::Sum), 1);
    EXPECT_EQ(loads_of(mean.body, rows->id), 1);
    EXPECT_EQ(count(rows->body, ir::Op::Floor), 0);  // float input: no floor
    EXPECT_EQ(loads_of(con.output.body, mean.id), 1);
    // The others: posterize of uint8 shifts right and multiplies back by int32 tables (no
    // division); invert is one sub.
    const Census post(decompose_json(R"([{"op": "posterize", "bits": 2}])", spec(U8, {1, 3, 4, 4})));
    EXPECT_EQ(post.tables_of(ir::Type::I32), 2);
    EXPECT_EQ(count(post.output.body, ir::Op::ShiftRight), 1);
    EXPECT_EQ(count(post.output.body, ir::Op::FloorDiv), 0);
    const Census inv(decompose_json(R"([{"op": "invert"}])", spec(F32, {1, 3, 4, 4})));
    EXPECT_EQ(inv.output.body->op, ir::Op::Sub);
    EXPECT_EQ(inv.tables, 0);
    const Census grey(decompose_json(R"([{"op": "rgb_to_grayscale", "num_output_channels": 3}])", spec(U8, {1, 1, 4, 4})));
    EXPECT_EQ(grey.output.body->op, ir::Op::Load);  // a 1-channel image repeated
}

TEST(DecomposeOps, ResizeNearestGathersThroughTwoIndexTables) {
    const Census c(decompose_json(R"([{"op": "resize", "size": [4, 6]}])", spec(U8, {1, 3, 8, 10})));
    EXPECT_EQ(c.tables, 2);
    EXPECT_EQ(c.tables_of(ir::Type::I32), 2);
    EXPECT_EQ(c.computes, 1);
    EXPECT_EQ(c.output.name, "op0.nearest");
    EXPECT_EQ(loads_of(c.output.body, 0), 1);
    EXPECT_EQ(count(c.output.body, ir::Op::Sum), 0);
}

TEST(DecomposeOps, ResizeFloatInterpolationSumsTapsOfBothAxes) {
    const Census c(decompose_json(R"([{"op": "resize", "mode": "bilinear", "size": [4, 6]}])", spec(F32, {1, 3, 8, 10})));
    // An index and a weight table per axis; a sum over W's taps inside one over H's.
    EXPECT_EQ(c.tables, 4);
    EXPECT_EQ(c.tables_of(ir::Type::I32), 2);
    EXPECT_EQ(c.tables_of(ir::Type::F32), 2);
    EXPECT_EQ(c.computes, 1);
    EXPECT_EQ(c.output.name, "op0.interpolate");
    EXPECT_EQ(c.output.body->op, ir::Op::Sum);
    EXPECT_EQ(count(c.output.body, ir::Op::Sum), 2);
    EXPECT_EQ(loads_of(c.output.body, 0), 1);
}

TEST(DecomposeOps, ResizeSeparablePasses) {
    // float32 antialias, both axes shrink: two passes, each a start, first-tap, last-tap
    // and weight table and one sum; the first realized, the second the op's result.
    const ir::Graph f = decompose_json(R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [4, 6]}])",
                                       spec(F32, {1, 3, 8, 10}));
    const Census cf(f);
    EXPECT_EQ(cf.tables, 8);
    EXPECT_EQ(cf.tables_of(ir::Type::I32), 6);
    EXPECT_EQ(cf.tables_of(ir::Type::F32), 2);
    EXPECT_EQ(cf.computes, 2);
    EXPECT_EQ(cf.realized, 1);
    EXPECT_FALSE(cf.output.realize);
    EXPECT_EQ(cf.output.body->op, ir::Op::Sum);
    EXPECT_EQ(loads_of(cf.output.body, 0), 0);  // the second pass reads the first

    // uint8 (any bilinear): a start and an int16 weight table per pass, the horizontal pass
    // first; each rounds, shifts by the run-time precision and saturates.
    const ir::Graph u = decompose_json(R"([{"op": "resize", "mode": "bilinear", "size": [4, 6]}])", spec(U8, {1, 3, 8, 10}));
    const Census cu(u);
    EXPECT_EQ(cu.tables, 4);
    EXPECT_EQ(cu.tables_of(ir::Type::I16), 2);
    EXPECT_EQ(cu.computes, 2);
    EXPECT_EQ(cu.realized, 1);
    EXPECT_EQ(cu.output.name, "op0.vertical");
    EXPECT_EQ(cu.output.body->op, ir::Op::SatCast);
    EXPECT_EQ(count(cu.output.body, ir::Op::ShiftRight), 1);
    EXPECT_EQ(count(cu.output.body, ir::Op::Sum), 1);

    // An axis whose size does not change is skipped, as PyTorch skips its pass.
    const Census one(decompose_json(R"([{"op": "resize", "mode": "bilinear", "size": [8, 6]}])", spec(U8, {1, 3, 8, 10})));
    EXPECT_EQ(one.tables, 2);
    EXPECT_EQ(one.computes, 1);
    EXPECT_EQ(one.output.name, "op0.horizontal");

    // Nothing changes: a copy.
    const Census copy(decompose_json(R"([{"op": "resize", "mode": "bicubic", "antialias": true, "size": [8, 10]}])",
                                     spec(F32, {1, 3, 8, 10})));
    EXPECT_EQ(copy.tables, 0);
    EXPECT_EQ(copy.computes, 1);
    EXPECT_EQ(copy.output.body->op, ir::Op::Load);
}

TEST(DecomposeOps, AffineGathersOneFourOrSixteenTaps) {
    const std::string theta = R"("theta": [[0.9, 0.1, 0.05], [-0.1, 0.9, 0]])";
    const std::pair<const char*, int> modes[] = {{"nearest", 1}, {"bilinear", 4}, {"bicubic", 16}};
    for (const auto& [mode, taps] : modes) {
        SCOPED_TRACE(mode);
        const Census c(decompose_json(R"([{"op": "affine", )" + theta + R"(, "mode": ")" + mode + R"("}])",
                                      spec(F32, {1, 3, 8, 10})));
        // Base coordinates along x and y, and theta with the size-derived floats.
        EXPECT_EQ(c.tables, 3);
        EXPECT_EQ(c.tables_of(ir::Type::F32), 3);
        EXPECT_EQ(c.computes, 1);
        EXPECT_EQ(c.output.name, "op0.affine");
        EXPECT_EQ(loads_of(c.output.body, 0), taps);
    }
    // A fill adds its per-channel table.
    const Census fill(decompose_json(R"([{"op": "affine", )" + theta + R"(, "fill": [1, 2, 3]}])", spec(F32, {1, 3, 8, 10})));
    EXPECT_EQ(fill.tables, 4);
    EXPECT_EQ(loads_of(fill.output.body, 0), 4);
    // torchvision on uint8: sampled in float32, rounded half to even and saturated back.
    const Census tv(decompose_json(R"([{"op": "affine", "convention": "torchvision", )" + theta + R"(}])",
                                   spec(U8, {1, 3, 8, 10})));
    EXPECT_EQ(tv.tables, 3);
    EXPECT_EQ(tv.output.type, ir::Type::U8);
    EXPECT_EQ(tv.output.body->op, ir::Op::SatCast);
    EXPECT_EQ(tv.output.body->args[0]->op, ir::Op::RoundEven);
    EXPECT_EQ(loads_of(tv.output.body, 0), 4);
}

TEST(DecomposeOps, GridSampleReadsTheGridAsATable) {
    const GridFolder grids(1, 3, 4);
    for (const auto& [mode, taps] : {std::pair<std::string, int>{"nearest", 1}, {"bilinear", 4}}) {
        SCOPED_TRACE(mode);
        const ir::Graph g = decompose_json(R"([{"op": "grid_sample", "grid": "grid.npy", "mode": ")" + mode + R"("}])",
                                           spec(F32, {1, 3, 8, 10}), grids.dir());
        const Census c(g);
        // The grid and the size-derived floats.
        EXPECT_EQ(c.tables, 2);
        EXPECT_EQ(c.computes, 1);
        EXPECT_EQ(loads_of(c.output.body, 0), taps);
        EXPECT_EQ(g.concrete_shape(g.output), (std::vector<std::int64_t>{1, 3, 3, 4}));
    }
}

TEST(DecomposeOps, OpsChainAndAnEmptyPipelineCopies) {
    const ir::Graph g = decompose_json(R"([{"op": "resize", "size": [6, 6]}, {"op": "center_crop", "size": 4},
        {"op": "flip", "dims": [3]}, {"op": "convert", "dtype": "float32", "scale": true}])",
                                       spec(U8, {1, 3, 8, 10}, Layout::ChannelsLast));
    const Census c(g);
    EXPECT_EQ(c.computes, 4);
    EXPECT_TRUE(g.channels_last);
    EXPECT_EQ(c.output.origin, "op 3 (convert)");
    EXPECT_EQ(g.at(g.output - 1).origin, "op 2 (flip)");
    EXPECT_EQ(g.at(g.output - 2).origin, "op 1 (center_crop)");
    EXPECT_EQ(g.concrete_shape(g.output), (std::vector<std::int64_t>{1, 3, 4, 4}));

    const Census empty(decomp::decompose(Pipeline{}, spec(F32, {1, 2, 3, 4})));
    EXPECT_EQ(empty.computes, 1);
    EXPECT_EQ(empty.output.name, "op0.copy");
    EXPECT_EQ(empty.output.body->op, ir::Op::Load);
}

TEST(DecomposeOps, TakesTheShapesAPrepareInferred) {
    const Pipeline p = parse_pipeline(R"([{"op": "resize", "size": [4, 6]}, {"op": "convert", "dtype": "float32"}])", ".");
    const TensorSpec in = spec(U8, {1, 3, 8, 10});
    const std::vector<ShapeInfo> shapes = infer_shapes(p, ShapeInfo{in.dtype, in.shape});
    EXPECT_EQ(decomp::decompose(p, in, shapes).structure(), decomp::decompose(p, in).structure());
    // Shapes of another input or pipeline are an internal error, not a wrong graph.
    const std::vector<ShapeInfo> other = infer_shapes(p, ShapeInfo{U8, {1, 3, 9, 10}});
    EXPECT_EQ(error_of([&] { decomp::decompose(p, in, other); }),
              "internal: decompose was given the shapes of another pipeline or input");
    EXPECT_EQ(error_of([&] { decomp::decompose(p, in, std::span<const ShapeInfo>(shapes).first(2)); }),
              "internal: decompose was given the shapes of another pipeline or input");
    std::vector<ShapeInfo> wrong = shapes;
    wrong[1].shape[3] = 7;
    EXPECT_EQ(error_of([&] { decomp::decompose(p, in, wrong); }),
              "internal: the decomposition of op 0 (resize) gives the wrong result shape");
}

}  // namespace
}  // namespace toroid
