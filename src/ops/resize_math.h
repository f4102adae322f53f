// The arithmetic of F.interpolate (resize) as PyTorch's CPU kernels do it: output sizes,
// the per-axis scale the kernels see, which kernel runs, and per-axis index/weight tables.
// The reference engine loops over these tables; the compiler bakes them into constants.
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"
#include "ops/ops.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace toroid {

// (out_h, out_w): `size` as given, or floor(in * scale_factor) computed in double (the
// same with and without recompute_scale_factor). Throws toroid::Error if a dim is <= 0.
std::array<std::int64_t, 2> resize_output_size(const ResizeOp& op, std::int64_t in_h, std::int64_t in_w);

// The scale each axis's kernel receives (scales_h, scales_w): the user's scale_factor when
// it is given and recompute_scale_factor is false; otherwise none, and the kernels derive
// the source step from the sizes. A kernel turns a given scale s into the step 1/s.
std::array<std::optional<double>, 2> resize_kernel_scales(const ResizeOp& op);

// The source step of one axis as PyTorch's area_pixel_compute_scale gives it, in double:
// align_corners -> (in-1)/(out-1) (0 when out == 1); a given scale s -> 1/s; else in/out.
// Kernels round it to their compute type; see the table builders for where.
double resize_axis_step(bool align_corners, std::int64_t in, std::int64_t out, std::optional<double> scale);

// Which of PyTorch's CPU code paths computes a resize. The paths agree up to float
// rounding except for the nearest modes, whose index formulas differ at a few points.
enum class ResizeKernel : std::uint8_t {
    Copy,                 // separable modes with out == in on both axes: the input, unchanged
    NearestGeneric,       // nearest / nearest-exact, strided generic kernel
    NearestChannelsLast,  // nearest / nearest-exact, channels-last kernel (nearest_idx rules)
    LinearGeneric,        // float bilinear: 2x2 taps, each row interpolated, then the rows
    CubicGeneric,         // float bicubic (a = -0.75): 4x4 taps, rows interpolated first
    SeparableFloat,       // float antialias: horizontal pass, then vertical, float accumulator
    SeparableUInt8,       // uint8 bilinear/bicubic (any antialias): int16 fixed point passes
};

// Chooses the kernel PyTorch 2.11 uses on one thread for an input described by `in`
// (its strides decide "channels-last contiguous") and the given output size. The two
// float bilinear kernels PyTorch has (generic and channels-last) differ only in the
// order of rounding, so toroid uses the generic order for both.
ResizeKernel resize_kernel(const ResizeOp& op, const TensorSpec& in, std::int64_t out_h, std::int64_t out_w);

// The index and weight table of one axis. Every output index o reads `taps` entries at
// o * taps: source `index` (already clamped into [0, in_size)) and weight. The separable
// kernels' taps are contiguous: output o reads first[o] + k for k < count[o], and their
// `index` is left empty (a new image size pays for every table it builds); entries past
// count[o] hold weight 0.
struct ResizeAxisWeights {
    std::int64_t in_size = 0;
    std::int64_t out_size = 0;
    int taps = 0;
    bool skip = false;                 // separable kernels: this axis's pass does not run
    std::vector<std::int64_t> first;   // out_size entries
    std::vector<std::int32_t> count;   // out_size entries
    std::vector<std::int64_t> index;   // out_size * taps entries (nearest and generic kernels)
    std::vector<float> weight;         // float kernels: out_size * taps (empty for nearest)
    std::vector<std::int16_t> weight_i16;  // SeparableUInt8: out_size * taps fixed-point weights
    int precision = 0;                 // SeparableUInt8: weights are scaled by 2^precision
};

// Builds the table of one axis (axis 0 = height, 1 = width) for `kernel`.
ResizeAxisWeights resize_axis_weights(const ResizeOp& op, ResizeKernel kernel, int axis, std::int64_t in_size,
                                      std::int64_t out_size);

// Everything a resize needs: output size, kernel and both axis tables.
struct ResizePlan {
    ResizeKernel kernel = ResizeKernel::Copy;
    std::int64_t out_h = 0, out_w = 0;
    ResizeAxisWeights h, w;
};
ResizePlan plan_resize(const ResizeOp& op, const TensorSpec& in);

// PyTorch's is_contiguous(memory_format=channels_last) for a 4-D spec: strides of
// size-1 dims are ignored, so a C = 1 image in NCHW is channels-last contiguous too.
bool is_channels_last_contiguous(const TensorSpec& in);

// Ends one fixed-point tap sum of the uint8 kernel. `acc` started at 2^(precision-1) (the
// rounding half) and holds sum(weight_i16 * pixel); the result is acc >> precision
// (arithmetic shift), clamped to [0, 255].
inline std::uint8_t resize_fixed_point_finish(std::int32_t acc, int precision) {
    std::int32_t v = acc >> precision;
    return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

}  // namespace toroid
