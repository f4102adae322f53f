// Shared helpers of the decompositions: the value an op reads (a graph tensor with its
// dtype, shape and the strides the reference engine would give it) and index helpers.
// Internal to decomp/.
#pragma once

#include "core/tensor.h"
#include "decomp/decompose.h"
#include "ir/expr.h"
#include "ir/graph.h"
#include "ops/ops.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace toroid::decomp {

// A tensor flowing between ops. `spec` is what the reference engine would hand the op
// for this instance (the caller's strides for the first op, dense in the suggested layout
// after that): some PyTorch kernels are chosen by it, so the decomposition must see it too.
// `shape` is the same shape as graph expressions (constants and run-time parameters).
// A crop's result also says what it reads (concrete values of this instance), so that the
// crop right after it reads the same source: a chain of crops is one shifted, masked read
// whatever its length (offsets add up, the windows of rows and columns that are inside the
// source and every region before intersect).
struct CropView {
    int source = -1;           // the tensor the crops read
    ir::Shape source_shape;
    std::int64_t top = 0, left = 0;  // where this value's (0, 0) lies in the source
    // The rows [lo_h, hi_h) and columns [lo_w, hi_w) of this value read the source; the
    // rest are zero. Within [0, height] and [0, width].
    std::int64_t lo_h = 0, hi_h = 0, lo_w = 0, hi_w = 0;
};

struct Value {
    int tensor = -1;
    TensorSpec spec;
    ir::Shape shape;
    std::optional<CropView> crop = std::nullopt;  // set by decompose_crop
};

// Naming and provenance of the tensors and parameters one op adds. Every number that
// depends on the input's size (output sizes, offsets, tap counts, tables, float constants
// derived from sizes) must enter the graph as a parameter or table, never as a constant:
// the compiled program is shared by every input of the same structure.
struct OpContext {
    ir::Graph& graph;
    int index;         // position in the pipeline
    std::string name;  // op name
    std::string tensor_name(const std::string& what) const { return "op" + std::to_string(index) + "." + what; }
    std::string origin() const { return "op " + std::to_string(index) + " (" + name + ")"; }
    ir::Expr param(const std::string& what, ir::ParamKind kind, std::int64_t value) {
        return graph.add_param(tensor_name(what), kind, value);
    }
    // A table of float32 values computed on the host for this instance (sizes turned into
    // float scales, an affine matrix...), and one of its elements as an expression.
    int scalars(const std::string& what, const std::vector<float>& values) {
        return graph.add_constant_values(tensor_name(what), ir::Type::F32,
                                         {ir::iconst(static_cast<std::int64_t>(values.size()))}, values);
    }
};

using Index4 = std::array<ir::Expr, 4>;

// Vars 0..3: the (n, c, h, w) index of the tensor being defined.
inline Index4 output_index() { return {ir::var(0), ir::var(1), ir::var(2), ir::var(3)}; }

inline ir::Expr load4(const ir::Graph& g, int tensor, const Index4& i) {
    return ir::load(tensor, g.at(tensor).type, {i[0], i[1], i[2], i[3]});
}

// The zero of a type (0, 0.0f, or a narrow float's +0).
inline ir::Expr zero_of(ir::Type t) { return ir::is_float(t) ? ir::fconst(0.0, t) : ir::iconst(0, t); }

// A value of a narrow float (float16, bfloat16) widened to F32 to compute on; any other
// value as it is.
inline ir::Expr widen(ir::Expr x) {
    return ir::is_storage_only(x->type) ? ir::cast(ir::Type::F32, std::move(x)) : x;
}

// Element k of a float table.
inline ir::Expr scalar(int table, std::int64_t k) { return ir::load(table, ir::Type::F32, {ir::iconst(k)}); }

// An element of an int32 table as an index (I64).
inline ir::Expr load_index(const ir::Graph& g, int table, std::vector<ir::Expr> at) {
    return ir::cast(ir::Type::I64, ir::load(table, g.at(table).type, std::move(at)));
}

// The declared value range of index tables into an axis: every instance's entries are
// valid indices, below 2^31.
inline ir::Interval index_table_range() { return {0, (std::int64_t{1} << 31) - 2}; }

// Adds a computed 4-D tensor of `dtype` and `shape`.
int add_compute(OpContext& ctx, const std::string& what, DType dtype, const ir::Shape& shape, ir::Expr body,
                bool realize = false);

// The per-op decompositions. Each returns the op's result.
Value decompose_resize(OpContext& ctx, const ResizeOp& op, const Value& in);
Value decompose_affine(OpContext& ctx, const AffineOp& op, const Value& in);
Value decompose_perspective(OpContext& ctx, const PerspectiveOp& op, const Value& in);
Value decompose_grid_sample(OpContext& ctx, const GridSampleOp& op, const Value& in);
Value decompose_flip(OpContext& ctx, const FlipOp& op, const Value& in);
Value decompose_crop(OpContext& ctx, const CropOp& op, const Value& in);
Value decompose_convert(OpContext& ctx, const ConvertOp& op, const Value& in);
Value decompose_normalize(OpContext& ctx, const NormalizeOp& op, const Value& in);
Value decompose_color(OpContext& ctx, const ColorOp& op, const Value& in);  // color.cpp
Value decompose_pad(OpContext& ctx, const PadOp& op, const Value& in);      // pad.cpp
Value decompose_erase(OpContext& ctx, const EraseOp& op, const Value& in);  // pad.cpp
Value decompose_blur(OpContext& ctx, const BlurOp& op, const Value& in);    // blur.cpp

// The spec the reference engine gives an op's result: dense, in the suggested layout
// of the op's input.
TensorSpec result_spec(const TensorSpec& in, DType dtype, const Dims& shape);

// `in`'s shape with H and W replaced.
inline ir::Shape with_hw(const ir::Shape& in, ir::Expr h, ir::Expr w) { return {in[0], in[1], std::move(h), std::move(w)}; }

}  // namespace toroid::decomp
