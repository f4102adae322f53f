// The colour ops as primitives (ops/color_op.cpp has the arithmetic they follow). Every
// op is pointwise (grey and saturation mix the channels of one pixel) except contrast,
// whose blend reads the mean of each image's grey image: a tensor of shape (N, 1, 1, 1)
// whose body sums the realized row sums (N, 1, H, 1) of image n's grey image (Sums over
// run-time extents), realized, and read by the blend as one value per image. Factors and
// thresholds are a float table (a random draw changes values, not the program), posterize's
// shift and step int32 tables.
#include "core/error.h"
#include "decomp/builder.h"

#include <algorithm>

namespace toroid::decomp {

using namespace ir;

namespace {

Expr as_f32(Expr e) { return cast(Type::F32, std::move(e)); }

// torchvision's _rgb_to_grayscale_image before the cast back: r * 0.2989f, then two fused
// multiply-adds (PyTorch's add_ with alpha), in float32.
Expr grey_of(const Graph& g, int tensor, const Expr& n, const Expr& h, const Expr& w) {
    auto channel = [&](std::int64_t c) { return as_f32(load4(g, tensor, {n, iconst(c), h, w})); };
    Expr l = mul(channel(0), fconst(static_cast<float>(0.2989)));
    l = fma(channel(1), fconst(static_cast<float>(0.587)), l);
    return fma(channel(2), fconst(static_cast<float>(0.114)), l);
}

}  // namespace

Value decompose_color(OpContext& ctx, const ColorOp& op, const Value& in) {
    Graph& g = ctx.graph;
    const DType dtype = in.spec.dtype;
    const bool u8 = dtype == DType::UInt8;
    const Dims& s = in.spec.shape;
    const Index4 i = output_index();
    const Expr x = load4(g, in.tensor, i);
    const Expr bound = fconst(u8 ? 255.0 : 1.0);
    auto done = [&](const Expr& body) {
        return Value{add_compute(ctx, ctx.name, dtype, in.shape, body), result_spec(in.spec, dtype, s), in.shape};
    };
    auto inverted = [&] { return u8 ? cast(Type::U8, sub(iconst(255, Type::I32), cast(Type::I32, x))) : sub(fconst(1.0), x); };
    // torchvision's _blend(image, other, ratio): image * float(ratio) + other * float(1 - ratio)
    // (one fused multiply-add), clamped, truncated for uint8.
    auto blend = [&](const Expr& other) {
        const int t = ctx.scalars("factors", {static_cast<float>(op.value), static_cast<float>(1.0 - op.value)});
        const Expr v = clamp(fma(other, scalar(t, 1), mul(as_f32(x), scalar(t, 0))), fconst(0.0), bound);
        return u8 ? cast(Type::U8, v) : v;
    };
    switch (op.fn) {
        case ColorFn::Invert: return done(inverted());
        case ColorFn::Posterize: {
            if (u8) {
                // image & mask, the mask keeping the top `bits` bits: (x >> k) * 2^k, k = 8 -
                // bits (a shift, not a division: lanes shift, they do not divide).
                const std::int32_t k = static_cast<std::int32_t>(8 - std::min<std::int64_t>(op.bits, 8));
                const int shift = g.add_constant_values(ctx.tensor_name("shift"), Type::I32, {iconst(1)},
                                                        std::vector<std::int32_t>{k}, Interval{0, 8});
                const int step = g.add_constant_values(ctx.tensor_name("step"), Type::I32, {iconst(1)},
                                                       std::vector<std::int32_t>{std::int32_t{1} << k}, Interval{1, 256});
                const Expr kept = shift_right(cast(Type::I32, x), load(shift, Type::I32, {iconst(0)}));
                return done(cast(Type::U8, mul(kept, load(step, Type::I32, {iconst(0)}))));
            }
            // floor(x * levels) clamped to [0, levels - 1], times 1 / levels.
            const double levels = static_cast<double>(std::int64_t{1} << op.bits);
            const int t = ctx.scalars("levels", {static_cast<float>(levels), static_cast<float>(levels - 1),
                                                 static_cast<float>(1.0 / levels)});
            return done(mul(clamp(floor(mul(x, scalar(t, 0))), fconst(0.0), scalar(t, 1)), scalar(t, 2)));
        }
        case ColorFn::Solarize: {
            // image >= threshold compares in float32 (a uint8 tensor against a Python float).
            const int t = ctx.scalars("threshold", {static_cast<float>(op.value)});
            return done(select(le(scalar(t, 0), as_f32(x)), inverted(), x));
        }
        case ColorFn::Brightness: {
            const int t = ctx.scalars("factor", {static_cast<float>(op.value)});
            const Expr v = clamp(mul(as_f32(x), scalar(t, 0)), fconst(0.0), bound);
            return done(u8 ? cast(Type::U8, v) : v);
        }
        case ColorFn::Saturation: {
            if (s[1] == 1) return done(x);  // torchvision returns a 1-channel image as it is
            Expr grey = grey_of(g, in.tensor, i[0], i[2], i[3]);
            if (u8) grey = floor(grey);
            return done(blend(grey));
        }
        case ColorFn::Contrast: {
            // The mean of image n's grey image: its sum (rows of sums over columns, in double;
            // exact for uint8, whose grey values are integers) over float32(H * W).
            const int rh = g.new_reduction_var(), rw = g.new_reduction_var();
            const Expr H = in.shape[2], W = in.shape[3];
            Expr grey;
            if (s[1] == 3) {
                grey = grey_of(g, in.tensor, var(0), var(2), var(rw));
                if (u8) grey = floor(grey);
            } else {
                grey = as_f32(load4(g, in.tensor, {var(0), iconst(0), var(2), var(rw)}));
            }
            // The row sums first, realized (N, 1, H, 1): every row is summed in parallel, where
            // one sum over the whole image is one long serial loop per image (on a GPU, one
            // thread); then the rows' sums in order: the same additions in the same order.
            const Expr row_body = sum(rw, W, cast(Type::F64, grey), Type::F64);
            const Shape rows_shape{in.shape[0], iconst(1), in.shape[2], iconst(1)};
            const int rows =
                g.add_compute(ctx.tensor_name("row_sums"), Type::F64, rows_shape, row_body, ctx.origin(), true);
            const Expr total =
                sum(rh, H, load4(g, rows, {var(0), iconst(0), var(rh), iconst(0)}), Type::F64);
            const Expr mean_body = div(as_f32(total), as_f32(mul(H, W)));
            const Shape mean_shape{in.shape[0], iconst(1), iconst(1), iconst(1)};
            const int mean = add_compute(ctx, "mean", DType::Float32, mean_shape, mean_body, /*realize=*/true);
            return done(blend(load4(g, mean, {i[0], iconst(0), iconst(0), iconst(0)})));
        }
        case ColorFn::Grayscale: {
            const Dims out{s[0], op.out_channels, s[2], s[3]};
            const Shape shape{in.shape[0], iconst(op.out_channels), in.shape[2], in.shape[3]};
            // Every output channel is the same grey value; a 1-channel image is repeated.
            Expr v = s[1] == 1 ? load4(g, in.tensor, {i[0], iconst(0), i[2], i[3]}) : grey_of(g, in.tensor, i[0], i[2], i[3]);
            if (u8) v = cast(Type::U8, v);
            return {add_compute(ctx, ctx.name, dtype, shape, v), result_spec(in.spec, dtype, out), shape};
        }
    }
    fail("internal: unknown colour op");
}

}  // namespace toroid::decomp
