// Reference affine warps (F.affine_grid + F.grid_sample, or torchvision's affine with its
// fill and uint8 rounding) and grid_sample with a user grid. Each output pixel is computed
// on its own from the formulas in ops/grid_math.h, in the operation order of PyTorch's
// float32 CPU kernel.
#include "core/error.h"
#include "core/parallel.h"
#include "ops/grid_math.h"
#include "reference/reference.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace toroid::reference {

namespace {

struct SampleParams {
    GridMode mode;
    PaddingMode padding;
    bool align_corners;
    const std::vector<float>* fill = nullptr;  // torchvision's fill, one value per channel
    // torchvision's affine: PyTorch's vectorized CPU kernel as GCC contracts it (nearest and
    // bilinear, zeros padding): unnormalize and the bilinear sum as fused multiply-adds.
    bool fused = false;
};

// The source coordinate in pixel units (bilinear and nearest).
float source(float coord, std::int64_t size, const SampleParams& p) {
    if (p.fused) return grid::unnormalize_fused(coord, size);
    return grid::source_coordinate(coord, size, p.padding, p.align_corners);
}

// ((a wa + b wb) + c wc) + d wd, or fused as PyTorch's contracted kernel sums it.
float sum4(const SampleParams& p, float a, float b, float c, float d, float wa, float wb, float wc, float wd) {
    if (p.fused) return std::fma(d, wd, std::fma(c, wc, std::fma(b, wb, a * wa)));
    return a * wa + b * wb + c * wc + d * wd;
}

// One input image (all channels) as raw float32 with element strides.
struct Image {
    const float* base;
    std::int64_t C, H, W;
    std::int64_t sc, sh, sw;
    float at(std::int64_t c, std::int64_t h, std::int64_t w) const {
        return base[c * sc + h * sh + w * sw];
    }
};

// Output pixel's channel 0 and the distance between channels.
struct OutPixel {
    float* ptr;
    std::int64_t sc;
};

bool inside(std::int64_t i, std::int64_t size) { return i >= 0 && i < size; }

void sample_bilinear(const Image& im, const SampleParams& p, float gx, float gy, OutPixel out) {
    const float x = source(gx, im.W, p), y = source(gy, im.H, p);
    const float x0 = std::floor(x), y0 = std::floor(y);
    const float w = x - x0, e = 1.0f - w;  // distances to the west / east neighbours
    const float n = y - y0, s = 1.0f - n;  // distances to the north / south neighbours
    const float wnw = s * e, wne = s * w, wsw = n * e, wse = n * w;
    const std::int64_t ix = grid::to_index(x0), iy = grid::to_index(y0);
    const bool in_w = inside(ix, im.W), in_e = inside(ix + 1, im.W);
    const bool in_n = inside(iy, im.H), in_s = inside(iy + 1, im.H);
    // torchvision's mask: the same interpolation of an all-ones channel.
    const float mask = sum4(p, in_n && in_w ? 1.0f : 0.0f, in_n && in_e ? 1.0f : 0.0f, in_s && in_w ? 1.0f : 0.0f,
                            in_s && in_e ? 1.0f : 0.0f, wnw, wne, wsw, wse);
    for (std::int64_t c = 0; c < im.C; ++c) {
        const float vnw = in_n && in_w ? im.at(c, iy, ix) : 0.0f;
        const float vne = in_n && in_e ? im.at(c, iy, ix + 1) : 0.0f;
        const float vsw = in_s && in_w ? im.at(c, iy + 1, ix) : 0.0f;
        const float vse = in_s && in_e ? im.at(c, iy + 1, ix + 1) : 0.0f;
        const float v = sum4(p, vnw, vne, vsw, vse, wnw, wne, wsw, wse);
        if (p.fill) {
            const float f = (*p.fill)[static_cast<std::size_t>(c)];
            out.ptr[c * out.sc] = (v - f) * mask + f;
        } else {
            out.ptr[c * out.sc] = v;
        }
    }
}

void sample_nearest(const Image& im, const SampleParams& p, float gx, float gy, OutPixel out) {
    const float x = source(gx, im.W, p), y = source(gy, im.H, p);
    const std::int64_t ix = grid::to_index(grid::round_half_even(x));
    const std::int64_t iy = grid::to_index(grid::round_half_even(y));
    const bool in = inside(ix, im.W) && inside(iy, im.H);
    for (std::int64_t c = 0; c < im.C; ++c)
        out.ptr[c * out.sc] = in ? im.at(c, iy, ix) : p.fill ? (*p.fill)[static_cast<std::size_t>(c)] : 0.0f;
}

void sample_bicubic(const Image& im, const SampleParams& p, float gx, float gy, OutPixel out) {
    // The fraction comes from the unpadded coordinate; padding then applies to each
    // of the 4 x 4 tap positions separately.
    const float x = grid::unnormalize(gx, im.W, p.align_corners);
    const float y = grid::unnormalize(gy, im.H, p.align_corners);
    const float x0 = std::floor(x), y0 = std::floor(y);
    const std::array<float, 4> cx = grid::cubic_coefficients(x - x0);
    const std::array<float, 4> cy = grid::cubic_coefficients(y - y0);
    std::array<std::int64_t, 4> ix{}, iy{};
    std::array<bool, 4> okx{}, oky{};
    for (std::size_t k = 0; k < 4; ++k) {
        const float off = static_cast<float>(k) - 1.0f;
        ix[k] = grid::to_index(grid::pad_coordinate(x0 + off, im.W, p.padding, p.align_corners));
        iy[k] = grid::to_index(grid::pad_coordinate(y0 + off, im.H, p.padding, p.align_corners));
        okx[k] = inside(ix[k], im.W);
        oky[k] = inside(iy[k], im.H);
    }
    for (std::int64_t c = 0; c < im.C; ++c) {
        std::array<float, 4> rows{};
        for (std::size_t r = 0; r < 4; ++r) {
            auto v = [&](std::size_t k) { return okx[k] && oky[r] ? im.at(c, iy[r], ix[k]) : 0.0f; };
            rows[r] = cx[0] * v(0) + cx[1] * v(1) + cx[2] * v(2) + cx[3] * v(3);
        }
        out.ptr[c * out.sc] = cy[0] * rows[0] + cy[1] * rows[1] + cy[2] * rows[2] + cy[3] * rows[3];
    }
}

void sample(const Image& im, const SampleParams& p, float gx, float gy, OutPixel out) {
    switch (p.mode) {
        case GridMode::Bilinear: sample_bilinear(im, p, gx, gy, out); return;
        case GridMode::Nearest: sample_nearest(im, p, gx, gy, out); return;
        case GridMode::Bicubic: sample_bicubic(im, p, gx, gy, out); return;
    }
}

void require_float32(std::string_view op, const Tensor& in) {
    if (in.dtype() != DType::Float32)
        fail("{} needs float32 input, got {} (convert to float32 first)", op, dtype_name(in.dtype()));
}

// Runs `grid_at(n, h, w)` -> (x, y) for every output pixel of an (N, C, out_h, out_w)
// result, rows split over threads.
template <typename GridAt>
Tensor sample_all(const Tensor& in, const SampleParams& p, std::int64_t out_h, std::int64_t out_w,
                  int threads, GridAt&& grid_at) {
    const std::int64_t N = in.dim(0), C = in.dim(1);
    Tensor out = Tensor::empty(DType::Float32, {N, C, out_h, out_w}, in.suggested_layout());
    parallel_for(0, N * out_h, threads, [&](std::int64_t row) {
        const std::int64_t n = row / out_h, h = row % out_h;
        const Image im{in.data_as<float>() + n * in.stride(0), C, in.dim(2), in.dim(3),
                       in.stride(1), in.stride(2), in.stride(3)};
        for (std::int64_t w = 0; w < out_w; ++w) {
            const std::array<float, 2> g = grid_at(n, h, w);
            sample(im, p, g[0], g[1], OutPixel{&out.at<float>(n, 0, h, w), out.stride(1)});
        }
    });
    return out;
}

// The fill as one float32 value per channel (empty without a fill).
std::vector<float> fill_values(const std::vector<double>& fill, std::int64_t channels) {
    std::vector<float> out;
    if (fill.empty()) return out;
    for (std::int64_t c = 0; c < channels; ++c)
        out.push_back(static_cast<float>(fill.size() == 1 ? fill[0] : fill[static_cast<std::size_t>(c)]));
    return out;
}

// A float32 result of torchvision's _apply_grid_transform back to uint8: round half to
// even, saturating (NaN, from a matrix too large for float32, to 0), as the compiled
// engines' sat_cast; in range whenever the fill is.
Tensor round_to_uint8(const Tensor& out) {
    Tensor rounded = Tensor::empty(DType::UInt8, out.shape(), out.suggested_layout());
    const Dims& s = out.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    const float v = grid::round_half_even(out.at<float>(n, c, h, w));
                    rounded.at<std::uint8_t>(n, c, h, w) =
                        static_cast<std::uint8_t>(!(v > 0.0f) ? 0.0f : v >= 255.0f ? 255.0f : v);
                }
    return rounded;
}

// torchvision.transforms.v2.functional.affine on a tensor: uint8 becomes float32, the
// grid is _affine_grid's, grid_sample with zeros padding, the fill blend, then round half
// to even back to uint8.
Tensor torchvision_affine(const AffineOp& op, const Tensor& in, int threads) {
    const bool was_uint8 = in.dtype() == DType::UInt8;
    const Tensor x = was_uint8 ? convert(ConvertOp{DType::Float32, false}, in, threads) : in;
    require_float32("affine", x);
    const std::int64_t out_h = op.size ? (*op.size)[0] : x.dim(2);
    const std::int64_t out_w = op.size ? (*op.size)[1] : x.dim(3);
    const grid::Rescaled32 r = grid::rescaled_theta(op.theta, x.dim(2), x.dim(3));
    const bool fused = grid::grid_product_fused(op.grid_fma, out_h, out_w);
    const std::vector<float> fill = fill_values(op.fill, x.dim(1));
    const SampleParams p{op.mode, PaddingMode::Zeros, false, fill.empty() ? nullptr : &fill, op.sample_fma};
    Tensor out = sample_all(x, p, out_h, out_w, threads, [&](std::int64_t, std::int64_t h, std::int64_t w) {
        return grid::pixel_grid_point(r, grid::pixel_base_coord(w, out_w), grid::pixel_base_coord(h, out_h), fused);
    });
    return was_uint8 ? round_to_uint8(out) : out;
}

}  // namespace

Tensor affine(const AffineOp& op, const Tensor& in, int threads) {
    if (op.convention == AffineConvention::Torchvision) return torchvision_affine(op, in, threads);
    require_float32("affine", in);
    const std::int64_t out_h = op.size ? (*op.size)[0] : in.dim(2);
    const std::int64_t out_w = op.size ? (*op.size)[1] : in.dim(3);
    if (out_h <= 0 || out_w <= 0) fail("affine: output size ({}, {}) must be positive", out_h, out_w);
    const grid::Theta32 theta = grid::theta_to_float(op.theta);
    const std::vector<float> fill = fill_values(op.fill, in.dim(1));
    const SampleParams p{op.mode, op.padding_mode, op.align_corners, fill.empty() ? nullptr : &fill};
    return sample_all(in, p, out_h, out_w, threads, [&](std::int64_t, std::int64_t h, std::int64_t w) {
        return grid::affine_point(theta, grid::affine_base_coord(w, out_w, op.align_corners),
                                  grid::affine_base_coord(h, out_h, op.align_corners));
    });
}

// torchvision.transforms.v2.functional.perspective on a tensor: its _perspective_grid, then
// what its affine does (see torchvision_affine).
Tensor perspective(const PerspectiveOp& op, const Tensor& in, int threads) {
    const bool was_uint8 = in.dtype() == DType::UInt8;
    const Tensor x = was_uint8 ? convert(ConvertOp{DType::Float32, false}, in, threads) : in;
    const std::int64_t h = x.dim(2), w = x.dim(3);
    const grid::Perspective32 factors = grid::perspective_factors(op.coefficients, h, w);
    const bool fused = grid::grid_product_fused(op.grid_fma, h, w);
    const std::vector<float> fill = fill_values(op.fill, x.dim(1));
    const SampleParams p{op.mode, PaddingMode::Zeros, false, fill.empty() ? nullptr : &fill, op.sample_fma};
    Tensor out = sample_all(x, p, h, w, threads, [&](std::int64_t, std::int64_t oy, std::int64_t ox) {
        return grid::perspective_grid_point(factors, grid::perspective_base_coord(ox), grid::perspective_base_coord(oy),
                                            fused);
    });
    return was_uint8 ? round_to_uint8(out) : out;
}

Tensor grid_sample(const GridSampleOp& op, const Tensor& in, int threads) {
    require_float32("grid_sample", in);
    const Tensor& g = op.grid;
    if (g.dtype() != DType::Float32 || g.dim(3) != 2)
        fail("grid_sample: grid '{}' must be float32 of shape (N, H, W, 2), got {} ({}, {}, {}, {})",
             op.grid_path, dtype_name(g.dtype()), g.dim(0), g.dim(1), g.dim(2), g.dim(3));
    if (g.dim(0) != in.dim(0))
        fail("grid_sample: grid '{}' has batch {} but the input has batch {}", op.grid_path, g.dim(0),
             in.dim(0));
    const SampleParams p{op.mode, op.padding_mode, op.align_corners};
    return sample_all(in, p, g.dim(1), g.dim(2), threads,
                      [&](std::int64_t n, std::int64_t h, std::int64_t w) {
                          return std::array<float, 2>{g.at<float>(n, h, w, 0), g.at<float>(n, h, w, 1)};
                      });
}

}  // namespace toroid::reference
