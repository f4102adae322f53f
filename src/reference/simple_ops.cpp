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

namespace {

// Element (n, c, h, w) of t as a float (exact for every dtype).
float element(const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return dispatch_dtype(t.dtype(), [&](auto tag) { return to_float(t.at<decltype(tag)>(n, c, h, w)); });
}


// Stores v, already a value of `t` (rounded, or an integer in range), at (n, c, h, w).
void store(Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, double v) {
    dispatch_dtype(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        t.at<T>(n, c, h, w) = from_float<T>(static_cast<float>(v));
    });
}


// A float cast to an integer dtype: truncated toward zero; values outside the dtype and NaN
// saturate (to 0 for NaN), where C++ (and so torch) leaves them undefined.
double saturate(DType t, float v) {
    if (!(v > 0.0f)) return 0;
    const double top = dtype_max_value(t);
    return v >= top ? top : std::trunc(static_cast<double>(v));
}

}  // namespace

// torchvision.v2's to_dtype between any two dtypes (docs/reference.md): float -> float one
// rounding; float -> int scaled by max + 1 - 1e-3 in the source dtype, then truncated and
// saturated; int -> float cast then scaled by 1 / max in the destination dtype (uint16 ->
// float16 scaled in float32: the cast would overflow); int -> int wrapped, or shifted when
// scaled.
Tensor convert(const ConvertOp& op, const Tensor& in, int threads) {
    const Dims& s = in.shape();
    const DType src = in.dtype(), dst = op.dtype;
    Tensor out = Tensor::empty(dst, s, in.suggested_layout());
    if (dst == src) {
        dispatch_dtype(in.dtype(), [&](auto tag) {
            using T = decltype(tag);
            for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
                for (std::int64_t w = 0; w < s[3]; ++w) out.at<T>(n, c, h, w) = in.at<T>(n, c, h, w);
            });
        });
        return out;
    }
    const bool fsrc = dtype_is_float(src), fdst = dtype_is_float(dst);
    for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
        for (std::int64_t w = 0; w < s[3]; ++w) {
            const float x = element(in, n, c, h, w);
            double v;
            if (fsrc && fdst) {
                v = round_to_dtype(dst, x);
            } else if (fsrc) {
                const float f = op.scale ? round_to_dtype(src, x * static_cast<float>(dtype_max_value(dst) + 1.0 - 1e-3)) : x;
                v = saturate(dst, f);
            } else if (!fdst) {
                const auto i = static_cast<std::uint32_t>(x);
                if (!op.scale) v = static_cast<double>(i & static_cast<std::uint32_t>(dtype_max_value(dst)));
                else if (dtype_value_bits(src) > dtype_value_bits(dst)) v = i >> (dtype_value_bits(src) - dtype_value_bits(dst));
                else v = i << (dtype_value_bits(dst) - dtype_value_bits(src));
            } else {
                const float k = static_cast<float>(1.0 / dtype_max_value(src));
                if (!op.scale) v = round_to_dtype(dst, x);
                else if (src == DType::UInt16 && dst == DType::Float16) v = round_to_dtype(dst, x * k);
                else v = round_to_dtype(dst, round_to_dtype(dst, x) * k);
            }
            store(out, n, c, h, w, v);
        }
    });
    return out;
}

// torchvision's normalize: mean and std in the image's dtype, then (x - mean) / std, each
// step rounded to it.
Tensor normalize(const NormalizeOp& op, const Tensor& in, int threads) {
    const DType t = in.dtype();
    if (!dtype_is_float(t))
        fail("normalize needs float input, got {} (convert to float32 first)", dtype_name(t));
    const Dims& s = in.shape();
    auto per_channel = [&](const std::vector<double>& v, const char* what) {
        if (v.size() != 1 && v.size() != static_cast<std::size_t>(s[1]))
            fail("normalize: {} has {} values but the input has {} channels", what, v.size(), s[1]);
        std::vector<float> r(static_cast<std::size_t>(s[1]));
        for (std::size_t c = 0; c < r.size(); ++c) r[c] = round_to_dtype(t, static_cast<float>(v.size() == 1 ? v[0] : v[c]));
        return r;
    };
    const std::vector<float> mean = per_channel(op.mean, "mean");
    const std::vector<float> stdev = per_channel(op.std, "std");
    Tensor out = Tensor::empty(t, s, in.suggested_layout());
    for_each_row(s, threads, [&](std::int64_t n, std::int64_t c, std::int64_t h) {
        const float m = mean[static_cast<std::size_t>(c)], d = stdev[static_cast<std::size_t>(c)];
        for (std::int64_t w = 0; w < s[3]; ++w)
            store(out, n, c, h, w, round_to_dtype(t, round_to_dtype(t, element(in, n, c, h, w) - m) / d));
    });
    return out;
}

}  // namespace toroid::reference
