// The decomposition driver (one op after another, each reading the previous op's
// result, through the table of each op kind's decomposition) and the index-remapping and
// pointwise ops: flip, crop, convert, normalize.
#include "core/error.h"
#include "decomp/builder.h"
#include "ops/registry.h"

#include <algorithm>
#include <cmath>

namespace toroid::decomp {

using namespace ir;
using ir::Shape;

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

int add_compute(OpContext& ctx, const std::string& what, DType dtype, const Shape& shape, Expr body, bool realize) {
    return ctx.graph.add_compute(ctx.tensor_name(what), ir_type(dtype), shape, std::move(body), ctx.origin(), realize);
}

Value decompose_flip(OpContext& ctx, const FlipOp& op, const Value& in) {
    Index4 i = output_index();
    for (int d : op.dims) {
        const auto k = static_cast<std::size_t>(d);
        i[k] = sub(sub(in.shape[k], iconst(1)), i[k]);
    }
    Expr body = load4(ctx.graph, in.tensor, i);
    return {add_compute(ctx, "flip", in.spec.dtype, in.shape, body), result_spec(in.spec, in.spec.dtype, in.spec.shape),
            in.shape};
}

Value decompose_crop(OpContext& ctx, const CropOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const Dims out{s[0], s[1], op.height, op.width};
    const auto [t, l] = crop_origin(op, s[2], s[3]);
    // What `in` reads: itself whole, or (a crop's result) a window of its crop's source.
    const CropView prev = in.crop ? *in.crop : CropView{in.tensor, in.shape, 0, 0, 0, s[2], 0, s[3]};
    // Row i of the result is row i + t of `in`: inside `in` and its window, clipped to the
    // result (offsets within +-2^31 each, so the sums cannot overflow).
    auto window = [](std::int64_t lo, std::int64_t hi, std::int64_t extent, std::int64_t shift, std::int64_t size) {
        const std::int64_t a = std::max<std::int64_t>(lo, 0) - shift, b = std::min(hi, extent) - shift;
        return std::pair{std::clamp<std::int64_t>(a, 0, size), std::clamp<std::int64_t>(b, 0, size)};
    };
    CropView view{prev.source, prev.source_shape, prev.top + t, prev.left + l};
    std::tie(view.lo_h, view.hi_h) = window(prev.lo_h, prev.hi_h, s[2], t, op.height);
    std::tie(view.lo_w, view.hi_w) = window(prev.lo_w, prev.hi_w, s[3], l, op.width);
    const bool empty = view.lo_h >= view.hi_h || view.lo_w >= view.hi_w;
    if (empty) view.top = view.left = view.lo_h = view.hi_h = view.lo_w = view.hi_w = 0;

    const Shape shape = with_hw(in.shape, ctx.param("height", ParamKind::Size, op.height),
                                ctx.param("width", ParamKind::Size, op.width));
    const Type type = ir_type(in.spec.dtype);
    const Expr zero = type == Type::F32 ? fconst(0.0) : iconst(0, type);
    auto result = [&](Expr body) {
        return Value{add_compute(ctx, "crop", in.spec.dtype, shape, std::move(body)),
                     result_spec(in.spec, in.spec.dtype, out), shape, view};
    };
    // A region reading nothing (wholly outside) is zeros.
    if (empty) return result(zero);
    Index4 i = output_index();
    const Expr top = ctx.param("top", ParamKind::Offset, view.top), left = ctx.param("left", ParamKind::Offset, view.left);
    const Expr ih = add(i[2], top), iw = add(i[3], left);
    // A region inside the source (the usual case: a center or random crop of a larger image)
    // is a plain shifted read; that it is inside is part of the structure, so such crops
    // share one program and never pay for the masks below.
    if (view.lo_h == 0 && view.hi_h == op.height && view.lo_w == 0 && view.hi_w == op.width)
        return result(load4(ctx.graph, view.source, {i[0], i[1], ih, iw}));
    // Rows and columns outside the window read zero; the load itself is clamped so that it
    // is always in bounds.
    const Expr lo_h = ctx.param("lo_h", ParamKind::Offset, view.lo_h), hi_h = ctx.param("hi_h", ParamKind::Offset, view.hi_h);
    const Expr lo_w = ctx.param("lo_w", ParamKind::Offset, view.lo_w), hi_w = ctx.param("hi_w", ParamKind::Offset, view.hi_w);
    const Expr inside = logical_and(logical_and(le(lo_h, i[2]), lt(i[2], hi_h)), logical_and(le(lo_w, i[3]), lt(i[3], hi_w)));
    const Expr H = view.source_shape[2], W = view.source_shape[3];
    const Expr v = load4(ctx.graph, view.source,
                         {i[0], i[1], clamp(ih, iconst(0), sub(H, iconst(1))), clamp(iw, iconst(0), sub(W, iconst(1)))});
    return result(select(inside, v, zero));
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
    return {add_compute(ctx, "convert", op.dtype, in.shape, body), result_spec(in.spec, op.dtype, s), in.shape};
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
    const int m = g.add_constant_values(ctx.tensor_name("mean"), Type::F32, {in.shape[1]}, mean);
    const int d = g.add_constant_values(ctx.tensor_name("std"), Type::F32, {in.shape[1]}, stdev);
    const Expr x = load4(g, in.tensor, output_index());
    const Expr body = div(sub(x, load(m, Type::F32, {var(1)})), load(d, Type::F32, {var(1)}));
    return {add_compute(ctx, "normalize", DType::Float32, in.shape, body), result_spec(in.spec, DType::Float32, s),
            in.shape};
}

namespace {

// The input as graph shape and strides. What the compiled code is specialized on: the
// dtype, a channel count of 1, 3 or 4 (others are a parameter), and the layout class — which
// dim is dense (W for contiguous images, C for channels-last ones, where a pixel of a
// specialized channel count is also a constant step along W); every other size and stride
// is a parameter.
int add_graph_input(Graph& g, const TensorSpec& in, Shape& shape) {
    const Dims& s = in.shape;
    const Dims& st = in.strides;
    const bool static_c = s[1] == 1 || s[1] == 3 || s[1] == 4;
    const Expr c = static_c ? iconst(s[1]) : g.add_param("input.c", ParamKind::Size, s[1]);
    shape = {g.add_param("input.n", ParamKind::Size, s[0]), c, g.add_param("input.h", ParamKind::Size, s[2]),
             g.add_param("input.w", ParamKind::Size, s[3])};
    const bool channels_last = s[1] > 1 && st[1] == 1;
    const char* names[4] = {"input.stride_n", "input.stride_c", "input.stride_h", "input.stride_w"};
    Shape strides(4);
    for (std::size_t d = 0; d < 4; ++d) {
        if (channels_last && d == 1) strides[d] = iconst(1);
        else if (channels_last && d == 3 && static_c && st[3] == s[1]) strides[d] = iconst(s[1]);
        else if (!channels_last && d == 3 && st[3] == 1) strides[d] = iconst(1);
        else strides[d] = g.add_param(names[d], ParamKind::Stride, st[d]);
    }
    return g.add_input("input", ir_type(in.dtype), shape, strides);
}

// The decomposition of each op kind, in OpKind order: every kind has one (a kind without
// one does not compile).
using DecomposeHook = Value(OpContext&, const toroid::Op&, const Value&);

template <typename T, Value (*F)(OpContext&, const T&, const Value&)>
Value hook(OpContext& ctx, const toroid::Op& op, const Value& in) {
    return F(ctx, std::get<T>(op), in);
}

constexpr OpTable<DecomposeHook> kDecompositions = [] {
    OpTable<DecomposeHook> t{};
    t[op_slot<ResizeOp>] = hook<ResizeOp, decompose_resize>;
    t[op_slot<AffineOp>] = hook<AffineOp, decompose_affine>;
    t[op_slot<GridSampleOp>] = hook<GridSampleOp, decompose_grid_sample>;
    t[op_slot<FlipOp>] = hook<FlipOp, decompose_flip>;
    t[op_slot<CropOp>] = hook<CropOp, decompose_crop>;
    t[op_slot<ConvertOp>] = hook<ConvertOp, decompose_convert>;
    t[op_slot<NormalizeOp>] = hook<NormalizeOp, decompose_normalize>;
    t[op_slot<PerspectiveOp>] = hook<PerspectiveOp, decompose_perspective>;
    t[op_slot<ColorOp>] = hook<ColorOp, decompose_color>;
    t[op_slot<PadOp>] = hook<PadOp, decompose_pad>;
    t[op_slot<EraseOp>] = hook<EraseOp, decompose_erase>;
    t[op_slot<BlurOp>] = hook<BlurOp, decompose_blur>;
    return t;
}();
// The sanitizers' build (GCC with -fsanitize=undefined) cannot compare function pointers in
// a constant expression; the registry tests check the table there.
#ifndef __SANITIZE_ADDRESS__
static_assert(op_table_complete(kDecompositions), "every op kind needs a decomposition");
#endif

}  // namespace

bool has_decomposition(OpKind kind) {
    const auto k = static_cast<std::size_t>(kind);
    return k < kOpKinds && kDecompositions[k] != nullptr;
}

Graph decompose(const Pipeline& p, const TensorSpec& in) {
    return decompose(p, in, infer_shapes(p, ShapeInfo{in.dtype, in.shape}));
}

Graph decompose(const Pipeline& p, const TensorSpec& in, std::span<const ShapeInfo> shapes) {
    if (shapes.size() != p.ops.size() + 1 || shapes.front() != ShapeInfo{in.dtype, in.shape})
        fail("internal: decompose was given the shapes of another pipeline or input");
    Graph g;
    g.channels_last = suggested_layout(in) == Layout::ChannelsLast;
    Shape shape;
    const int input = add_graph_input(g, in, shape);
    Value cur{input, in, shape};
    for (std::size_t k = 0; k < p.ops.size(); ++k) {
        const toroid::Op& op = p.ops[k];
        OpContext ctx{g, static_cast<int>(k), std::string(op_name(op))};
        cur = kDecompositions[static_cast<std::size_t>(op_kind(op))](ctx, op, cur);
        if (cur.spec.dtype != shapes[k + 1].dtype || cur.spec.shape != shapes[k + 1].shape)
            fail("internal: the decomposition of op {} ({}) gives the wrong result shape", k, op_name(op));
    }
    if (p.ops.empty()) {
        // An empty pipeline copies its input.
        OpContext ctx{g, 0, "copy"};
        cur = {add_compute(ctx, "copy", in.dtype, shape, load4(g, input, output_index())),
               result_spec(in, in.dtype, in.shape), shape};
    }
    const ShapeInfo& final_info = shapes.back();
    const auto out_shape = g.concrete_shape(cur.tensor);
    if (!std::equal(out_shape.begin(), out_shape.end(), final_info.shape.begin()))
        fail("internal: the result's shape expressions disagree with the pipeline's result shape");
    g.output = cur.tensor;
    return g;
}

}  // namespace toroid::decomp
