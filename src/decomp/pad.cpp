// Decompositions of pad and erase: index rewrites of their input with a per-channel fill
// from a table. The paddings, the erased region and the output size are run-time
// parameters; which sides pad at all (so which rewrites exist) is the structure.
#include "core/error.h"
#include "decomp/builder.h"

#include <algorithm>

namespace toroid::decomp {

using namespace ir;
using ir::Shape;


namespace {

// The per-channel values of a fill, as a table of the image's dtype; one element as an
// expression of channel var(1).
Expr fill_table(OpContext& ctx, const std::string& what, DType dtype, const Expr& channels,
                const std::vector<double>& values) {
    Graph& g = ctx.graph;
    int t = -1;
    if (dtype == DType::UInt8) {
        std::vector<std::uint8_t> v(values.size());
        for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::uint8_t>(values[k]);
        t = g.add_constant_values(ctx.tensor_name(what), Type::U8, {channels}, v, Interval{0, 255});
    } else if (dtype != DType::Float32) {
        // uint16, float16 and bfloat16: their 16-bit patterns
        std::vector<std::uint16_t> v(values.size());
        for (std::size_t k = 0; k < v.size(); ++k) {
            const auto f = static_cast<float>(values[k]);
            v[k] = dtype == DType::UInt16 ? static_cast<std::uint16_t>(values[k])
                   : dtype == DType::Float16 ? Half(f).bits
                                             : BFloat16(f).bits;
        }
        t = g.add_constant_values(ctx.tensor_name(what), ir_type(dtype), {channels}, v,
                                  dtype == DType::UInt16 ? std::optional<Interval>(Interval{0, 65535}) : std::nullopt);
    } else {
        std::vector<float> v(values.size());
        for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(values[k]);
        t = g.add_constant_values(ctx.tensor_name(what), Type::F32, {channels}, v);
    }
    return load(t, ir_type(dtype), {var(1)});
}

}  // namespace

Value decompose_pad(OpContext& ctx, const PadOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const std::int64_t H = s[2], W = s[3];
    const Dims out{s[0], s[1], H + op.top + op.bottom, W + op.left + op.right};
    const Shape shape = with_hw(in.shape, ctx.param("height", ParamKind::Size, out[2]),
                                ctx.param("width", ParamKind::Size, out[3]));
    Index4 i = output_index();
    // Input coordinates before any padding rule: the output shifted by the leading padding
    // (a negative one crops).
    const Expr ih = sub(i[2], ctx.param("top", ParamKind::Offset, op.top));
    const Expr iw = sub(i[3], ctx.param("left", ParamKind::Offset, op.left));
    const bool pad_h = op.top > 0 || op.bottom > 0, pad_w = op.left > 0 || op.right > 0;

    // One axis's source index for mode `op.mode`, given the input size S; `lo`/`hi` the
    // range symmetric padding mirrors about (the cropped image's rows or columns).
    auto remap = [&](const Expr& x, const Expr& S, const char* axis, std::int64_t lead, std::int64_t trail,
                     std::int64_t size) -> Expr {
        const Expr last = sub(S, iconst(1));
        switch (op.mode) {
            case PadMode::Constant: return clamp(x, iconst(0), last);  // masked below
            case PadMode::Edge: return clamp(x, iconst(0), last);
            case PadMode::Reflect: {
                // Mirror about 0 and S - 1 (each padding < S, so one reflection suffices).
                const Expr a = max(x, neg(x));
                return clamp(min(a, sub(mul(iconst(2), last), a)), iconst(0), last);
            }
            case PadMode::Symmetric: {
                // Mirror about lo - 1/2 and hi - 1/2 (torchvision crops the negative sides
                // first; each padding <= hi - lo).
                const std::string n = std::string(axis);
                const Expr lo = ctx.param(n + "_lo", ParamKind::Offset, std::max<std::int64_t>(-lead, 0));
                const Expr hi = ctx.param(n + "_hi", ParamKind::Offset, size - std::max<std::int64_t>(-trail, 0));
                const Expr a = max(x, sub(sub(mul(iconst(2), lo), iconst(1)), x));
                return clamp(min(a, sub(sub(mul(iconst(2), hi), iconst(1)), a)), iconst(0), last);
            }
        }
        return x;
    };
    const Expr src_h = pad_h ? remap(ih, in.shape[2], "row", op.top, op.bottom, H) : ih;
    const Expr src_w = pad_w ? remap(iw, in.shape[3], "col", op.left, op.right, W) : iw;
    Expr body = load4(ctx.graph, in.tensor, {i[0], i[1], src_h, src_w});
    if (op.mode == PadMode::Constant && (pad_h || pad_w)) {
        Expr inside = bconst(true);
        if (pad_h) inside = logical_and(le(iconst(0), ih), lt(ih, in.shape[2]));
        if (pad_w) {
            const Expr in_w = logical_and(le(iconst(0), iw), lt(iw, in.shape[3]));
            inside = pad_h ? logical_and(inside, in_w) : in_w;
        }
        const std::vector<double> fill = pad_fill_values(op, in.spec.dtype, s[1]);
        body = select(inside, body, fill_table(ctx, "fill", in.spec.dtype, in.shape[1], fill));
    }
    return {add_compute(ctx, "pad", in.spec.dtype, shape, body), result_spec(in.spec, in.spec.dtype, out), shape};
}

Value decompose_erase(OpContext& ctx, const EraseOp& op, const Value& in) {
    const Dims& s = in.spec.shape;
    const auto [r0, r1, c0, c1] = erase_region(op, s[2], s[3]);
    Index4 i = output_index();
    const Expr row0 = ctx.param("row0", ParamKind::Offset, r0), row1 = ctx.param("row1", ParamKind::Offset, r1);
    const Expr col0 = ctx.param("col0", ParamKind::Offset, c0), col1 = ctx.param("col1", ParamKind::Offset, c1);
    const Expr inside = logical_and(logical_and(le(row0, i[2]), lt(i[2], row1)),
                                    logical_and(le(col0, i[3]), lt(i[3], col1)));
    const Expr v = fill_table(ctx, "value", in.spec.dtype, in.shape[1], erase_values(op, in.spec.dtype, s[1]));
    const Expr body = select(inside, v, load4(ctx.graph, in.tensor, i));
    return {add_compute(ctx, "erase", in.spec.dtype, in.shape, body), result_spec(in.spec, in.spec.dtype, s),
            in.shape};
}

}  // namespace toroid::decomp
