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
        case DType::UInt16: return Type::U16;
        case DType::Float16: return Type::F16;
        case DType::BFloat16: return Type::BF16;
    }
    return Type::U8;
}

DType dtype_of(Type t) {
    for (const DType d : kAllDTypes)
        if (ir_type(d) == t) return d;
    fail("internal: no dtype stores {} elements", type_name(t));
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
    const Expr zero = zero_of(ir_type(in.spec.dtype));
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

namespace {

// x (F32) as a value of `t`: rounded to a narrow float, else as it is.
Expr round_to(Type t, Expr x) { return is_storage_only(t) ? cast(t, std::move(x)) : x; }

// x (F32) rounded to `t` and widened back: the value a tensor of t holds after an op whose
// result PyTorch rounds to t.
Expr rounded_in(Type t, Expr x) { return is_storage_only(t) ? cast(Type::F32, cast(t, std::move(x))) : x; }

// torchvision.v2's to_dtype (ops.h ConvertOp) from `src` to `dst` of x (of src's IR type).
Expr convert_value(DType src, DType dst, bool scale, Expr x) {
    const Type st = ir_type(src), dt = ir_type(dst);
    if (src == dst) return x;
    const bool float_src = dtype_is_float(src), float_dst = dtype_is_float(dst);
    if (float_src && float_dst) return round_to(dt, widen(x));  // float -> float: one rounding
    if (float_src) {
        // to_dtype multiplies by max + 1 - 1e-3 in the source's dtype, then truncates; values
        // the cast cannot hold (which C++ leaves undefined) saturate.
        Expr v = widen(x);
        if (scale) v = rounded_in(st, mul(v, fconst(static_cast<float>(dtype_max_value(dst) + 1.0 - 1e-3))));
        return sat_cast(dt, v);
    }
    if (!float_dst) {
        // Integer to integer: a plain cast wraps (uint16 -> uint8 keeps the low byte); scaled,
        // the value bits shift (uint8 -> uint16 multiplies by 256, uint16 -> uint8 divides).
        if (!scale) return cast(dt, x);
        const int shift = dtype_value_bits(src) - dtype_value_bits(dst);
        const Expr wide = cast(Type::I32, x);
        return cast(dt, shift > 0 ? shift_right(wide, shift) : mul(wide, iconst(1 << -shift, Type::I32)));
    }
    // Integer to float: to_dtype casts, then multiplies by 1 / max in the destination's dtype.
    // uint16 -> float16 is the exception: the cast overflows to inf from 65520 up, so the
    // scale is applied in float32 and rounded once (docs/reference.md).
    const Expr f = cast(Type::F32, x);
    if (!scale) return round_to(dt, f);
    const Expr k = fconst(static_cast<float>(1.0 / dtype_max_value(src)));
    if (src == DType::UInt16 && dst == DType::Float16) return round_to(dt, mul(f, k));
    return round_to(dt, mul(rounded_in(dt, f), k));
}

}  // namespace

Value decompose_convert(OpContext& ctx, const ConvertOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const Expr body = convert_value(in.spec.dtype, op.dtype, op.scale, load4(ctx.graph, in.tensor, output_index()));
    return {add_compute(ctx, "convert", op.dtype, in.shape, body), result_spec(in.spec, op.dtype, s), in.shape};
}

Value decompose_normalize(OpContext& ctx, const NormalizeOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const auto channels = static_cast<std::size_t>(s[1]);
    std::vector<float> mean(channels), stdev(channels);
    // torchvision's normalize: mean and std become tensors of the image's dtype, then
    // (x - mean) / std, each step rounded to that dtype (float16 and bfloat16 compute each in
    // float32 and round, as PyTorch's kernels do).
    const Type t = ir_type(in.spec.dtype);
    auto in_dtype = [&](double v) { return round_to_dtype(in.spec.dtype, static_cast<float>(v)); };
    for (std::size_t c = 0; c < channels; ++c) {
        mean[c] = in_dtype(op.mean.size() == 1 ? op.mean[0] : op.mean[c]);
        stdev[c] = in_dtype(op.std.size() == 1 ? op.std[0] : op.std[c]);
    }
    Graph& g = ctx.graph;
    const int m = g.add_constant_values(ctx.tensor_name("mean"), Type::F32, {in.shape[1]}, mean);
    const int d = g.add_constant_values(ctx.tensor_name("std"), Type::F32, {in.shape[1]}, stdev);
    const Expr x = widen(load4(g, in.tensor, output_index()));
    const Expr body = round_to(t, div(rounded_in(t, sub(x, load(m, Type::F32, {var(1)}))), load(d, Type::F32, {var(1)})));
    return {add_compute(ctx, "normalize", in.spec.dtype, in.shape, body), result_spec(in.spec, in.spec.dtype, s),
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

// `in` as float32 (exact for every dtype), and a float32 `in` as `dtype`: rounded to
// nearest even, clamped for uint16 (docs/reference.md), rounded to nearest even for the
// narrow floats.
Value widen_to_float32(OpContext& ctx, const Value& in) {
    const Expr x = load4(ctx.graph, in.tensor, output_index());
    return {add_compute(ctx, "as_float32", DType::Float32, in.shape, cast(Type::F32, x)),
            result_spec(in.spec, DType::Float32, in.spec.shape), in.shape};
}

Value narrow_to(OpContext& ctx, const Value& in, DType dtype) {
    const Expr x = load4(ctx.graph, in.tensor, output_index());
    const Type t = ir_type(dtype);
    const Expr body = is_storage_only(t) ? cast(t, x) : sat_cast(t, round_even(x));
    return {add_compute(ctx, std::string("as_") + std::string(dtype_name(dtype)), dtype, in.shape, body),
            result_spec(in.spec, dtype, in.spec.shape), in.shape};
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
        const auto decomposition = kDecompositions[static_cast<std::size_t>(op_kind(op))];
        if (narrow_types(op, cur.spec.dtype) == NarrowTypes::ViaFloat32) {
            // The op on float32: its input widened, its result rounded back (pointwise
            // tensors, fused into the op's own kernels).
            const DType d = cur.spec.dtype;
            cur = narrow_to(ctx, decomposition(ctx, op, widen_to_float32(ctx, cur)), d);
        } else {
            cur = decomposition(ctx, op, cur);
        }
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
