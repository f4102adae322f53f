// Reference colour ops: torchvision.transforms.v2.functional's invert, posterize, solarize,
// adjust_brightness / saturation / contrast and rgb_to_grayscale on CPU tensors, in the
// arithmetic ops/color_op.cpp describes (float32 scalars, PyTorch's fused add_, truncation).
#include "core/error.h"
#include "core/parallel.h"
#include "reference/reference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace toroid::reference {

namespace {

float grey_at(const Tensor& in, std::int64_t n, std::int64_t h, std::int64_t w) {
    auto ch = [&](std::int64_t c) {
        return in.dtype() == DType::UInt8 ? static_cast<float>(in.at<std::uint8_t>(n, c, h, w)) : in.at<float>(n, c, h, w);
    };
    float l = ch(0) * static_cast<float>(0.2989);
    l = std::fma(ch(1), static_cast<float>(0.587), l);
    return std::fma(ch(2), static_cast<float>(0.114), l);
}

// clamp(v, 0, hi) as torch's clamp: NaN stays NaN.
float clamp_to(float v, float hi) {
    if (std::isnan(v)) return v;
    return std::min(std::max(v, 0.0f), hi);
}

// PyTorch's CPU pow of a float tensor by a scalar (pow_tensor_scalar and its special
// cases): the kernels' own helper (core/scalar_math.h).
namespace kernel_math {
#include "core/scalar_math.h"
}  // namespace kernel_math
using kernel_math::t_pow;

constexpr float kToFloat = static_cast<float>(1.0 / 255.0);
constexpr float kToByte = static_cast<float>(255.0 + 1.0 - 1e-3);

// to_dtype(float32 -> uint8, scale=True): x * float(255.999), truncated (saturated here).
float to_byte(float v) {
    const float x = v * kToByte;
    return x > 0.0f ? (x < 255.0f ? std::trunc(x) : 255.0f) : 0.0f;
}

// torchvision's adjust_hue of one pixel (r, g, b in [0, 1] as float32), into out[3].
void hue_pixel(float r, float g, float b, float factor, float* out) {
    // _rgb_to_hsv
    const float maxc = std::max(std::max(r, g), b), minc = std::min(std::min(r, g), b);
    const bool eqc = maxc == minc;
    const float range = maxc - minc;
    const float s = range / (eqc ? 1.0f : maxc);
    const float divisor = eqc ? 1.0f : range;
    const float rc = (maxc - r) / divisor, gc = (maxc - g) / divisor, bc = (maxc - b) / divisor;
    const bool neq_r = maxc != r, eq_g = maxc == g;
    const float hg = ((rc + 2.0f) - bc) * ((eq_g && neq_r) ? 1.0f : 0.0f);
    const float hr = (bc - gc) * (!neq_r ? 1.0f : 0.0f);
    const float hb = ((gc + 4.0f) - rc) * ((neq_r && !eq_g) ? 1.0f : 0.0f);
    float h = (hr + hg) + hb;
    h = std::fmod(h * static_cast<float>(1.0 / 6.0) + 1.0f, 1.0f);
    // h.add_(hue_factor).remainder_(1.0)
    h = std::fmod(h + factor, 1.0f);
    if (h != 0.0f && h < 0.0f) h += 1.0f;
    // _hsv_to_rgb
    const float h6 = h * 6.0f;
    const float fi = std::floor(h6);
    const float f = h6 - fi;
    int sector = std::isnan(fi) ? 0 : static_cast<int>(fi) % 6;
    if (sector < 0) sector += 6;
    const float sxf = s * f;
    const float one_minus_s = 1.0f - s;
    const float q = clamp_to((1.0f - sxf) * maxc, 1.0f);
    const float t = clamp_to((sxf + one_minus_s) * maxc, 1.0f);
    const float p = clamp_to(one_minus_s * maxc, 1.0f);
    const float vpqt[4] = {maxc, p, q, t};
    static constexpr int kSelect[3][6] = {{0, 2, 1, 1, 3, 0}, {3, 0, 0, 2, 1, 1}, {1, 1, 3, 0, 0, 2}};
    for (int c = 0; c < 3; ++c) out[c] = vpqt[kSelect[c][sector]];
}

}  // namespace

Tensor color(const ColorOp& op, const Tensor& in, int threads) {
    const ShapeInfo out_info = infer_shape(Op{op}, ShapeInfo{in.dtype(), in.shape()});
    const Dims& s = in.shape();
    const Dims& o = out_info.shape;
    const bool u8 = in.dtype() == DType::UInt8;
    const float bound = u8 ? 255.0f : 1.0f;
    Tensor out = Tensor::empty(in.dtype(), o, in.suggested_layout());
    const float ratio = static_cast<float>(op.value), ratio_1m = static_cast<float>(1.0 - op.value);

    // Contrast: each image's grey mean, its sum taken as rows of sums in double.
    std::vector<float> mean(static_cast<std::size_t>(s[0]), 0.0f);
    if (op.fn == ColorFn::Contrast) {
        for (std::int64_t n = 0; n < s[0]; ++n) {
            double total = 0;
            for (std::int64_t h = 0; h < s[2]; ++h) {
                double row = 0;
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    float g;
                    if (s[1] == 3) {
                        g = grey_at(in, n, h, w);
                        if (u8) g = std::floor(g);
                    } else {
                        g = u8 ? static_cast<float>(in.at<std::uint8_t>(n, 0, h, w)) : in.at<float>(n, 0, h, w);
                    }
                    row += static_cast<double>(g);
                }
                total += row;
            }
            mean[static_cast<std::size_t>(n)] = static_cast<float>(total) / static_cast<float>(s[2] * s[3]);
        }
    }

    // The value at (n, c, h, w) as float32 (uint8 widened) and the result stored.
    auto value = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
        return u8 ? static_cast<float>(in.at<std::uint8_t>(n, c, h, w)) : in.at<float>(n, c, h, w);
    };
    auto store = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, float v) {
        if (u8) out.at<std::uint8_t>(n, c, h, w) = static_cast<std::uint8_t>(v);  // v in [0, 255]: truncation
        else out.at<float>(n, c, h, w) = v;
    };
    auto blend = [&](float x, float other) { return clamp_to(std::fma(other, ratio_1m, x * ratio), bound); };
    auto invert = [&](float x) { return u8 ? 255.0f - x : 1.0f - x; };
    const float threshold = static_cast<float>(op.value);
    const std::int64_t bits = std::min<std::int64_t>(op.bits, 8);
    const int step = 1 << (8 - bits);
    const float levels = static_cast<float>(std::int64_t{1} << op.bits);

    // Autocontrast: each image and channel's minimum and maximum (NaN propagates).
    std::vector<float> lo, hi;
    if (op.fn == ColorFn::Autocontrast) {
        lo.assign(static_cast<std::size_t>(s[0] * s[1]), 0.0f);
        hi.assign(lo.size(), 0.0f);
        for (std::int64_t n = 0; n < s[0]; ++n)
            for (std::int64_t c = 0; c < s[1]; ++c) {
                float mn = INFINITY, mx = -INFINITY;
                for (std::int64_t h = 0; h < s[2]; ++h)
                    for (std::int64_t w = 0; w < s[3]; ++w) {
                        const float v = u8 ? static_cast<float>(in.at<std::uint8_t>(n, c, h, w)) : in.at<float>(n, c, h, w);
                        if (v < mn || std::isnan(v)) mn = v;
                        if (mx < v || std::isnan(v)) mx = v;
                    }
                lo[static_cast<std::size_t>(n * s[1] + c)] = mn;
                hi[static_cast<std::size_t>(n * s[1] + c)] = mx;
            }
    }
    const float gamma = static_cast<float>(op.value), gain = static_cast<float>(op.gain);

    // Equalize: the uint8 image (float through to_dtype), each image and channel's table.
    auto byte_at = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) -> int {
        return u8 ? in.at<std::uint8_t>(n, c, h, w) : static_cast<int>(to_byte(in.at<float>(n, c, h, w)));
    };
    std::vector<std::array<int, 256>> lut;
    std::vector<bool> equalized;
    if (op.fn == ColorFn::Equalize) {
        lut.resize(static_cast<std::size_t>(s[0] * s[1]));
        equalized.resize(lut.size());
        for (std::int64_t n = 0; n < s[0]; ++n)
            for (std::int64_t c = 0; c < s[1]; ++c) {
                std::array<std::int64_t, 256> hist{};
                for (std::int64_t h = 0; h < s[2]; ++h)
                    for (std::int64_t w = 0; w < s[3]; ++w) ++hist[static_cast<std::size_t>(byte_at(n, c, h, w))];
                int top = 255;
                while (top > 0 && hist[static_cast<std::size_t>(top)] == 0) --top;
                const std::int64_t step = (s[2] * s[3] - hist[static_cast<std::size_t>(top)]) / 255;
                const std::size_t k = static_cast<std::size_t>(n * s[1] + c);
                equalized[k] = step != 0;
                std::int64_t cum = 0;
                lut[k][0] = 0;
                for (std::size_t v = 1; v < 256; ++v) {
                    cum += hist[v - 1];
                    lut[k][v] = static_cast<int>(std::clamp<std::int64_t>((cum + step / 2) / std::max<std::int64_t>(step, 1), 0, 255));
                }
            }
    }

    const std::int64_t C = o[1], H = o[2];
    parallel_for(0, o[0] * C * H, threads, [&](std::int64_t r) {
        const std::int64_t n = r / (C * H), c = (r / H) % C, h = r % H;
        for (std::int64_t w = 0; w < o[3]; ++w) {
            switch (op.fn) {
                case ColorFn::Invert: store(n, c, h, w, invert(value(n, c, h, w))); break;
                case ColorFn::Posterize: {
                    const float x = value(n, c, h, w);
                    if (u8) {
                        const int v = static_cast<int>(x);
                        store(n, c, h, w, static_cast<float>(v / step * step));
                    } else {
                        const float f = std::floor(x * levels);
                        const float cl = std::isnan(f) ? f : std::min(std::max(f, 0.0f), levels - 1.0f);
                        store(n, c, h, w, cl * (1.0f / levels));
                    }
                    break;
                }
                case ColorFn::Solarize: {
                    const float x = value(n, c, h, w);
                    store(n, c, h, w, x >= threshold ? invert(x) : x);
                    break;
                }
                case ColorFn::Brightness: store(n, c, h, w, clamp_to(value(n, c, h, w) * ratio, bound)); break;
                case ColorFn::Saturation: {
                    if (s[1] == 1) {
                        store(n, c, h, w, value(n, c, h, w));
                        break;
                    }
                    float g = grey_at(in, n, h, w);
                    if (u8) g = std::floor(g);
                    store(n, c, h, w, blend(value(n, c, h, w), g));
                    break;
                }
                case ColorFn::Contrast:
                    store(n, c, h, w, blend(value(n, c, h, w), mean[static_cast<std::size_t>(n)]));
                    break;
                case ColorFn::Grayscale:
                    store(n, c, h, w, s[1] == 1 ? value(n, 0, h, w) : grey_at(in, n, h, w));
                    break;
                case ColorFn::Gamma: {
                    float v = value(n, c, h, w);
                    if (u8) v *= kToFloat;
                    v = t_pow(v, gamma);
                    if (op.gain != 1.0) v = clamp_to(v * gain, 1.0f);
                    store(n, c, h, w, u8 ? to_byte(v) : v);
                    break;
                }
                case ColorFn::Hue: {
                    if (s[1] == 1) {
                        store(n, c, h, w, value(n, c, h, w));
                        break;
                    }
                    float rgb[3];
                    const float k = u8 ? kToFloat : 1.0f;
                    auto scaled = [&](std::int64_t ch) { return u8 ? value(n, ch, h, w) * k : value(n, ch, h, w); };
                    hue_pixel(scaled(0), scaled(1), scaled(2), ratio, rgb);
                    store(n, c, h, w, u8 ? to_byte(rgb[c]) : rgb[c]);
                    break;
                }
                case ColorFn::Equalize: {
                    const std::size_t k = static_cast<std::size_t>(n * s[1] + c);
                    const int b = byte_at(n, c, h, w);
                    const int v = equalized[k] ? lut[k][static_cast<std::size_t>(b)] : b;
                    store(n, c, h, w, u8 ? static_cast<float>(v) : static_cast<float>(v) * kToFloat);
                    break;
                }
                case ColorFn::Autocontrast: {
                    const std::size_t k = static_cast<std::size_t>(n * s[1] + c);
                    const bool same = hi[k] == lo[k];
                    const float inv_scale = same ? 1.0f : (hi[k] - lo[k]) * static_cast<float>(1.0 / bound);
                    const float minimum = same ? 0.0f : lo[k];
                    store(n, c, h, w, clamp_to((value(n, c, h, w) - minimum) / inv_scale, bound));
                    break;
                }
            }
        }
    });
    return out;
}

}  // namespace toroid::reference
