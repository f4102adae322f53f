// Resize as primitives. The index and weight tables of ops/resize_math.h become
// constant tensors; the body gathers input taps through them and sums over a small
// static tap axis. The separable kernels (antialias, and every uint8 bilinear/bicubic)
// are two such sums, the horizontal one realized into a buffer (as PyTorch's kernels
// do, so that each input row is filtered once), uint8 in int16 fixed point.
#include "core/error.h"
#include "decomp/builder.h"
#include "ops/resize_math.h"

#include <algorithm>

namespace toroid::decomp {

using namespace ir;
using ir::Shape;

namespace {

std::vector<std::int32_t> to_i32(const std::vector<std::int64_t>& v) {
    return std::vector<std::int32_t>(v.begin(), v.end());
}

// A separable axis rewritten so that every output reads exactly `taps` consecutive
// inputs starting at start[o], all inside the image: runs that would cross the end are
// shifted left, and their weights with them (the extra taps weigh 0). The weights are laid
// out tap-major ([tap][output]) or output-major ([output][tap]) as the pass reads them.
struct ContiguousTaps {
    int taps = 0;
    std::vector<std::int32_t> start;
    // The taps PyTorch reads are [first_tap, last_tap) of the run; the others weigh 0
    // and must not be read at all (0 * NaN is NaN).
    std::vector<std::int32_t> first_tap, last_tap;
    std::vector<float> weight;             // float kernel
    std::vector<std::int16_t> weight_i16;  // uint8 kernel
};

ContiguousTaps contiguous_taps(const ResizeAxisWeights& t, bool tap_major) {
    ContiguousTaps r;
    r.taps = static_cast<int>(std::min<std::int64_t>(t.taps, t.in_size));
    const auto taps = static_cast<std::size_t>(r.taps);
    const auto out = static_cast<std::size_t>(t.out_size);
    const bool fixed = !t.weight_i16.empty();
    r.start.resize(out);
    r.first_tap.resize(out);
    r.last_tap.resize(out);
    if (fixed) r.weight_i16.assign(out * taps, 0);
    else r.weight.assign(out * taps, 0.0f);
    // Output o's taps j < count[o] go to positions shift + j of its run (shift = first -
    // start, checked once per output), copied as one run or, tap-major, one per tap row.
    auto place = [&](auto* dst, const auto* src) {
        for (std::size_t o = 0; o < out; ++o) {
            const std::int64_t first = t.first[o];
            const std::int64_t start = std::clamp<std::int64_t>(first, 0, t.in_size - r.taps);
            const auto count = static_cast<std::size_t>(std::max<std::int32_t>(t.count[o], 0));
            const auto shift = static_cast<std::size_t>(first - start);
            r.start[o] = static_cast<std::int32_t>(start);
            r.first_tap[o] = static_cast<std::int32_t>(first - start);
            r.last_tap[o] = static_cast<std::int32_t>(first - start + t.count[o]);
            if (count > 0 && (first < start || shift + count > taps)) fail("internal: resize tap outside its run");
            const auto* from = src + o * static_cast<std::size_t>(t.taps);
            if (tap_major)
                for (std::size_t j = 0; j < count; ++j) dst[(shift + j) * out + o] = from[j];
            else
                std::copy(from, from + count, dst + o * taps + shift);
        }
    };
    if (fixed) place(r.weight_i16.data(), t.weight_i16.data());
    else place(r.weight.data(), t.weight.data());
    return r;
}

// Whether the vertical pass runs first. PyTorch's CPU kernels run the horizontal pass
// first, and uint8 rounds between the passes, so uint8 keeps that order. In float32 the two
// orders differ only by rounding (well within the float tolerance; an output is NaN or
// infinite in both or in neither, up to overflow), so the order doing fewer tap products
// runs: vertical first when the height shrinks more than the width, which also leaves the
// horizontal pass (the one that reads along the row through index tables) fewer rows. Two
// orders at most per structure: the shape-generic program cache keeps one of each.
bool vertical_first(const ResizePlan& p) {
    if (p.kernel != ResizeKernel::SeparableFloat || p.w.skip || p.h.skip) return false;
    const double in_h = static_cast<double>(p.h.in_size), in_w = static_cast<double>(p.w.in_size);
    const double out_h = static_cast<double>(p.out_h), out_w = static_cast<double>(p.out_w);
    const double th = static_cast<double>(std::min<std::int64_t>(p.h.taps, p.h.in_size));  // as contiguous_taps
    const double tw = static_cast<double>(std::min<std::int64_t>(p.w.taps, p.w.in_size));
    const double horizontal_first = in_h * out_w * tw + out_h * out_w * th;
    const double vertical_first = out_h * in_w * th + out_h * out_w * tw;
    return vertical_first < horizontal_first;
}

// One separable pass along `axis` (2: vertical, 3: horizontal) of `src` (4-D, of
// `shape`) producing `out_size` along that axis. The tap count, the tables and (uint8) the
// fixed-point precision are run-time values: one compiled pass serves every scale.
int separable_pass(OpContext& ctx, const std::string& what, const ResizeAxisWeights& axis_table, int axis,
                   int src, DType dtype, Shape shape, const Expr& out_size) {
    Graph& g = ctx.graph;
    // The horizontal pass's weights are stored tap-major ([tap][output]): the vector loop
    // runs along the output column, so one tap's weights of consecutive outputs are one
    // contiguous vector load (output-major they would be a gather with a run-time stride).
    // The vertical pass reads one row's weights per output row: output-major.
    const bool tap_major = axis == 3;
    const ContiguousTaps t = contiguous_taps(axis_table, tap_major);
    const auto ax = static_cast<std::size_t>(axis);
    shape[ax] = out_size;
    const Expr taps = ctx.param(what + "_taps", ParamKind::Count, t.taps);
    const int start = g.add_constant_values(ctx.tensor_name(what + "_start"), Type::I32, {out_size}, t.start,
                                            index_table_range());
    const int r = g.new_reduction_var();
    const Expr o = var(axis);
    Index4 i = output_index();
    const Expr tap = var(r);
    // Float: a padding tap (weight 0) must not contribute 0 * x, which is NaN where x is NaN
    // or infinite: only the taps PyTorch sums, [first_tap, last_tap), are added, the others
    // add -0.0 (the exact identity of float addition, so signed zeros stay too). The
    // padding taps' pixels are still loaded (they lie inside the image), so the tap's
    // address stays start + tap: a window the vector code reads once per tap.
    Expr in_support;
    if (dtype == DType::Float32) {
        const int lo = g.add_constant_values(ctx.tensor_name(what + "_first_tap"), Type::I32, {out_size}, t.first_tap,
                                             Interval{0, 1 << 20});
        const int hi = g.add_constant_values(ctx.tensor_name(what + "_last_tap"), Type::I32, {out_size}, t.last_tap,
                                             Interval{0, 1 << 20});
        in_support = logical_and(le(load_index(g, lo, {o}), tap), lt(tap, load_index(g, hi, {o})));
    }
    i[ax] = add(load_index(g, start, {o}), tap);
    const Expr x = load4(g, src, i);
    const std::vector<Expr> wshape = tap_major ? std::vector<Expr>{taps, out_size} : std::vector<Expr>{out_size, taps};
    const std::vector<Expr> widx = tap_major ? std::vector<Expr>{var(r), o} : std::vector<Expr>{o, var(r)};
    Expr body;
    if (dtype == DType::UInt8) {
        const int w = g.add_constant_values(ctx.tensor_name(what + "_weight_i16"), Type::I16, wshape,
                                            t.weight_i16);
        const Expr k = cast(Type::I32, load(w, Type::I16, widx));
        const Expr acc = sum(r, taps, mul(k, cast(Type::I32, x)), Type::I32);
        // Fixed-point rounding: add one half, shift, saturate to 0..255.
        const int p = axis_table.precision;
        const Expr precision = cast(Type::I32, ctx.param(what + "_precision", ParamKind::Shift, p));
        const Expr half = cast(Type::I32, ctx.param(what + "_half", ParamKind::Offset, std::int64_t{1} << (p - 1)));
        body = sat_cast(Type::U8, shift_right(add(acc, half), precision));
    } else {
        const int w = g.add_constant_values(ctx.tensor_name(what + "_weight"), Type::F32, wshape, t.weight);
        body = sum(r, taps, select(in_support, mul(x, load(w, Type::F32, widx)), fconst(-0.0)), Type::F32);
    }
    return g.add_compute(ctx.tensor_name(what), ir_type(dtype), shape, body, ctx.origin(), /*realize=*/true);
}

// Float bilinear / bicubic without antialias: taps x taps gathers, each row of taps
// combined along W, then the rows along H.
Expr interpolate_2d(OpContext& ctx, const ResizePlan& p, int src, const Expr& out_h, const Expr& out_w) {
    Graph& g = ctx.graph;
    auto tables = [&](const ResizeAxisWeights& t, const char* axis, const Expr& out) {
        std::pair<int, int> r;
        r.first = g.add_constant_values(ctx.tensor_name(std::string(axis) + "_index"), Type::I32,
                                        {out, iconst(t.taps)}, to_i32(t.index), index_table_range());
        r.second = g.add_constant_values(ctx.tensor_name(std::string(axis) + "_weight"), Type::F32,
                                         {out, iconst(t.taps)}, t.weight);
        return r;
    };
    const auto [hi, hw] = tables(p.h, "h", out_h);
    const auto [wi, ww] = tables(p.w, "w", out_w);
    const int rh = g.new_reduction_var(), rw = g.new_reduction_var();
    const Expr x = load4(g, src, {var(0), var(1), load_index(g, hi, {var(2), var(rh)}),
                                  load_index(g, wi, {var(3), var(rw)})});
    const Expr row = sum(rw, p.w.taps, mul(x, load(ww, Type::F32, {var(3), var(rw)})), Type::F32);
    return sum(rh, p.h.taps, mul(row, load(hw, Type::F32, {var(2), var(rh)})), Type::F32);
}

}  // namespace

Value decompose_resize(OpContext& ctx, const ResizeOp& op, const Value& in) {
    Graph& g = ctx.graph;
    const ResizePlan p = plan_resize(op, in.spec);
    const Dims& s = in.spec.shape;
    const Dims out{s[0], s[1], p.out_h, p.out_w};
    const DType dt = in.spec.dtype;
    const TensorSpec spec = result_spec(in.spec, dt, out);
    // Which kernel runs and which axes it skips is part of the structure (each is its own
    // program); the sizes are parameters.
    switch (p.kernel) {
        case ResizeKernel::Copy:
            return {add_compute(ctx, "copy", dt, in.shape, load4(g, in.tensor, output_index())), spec, in.shape};
        case ResizeKernel::NearestGeneric:
        case ResizeKernel::NearestChannelsLast: {
            const Expr oh = ctx.param("out_h", ParamKind::Size, p.out_h), ow = ctx.param("out_w", ParamKind::Size, p.out_w);
            const int hi = g.add_constant_values(ctx.tensor_name("h_index"), Type::I32, {oh}, to_i32(p.h.index),
                                                 index_table_range());
            const int wi = g.add_constant_values(ctx.tensor_name("w_index"), Type::I32, {ow}, to_i32(p.w.index),
                                                 index_table_range());
            const Expr body =
                load4(g, in.tensor, {var(0), var(1), load_index(g, hi, {var(2)}), load_index(g, wi, {var(3)})});
            const Shape shape = with_hw(in.shape, oh, ow);
            return {add_compute(ctx, "nearest", dt, shape, body), spec, shape};
        }
        case ResizeKernel::LinearGeneric:
        case ResizeKernel::CubicGeneric: {
            if (dt != DType::Float32) fail("internal: resize interpolation kernel needs float32");
            const Expr oh = ctx.param("out_h", ParamKind::Size, p.out_h), ow = ctx.param("out_w", ParamKind::Size, p.out_w);
            const Shape shape = with_hw(in.shape, oh, ow);
            return {add_compute(ctx, "interpolate", dt, shape, interpolate_2d(ctx, p, in.tensor, oh, ow)), spec, shape};
        }
        case ResizeKernel::SeparableFloat:
        case ResizeKernel::SeparableUInt8: {
            int cur = in.tensor;
            Shape shape = in.shape;
            auto horizontal = [&] {
                const Expr ow = ctx.param("out_w", ParamKind::Size, p.out_w);
                cur = separable_pass(ctx, "horizontal", p.w, 3, cur, dt, shape, ow);
                shape[3] = ow;
            };
            auto vertical = [&] {
                const Expr oh = ctx.param("out_h", ParamKind::Size, p.out_h);
                cur = separable_pass(ctx, "vertical", p.h, 2, cur, dt, shape, oh);
                shape[2] = oh;
            };
            if (vertical_first(p)) {
                vertical();
                horizontal();
            } else {
                if (!p.w.skip) horizontal();
                if (!p.h.skip) vertical();
            }
            // The last pass is the op's result: it is realized only if its consumers need it.
            g.at(cur).realize = false;
            return {cur, spec, shape};
        }
    }
    fail("internal: unknown resize kernel");
}

}  // namespace toroid::decomp
