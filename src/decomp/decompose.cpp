// The decomposition driver (one op after another, each reading the previous op's
// result) and the index-remapping and pointwise ops: flip, crop, convert, normalize.
#include "core/error.h"
#include "decomp/builder.h"

#include <cmath>

namespace toroid::decomp {

using namespace ir;

Type ir_type(DType t) {
    switch (t) {
        case DType::UInt8: return Type::U8;
        case DType::Float32: return Type::F32;
    }
    return Type::U8;
}

TensorSpec result_spec(const TensorSpec& in, DType dtype, const Dims& shape) {
    const Layout l = suggested_layout(in);
    return TensorSpec{dtype, shape, dense_strides(shape, l)};
}

int add_compute(OpContext& ctx, const std::string& what, DType dtype, const Dims& shape, Expr body, bool realize) {
    return ctx.graph.add_compute(ctx.tensor_name(what), ir_type(dtype), {shape[0], shape[1], shape[2], shape[3]},
                                 std::move(body), ctx.origin(), realize);
}

Value decompose_flip(OpContext& ctx, const FlipOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    Index4 i = output_index();
    for (int d : op.dims) {
        const auto k = static_cast<std::size_t>(d);
        i[k] = sub(iconst(s[k] - 1), i[k]);
    }
    Expr body = load4(ctx.graph, in.tensor, i);
    return {add_compute(ctx, "flip", in.spec.dtype, s, body), result_spec(in.spec, in.spec.dtype, s)};
}

Value decompose_crop(OpContext& ctx, const CropOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const Dims out{s[0], s[1], op.height, op.width};
    Index4 i = output_index();
    // Rows and columns outside the image read zero; the load itself is clamped so that
    // it is always in bounds (the scheduler drops clamps and masks the ranges prove idle).
    const Expr ih = add(i[2], iconst(op.top)), iw = add(i[3], iconst(op.left));
    const Expr inside = logical_and(logical_and(le(iconst(0), ih), lt(ih, iconst(s[2]))),
                                    logical_and(le(iconst(0), iw), lt(iw, iconst(s[3]))));
    const Expr v = load4(ctx.graph, in.tensor,
                         {i[0], i[1], clamp(ih, iconst(0), iconst(s[2] - 1)), clamp(iw, iconst(0), iconst(s[3] - 1))});
    const Type t = ir_type(in.spec.dtype);
    const Expr zero = t == Type::F32 ? fconst(0.0) : iconst(0, t);
    return {add_compute(ctx, "crop", in.spec.dtype, out, select(inside, v, zero)),
            result_spec(in.spec, in.spec.dtype, out)};
}

Value decompose_convert(OpContext& ctx, const ConvertOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    Expr x = load4(ctx.graph, in.tensor, output_index());
    Expr body;
    if (op.dtype == in.spec.dtype) {
        body = x;
    } else if (in.spec.dtype == DType::UInt8 && op.dtype == DType::Float32) {
        // to_dtype scales by multiplying with 1/255 rounded to float32.
        body = cast(Type::F32, x);
        if (op.scale) body = mul(body, fconst(static_cast<float>(1.0 / 255.0)));
    } else if (in.spec.dtype == DType::Float32 && op.dtype == DType::UInt8) {
        // to_dtype multiplies by 255 + 1 - 1e-3 and truncates; out-of-range values saturate.
        if (op.scale) x = mul(x, fconst(static_cast<float>(255.0 + 1.0 - 1e-3)));
        body = sat_cast(Type::U8, x);
    } else {
        fail("convert: no conversion from {} to {}", dtype_name(in.spec.dtype), dtype_name(op.dtype));
    }
    return {add_compute(ctx, "convert", op.dtype, s, body), result_spec(in.spec, op.dtype, s)};
}

Value decompose_normalize(OpContext& ctx, const NormalizeOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const auto channels = static_cast<std::size_t>(s[1]);
    std::vector<float> mean(channels), stdev(channels);
    for (std::size_t c = 0; c < channels; ++c) {
        mean[c] = static_cast<float>(op.mean.size() == 1 ? op.mean[0] : op.mean[c]);
        stdev[c] = static_cast<float>(op.std.size() == 1 ? op.std[0] : op.std[c]);
    }
    Graph& g = ctx.graph;
    const int m = g.add_constant_values(ctx.tensor_name("mean"), Type::F32, {s[1]}, mean);
    const int d = g.add_constant_values(ctx.tensor_name("std"), Type::F32, {s[1]}, stdev);
    const Expr x = load4(g, in.tensor, output_index());
    const Expr body = div(sub(x, load(m, Type::F32, {var(1)})), load(d, Type::F32, {var(1)}));
    return {add_compute(ctx, "normalize", DType::Float32, s, body), result_spec(in.spec, DType::Float32, s)};
}

Graph decompose(const Pipeline& p, const TensorSpec& in) {
    const ShapeInfo final_info = infer_shape(p, ShapeInfo{in.dtype, in.shape});
    Graph g;
    const int input = g.add_input("input", ir_type(in.dtype), {in.shape[0], in.shape[1], in.shape[2], in.shape[3]},
                                  {in.strides[0], in.strides[1], in.strides[2], in.strides[3]});
    Value cur{input, in};
    for (std::size_t k = 0; k < p.ops.size(); ++k) {
        OpContext ctx{g, static_cast<int>(k), std::string(op_name(p.ops[k]))};
        cur = std::visit(
            [&](const auto& o) -> Value {
                using T = std::decay_t<decltype(o)>;
                if constexpr (std::is_same_v<T, ResizeOp>) return decompose_resize(ctx, o, cur);
                else if constexpr (std::is_same_v<T, AffineOp>) return decompose_affine(ctx, o, cur);
                else if constexpr (std::is_same_v<T, GridSampleOp>) return decompose_grid_sample(ctx, o, cur);
                else if constexpr (std::is_same_v<T, FlipOp>) return decompose_flip(ctx, o, cur);
                else if constexpr (std::is_same_v<T, CropOp>) return decompose_crop(ctx, o, cur);
                else if constexpr (std::is_same_v<T, ConvertOp>) return decompose_convert(ctx, o, cur);
                else return decompose_normalize(ctx, o, cur);
            },
            p.ops[k]);
    }
    if (p.ops.empty()) {
        // An empty pipeline copies its input.
        OpContext ctx{g, 0, "copy"};
        cur = {add_compute(ctx, "copy", in.dtype, in.shape, load4(g, input, output_index())),
               result_spec(in, in.dtype, in.shape)};
    }
    if (cur.spec.dtype != final_info.dtype || cur.spec.shape != final_info.shape)
        fail("internal: decomposition of the pipeline gives the wrong result shape");
    g.output = cur.tensor;
    return g;
}

}  // namespace toroid::decomp
