// affine (affine_grid + grid_sample) and grid_sample as primitives: per output pixel
// the grid point (from theta and constant base coordinates, or from the user's grid
// as a constant tensor), the padding rule, then 1, 4 or 16 masked gathers weighted in
// float32, in the operation order of ops/grid_math.h (PyTorch's CPU kernel).
#include "core/error.h"
#include "decomp/builder.h"
#include "ops/grid_math.h"

namespace toroid::decomp {

using namespace ir;

namespace {

Expr f(float v) { return fconst(static_cast<double>(v)); }

Expr unnormalize(const Expr& coord, std::int64_t size, bool align_corners) {
    if (align_corners) return mul(add(coord, f(1.0f)), f(static_cast<float>(size - 1) / 2.0f));
    return sub(mul(add(coord, f(1.0f)), f(static_cast<float>(size) / 2.0f)), f(0.5f));
}

// clip_coordinate: x > 0 ? x : 0, then r < hi ? r : hi (NaN becomes 0).
Expr clip(const Expr& x, std::int64_t size) {
    const Expr hi = f(static_cast<float>(size - 1));
    const Expr r = select(lt(f(0.0f), x), x, f(0.0f));
    return select(lt(r, hi), r, hi);
}

Expr reflect(const Expr& x, std::int64_t size, bool align_corners) {
    float low = 0.0f, twice_span = 0.0f;
    if (align_corners) {
        if (size <= 1) return f(0.0f);
        twice_span = static_cast<float>(size - 1) * 2.0f;
    } else {
        low = -0.5f;
        twice_span = static_cast<float>(size) * 2.0f;
    }
    const Expr a = abs(sub(x, f(low)));
    const Expr periods = floor(div(a, f(twice_span)));  // a >= 0: floor is trunc
    const Expr extra = sub(a, mul(periods, f(twice_span)));
    const Expr other = sub(f(twice_span), extra);
    // std::min(extra, other): `other` only when strictly smaller, so NaN stays NaN.
    return add(select(lt(other, extra), other, extra), f(low));
}

Expr pad(const Expr& x, std::int64_t size, PaddingMode padding, bool align_corners) {
    switch (padding) {
        case PaddingMode::Zeros: return x;
        case PaddingMode::Border: return clip(x, size);
        case PaddingMode::Reflection: return clip(reflect(x, size, align_corners), size);
    }
    return x;
}

// An integer-valued coordinate as an index. Coordinates far outside the image (or NaN)
// all become one index a few pixels outside it, which every tap offset keeps outside:
// the result is the same as for the exact index, and the range stays small.
Expr to_index(const Expr& v, std::int64_t size) {
    constexpr std::int64_t margin = 8;
    const Expr lo = f(static_cast<float>(-margin)), hi = f(static_cast<float>(size + margin));
    const Expr ok = logical_and(lt(lo, v), lt(v, hi));
    return clamp(cast(Type::I64, select(ok, v, lo)), iconst(-margin), iconst(size + margin));
}

Expr inside(const Expr& i, std::int64_t size) { return logical_and(le(iconst(0), i), lt(i, iconst(size))); }

struct Sampler {
    const Graph& g;
    int src;
    std::int64_t H, W;
    // The input at (iy, ix) where both are inside, else 0. The load is clamped so that
    // it is always in bounds.
    Expr tap(const Expr& iy, const Expr& ix, const Expr& ok) const {
        const Expr v = load4(g, src, {var(0), var(1), clamp(iy, iconst(0), iconst(H - 1)),
                                      clamp(ix, iconst(0), iconst(W - 1))});
        return select(ok, v, f(0.0f));
    }
};

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

Expr sample(const Sampler& s, GridMode mode, PaddingMode padding, bool ac, const Expr& gx, const Expr& gy) {
    switch (mode) {
        case GridMode::Bilinear: {
            const Expr x = pad(unnormalize(gx, s.W, ac), s.W, padding, ac);
            const Expr y = pad(unnormalize(gy, s.H, ac), s.H, padding, ac);
            const Expr x0 = floor(x), y0 = floor(y);
            const Expr w = sub(x, x0), e = sub(f(1.0f), w);
            const Expr n = sub(y, y0), so = sub(f(1.0f), n);
            const Expr ix = to_index(x0, s.W), iy = to_index(y0, s.H);
            const Expr ix1 = add(ix, iconst(1)), iy1 = add(iy, iconst(1));
            const Expr in_w = inside(ix, s.W), in_e = inside(ix1, s.W);
            const Expr in_n = inside(iy, s.H), in_s = inside(iy1, s.H);
            const Expr vnw = s.tap(iy, ix, logical_and(in_n, in_w));
            const Expr vne = s.tap(iy, ix1, logical_and(in_n, in_e));
            const Expr vsw = s.tap(iy1, ix, logical_and(in_s, in_w));
            const Expr vse = s.tap(iy1, ix1, logical_and(in_s, in_e));
            return add(add(add(mul(vnw, mul(so, e)), mul(vne, mul(so, w))), mul(vsw, mul(n, e))), mul(vse, mul(n, w)));
        }
        case GridMode::Nearest: {
            const Expr x = pad(unnormalize(gx, s.W, ac), s.W, padding, ac);
            const Expr y = pad(unnormalize(gy, s.H, ac), s.H, padding, ac);
            const Expr ix = to_index(round_even(x), s.W), iy = to_index(round_even(y), s.H);
            return s.tap(iy, ix, logical_and(inside(ix, s.W), inside(iy, s.H)));
        }
        case GridMode::Bicubic: {
            // The fraction comes from the unpadded coordinate; padding then applies to
            // each of the 4 x 4 tap positions.
            const Expr x = unnormalize(gx, s.W, ac), y = unnormalize(gy, s.H, ac);
            const Expr x0 = floor(x), y0 = floor(y);
            const auto cx = cubic_coefficients(sub(x, x0));
            const auto cy = cubic_coefficients(sub(y, y0));
            std::array<Expr, 4> ix, iy;
            for (std::size_t k = 0; k < 4; ++k) {
                const Expr off = f(static_cast<float>(k) - 1.0f);
                ix[k] = to_index(pad(add(x0, off), s.W, padding, ac), s.W);
                iy[k] = to_index(pad(add(y0, off), s.H, padding, ac), s.H);
            }
            Expr out;
            for (std::size_t r = 0; r < 4; ++r) {
                Expr row;
                for (std::size_t k = 0; k < 4; ++k) {
                    const Expr term =
                        mul(cx[k], s.tap(iy[r], ix[k], logical_and(inside(ix[k], s.W), inside(iy[r], s.H))));
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

Value decompose_affine(OpContext& ctx, const AffineOp& op, const Value& in) {
    require_float(in, "affine");
    Graph& g = ctx.graph;
    const Dims& s = in.spec.shape;
    const std::int64_t oh = op.size ? (*op.size)[0] : s[2], ow = op.size ? (*op.size)[1] : s[3];
    std::vector<float> bx(static_cast<std::size_t>(ow)), by(static_cast<std::size_t>(oh));
    for (std::int64_t i = 0; i < ow; ++i) bx[static_cast<std::size_t>(i)] = grid::affine_base_coord(i, ow, op.align_corners);
    for (std::int64_t i = 0; i < oh; ++i) by[static_cast<std::size_t>(i)] = grid::affine_base_coord(i, oh, op.align_corners);
    const int tbx = g.add_constant_values(ctx.tensor_name("base_x"), Type::F32, {ow}, bx);
    const int tby = g.add_constant_values(ctx.tensor_name("base_y"), Type::F32, {oh}, by);
    const grid::Theta32 t = grid::theta_to_float(op.theta);
    const Expr x = load(tbx, Type::F32, {var(3)}), y = load(tby, Type::F32, {var(2)});
    // theta @ (x, y, 1), accumulated in k order.
    const Expr gx = add(add(mul(x, f(t[0][0])), mul(y, f(t[0][1]))), f(t[0][2]));
    const Expr gy = add(add(mul(x, f(t[1][0])), mul(y, f(t[1][1]))), f(t[1][2]));
    const Sampler smp{g, in.tensor, s[2], s[3]};
    const Dims out{s[0], s[1], oh, ow};
    return {add_compute(ctx, "affine", DType::Float32, out, sample(smp, op.mode, op.padding_mode, op.align_corners, gx, gy)),
            result_spec(in.spec, DType::Float32, out)};
}

Value decompose_grid_sample(OpContext& ctx, const GridSampleOp& op, const Value& in) {
    require_float(in, "grid_sample");
    Graph& g = ctx.graph;
    const Dims& s = in.spec.shape;
    const Tensor& grid = op.grid;
    const Dims& gs = grid.shape();
    if (grid.dtype() != DType::Float32 || gs[3] != 2 || gs[0] != s[0])
        fail("grid_sample: grid '{}' must be float32 of shape ({}, H, W, 2)", op.grid_path, s[0]);
    // The grid becomes a dense (N, H', W', 2) constant.
    std::vector<float> data;
    data.reserve(static_cast<std::size_t>(grid.numel()));
    for (std::int64_t n = 0; n < gs[0]; ++n)
        for (std::int64_t h = 0; h < gs[1]; ++h)
            for (std::int64_t w = 0; w < gs[2]; ++w)
                for (std::int64_t k = 0; k < 2; ++k) data.push_back(grid.at<float>(n, h, w, k));
    const int tg = g.add_constant_values(ctx.tensor_name("grid"), Type::F32, {gs[0], gs[1], gs[2], 2}, data);
    const Expr gx = load(tg, Type::F32, {var(0), var(2), var(3), iconst(0)});
    const Expr gy = load(tg, Type::F32, {var(0), var(2), var(3), iconst(1)});
    const Sampler smp{g, in.tensor, s[2], s[3]};
    const Dims out{s[0], s[1], gs[1], gs[2]};
    return {add_compute(ctx, "grid_sample", DType::Float32, out,
                        sample(smp, op.mode, op.padding_mode, op.align_corners, gx, gy)),
            result_spec(in.spec, DType::Float32, out)};
}

}  // namespace toroid::decomp
