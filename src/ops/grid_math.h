// The per-point math of affine_grid and grid_sample, in float32 and in the order
// PyTorch's CPU kernels use (so float results agree to rounding and nearest-mode picks
// agree exactly). Shared by the reference engine and the code generator.
#pragma once

#include "ops/ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace toroid::grid {

// The constant of the cubic convolution kernel grid_sample's bicubic mode uses.
inline constexpr float kCubicA = -0.75f;

// Index used for coordinates that cannot address any pixel (NaN, huge): far enough
// outside every image that adding the bicubic/bilinear tap offsets keeps it outside.
inline constexpr std::int64_t kOutside = std::numeric_limits<std::int64_t>::min() / 4;

// Integer index of an integer-valued float (truncation toward zero, as the vector
// kernels convert); NaN and values beyond any image size become kOutside.
inline std::int64_t to_index(float v) {
    if (!(std::fabs(v) < 1e15f)) return kOutside;
    return static_cast<std::int64_t>(v);
}

// affine_grid's base coordinate of step i of `steps`: linspace(-1, 1, steps) in float32
// (first half counted up from -1, second half down from +1), then, without
// align_corners, scaled by (steps - 1) / steps as a multiply then a divide. One step
// gives 0.
inline float affine_base_coord(std::int64_t i, std::int64_t steps, bool align_corners) {
    if (steps <= 1) return 0.0f;
    const float step = 2.0f / static_cast<float>(steps - 1);
    float v = i < steps / 2 ? -1.0f + step * static_cast<float>(i)
                            : 1.0f - step * static_cast<float>(steps - i - 1);
    if (!align_corners) v = v * static_cast<float>(steps - 1) / static_cast<float>(steps);
    return v;
}

// theta rounded to float32, as affine_grid receives it for a float32 input.
using Theta32 = std::array<std::array<float, 3>, 2>;
inline Theta32 theta_to_float(const std::array<std::array<double, 3>, 2>& theta) {
    Theta32 t{};
    for (std::size_t r = 0; r < 2; ++r)
        for (std::size_t k = 0; k < 3; ++k) t[r][k] = static_cast<float>(theta[r][k]);
    return t;
}

// One grid point (x, y) = theta @ (bx, by, 1), summed in k order in float32.
inline std::array<float, 2> affine_point(const Theta32& t, float bx, float by) {
    float gx = bx * t[0][0];
    gx += by * t[0][1];
    gx += t[0][2];
    float gy = bx * t[1][0];
    gy += by * t[1][1];
    gy += t[1][2];
    return {gx, gy};
}

// Maps a normalized coordinate in [-1, 1] to pixel units. With align_corners -1 and +1
// are the centres of the edge pixels, otherwise the outer edges of the edge pixels.
inline float unnormalize(float coord, std::int64_t size, bool align_corners) {
    if (align_corners) {
        const float scale = static_cast<float>(size - 1) / 2.0f;
        return (coord + 1.0f) * scale;
    }
    const float scale = static_cast<float>(size) / 2.0f;
    return (coord + 1.0f) * scale - 0.5f;
}

// Clamps to [0, size - 1]; NaN becomes 0.
inline float clip_coordinate(float x, std::int64_t size) {
    const float hi = static_cast<float>(size - 1);
    float r = x > 0.0f ? x : 0.0f;
    return r < hi ? r : hi;
}

// Mirrors x into the reflection range: [0, size - 1] with align_corners, else
// [-0.5, size - 0.5]. Uses the period (twice the span) so that one fold suffices.
inline float reflect_coordinate(float x, std::int64_t size, bool align_corners) {
    float low = 0.0f, twice_span = 0.0f;
    if (align_corners) {
        if (size <= 1) return 0.0f;
        twice_span = static_cast<float>(size - 1) * 2.0f;
    } else {
        low = -0.5f;
        twice_span = static_cast<float>(size) * 2.0f;
    }
    const float a = std::fabs(x - low);
    const float periods = std::trunc(a / twice_span);
    const float extra = a - periods * twice_span;
    // std::min keeps a NaN `extra`, which the final clip then turns into 0.
    return std::min(extra, twice_span - extra) + low;
}

// Applies the padding rule to a coordinate already in pixel units: zeros leaves it
// (out-of-range taps read 0), border clamps, reflection mirrors then clamps.
inline float pad_coordinate(float x, std::int64_t size, PaddingMode padding, bool align_corners) {
    switch (padding) {
        case PaddingMode::Zeros: return x;
        case PaddingMode::Border: return clip_coordinate(x, size);
        case PaddingMode::Reflection:
            return clip_coordinate(reflect_coordinate(x, size, align_corners), size);
    }
    return x;
}

// grid coordinate -> source coordinate in pixel units (bilinear and nearest modes).
inline float source_coordinate(float coord, std::int64_t size, PaddingMode padding,
                               bool align_corners) {
    return pad_coordinate(unnormalize(coord, size, align_corners), size, padding, align_corners);
}

// Weights of the taps at floor(x) - 1 .. floor(x) + 2 for fraction t = x - floor(x).
inline std::array<float, 4> cubic_coefficients(float t) {
    constexpr float A = kCubicA;
    auto outer = [](float x) {  // 1 < x < 2
        return ((A * x - 5.0f * A) * x + 8.0f * A) * x - 4.0f * A;
    };
    auto inner = [](float x) {  // x <= 1
        return ((A + 2.0f) * x - (A + 3.0f)) * x * x + 1.0f;
    };
    return {outer(t + 1.0f), inner(t), inner(1.0f - t), outer(2.0f - t)};
}

// Nearest-mode rounding: half to even (the default floating-point rounding mode).
inline float round_half_even(float x) { return std::nearbyint(x); }

}  // namespace toroid::grid
