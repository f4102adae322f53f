// Decompositions of gaussian_blur and adjust_sharpness (ops/blur_op.cpp has the arithmetic):
// a pointwise body reading a neighbourhood of its input, one fused multiply-add per tap in
// PyTorch's order (kernel rows outer, columns inner, from 0). Gaussian blur reads a realized float32
// copy of its input in torch's reflect padding (mirrored about the edge pixels, as pad's
// reflect mode rewrites its indices; the ops before it fuse into that pass); its weights are a float table, so a new sigma changes
// values, not the program (the kernel size is the structure). Sharpness reads its 3x3
// neighbourhood inside the image and keeps the border; its factor is a table too.
#include "core/error.h"
#include "decomp/builder.h"

namespace toroid::decomp {

using namespace ir;

namespace {

Expr as_f32(Expr e) { return cast(Type::F32, std::move(e)); }

// The index torch's reflect padding reads for x in [-p, S - 1 + p] (p < S): mirrored about
// 0 and S - 1.
Expr reflect(const Expr& x, const Expr& S) {
    const Expr last = sub(S, iconst(1));
    const Expr a = max(x, neg(x));
    return clamp(min(a, sub(mul(iconst(2), last), a)), iconst(0), last);
}

}  // namespace

Value decompose_blur(OpContext& ctx, const BlurOp& op, const Value& in) {
    Graph& g = ctx.graph;
    const DType dtype = in.spec.dtype;
    const bool u8 = dtype == DType::UInt8;
    const Index4 i = output_index();
    const Expr H = in.shape[2], W = in.shape[3];
    auto done = [&](const Expr& body) {
        return Value{add_compute(ctx, ctx.name, dtype, in.shape, body), result_spec(in.spec, dtype, in.spec.shape),
                     in.shape};
    };
    if (op.fn == BlurFn::Gaussian) {
        const std::int64_t kx = op.kernel_size[0], ky = op.kernel_size[1];
        const int weights = ctx.scalars("weights", gaussian_kernel2d(op));
        // The reflect-padded image, realized in float32 (torchvision converts, then pads):
        // every tap then reads it at a constant offset, a plain vectorizable load that feeds
        // its multiply-add with no conversion (each pixel is read ky * kx times, converted once).
        const Shape padded_shape{in.shape[0], in.shape[1], add(H, iconst(ky - 1)), add(W, iconst(kx - 1))};
        const Expr padded_body = as_f32(load4(g, in.tensor, {i[0], i[1], reflect(sub(i[2], iconst(ky / 2)), H),
                                                             reflect(sub(i[3], iconst(kx / 2)), W)}));
        const int padded = add_compute(ctx, "padded", DType::Float32, padded_shape, padded_body, /*realize=*/true);
        // One chain of ky * kx fused multiply-adds over the taps t (row t / kx, column
        // t % kx): a loop in the generated code, whatever the kernel size.
        const int t = g.new_reduction_var();
        const Expr tap = var(t), row = floordiv(tap, iconst(kx)), col = mod(tap, iconst(kx));
        const Expr term = mul(load4(g, padded, {i[0], i[1], add(i[2], row), add(i[3], col)}),
                              load(weights, Type::F32, {tap}));
        const Expr acc = reduce(Reduce::Fma, t, iconst(ky * kx), term, Type::F32);
        return done(u8 ? cast(Type::U8, round_even(acc)) : acc);
    }
    // Sharpness: the interior 1 <= h < H - 1, 1 <= w < W - 1 (none where H or W <= 2).
    const std::vector<float> k = sharpness_kernel();
    const Expr x = load4(g, in.tensor, i);
    const Expr xf = as_f32(x);
    Expr blurred = fconst(0.0);
    for (std::int64_t r = 0; r < 3; ++r) {
        const Expr h = clamp(add(i[2], iconst(r - 1)), iconst(0), sub(H, iconst(1)));
        for (std::int64_t c = 0; c < 3; ++c) {
            const Expr w = clamp(add(i[3], iconst(c - 1)), iconst(0), sub(W, iconst(1)));
            blurred = fma(as_f32(load4(g, in.tensor, {i[0], i[1], h, w})),
                          fconst(static_cast<double>(k[static_cast<std::size_t>(r * 3 + c)])), blurred);
        }
    }
    if (u8) blurred = round_even(blurred);
    const int t = ctx.scalars("factor", {static_cast<float>(1.0 - op.factor)});
    Expr v = clamp(fma(sub(blurred, xf), scalar(t, 0), xf), fconst(0.0), fconst(u8 ? 255.0 : 1.0));
    if (u8) v = cast(Type::U8, v);
    const Expr inside = logical_and(logical_and(le(iconst(1), i[2]), lt(i[2], sub(H, iconst(1)))),
                                    logical_and(le(iconst(1), i[3]), lt(i[3], sub(W, iconst(1)))));
    // torchvision clamps the whole float image (border too), unless it returned the image
    // as it was (height or width <= 2).
    Expr border = x;
    if (!u8)
        border = select(logical_and(lt(iconst(2), H), lt(iconst(2), W)), clamp(x, fconst(0.0), fconst(1.0)), x);
    return done(select(inside, v, border));
}

}  // namespace toroid::decomp
