// The colour ops as primitives (ops/color_op.cpp has the arithmetic they follow). Every
// op is pointwise (grey and saturation mix the channels of one pixel) except contrast,
// whose blend reads the mean of each image's grey image: a tensor of shape (N, 1, 1, 1)
// whose body sums the realized row sums (N, 1, H, 1) of image n's grey image (Sums over
// run-time extents), realized, and read by the blend as one value per image. Factors and
// thresholds are a float table (a random draw changes values, not the program), posterize's
// shift and step int32 tables. Autocontrast reads each image and channel's minimum and
// maximum: two realized (N, C, 1, 1) tensors whose bodies are Min / Max reductions over the
// rows and columns (ir::reduce). adjust_gamma is a pointwise ir::pow by a run-time exponent;
// adjust_hue mixes a pixel's 3 channels through HSV and back.
#include "core/error.h"
#include "decomp/builder.h"

#include <algorithm>
#include <functional>

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

Expr scaled_to_float(const Expr& v, bool u8) {
    // to_dtype(uint8 -> float32, scale=True): x * float(1 / 255).
    return u8 ? mul(as_f32(v), fconst(static_cast<float>(1.0 / 255.0))) : v;
}

Expr float_to_dtype(const Expr& v, bool u8) {
    // to_dtype(float32 -> uint8, scale=True): x * float(255 + 1 - 1e-3), truncated.
    return u8 ? sat_cast(Type::U8, mul(v, fconst(static_cast<float>(255.0 + 1.0 - 1e-3)))) : v;
}

// std::fmod(a, 1) of a float: a - trunc(a) (exact: the fractional part of a float is one).
Expr fmod_one(const Expr& a) {
    const Expr trunc = select(lt(a, fconst(0.0)), neg(floor(neg(a))), floor(a));
    return sub(a, trunc);
}

// torch.remainder(a, 1) of a float: fmod, plus 1 where it is negative.
Expr remainder_one(const Expr& a) {
    const Expr m = fmod_one(a);
    return select(lt(m, fconst(0.0)), add(m, fconst(1.0)), m);
}

// A bool mask multiplied into a float (a tensor times a bool tensor): 1 or 0.
Expr as_mask(const Expr& b) { return select(b, fconst(1.0), fconst(0.0)); }

// torchvision's adjust_hue on a 3-channel image, output channel `c` (an expression of the
// output's channel variable): _rgb_to_hsv, h + factor remaindered by 1, _hsv_to_rgb, every
// float32 op in torchvision's order.
Expr hue_of(OpContext& ctx, const Value& in, const Index4& i, const Expr& factor, bool u8) {
    Graph& g = ctx.graph;
    auto channel = [&](std::int64_t c) { return scaled_to_float(load4(g, in.tensor, {i[0], iconst(c), i[2], i[3]}), u8); };
    const Expr r = channel(0), gr = channel(1), b = channel(2);
    const Expr one = fconst(1.0), zero = fconst(0.0);
    // _rgb_to_hsv
    const Expr maxc = max(max(r, gr), b), minc = min(min(r, gr), b);
    const Expr eqc = eq(maxc, minc);
    const Expr range = sub(maxc, minc);
    const Expr s = div(range, select(eqc, one, maxc));
    const Expr divisor = select(eqc, one, range);
    const Expr rc = div(sub(maxc, r), divisor), gc = div(sub(maxc, gr), divisor), bc = div(sub(maxc, b), divisor);
    const Expr neq_r = ne(maxc, r), eq_g = eq(maxc, gr);
    const Expr hg = mul(sub(add(rc, fconst(2.0)), bc), as_mask(logical_and(eq_g, neq_r)));
    const Expr hr = mul(sub(bc, gc), as_mask(logical_not(neq_r)));
    const Expr hb = mul(sub(add(gc, fconst(4.0)), rc), as_mask(logical_and(neq_r, logical_not(eq_g))));
    Expr h = add(add(hr, hg), hb);
    h = fmod_one(add(mul(h, fconst(static_cast<float>(1.0 / 6.0))), one));
    // the shift
    h = remainder_one(add(h, factor));
    // _hsv_to_rgb (v is maxc)
    const Expr h6 = mul(h, fconst(6.0));
    const Expr fi = floor(h6);
    const Expr f = sub(h6, fi);
    const Expr sector = mod(sat_cast(Type::I32, fi), iconst(6, Type::I32));
    const Expr sxf = mul(s, f);
    const Expr one_minus_s = sub(one, s);
    const Expr q = clamp(mul(sub(one, sxf), maxc), zero, one);
    const Expr t = clamp(mul(add(sxf, one_minus_s), maxc), zero, one);
    const Expr p = clamp(mul(one_minus_s, maxc), zero, one);
    // vpqt[select[c][sector]]: torchvision's table, one row per output channel.
    const std::vector<std::int32_t> table{0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2};
    const int tab = g.add_constant_values(ctx.tensor_name("hue_map"), Type::I32, {iconst(18)}, table, Interval{0, 3});
    const Expr pick = load(tab, Type::I32, {add(mul(i[1], iconst(6)), cast(Type::I64, sector))});
    const Expr v = select(eq(pick, iconst(0, Type::I32)), maxc,
                          select(eq(pick, iconst(1, Type::I32)), p, select(eq(pick, iconst(2, Type::I32)), q, t)));
    return float_to_dtype(v, u8);
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
        case ColorFn::Gamma: {
            const int t = ctx.scalars("gamma", {static_cast<float>(op.value), static_cast<float>(op.gain)});
            Expr v = pow(scaled_to_float(x, u8), scalar(t, 0));
            // torchvision multiplies and clamps only where gain != 1.
            if (op.gain != 1.0) v = clamp(mul(v, scalar(t, 1)), fconst(0.0), fconst(1.0));
            return done(float_to_dtype(v, u8));
        }
        case ColorFn::Hue: {
            if (s[1] == 1) return done(x);  // torchvision returns a 1-channel image as it is
            const int t = ctx.scalars("hue", {static_cast<float>(op.value)});
            return done(hue_of(ctx, in, i, scalar(t, 0), u8));
        }
        case ColorFn::Autocontrast: {
            // Each image and channel's least and greatest value (as float32), realized.
            const Shape shape{in.shape[0], in.shape[1], iconst(1), iconst(1)};
            auto extreme = [&](Reduce kind, const char* name) {
                const int rh = g.new_reduction_var(), rw = g.new_reduction_var();
                const Expr v = as_f32(load4(g, in.tensor, {var(0), var(1), var(rh), var(rw)}));
                const Expr body = reduce(kind, rh, in.shape[2], reduce(kind, rw, in.shape[3], v, Type::F32), Type::F32);
                const int id = add_compute(ctx, name, DType::Float32, shape, body, /*realize=*/true);
                return load4(g, id, {i[0], i[1], iconst(0), iconst(0)});
            };
            const Expr lo = extreme(Reduce::Min, "min"), hi = extreme(Reduce::Max, "max");
            const Expr same = eq(hi, lo);
            const Expr inv_scale = select(same, fconst(1.0), mul(sub(hi, lo), fconst(static_cast<float>(1.0 / (u8 ? 255.0 : 1.0)))));
            const Expr minimum = select(same, fconst(0.0), lo);
            const Expr v = clamp(div(sub(as_f32(x), minimum), inv_scale), fconst(0.0), bound);
            return done(u8 ? cast(Type::U8, v) : v);
        }
        case ColorFn::Equalize: {
            // The uint8 image as int32 (float inputs through to_dtype).
            auto byte_of = [&](const Expr& v) {
                return u8 ? cast(Type::I32, v) : cast(Type::I32, sat_cast(Type::U8, mul(v, fconst(static_cast<float>(255.0 + 1.0 - 1e-3)))));
            };
            auto pixel = [&](int rh, int rw) { return byte_of(load4(g, in.tensor, {var(0), var(1), var(rh), var(rw)})); };
            const Expr H = in.shape[2], W = in.shape[3];
            auto over_image = [&](Reduce kind, const std::function<Expr(const Expr&)>& term) {
                const int rh = g.new_reduction_var(), rw = g.new_reduction_var();
                return reduce(kind, rh, H, reduce(kind, rw, W, term(pixel(rh, rw)), Type::I32), Type::I32);
            };
            auto realized = [&](const char* name, const Shape& shape, const Expr& body) {
                return g.add_compute(ctx.tensor_name(name), Type::I32, shape, body, ctx.origin(), /*realize=*/true);
            };
            const Shape per_channel{in.shape[0], in.shape[1], iconst(1), iconst(1)};
            const Expr one = iconst(1, Type::I32), zero = iconst(0, Type::I32);
            // The histogram (the pixels of each value: a count per bin, which the scheduler
            // turns into one pass, schedule/histogram.h), the greatest value, how many pixels
            // hold it, and cum[k]: the pixels <= k.
            const Shape bins{in.shape[0], in.shape[1], iconst(256), iconst(1)};
            const int hist = realized("hist", bins, over_image(Reduce::Add, [&](const Expr& p) {
                                          return select(eq(p, cast(Type::I32, var(2))), one, zero);
                                      }));
            const int top = realized("top", per_channel, over_image(Reduce::Max, [](const Expr& p) { return p; }));
            const Expr top_at = load4(g, top, {i[0], i[1], iconst(0), iconst(0)});
            const int rb = g.new_reduction_var();
            const int cum = realized("cum", bins,
                                     sum(rb, iconst(256),
                                         select(le(var(rb), var(2)), load4(g, hist, {var(0), var(1), var(rb), iconst(0)}), zero),
                                         Type::I32));
            // (top lies in 0..255 wherever a pixel exists; clamped for the reads' bounds)
            const Expr count =
                load4(g, hist, {i[0], i[1], cast(Type::I64, clamp(top_at, zero, iconst(255, Type::I32))), iconst(0)});
            const Expr xb = byte_of(x);
            const Expr pixels = cast(Type::I32, mul(H, W));
            const Expr step = floordiv(sub(pixels, count), iconst(255, Type::I32));
            const Expr below = load4(g, cum, {i[0], i[1], cast(Type::I64, max(sub(xb, one), zero)), iconst(0)});
            const Expr lut = select(eq(xb, zero), zero,
                                    clamp(floordiv(add(below, floordiv(step, iconst(2, Type::I32))), max(step, one)), zero,
                                          iconst(255, Type::I32)));
            const Expr v = select(ne(step, zero), lut, xb);
            return done(u8 ? cast(Type::U8, v) : mul(as_f32(v), fconst(static_cast<float>(1.0 / 255.0))));
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
