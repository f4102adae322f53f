// Reference affine warps (F.affine_grid + F.grid_sample) and grid_sample with a user
// grid, float32 only. Each output pixel is computed on its own from the formulas in
// ops/grid_math.h, in the operation order of PyTorch's float32 CPU kernel.
#include "core/error.h"
#include "core/parallel.h"
#include "ops/grid_math.h"
#include "reference/reference.h"

#include <array>
#include <cmath>

namespace toroid::reference {

namespace {

struct SampleParams {
    GridMode mode;
    PaddingMode padding;
    bool align_corners;
};

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
    const float x = grid::source_coordinate(gx, im.W, p.padding, p.align_corners);
    const float y = grid::source_coordinate(gy, im.H, p.padding, p.align_corners);
    const float x0 = std::floor(x), y0 = std::floor(y);
    const float w = x - x0, e = 1.0f - w;  // distances to the west / east neighbours
    const float n = y - y0, s = 1.0f - n;  // distances to the north / south neighbours
    const float wnw = s * e, wne = s * w, wsw = n * e, wse = n * w;
    const std::int64_t ix = grid::to_index(x0), iy = grid::to_index(y0);
    const bool in_w = inside(ix, im.W), in_e = inside(ix + 1, im.W);
    const bool in_n = inside(iy, im.H), in_s = inside(iy + 1, im.H);
    for (std::int64_t c = 0; c < im.C; ++c) {
        const float vnw = in_n && in_w ? im.at(c, iy, ix) : 0.0f;
        const float vne = in_n && in_e ? im.at(c, iy, ix + 1) : 0.0f;
        const float vsw = in_s && in_w ? im.at(c, iy + 1, ix) : 0.0f;
        const float vse = in_s && in_e ? im.at(c, iy + 1, ix + 1) : 0.0f;
        out.ptr[c * out.sc] = vnw * wnw + vne * wne + vsw * wsw + vse * wse;
    }
}

void sample_nearest(const Image& im, const SampleParams& p, float gx, float gy, OutPixel out) {
    const float x = grid::source_coordinate(gx, im.W, p.padding, p.align_corners);
    const float y = grid::source_coordinate(gy, im.H, p.padding, p.align_corners);
    const std::int64_t ix = grid::to_index(grid::round_half_even(x));
    const std::int64_t iy = grid::to_index(grid::round_half_even(y));
    const bool in = inside(ix, im.W) && inside(iy, im.H);
    for (std::int64_t c = 0; c < im.C; ++c) out.ptr[c * out.sc] = in ? im.at(c, iy, ix) : 0.0f;
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

}  // namespace

Tensor affine(const AffineOp& op, const Tensor& in, int threads) {
    require_float32("affine", in);
    const std::int64_t out_h = op.size ? (*op.size)[0] : in.dim(2);
    const std::int64_t out_w = op.size ? (*op.size)[1] : in.dim(3);
    if (out_h <= 0 || out_w <= 0) fail("affine: output size ({}, {}) must be positive", out_h, out_w);
    const grid::Theta32 theta = grid::theta_to_float(op.theta);
    const SampleParams p{op.mode, op.padding_mode, op.align_corners};
    return sample_all(in, p, out_h, out_w, threads, [&](std::int64_t, std::int64_t h, std::int64_t w) {
        return grid::affine_point(theta, grid::affine_base_coord(w, out_w, op.align_corners),
                                  grid::affine_base_coord(h, out_h, op.align_corners));
    });
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
