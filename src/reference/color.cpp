// Reference colour ops: torchvision.transforms.v2.functional's invert, posterize, solarize,
// adjust_brightness / saturation / contrast and rgb_to_grayscale on CPU tensors, in the
// arithmetic ops/color_op.cpp describes (float32 scalars, PyTorch's fused add_, truncation).
#include "core/error.h"
#include "core/parallel.h"
#include "reference/reference.h"

#include <algorithm>
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
            }
        }
    });
    return out;
}

}  // namespace toroid::reference
