// Reference resize (F.interpolate): loops over the index and weight tables of
// ops/resize_math.h, one output element at a time, in the kernel PyTorch would pick:
// nearest gathers, 2x2 / 4x4 interpolation for float bilinear / bicubic, and the
// separable horizontal-then-vertical passes (float, or uint8 in int16 fixed point).
#include "core/error.h"
#include "core/parallel.h"
#include "ops/resize_math.h"
#include "reference/reference.h"

#include <cstdint>

namespace toroid::reference {

namespace {

// Calls body(n, c, h) for every row of `shape`, rows split over threads.
template <typename Body>
void for_each_row(const Dims& shape, int threads, Body&& body) {
    const std::int64_t C = shape[1], H = shape[2];
    parallel_for(0, shape[0] * C * H, threads,
                 [&](std::int64_t r) { body(r / (C * H), (r / H) % C, r % H); });
}

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// One separable pass along `axis` (2: rows, i.e. vertical; 3: columns, horizontal).
Tensor separable_pass(const Tensor& src, const ResizeAxisWeights& t, int axis, Layout layout, int threads) {
    Dims shape = src.shape();
    shape[at(axis)] = t.out_size;
    Tensor out = Tensor::empty(src.dtype(), shape, layout);
    const bool uint8 = src.dtype() == DType::UInt8;
    for_each_row(shape, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
        for (std::int64_t w = 0; w < shape[3]; ++w) {
            const std::int64_t o = axis == 2 ? h : w;
            const std::int64_t first = t.first[at(o)];
            const std::int32_t count = t.count[at(o)];
            auto pixel = [&](std::int64_t j) {
                return axis == 2 ? src.offset_of(n, c, first + j, w) : src.offset_of(n, c, h, first + j);
            };
            if (uint8) {
                const auto* s = src.data_as<std::uint8_t>();
                const std::int16_t* k = &t.weight_i16[at(o * t.taps)];
                std::int32_t acc = std::int32_t{1} << (t.precision - 1);
                for (std::int32_t j = 0; j < count; ++j) acc += std::int32_t{k[j]} * std::int32_t{s[pixel(j)]};
                out.at<std::uint8_t>(n, c, h, w) = resize_fixed_point_finish(acc, t.precision);
            } else {
                const float* s = src.data_as<float>();
                const float* k = &t.weight[at(o * t.taps)];
                float acc = count > 0 ? s[pixel(0)] * k[0] : 0.0f;
                for (std::int32_t j = 1; j < count; ++j) acc += s[pixel(j)] * k[j];
                out.at<float>(n, c, h, w) = acc;
            }
        }
    });
    return out;
}

// Float bilinear / bicubic without antialias: each of the taps rows is interpolated
// along W, then the rows are combined along H.
Tensor interpolate_2d(const Tensor& in, const ResizePlan& p, Layout layout, int threads) {
    const Dims& s = in.shape();
    const Dims out_shape{s[0], s[1], p.out_h, p.out_w};
    Tensor out = Tensor::empty(DType::Float32, out_shape, layout);
    const int th = p.h.taps, tw = p.w.taps;
    for_each_row(out_shape, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
        for (std::int64_t w = 0; w < p.out_w; ++w) {
            float acc = 0.0f;
            for (int kh = 0; kh < th; ++kh) {
                const std::int64_t ih = p.h.index[at(h * th + kh)];
                float row = 0.0f;
                for (int kw = 0; kw < tw; ++kw) {
                    const float v = in.at<float>(n, c, ih, p.w.index[at(w * tw + kw)]) * p.w.weight[at(w * tw + kw)];
                    row = kw == 0 ? v : row + v;
                }
                const float v = row * p.h.weight[at(h * th + kh)];
                acc = kh == 0 ? v : acc + v;
            }
            out.at<float>(n, c, h, w) = acc;
        }
    });
    return out;
}

Tensor nearest(const Tensor& in, const ResizePlan& p, Layout layout, int threads) {
    const Dims& s = in.shape();
    const Dims out_shape{s[0], s[1], p.out_h, p.out_w};
    Tensor out = Tensor::empty(in.dtype(), out_shape, layout);
    dispatch_dtype(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for_each_row(out_shape, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
            const std::int64_t ih = p.h.index[at(h)];
            for (std::int64_t w = 0; w < p.out_w; ++w) out.at<T>(n, c, h, w) = in.at<T>(n, c, ih, p.w.index[at(w)]);
        });
    });
    return out;
}

}  // namespace

Tensor resize(const ResizeOp& op, const Tensor& in, int threads) {
    const ResizePlan p = plan_resize(op, in.spec());
    const Layout layout = in.suggested_layout();
    switch (p.kernel) {
        case ResizeKernel::Copy: return in.to_layout(layout);
        case ResizeKernel::NearestGeneric:
        case ResizeKernel::NearestChannelsLast: return nearest(in, p, layout, threads);
        case ResizeKernel::LinearGeneric:
        case ResizeKernel::CubicGeneric:
            if (in.dtype() != DType::Float32) fail("resize: internal: interpolation kernel needs float32");
            return interpolate_2d(in, p, layout, threads);
        case ResizeKernel::SeparableFloat:
        case ResizeKernel::SeparableUInt8: {
            Tensor cur = in;
            if (!p.w.skip) cur = separable_pass(cur, p.w, 3, layout, threads);
            if (!p.h.skip) cur = separable_pass(cur, p.h, 2, layout, threads);
            return cur;
        }
    }
    fail("resize: internal: unknown kernel");
}

}  // namespace toroid::reference
