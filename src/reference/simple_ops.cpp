// Reference flips, crops, dtype conversions and normalization: element-wise or
// index-remapping ops with torch / torchvision.transforms.v2.functional semantics.
// Each reads any strided input and writes a dense tensor in the input's suggested layout.
#include "core/error.h"
#include "core/parallel.h"
#include "reference/reference.h"

#include <cmath>
#include <cstdint>

namespace toroid::reference {

namespace {

// Calls body(n, c, h) for every output row of `shape`, rows split over threads.
template <typename Body>
void for_each_row(const Dims& shape, int threads, Body&& body) {
    const std::int64_t C = shape[1], H = shape[2];
    parallel_for(0, shape[0] * C * H, threads, [&](std::int64_t r) {
        body(r / (C * H), (r / H) % C, r % H);
    });
}

// float32 -> uint8 cast: truncation toward zero like C++ and torch's .to(torch.uint8);
// values outside [0, 255] saturate and NaN gives 0 (torch leaves those undefined).
std::uint8_t float_to_uint8(float v) {
    if (!(v > 0.0f)) return 0;
    if (v >= 255.0f) return 255;
    return static_cast<std::uint8_t>(v);
}

}  // namespace

Tensor flip(const FlipOp& op, const Tensor& in, int threads) {
    bool flipped[4] = {false, false, false, false};
    for (int d : op.dims) {
        if (d < 0 || d > 3) fail("flip: dim {} is out of range (expected 0..3 after normalizing)", d);
        flipped[d] = true;
    }
    const Dims& s = in.shape();
    Tensor out = Tensor::empty(in.dtype(), s, in.suggested_layout());
    auto src = [&](int d, std::int64_t i) { return flipped[d] ? s[static_cast<std::size_t>(d)] - 1 - i : i; };
    dispatch_dtype(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
            const std::int64_t sn = src(0, n), sc = src(1, c), sh = src(2, h);
            for (std::int64_t w = 0; w < s[3]; ++w) out.at<T>(n, c, h, w) = in.at<T>(sn, sc, sh, src(3, w));
        });
    });
    return out;
}

Tensor crop(const CropOp& op, const Tensor& in, int threads) {
    if (op.height <= 0 || op.width <= 0)
        fail("crop: height and width must be positive, got {} x {}", op.height, op.width);
    const Dims& s = in.shape();
    const Dims out_shape{s[0], s[1], op.height, op.width};
    const auto [top, left] = crop_origin(op, s[2], s[3]);
    Tensor out = Tensor::empty(in.dtype(), out_shape, in.suggested_layout());
    dispatch_dtype(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for_each_row(out_shape, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
            // The region may start above/left of the image or end past it; pixels
            // outside the image are zero.
            const std::int64_t ih = top + h;
            const bool row_in = ih >= 0 && ih < s[2];
            for (std::int64_t w = 0; w < op.width; ++w) {
                const std::int64_t iw = left + w;
                out.at<T>(n, c, h, w) = row_in && iw >= 0 && iw < s[3] ? in.at<T>(n, c, ih, iw) : T{0};
            }
        });
    });
    return out;
}

Tensor convert(const ConvertOp& op, const Tensor& in, int threads) {
    const Dims& s = in.shape();
    Tensor out = Tensor::empty(op.dtype, s, in.suggested_layout());
    if (op.dtype == in.dtype()) {
        dispatch_dtype(in.dtype(), [&](auto tag) {
            using T = decltype(tag);
            for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
                for (std::int64_t w = 0; w < s[3]; ++w) out.at<T>(n, c, h, w) = in.at<T>(n, c, h, w);
            });
        });
        return out;
    }
    if (in.dtype() == DType::UInt8 && op.dtype == DType::Float32) {
        // to_dtype scales by multiplying with 1/255 rounded to float32 (not dividing by 255).
        const float factor = op.scale ? static_cast<float>(1.0 / 255.0) : 1.0f;
        for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
            for (std::int64_t w = 0; w < s[3]; ++w) {
                const float v = static_cast<float>(in.at<std::uint8_t>(n, c, h, w));
                out.at<float>(n, c, h, w) = op.scale ? v * factor : v;
            }
        });
        return out;
    }
    if (in.dtype() == DType::Float32 && op.dtype == DType::UInt8) {
        // to_dtype multiplies by 255 + 1 - 1e-3 (in float32) and truncates, so that the
        // whole [0, 1] range maps evenly onto 0..255 without a rounding step.
        const float factor = op.scale ? static_cast<float>(255.0 + 1.0 - 1e-3) : 1.0f;
        for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
            for (std::int64_t w = 0; w < s[3]; ++w) {
                const float v = in.at<float>(n, c, h, w);
                out.at<std::uint8_t>(n, c, h, w) = float_to_uint8(op.scale ? v * factor : v);
            }
        });
        return out;
    }
    fail("convert: no conversion from {} to {}", dtype_name(in.dtype()), dtype_name(op.dtype));
}

Tensor normalize(const NormalizeOp& op, const Tensor& in, int threads) {
    if (in.dtype() != DType::Float32)
        fail("normalize needs float32 input, got {} (convert to float32 first)", dtype_name(in.dtype()));
    const Dims& s = in.shape();
    auto per_channel = [&](const std::vector<double>& v, const char* what) {
        if (v.size() != 1 && v.size() != static_cast<std::size_t>(s[1]))
            fail("normalize: {} has {} values but the input has {} channels", what, v.size(), s[1]);
        std::vector<float> r(static_cast<std::size_t>(s[1]));
        for (std::size_t c = 0; c < r.size(); ++c) r[c] = static_cast<float>(v.size() == 1 ? v[0] : v[c]);
        return r;
    };
    // mean and std become float32 first; then (x - mean) / std, both rounded in float32.
    const std::vector<float> mean = per_channel(op.mean, "mean");
    const std::vector<float> stdev = per_channel(op.std, "std");
    Tensor out = Tensor::empty(DType::Float32, s, in.suggested_layout());
    for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
        const float m = mean[static_cast<std::size_t>(c)], d = stdev[static_cast<std::size_t>(c)];
        for (std::int64_t w = 0; w < s[3]; ++w) out.at<float>(n, c, h, w) = (in.at<float>(n, c, h, w) - m) / d;
    });
    return out;
}

}  // namespace toroid::reference
