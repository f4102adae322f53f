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

// torchvision's _affine_grid (the torchvision convention). Base coordinate i of `steps`:
// linspace((1 - steps) / 2, (steps - 1) / 2, steps), a half-integer, exact in float32.
inline float pixel_base_coord(std::int64_t i, std::int64_t steps) {
    return static_cast<float>(static_cast<double>(i) - static_cast<double>(steps - 1) * 0.5);
}

// theta.transpose(1, 2) / (w/2, h/2) in float32: r[k][j] multiplies base coordinate k
// (x, y, 1) for grid component j (x, y). in_h and in_w are the input's size.
using Rescaled32 = std::array<std::array<float, 2>, 3>;
inline Rescaled32 rescaled_theta(const std::array<std::array<double, 3>, 2>& theta, std::int64_t in_h,
                                 std::int64_t in_w) {
    const float half[2] = {static_cast<float>(0.5 * static_cast<double>(in_w)),
                           static_cast<float>(0.5 * static_cast<double>(in_h))};
    Rescaled32 r{};
    for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t j = 0; j < 2; ++j) r[k][j] = static_cast<float>(theta[j][k]) / half[j];
    return r;
}

// Whether PyTorch's bmm sums the (h' * w', 3) x (3, 2) grid product with fused
// multiply-adds: its small-matrix loop (3 * h' * w' * 2 < 400) rounds every product; an
// optimized BLAS (MKL, OpenBLAS) fuses them when `fma` is set.
inline bool grid_product_fused(bool fma, std::int64_t out_h, std::int64_t out_w) {
    return fma && 6 * out_h * out_w >= 400;
}

// One point of torchvision's grid: base (bx, by, 1) times r, in k order. Rounded:
// ((bx r0 + by r1) + r2), every step rounded; fused: fma(by, r1, bx r0) + r2.
inline std::array<float, 2> pixel_grid_point(const Rescaled32& r, float bx, float by, bool fused) {
    std::array<float, 2> g{};
    for (std::size_t j = 0; j < 2; ++j) {
        const float p0 = bx * r[0][j];
        const float acc = fused ? std::fma(by, r[1][j], p0) : p0 + by * r[1][j];
        g[j] = acc + r[2][j];
    }
    return g;
}

// torchvision's _perspective_grid. Base coordinate i: linspace(0.5, steps - 0.5, steps), the
// pixel centre i + 0.5, exact in float32.
inline float perspective_base_coord(std::int64_t i) { return static_cast<float>(static_cast<double>(i) + 0.5); }

// The float32 factors of the two products: the numerators' theta1^T / (w/2, h/2) (r[k][j]
// multiplies base coordinate k for component j, as Rescaled32) and the denominator's
// (g, h, 1), the same for both components.
struct Perspective32 {
    Rescaled32 numerator{};
    std::array<float, 3> denominator{};
};
inline Perspective32 perspective_factors(const std::array<double, 8>& c, std::int64_t out_h, std::int64_t out_w) {
    const float half[2] = {static_cast<float>(0.5 * static_cast<double>(out_w)),
                           static_cast<float>(0.5 * static_cast<double>(out_h))};
    Perspective32 p;
    for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t j = 0; j < 2; ++j) p.numerator[k][j] = static_cast<float>(c[3 * j + k]) / half[j];
    p.denominator = {static_cast<float>(c[6]), static_cast<float>(c[7]), 1.0f};
    return p;
}

// One point of torchvision's perspective grid: numerator / denominator - 1, each product
// summed as pixel_grid_point sums it (rounded, or the bmm's fused form).
inline std::array<float, 2> perspective_grid_point(const Perspective32& p, float bx, float by, bool fused) {
    const std::array<float, 2> num = pixel_grid_point(p.numerator, bx, by, fused);
    const float d0 = bx * p.denominator[0];
    const float den = (fused ? std::fma(by, p.denominator[1], d0) : d0 + by * p.denominator[1]) + p.denominator[2];
    return {num[0] / den - 1.0f, num[1] / den - 1.0f};
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

// unnormalize without align_corners as PyTorch's vectorized CPU kernel computes it when
// GCC contracts it (as in Debian's PyTorch 1.13): one fused multiply-add.
inline float unnormalize_fused(float coord, std::int64_t size) {
    return std::fma(coord + 1.0f, static_cast<float>(size) / 2.0f, -0.5f);
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
