// Reference gaussian_blur and adjust_sharpness, following torchvision's procedure on CPU
// tensors step by step (ops/blur_op.cpp has the arithmetic): the image in float32, padded in
// torch's reflect mode into a buffer (blur), convolved as oneDNN's depthwise convolution sums
// (a fused multiply-add per tap, rows outer, from 0), rounded for uint8; sharpness blends the
// convolved interior into a copy of the image, clamps and converts back.
#include "core/error.h"
#include "core/parallel.h"
#include "reference/reference.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace toroid::reference {

namespace {

// conv2d of one (h + ky - 1) x (w + kx - 1) plane with a ky x kx kernel: out[y][x].
float conv_at(const std::vector<float>& plane, std::int64_t pw, const std::vector<float>& k, std::int64_t kx,
              std::int64_t ky, std::int64_t y, std::int64_t x) {
    float acc = 0.0f;
    for (std::int64_t i = 0; i < ky; ++i)
        for (std::int64_t j = 0; j < kx; ++j)
            acc = std::fma(plane[static_cast<std::size_t>((y + i) * pw + x + j)], k[static_cast<std::size_t>(i * kx + j)],
                           acc);
    return acc;
}

// torch's reflect index of padded position j (leading padding p < size).
std::int64_t reflect_index(std::int64_t j, std::int64_t size, std::int64_t p) {
    const std::int64_t i = j - p;
    if (i < 0) return -i;
    if (i >= size) return 2 * (size - 1) - i;
    return i;
}

}  // namespace

Tensor blur(const BlurOp& op, const Tensor& in, int threads) {
    infer_shape(Op{op}, ShapeInfo{in.dtype(), in.shape()});  // the checks
    const Dims& s = in.shape();
    const std::int64_t H = s[2], W = s[3];
    Tensor out = Tensor::empty(in.dtype(), s, in.suggested_layout());
    const bool u8 = in.dtype() == DType::UInt8;
    dispatch_dtype(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        parallel_for(0, s[0] * s[1], threads, [&](std::int64_t plane_index) {
            const std::int64_t n = plane_index / s[1], c = plane_index % s[1];
            auto at = [&](std::int64_t y, std::int64_t x) { return static_cast<float>(in.at<T>(n, c, y, x)); };
            if (op.fn == BlurFn::Gaussian) {
                const std::int64_t kx = op.kernel_size[0], ky = op.kernel_size[1];
                const std::int64_t px = kx / 2, py = ky / 2, ph = H + 2 * py, pw = W + 2 * px;
                std::vector<float> padded(static_cast<std::size_t>(ph * pw));
                for (std::int64_t y = 0; y < ph; ++y)
                    for (std::int64_t x = 0; x < pw; ++x)
                        padded[static_cast<std::size_t>(y * pw + x)] =
                            at(reflect_index(y, H, py), reflect_index(x, W, px));
                const std::vector<float> k = gaussian_kernel2d(op);
                for (std::int64_t y = 0; y < H; ++y)
                    for (std::int64_t x = 0; x < W; ++x) {
                        float v = conv_at(padded, pw, k, kx, ky, y, x);
                        if (u8) v = std::nearbyint(v);
                        out.at<T>(n, c, y, x) = static_cast<T>(v);
                    }
                return;
            }
            // Sharpness: output = image as float32; its interior view gets
            // view + (1 - factor) * (blurred - view); then clamp and convert.
            std::vector<float> image(static_cast<std::size_t>(H * W));
            for (std::int64_t y = 0; y < H; ++y)
                for (std::int64_t x = 0; x < W; ++x) image[static_cast<std::size_t>(y * W + x)] = at(y, x);
            std::vector<float> result = image;
            if (H > 2 && W > 2) {
                const std::vector<float> k = sharpness_kernel();
                const auto alpha = static_cast<float>(1.0 - op.factor);
                for (std::int64_t y = 0; y + 2 < H; ++y)
                    for (std::int64_t x = 0; x + 2 < W; ++x) {
                        float b = conv_at(image, W, k, 3, 3, y, x);
                        if (u8) b = std::nearbyint(b);
                        const float view = image[static_cast<std::size_t>((y + 1) * W + x + 1)];
                        result[static_cast<std::size_t>((y + 1) * W + x + 1)] = std::fma(b - view, alpha, view);
                    }
            }
            if (H <= 2 || W <= 2) {  // torchvision returns the image as it is
                for (std::int64_t y = 0; y < H; ++y)
                    for (std::int64_t x = 0; x < W; ++x) out.at<T>(n, c, y, x) = in.at<T>(n, c, y, x);
                return;
            }
            const float bound = u8 ? 255.0f : 1.0f;
            for (std::int64_t y = 0; y < H; ++y)
                for (std::int64_t x = 0; x < W; ++x) {
                    const float v = std::min(std::max(result[static_cast<std::size_t>(y * W + x)], 0.0f), bound);
                    out.at<T>(n, c, y, x) = static_cast<T>(v);
                }
        });
    });
    return out;
}

}  // namespace toroid::reference
