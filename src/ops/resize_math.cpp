// Resize tables: output sizes, PyTorch's choice of CPU kernel, and the per-axis source
// indices and weights each kernel uses, computed with the same types and operation
// order as PyTorch 2.11 so that nearest picks and uint8 fixed-point results agree exactly.
#include "ops/resize_math.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace toroid {

std::array<std::int64_t, 2> resize_output_size(const ResizeOp& op, std::int64_t in_h, std::int64_t in_w) {
    std::array<std::int64_t, 2> out{};
    const std::int64_t in[2] = {in_h, in_w};
    if (op.smaller_edge || op.max_size) {
        // torchvision's _compute_resized_output_size; Python's int(a * b / c) is the
        // correctly rounded quotient truncated, as is the division of exact doubles here.
        const bool tall = in_w <= in_h;
        const std::int64_t shorter = tall ? in_w : in_h, longer = tall ? in_h : in_w;
        auto scaled = [](std::int64_t a, std::int64_t b, std::int64_t c) {
            return static_cast<std::int64_t>(static_cast<double>(a) * static_cast<double>(b) / static_cast<double>(c));
        };
        std::int64_t new_short = 0, new_long = 0;
        if (op.smaller_edge) {
            new_short = *op.smaller_edge;
            new_long = scaled(new_short, longer, shorter);
            if (op.max_size && new_long > *op.max_size) {
                new_short = scaled(*op.max_size, new_short, new_long);
                new_long = *op.max_size;
            }
        } else {
            new_short = scaled(*op.max_size, shorter, longer);
            new_long = *op.max_size;
        }
        out = tall ? std::array<std::int64_t, 2>{new_long, new_short} : std::array<std::int64_t, 2>{new_short, new_long};
        if (out[0] <= 0 || out[1] <= 0)
            fail("resize: output size ({}, {}) from input ({}, {}) has a dimension <= 0", out[0], out[1], in_h, in_w);
        return out;
    }
    for (int a = 0; a < 2; ++a) {
        if (op.size) {
            out[a] = (*op.size)[a];
        } else if (op.scale_factor) {
            // floor(in * scale) in double, as F.interpolate computes it in Python.
            const double v = std::floor(static_cast<double>(in[a]) * (*op.scale_factor)[a]);
            if (!(v < 9.0e18)) fail("resize: output size {} is too large", v);
            out[a] = static_cast<std::int64_t>(v);
        } else {
            fail("resize: give exactly one of 'size' and 'scale_factor'");
        }
        if (out[a] <= 0)
            fail("resize: output size ({}, {}) from input ({}, {}) has a dimension <= 0", op.size ? out[0] : 0,
                 op.size ? out[1] : 0, in_h, in_w);
    }
    return out;
}

std::array<std::optional<double>, 2> resize_kernel_scales(const ResizeOp& op) {
    if (op.scale_factor && !op.recompute_scale_factor) return {(*op.scale_factor)[0], (*op.scale_factor)[1]};
    return {std::nullopt, std::nullopt};
}

double resize_axis_step(bool align_corners, std::int64_t in, std::int64_t out, std::optional<double> scale) {
    if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    if (scale && *scale > 0.0) return 1.0 / *scale;
    return static_cast<double>(in) / static_cast<double>(out);
}

bool is_channels_last_contiguous(const TensorSpec& in) {
    std::int64_t expected = 1;
    for (int d : {1, 3, 2, 0}) {
        const auto i = static_cast<std::size_t>(d);
        if (in.shape[i] == 1) continue;
        if (in.strides[i] != expected) return false;
        expected *= in.shape[i];
    }
    return true;
}

ResizeKernel resize_kernel(const ResizeOp& op, const TensorSpec& in, std::int64_t out_h, std::int64_t out_w) {
    switch (op.mode) {
        case ResizeMode::Nearest:
        case ResizeMode::NearestExact:
            // PyTorch's _use_vectorized_kernel_cond_2d.
            return (is_channels_last_contiguous(in) && in.shape[1] > 3) || out_h + out_w <= 128
                       ? ResizeKernel::NearestChannelsLast
                       : ResizeKernel::NearestGeneric;
        case ResizeMode::Bilinear:
        case ResizeMode::Bicubic:
            if (in.dtype == DType::UInt8 || op.antialias) {
                // The separable kernels skip an axis whose size does not change; with
                // both unchanged the input is copied.
                if (out_h == in.shape[2] && out_w == in.shape[3]) return ResizeKernel::Copy;
                return in.dtype == DType::UInt8 ? ResizeKernel::SeparableUInt8 : ResizeKernel::SeparableFloat;
            }
            return op.mode == ResizeMode::Bilinear ? ResizeKernel::LinearGeneric : ResizeKernel::CubicGeneric;
    }
    return ResizeKernel::Copy;
}

namespace {

// PyTorch's compute_scales_value / area_pixel_compute_scale in float32.
float step_f32(bool align_corners, std::int64_t in, std::int64_t out, std::optional<double> scale) {
    if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    if (scale && *scale > 0.0) return static_cast<float>(1.0 / *scale);
    return static_cast<float>(in) / static_cast<float>(out);
}

// area_pixel_compute_source_index<float>: the half-pixel term is added in double and
// the result rounded to float once.
float source_index_f32(float step, std::int64_t o, bool align_corners, bool cubic) {
    if (align_corners) return step * static_cast<float>(o);
    const auto src = static_cast<float>(static_cast<double>(step) * (static_cast<double>(o) + 0.5) - 0.5);
    return (!cubic && src < 0.0f) ? 0.0f : src;
}

std::int64_t clamp_index(std::int64_t i, std::int64_t size) { return std::clamp<std::int64_t>(i, 0, size - 1); }

template <typename T>
T linear_filter(T x) {
    if (x < T(0)) x = -x;
    return x < T(1) ? T(1) - x : T(0);
}

template <typename T>
T cubic_filter(T x, T a) {
    x = std::abs(x);
    if (x < T(1)) return ((a + T(2)) * x - (a + T(3))) * x * x + T(1);
    if (x < T(2)) return ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a;
    return T(0);
}

void fill_nearest(ResizeAxisWeights& t, const ResizeOp& op, ResizeKernel kernel, std::optional<double> scale) {
    t.taps = 1;
    const std::int64_t in = t.in_size, out = t.out_size;
    const float step = step_f32(false, in, out, scale);
    for (std::int64_t o = 0; o < out; ++o) {
        std::int64_t src = 0;
        if (kernel == ResizeKernel::NearestChannelsLast) {
            if (op.mode == ResizeMode::Nearest) {
                // nearest_idx: exact copies and doublings are special-cased.
                if (out == in) src = o;
                else if (out == 2 * in) src = o >> 1;
                else src = static_cast<std::int64_t>(std::floor(static_cast<float>(o) * step));
            } else {
                // nearest_exact_idx: (o + 0.5) * scale in double, rounded to float, floored.
                src = static_cast<std::int64_t>(
                    std::floor(static_cast<float>((static_cast<double>(o) + 0.5) * static_cast<double>(step))));
            }
        } else if (op.mode == ResizeMode::Nearest) {
            src = static_cast<std::int64_t>(std::floor(source_index_f32(step, o, true, false)));
        } else {
            const float real = source_index_f32(step, o, false, false);
            src = static_cast<std::int64_t>(std::floor(static_cast<float>(static_cast<double>(real) + 0.5)));
        }
        src = std::min(src, in - 1);
        t.first.push_back(src);
        t.count.push_back(1);
        t.index.push_back(src);
    }
}

void fill_linear_generic(ResizeAxisWeights& t, bool align_corners, std::optional<double> scale) {
    t.taps = 2;
    const std::int64_t in = t.in_size, out = t.out_size;
    t.index.reserve(static_cast<std::size_t>(out * 2));
    t.weight.reserve(static_cast<std::size_t>(out * 2));
    const float step = step_f32(align_corners, in, out, scale);
    for (std::int64_t o = 0; o < out; ++o) {
        std::int64_t i0 = o, i1 = o;
        float l0 = 1.0f, l1 = 0.0f;
        if (out != in) {
            const float real = source_index_f32(step, o, align_corners, false);
            i0 = std::min(static_cast<std::int64_t>(std::floor(real)), in - 1);
            l1 = std::min(std::max(real - static_cast<float>(i0), 0.0f), 1.0f);
            i1 = i0 + (i0 < in - 1 ? 1 : 0);
            l0 = 1.0f - l1;
        }
        t.first.push_back(i0);
        t.count.push_back(2);
        t.index.insert(t.index.end(), {i0, i1});
        t.weight.insert(t.weight.end(), {l0, l1});
    }
}

void fill_cubic_generic(ResizeAxisWeights& t, bool align_corners, std::optional<double> scale) {
    t.taps = 4;
    const std::int64_t in = t.in_size, out = t.out_size;
    t.index.reserve(static_cast<std::size_t>(out * 4));
    t.weight.reserve(static_cast<std::size_t>(out * 4));
    const float step = step_f32(align_corners, in, out, scale);
    constexpr float a = -0.75f;
    for (std::int64_t o = 0; o < out; ++o) {
        const float real = source_index_f32(step, o, align_corners, true);
        const std::int64_t i = std::min(static_cast<std::int64_t>(std::floor(real)), in - 1);
        const float l = std::min(std::max(real - static_cast<float>(i), 0.0f), 1.0f);
        const float w[4] = {cubic_filter(l + 1.0f, a), cubic_filter(l, a), cubic_filter(1.0f - l, a),
                            cubic_filter(2.0f - l, a)};
        t.first.push_back(i - 1);
        t.count.push_back(4);
        for (int k = 0; k < 4; ++k) {
            t.index.push_back(clamp_index(i - 1 + k, in));
            t.weight.push_back(w[k]);
        }
    }
}

// The separable kernels' tables: for each output a contiguous run [first, first +
// count) of taps. With antialias (_compute_indices_min_size_weights_aa) the filter is
// stretched by the downscale factor and its weights normalized; `T` is float for the
// float kernel and double for the uint8 kernel, as in PyTorch. The weights go to
// `weights` (out_size * taps); returns the largest weight.
template <typename T>
T fill_separable_aa(ResizeAxisWeights& t, const ResizeOp& op, std::optional<double> scale, std::vector<T>& weights) {
    const std::int64_t in = t.in_size, out = t.out_size;
    const bool cubic = op.mode == ResizeMode::Bicubic;
    const int interp_size = cubic ? 4 : 2;
    T step;
    if constexpr (std::is_same_v<T, float>) step = step_f32(op.align_corners, in, out, scale);
    else step = static_cast<T>(resize_axis_step(op.align_corners, in, out, scale));
    const T support =
        step >= T(1) ? (static_cast<T>(interp_size) * T(0.5)) * step : static_cast<T>(interp_size) * T(0.5);
    const int max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;
    const T invscale = step >= T(1) ? T(1) / step : T(1);
    t.taps = max_taps;
    T wt_max = 0;
    const auto taps = static_cast<std::size_t>(max_taps);
    weights.assign(static_cast<std::size_t>(out) * taps, T(0));
    // Sized before the loop: a call inside it (a push_back that may grow) makes the
    // compiler keep the running sums in memory across the whole loop (every xmm register
    // is caller-saved), and each tap then waits on a store and a reload.
    std::vector<T> totals(static_cast<std::size_t>(out));
    t.first.resize(static_cast<std::size_t>(out));
    t.count.resize(static_cast<std::size_t>(out));
    for (std::int64_t o = 0; o < out; ++o) {
        const auto center = static_cast<T>(step * (static_cast<double>(o) + 0.5));
        const std::int64_t xmin = std::max(static_cast<std::int64_t>(center - support + 0.5), std::int64_t{0});
        std::int64_t xsize = std::min(static_cast<std::int64_t>(center + support + 0.5), in) - xmin;
        xsize = std::clamp<std::int64_t>(xsize, 0, max_taps);
        // This output's taps, in place; those past xsize stay 0.
        T* w = weights.data() + static_cast<std::size_t>(o) * taps;
        const auto n = static_cast<std::size_t>(xsize);
        T total = 0, largest = 0;
        for (std::size_t j = 0; j < n; ++j) {
            const auto x = static_cast<T>((static_cast<T>(static_cast<std::int64_t>(j) + xmin) - center + 0.5) * invscale);
            const T v = cubic ? cubic_filter(x, T(-0.5)) : linear_filter(x);
            w[j] = v;
            total += v;
            largest = j == 0 || largest < v ? v : largest;
        }
        const auto oi = static_cast<std::size_t>(o);
        totals[oi] = total;
        t.first[oi] = xmin;
        t.count[oi] = static_cast<std::int32_t>(xsize);
        if (total > T(0) && n > 0) {
            // Rounded division by a positive total is monotone: the largest quotient is
            // the largest weight's.
            const T q = largest / total;
            wt_max = wt_max < q ? q : wt_max;
        }
    }
    // Each weight divided by its output's total, as PyTorch does (not multiplied by the
    // inverse: that differs in the last bit). In a pass of its own: the divisions are
    // independent, and reading weights just stored in the loop above stalled on them.
    for (std::int64_t o = 0; o < out; ++o) {
        const T total = totals[static_cast<std::size_t>(o)];
        if (total == T(0)) continue;
        T* w = weights.data() + static_cast<std::size_t>(o) * taps;
        const auto n = static_cast<std::size_t>(t.count[static_cast<std::size_t>(o)]);
        for (std::size_t j = 0; j < n; ++j) w[j] /= total;
        if (total < T(0))
            for (std::size_t j = 0; j < n; ++j) wt_max = wt_max < w[j] ? w[j] : wt_max;
    }
    return wt_max;
}

// The uint8 kernel without antialias (_compute_indices_min_size_weights, in double):
// the float kernels' source index and fraction, then interp_size filter taps, where taps
// falling outside the image add their weight to the nearest tap inside it.
double fill_separable_plain_u8(ResizeAxisWeights& t, const ResizeOp& op, std::optional<double> scale,
                               std::vector<double>& weights) {
    const std::int64_t in = t.in_size, out = t.out_size;
    const bool cubic = op.mode == ResizeMode::Bicubic;
    const int taps = cubic ? 4 : 2;
    const double step = resize_axis_step(op.align_corners, in, out, scale);
    t.taps = taps;
    double wt_max = 0;
    std::vector<double> w(static_cast<std::size_t>(taps));
    weights.reserve(static_cast<std::size_t>(out * taps));
    for (std::int64_t o = 0; o < out; ++o) {
        double real;
        if (op.align_corners) {
            real = step * static_cast<double>(o);
        } else {
            real = step * (static_cast<double>(o) + 0.5) - 0.5;
            if (!cubic && real < 0) real = 0;
        }
        // guard_index_and_lambda floors through float (floorf).
        const std::int64_t index =
            std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(real))), in - 1);
        const double lambda = std::min(std::max(real - static_cast<double>(index), 0.0), 1.0);
        const std::int64_t support = taps / 2;
        const std::int64_t unbound_min = index - support + 1, unbound_max = index + support + 1;
        const std::int64_t first = std::max(unbound_min, std::int64_t{0});
        std::int64_t size = std::min(unbound_max, in) - first;
        size = std::clamp<std::int64_t>(size, 0, taps);
        std::int64_t wi = 0;
        for (std::int64_t j = 0; j < taps; ++j) {
            w[static_cast<std::size_t>(j)] = 0;
            const double x = static_cast<double>(j + 1 - support) - lambda;
            const double v = cubic ? cubic_filter(x, -0.75) : linear_filter(x);
            if (unbound_min + j <= 0) wi = 0;
            else if (unbound_min + j >= in - 1) wi = size - 1;
            w[static_cast<std::size_t>(wi)] += v;
            wt_max = std::max(wt_max, w[static_cast<std::size_t>(wi)]);
            ++wi;
        }
        t.first.push_back(first);
        t.count.push_back(static_cast<std::int32_t>(size));
        for (std::int64_t j = 0; j < taps; ++j) weights.push_back(j < size ? w[static_cast<std::size_t>(j)] : 0.0);
    }
    return wt_max;
}

// Converts the double weights of the uint8 kernel to int16 with the largest precision
// at which the largest weight still fits: round(w * 2^precision), halves away from 0.
void to_fixed_point(ResizeAxisWeights& t, const std::vector<double>& weights, double wt_max) {
    int precision = 0;
    for (precision = 0; precision < 22; ++precision) {
        const int next = static_cast<int>(0.5 + wt_max * static_cast<double>(1 << (precision + 1)));
        if (next >= (1 << 15)) break;
    }
    t.precision = precision;
    t.weight_i16.resize(weights.size());
    for (std::size_t k = 0; k < weights.size(); ++k) {
        const double v = weights[k] * static_cast<double>(1 << precision);
        t.weight_i16[k] = static_cast<std::int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
    }
}

}  // namespace

ResizeAxisWeights resize_axis_weights(const ResizeOp& op, ResizeKernel kernel, int axis, std::int64_t in_size,
                                      std::int64_t out_size) {
    ResizeAxisWeights t;
    t.in_size = in_size;
    t.out_size = out_size;
    // Every kernel pushes one entry per output into these (and taps per output into the
    // index and weight tables, reserved where the tap count is known).
    t.first.reserve(static_cast<std::size_t>(std::max<std::int64_t>(out_size, 0)));
    t.count.reserve(static_cast<std::size_t>(std::max<std::int64_t>(out_size, 0)));
    const std::optional<double> scale = resize_kernel_scales(op)[static_cast<std::size_t>(axis)];
    switch (kernel) {
        case ResizeKernel::Copy:
            t.skip = true;
            break;
        case ResizeKernel::NearestGeneric:
        case ResizeKernel::NearestChannelsLast:
            fill_nearest(t, op, kernel, scale);
            break;
        case ResizeKernel::LinearGeneric:
            fill_linear_generic(t, op.align_corners, scale);
            break;
        case ResizeKernel::CubicGeneric:
            fill_cubic_generic(t, op.align_corners, scale);
            break;
        case ResizeKernel::SeparableFloat:
            if (in_size == out_size) t.skip = true;
            else fill_separable_aa<float>(t, op, scale, t.weight);
            break;
        case ResizeKernel::SeparableUInt8: {
            if (in_size == out_size) {
                t.skip = true;
                break;
            }
            // The weights are computed in double, then turned into int16 fixed point.
            std::vector<double> weights;
            const double wt_max = op.antialias ? fill_separable_aa<double>(t, op, scale, weights)
                                                : fill_separable_plain_u8(t, op, scale, weights);
            to_fixed_point(t, weights, wt_max);
            break;
        }
    }
    return t;
}

ResizePlan plan_resize(const ResizeOp& op, const TensorSpec& in) {
    ResizePlan p;
    auto hw = resize_output_size(op, in.shape[2], in.shape[3]);
    p.out_h = hw[0];
    p.out_w = hw[1];
    p.kernel = resize_kernel(op, in, p.out_h, p.out_w);
    p.h = resize_axis_weights(op, p.kernel, 0, in.shape[2], p.out_h);
    p.w = resize_axis_weights(op, p.kernel, 1, in.shape[3], p.out_w);
    return p;
}

}  // namespace toroid
