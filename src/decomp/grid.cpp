// affine (affine_grid + grid_sample, or torchvision's affine), torchvision's perspective and
// grid_sample as
// primitives: per output pixel the grid point (from theta and constant base coordinates,
// or from the user's grid as a constant tensor), the padding rule, then 1, 4 or 16 masked
// gathers weighted in float32, in the operation order of ops/grid_math.h (PyTorch's CPU
// kernel); torchvision's fill blend and uint8 rounding after that.
#include "core/error.h"
#include "decomp/builder.h"
#include "ops/grid_math.h"

#include <optional>

namespace toroid::decomp {

using namespace ir;
using ir::Shape;

namespace {

Expr f(float v) { return fconst(static_cast<double>(v)); }

// The float constants one axis of size n contributes, computed on the host in float32
// exactly as PyTorch's kernel does (so a new size needs no new code): the unnormalize
// scale, the clip bound, the reflection interval and the index guard.
struct AxisScalars {
    enum : std::int64_t { kUnnormalize, kClipHigh, kReflectLow, kReflectSpan, kIndexHigh, kCount };
};
constexpr std::int64_t kMargin = 8;

void axis_scalars(std::int64_t n, bool align_corners, std::vector<float>& out) {
    out.push_back(align_corners ? static_cast<float>(n - 1) / 2.0f : static_cast<float>(n) / 2.0f);
    out.push_back(static_cast<float>(n - 1));
    out.push_back(align_corners ? 0.0f : -0.5f);
    out.push_back(align_corners ? static_cast<float>(n - 1) * 2.0f : static_cast<float>(n) * 2.0f);
    out.push_back(static_cast<float>(n + kMargin));
}

// One input axis: its size (expression) and its row in the op's float table.
struct Axis {
    Expr size;
    int table;
    std::int64_t row;  // first element of this axis's AxisScalars
    bool degenerate;   // size 1 with align_corners: reflection maps everything to 0
    Expr scalar(std::int64_t k) const { return decomp::scalar(table, row + k); }
};

// `fused`: torchvision's arithmetic (see sample) computes (coord + 1) * scale - 0.5 as one
// fused multiply-add.
Expr unnormalize(const Expr& coord, const Axis& a, bool align_corners, bool fused = false) {
    if (fused && !align_corners) return fma(add(coord, f(1.0f)), a.scalar(AxisScalars::kUnnormalize), f(-0.5f));
    if (align_corners) return mul(add(coord, f(1.0f)), a.scalar(AxisScalars::kUnnormalize));
    return sub(mul(add(coord, f(1.0f)), a.scalar(AxisScalars::kUnnormalize)), f(0.5f));
}

// clip_coordinate: x > 0 ? x : 0, then r < hi ? r : hi (NaN becomes 0).
Expr clip(const Expr& x, const Axis& a) {
    const Expr hi = a.scalar(AxisScalars::kClipHigh);
    const Expr r = select(lt(f(0.0f), x), x, f(0.0f));
    return select(lt(r, hi), r, hi);
}

Expr reflect(const Expr& x, const Axis& a, bool align_corners) {
    if (align_corners && a.degenerate) return f(0.0f);
    const Expr low = a.scalar(AxisScalars::kReflectLow), twice_span = a.scalar(AxisScalars::kReflectSpan);
    const Expr d = sub(x, low);
    const Expr abs_d = abs(d);
    const Expr periods = floor(div(abs_d, twice_span));  // abs_d >= 0: floor is trunc
    const Expr extra = sub(abs_d, mul(periods, twice_span));
    const Expr other = sub(twice_span, extra);
    // std::min(extra, other): `other` only when strictly smaller, so NaN stays NaN.
    return add(select(lt(other, extra), other, extra), low);
}

Expr pad(const Expr& x, const Axis& a, PaddingMode padding, bool align_corners) {
    switch (padding) {
        case PaddingMode::Zeros: return x;
        case PaddingMode::Border: return clip(x, a);
        case PaddingMode::Reflection: return clip(reflect(x, a, align_corners), a);
    }
    return x;
}

// An integer-valued coordinate as an index. Coordinates far outside the image (or NaN)
// all become one index a few pixels outside it, which every tap offset keeps outside:
// the result is the same as for the exact index, and the range stays small.
Expr to_index(const Expr& v, const Axis& a) {
    const Expr lo = f(static_cast<float>(-kMargin)), hi = a.scalar(AxisScalars::kIndexHigh);
    const Expr ok = logical_and(lt(lo, v), lt(v, hi));
    return clamp(cast(Type::I64, select(ok, v, lo)), iconst(-kMargin), add(a.size, iconst(kMargin)));
}

Expr inside(const Expr& i, const Axis& a) { return logical_and(le(iconst(0), i), lt(i, a.size)); }

struct Sampler {
    const Graph& g;
    int src;
    Axis h, w;
    // The input at (iy, ix) where both are inside, else `outside` (0 unless a fill). The
    // load is clamped so that it is always in bounds; uint8 is read as float32, as
    // torchvision samples it.
    Expr tap(const Expr& iy, const Expr& ix, const Expr& ok, const Expr& outside = f(0.0f)) const {
        Expr v = load4(g, src, {var(0), var(1), clamp(iy, iconst(0), sub(h.size, iconst(1))),
                                clamp(ix, iconst(0), sub(w.size, iconst(1)))});
        if (g.at(src).type != Type::F32) v = cast(Type::F32, v);
        return select(ok, v, outside);
    }
};

Sampler make_sampler(OpContext& ctx, const Value& in, bool align_corners, std::vector<float> leading = {}) {
    const std::int64_t row_w = static_cast<std::int64_t>(leading.size());
    axis_scalars(in.spec.shape[3], align_corners, leading);
    const std::int64_t row_h = static_cast<std::int64_t>(leading.size());
    axis_scalars(in.spec.shape[2], align_corners, leading);
    const int table = ctx.scalars("scalars", leading);
    return Sampler{ctx.graph, in.tensor, Axis{in.shape[2], table, row_h, in.spec.shape[2] <= 1},
                   Axis{in.shape[3], table, row_w, in.spec.shape[3] <= 1}};
}

std::array<Expr, 4> cubic_coefficients(const Expr& t) {
    const float A = grid::kCubicA;
    auto outer = [&](const Expr& x) {
        return sub(mul(add(mul(sub(mul(f(A), x), f(5.0f * A)), x), f(8.0f * A)), x), f(4.0f * A));
    };
    auto inner = [&](const Expr& x) {
        return add(mul(mul(sub(mul(f(A + 2.0f), x), f(A + 3.0f)), x), x), f(1.0f));
    };
    return {outer(add(t, f(1.0f))), inner(t), inner(sub(f(1.0f), t)), outer(sub(f(2.0f), t))};
}

// `fill` (nearest and bilinear, zeros padding) is torchvision's fill for channel var(1),
// or null for none. `fused` (nearest and bilinear): the arithmetic of PyTorch's vectorized
// CPU kernel as GCC builds it with floating-point contraction on (measured on Debian's
// PyTorch 1.13, AVX2 kernel): the unnormalize and the bilinear sum (nw's product, then ne,
// sw and se added) are fused multiply-adds. torchvision's affine runs on that kernel.
Expr sample(const Sampler& s, GridMode mode, PaddingMode padding, bool ac, const Expr& gx, const Expr& gy,
            const Expr* fill = nullptr, bool fused = false) {
    switch (mode) {
        case GridMode::Bilinear: {
            const Expr x = pad(unnormalize(gx, s.w, ac, fused), s.w, padding, ac);
            const Expr y = pad(unnormalize(gy, s.h, ac, fused), s.h, padding, ac);
            const Expr x0 = floor(x), y0 = floor(y);
            const Expr w = sub(x, x0), e = sub(f(1.0f), w);
            const Expr n = sub(y, y0), so = sub(f(1.0f), n);
            const Expr ix = to_index(x0, s.w), iy = to_index(y0, s.h);
            const Expr ix1 = add(ix, iconst(1)), iy1 = add(iy, iconst(1));
            const Expr in_w = inside(ix, s.w), in_e = inside(ix1, s.w);
            const Expr in_n = inside(iy, s.h), in_s = inside(iy1, s.h);
            const Expr vnw = s.tap(iy, ix, logical_and(in_n, in_w));
            const Expr vne = s.tap(iy, ix1, logical_and(in_n, in_e));
            const Expr vsw = s.tap(iy1, ix, logical_and(in_s, in_w));
            const Expr vse = s.tap(iy1, ix1, logical_and(in_s, in_e));
            const Expr wnw = mul(so, e), wne = mul(so, w), wsw = mul(n, e), wse = mul(n, w);
            // ((nw + ne) + sw) + se; fused: fma(se, fma(sw, fma(ne, nw))).
            auto sum4 = [&](const Expr& a, const Expr& b, const Expr& c, const Expr& d) {
                if (fused) return fma(d, wse, fma(c, wsw, fma(b, wne, mul(a, wnw))));
                return add(add(add(mul(a, wnw), mul(b, wne)), mul(c, wsw)), mul(d, wse));
            };
            const Expr v = sum4(vnw, vne, vsw, vse);
            if (!fill) return v;
            // torchvision samples an all-ones channel beside the image (the same sums, each
            // tap 1 or 0), then blends: (v - fill) * mask + fill.
            auto one = [&](const Expr& ok) { return select(ok, f(1.0f), f(0.0f)); };
            const Expr mask = sum4(one(logical_and(in_n, in_w)), one(logical_and(in_n, in_e)),
                                   one(logical_and(in_s, in_w)), one(logical_and(in_s, in_e)));
            return add(mul(sub(v, *fill), mask), *fill);
        }
        case GridMode::Nearest: {
            const Expr x = pad(unnormalize(gx, s.w, ac, fused), s.w, padding, ac);
            const Expr y = pad(unnormalize(gy, s.h, ac, fused), s.h, padding, ac);
            const Expr ix = to_index(round_even(x), s.w), iy = to_index(round_even(y), s.h);
            // With a fill, the all-ones mask is 0 exactly where the picked pixel is outside.
            return s.tap(iy, ix, logical_and(inside(ix, s.w), inside(iy, s.h)), fill ? *fill : f(0.0f));
        }
        case GridMode::Bicubic: {
            if (fill) fail("internal: affine fill with bicubic mode");
            // The fraction comes from the unpadded coordinate; padding then applies to
            // each of the 4 x 4 tap positions.
            const Expr x = unnormalize(gx, s.w, ac), y = unnormalize(gy, s.h, ac);
            const Expr x0 = floor(x), y0 = floor(y);
            const auto cx = cubic_coefficients(sub(x, x0));
            const auto cy = cubic_coefficients(sub(y, y0));
            std::array<Expr, 4> ix, iy;
            for (std::size_t k = 0; k < 4; ++k) {
                const Expr off = f(static_cast<float>(k) - 1.0f);
                ix[k] = to_index(pad(add(x0, off), s.w, padding, ac), s.w);
                iy[k] = to_index(pad(add(y0, off), s.h, padding, ac), s.h);
            }
            Expr out;
            for (std::size_t r = 0; r < 4; ++r) {
                Expr row;
                for (std::size_t k = 0; k < 4; ++k) {
                    const Expr term =
                        mul(cx[k], s.tap(iy[r], ix[k], logical_and(inside(ix[k], s.w), inside(iy[r], s.h))));
                    row = k == 0 ? term : add(row, term);
                }
                const Expr term = mul(cy[r], row);
                out = r == 0 ? term : add(out, term);
            }
            return out;
        }
    }
    fail("internal: unknown grid mode");
}

void require_float(const Value& in, const char* op) {
    if (in.spec.dtype != DType::Float32)
        fail("{} needs float32 input, got {} (convert to float32 first)", op, dtype_name(in.spec.dtype));
}

}  // namespace

namespace {

// The op's fill for channel var(1), from a run-time table of one value per channel (new
// fill values bind, they do not compile); nothing without a fill.
std::optional<Expr> fill_value(OpContext& ctx, const std::vector<double>& fill, const Value& in) {
    if (fill.empty()) return std::nullopt;
    std::vector<float> values(static_cast<std::size_t>(in.spec.shape[1]));
    for (std::size_t c = 0; c < values.size(); ++c) values[c] = static_cast<float>(fill.size() == 1 ? fill[0] : fill[c]);
    const int tf = ctx.graph.add_constant_values(ctx.tensor_name("fill"), Type::F32, {in.shape[1]}, values);
    return load(tf, Type::F32, {var(1)});
}

// torchvision's affine (AffineConvention::Torchvision): its _affine_grid from the pixel
// matrix, grid_sample on the float32 image, the fill blend, and for uint8 the rounding
// back (half to even, as torch.round).
Value decompose_torchvision_affine(OpContext& ctx, const AffineOp& op, const Value& in) {
    Graph& g = ctx.graph;
    const Dims& s = in.spec.shape;
    const std::int64_t oh = op.size ? (*op.size)[0] : s[2], ow = op.size ? (*op.size)[1] : s[3];
    const Expr eh = op.size ? ctx.param("out_h", ParamKind::Size, oh) : in.shape[2];
    const Expr ew = op.size ? ctx.param("out_w", ParamKind::Size, ow) : in.shape[3];
    std::vector<float> bx(static_cast<std::size_t>(ow)), by(static_cast<std::size_t>(oh));
    for (std::int64_t i = 0; i < ow; ++i) bx[static_cast<std::size_t>(i)] = grid::pixel_base_coord(i, ow);
    for (std::int64_t i = 0; i < oh; ++i) by[static_cast<std::size_t>(i)] = grid::pixel_base_coord(i, oh);
    const int tbx = g.add_constant_values(ctx.tensor_name("base_x"), Type::F32, {ew}, bx);
    const int tby = g.add_constant_values(ctx.tensor_name("base_y"), Type::F32, {eh}, by);
    // The rescaled matrix is a run-time table (r[k][j] at 2k + j): new matrices and input
    // sizes bind, they do not compile.
    const grid::Rescaled32 r = grid::rescaled_theta(op.theta, s[2], s[3]);
    const Sampler smp = make_sampler(ctx, in, false, {r[0][0], r[0][1], r[1][0], r[1][1], r[2][0], r[2][1]});
    const int tt = smp.w.table;
    const Expr x = load(tbx, Type::F32, {var(3)}), y = load(tby, Type::F32, {var(2)});
    // Whether the product is fused depends on the grid's size: part of the structure (only
    // grids under 67 pixels take the rounded form).
    const bool fused = grid::grid_product_fused(op.grid_fma, oh, ow);
    auto component = [&](std::int64_t j) {
        const Expr p0 = mul(x, scalar(tt, j));
        const Expr acc = fused ? fma(y, scalar(tt, 2 + j), p0) : add(p0, mul(y, scalar(tt, 2 + j)));
        return add(acc, scalar(tt, 4 + j));
    };
    const std::optional<Expr> fill = fill_value(ctx, op.fill, in);
    Expr body = sample(smp, op.mode, PaddingMode::Zeros, false, component(0), component(1), fill ? &*fill : nullptr,
                       op.sample_fma);
    const DType dtype = in.spec.dtype;
    if (dtype == DType::UInt8) body = sat_cast(Type::U8, round_even(body));
    const Dims out{s[0], s[1], oh, ow};
    const Shape shape = with_hw(in.shape, eh, ew);
    return {add_compute(ctx, "affine", dtype, shape, body), result_spec(in.spec, dtype, out), shape};
}

}  // namespace

Value decompose_affine(OpContext& ctx, const AffineOp& op, const Value& in) {
    if (op.convention == AffineConvention::Torchvision) return decompose_torchvision_affine(ctx, op, in);
    require_float(in, "affine");
    Graph& g = ctx.graph;
    const Dims& s = in.spec.shape;
    const std::int64_t oh = op.size ? (*op.size)[0] : s[2], ow = op.size ? (*op.size)[1] : s[3];
    const Expr eh = op.size ? ctx.param("out_h", ParamKind::Size, oh) : in.shape[2];
    const Expr ew = op.size ? ctx.param("out_w", ParamKind::Size, ow) : in.shape[3];
    std::vector<float> bx(static_cast<std::size_t>(ow)), by(static_cast<std::size_t>(oh));
    for (std::int64_t i = 0; i < ow; ++i) bx[static_cast<std::size_t>(i)] = grid::affine_base_coord(i, ow, op.align_corners);
    for (std::int64_t i = 0; i < oh; ++i) by[static_cast<std::size_t>(i)] = grid::affine_base_coord(i, oh, op.align_corners);
    const int tbx = g.add_constant_values(ctx.tensor_name("base_x"), Type::F32, {ew}, bx);
    const int tby = g.add_constant_values(ctx.tensor_name("base_y"), Type::F32, {eh}, by);
    // theta is a run-time table too: a new matrix per call needs no new code.
    const grid::Theta32 t = grid::theta_to_float(op.theta);
    const Sampler smp = make_sampler(ctx, in, op.align_corners, {t[0][0], t[0][1], t[0][2], t[1][0], t[1][1], t[1][2]});
    const int tt = smp.w.table;
    const Expr x = load(tbx, Type::F32, {var(3)}), y = load(tby, Type::F32, {var(2)});
    // theta @ (x, y, 1), accumulated in k order.
    const Expr gx = add(add(mul(x, scalar(tt, 0)), mul(y, scalar(tt, 1))), scalar(tt, 2));
    const Expr gy = add(add(mul(x, scalar(tt, 3)), mul(y, scalar(tt, 4))), scalar(tt, 5));
    const std::optional<Expr> fill = fill_value(ctx, op.fill, in);
    const Dims out{s[0], s[1], oh, ow};
    const Shape shape = with_hw(in.shape, eh, ew);
    return {add_compute(ctx, "affine", DType::Float32, shape,
                        sample(smp, op.mode, op.padding_mode, op.align_corners, gx, gy, fill ? &*fill : nullptr)),
            result_spec(in.spec, DType::Float32, out), shape};
}

// torchvision's perspective: its _perspective_grid from the float32 coefficients (the
// numerators' and the denominator's products summed as its bmm sums them, then the
// quotient minus 1), then the sampling, fill and rounding of its affine.
Value decompose_perspective(OpContext& ctx, const PerspectiveOp& op, const Value& in) {
    Graph& g = ctx.graph;
    const Dims& s = in.spec.shape;
    const std::int64_t oh = s[2], ow = s[3];
    std::vector<float> bx(static_cast<std::size_t>(ow)), by(static_cast<std::size_t>(oh));
    for (std::int64_t i = 0; i < ow; ++i) bx[static_cast<std::size_t>(i)] = grid::perspective_base_coord(i);
    for (std::int64_t i = 0; i < oh; ++i) by[static_cast<std::size_t>(i)] = grid::perspective_base_coord(i);
    const int tbx = g.add_constant_values(ctx.tensor_name("base_x"), Type::F32, {in.shape[3]}, bx);
    const int tby = g.add_constant_values(ctx.tensor_name("base_y"), Type::F32, {in.shape[2]}, by);
    // The factors are a run-time table (numerator r[k][j] at 2k + j, then g and h): new
    // coefficients and sizes bind, they do not compile.
    const grid::Perspective32 p = grid::perspective_factors(op.coefficients, oh, ow);
    const auto& r = p.numerator;
    const Sampler smp = make_sampler(ctx, in, false, {r[0][0], r[0][1], r[1][0], r[1][1], r[2][0], r[2][1],
                                                      p.denominator[0], p.denominator[1]});
    const int tt = smp.w.table;
    const Expr x = load(tbx, Type::F32, {var(3)}), y = load(tby, Type::F32, {var(2)});
    const bool fused = grid::grid_product_fused(op.grid_fma, oh, ow);
    auto product = [&](std::int64_t k0, std::int64_t k1) {
        const Expr p0 = mul(x, scalar(tt, k0));
        return fused ? fma(y, scalar(tt, k1), p0) : add(p0, mul(y, scalar(tt, k1)));
    };
    const Expr den = add(product(6, 7), f(1.0f));
    auto component = [&](std::int64_t j) { return sub(div(add(product(j, 2 + j), scalar(tt, 4 + j)), den), f(1.0f)); };
    const std::optional<Expr> fill = fill_value(ctx, op.fill, in);
    Expr body = sample(smp, op.mode, PaddingMode::Zeros, false, component(0), component(1), fill ? &*fill : nullptr,
                       op.sample_fma);
    const DType dtype = in.spec.dtype;
    if (dtype == DType::UInt8) body = sat_cast(Type::U8, round_even(body));
    return {add_compute(ctx, "perspective", dtype, in.shape, body), result_spec(in.spec, dtype, s), in.shape};
}

Value decompose_grid_sample(OpContext& ctx, const GridSampleOp& op, const Value& in) {
    require_float(in, "grid_sample");
    Graph& g = ctx.graph;
    const Dims& s = in.spec.shape;
    const Tensor& grid = op.grid;
    const Dims& gs = grid.shape();
    if (grid.dtype() != DType::Float32 || gs[3] != 2 || gs[0] != s[0])
        fail("grid_sample: grid '{}' must be float32 of shape ({}, H, W, 2)", op.grid_path, s[0]);
    // The grid becomes a dense (N, H', W', 2) table.
    std::vector<float> data;
    data.reserve(static_cast<std::size_t>(grid.numel()));
    for (std::int64_t n = 0; n < gs[0]; ++n)
        for (std::int64_t h = 0; h < gs[1]; ++h)
            for (std::int64_t w = 0; w < gs[2]; ++w)
                for (std::int64_t k = 0; k < 2; ++k) data.push_back(grid.at<float>(n, h, w, k));
    const Expr gh = ctx.param("out_h", ParamKind::Size, gs[1]), gw = ctx.param("out_w", ParamKind::Size, gs[2]);
    const int tg = g.add_constant_values(ctx.tensor_name("grid"), Type::F32, {in.shape[0], gh, gw, iconst(2)}, data);
    const Expr gx = load(tg, Type::F32, {var(0), var(2), var(3), iconst(0)});
    const Expr gy = load(tg, Type::F32, {var(0), var(2), var(3), iconst(1)});
    const Sampler smp = make_sampler(ctx, in, op.align_corners);
    const Dims out{s[0], s[1], gs[1], gs[2]};
    const Shape shape = with_hw(in.shape, gh, gw);
    return {add_compute(ctx, "grid_sample", DType::Float32, shape,
                        sample(smp, op.mode, op.padding_mode, op.align_corners, gx, gy)),
            result_spec(in.spec, DType::Float32, out), shape};
}

}  // namespace toroid::decomp
