// The op catalogue: the parameters of every transform a pipeline can hold, already
// validated (parse_pipeline in ops/pipeline_json.h builds them from JSON). Each op's JSON
// and shape rule are its OpDef (ops/registry.h); the per-op math (resize weights, grid
// formulas) lives beside this file; the reference engine and the decompositions both read
// these structs.
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace toroid {

enum class ResizeMode : std::uint8_t { Nearest, NearestExact, Bilinear, Bicubic };
enum class GridMode : std::uint8_t { Bilinear, Nearest, Bicubic };
enum class PaddingMode : std::uint8_t { Zeros, Border, Reflection };

std::string_view resize_mode_name(ResizeMode m);
std::string_view grid_mode_name(GridMode m);
std::string_view padding_mode_name(PaddingMode m);

// F.interpolate on (N, C, H, W). Exactly one way of sizing is set: `size`, `scale_factor`,
// or torchvision's aspect-preserving rule (`smaller_edge` and/or `max_size`: the smaller
// edge becomes smaller_edge, the other in proportion, truncated; then if the longer edge
// exceeds max_size, it becomes max_size and the shorter one shrinks in proportion. With
// max_size alone the longer edge becomes max_size). The output size then depends on the
// input's, and one compiled pipeline serves every input size.
struct ResizeOp {
    ResizeMode mode = ResizeMode::Nearest;
    std::optional<std::array<std::int64_t, 2>> size;   // (h, w)
    std::optional<std::array<double, 2>> scale_factor;  // (sh, sw)
    std::optional<std::int64_t> smaller_edge;
    std::optional<std::int64_t> max_size;
    bool align_corners = false;           // bilinear / bicubic only
    bool antialias = false;               // bilinear / bicubic only
    bool recompute_scale_factor = false;  // only with scale_factor

    bool operator==(const ResizeOp&) const = default;
};

// How an affine op builds its sampling grid from theta.
// - PyTorch: F.affine_grid(theta, (N, C, h', w'), align_corners), theta in normalized
//   coordinates; float32 input only.
// - Torchvision: torchvision.transforms.v2.functional.affine on a tensor. theta is the
//   inverse matrix torchvision's _get_inverse_affine_matrix returns (pixel units, origin
//   at the image's centre); the grid is torchvision's _affine_grid (pixel-centred base
//   coordinates times theta / (w/2, h/2), summed as PyTorch's CPU bmm sums them); zeros
//   padding, no align_corners; uint8 input is sampled in float32 and rounded half to even
//   back to uint8, as torchvision's _apply_grid_transform does.
enum class AffineConvention : std::uint8_t { PyTorch, Torchvision };
std::string_view affine_convention_name(AffineConvention c);

// F.affine_grid then F.grid_sample (PyTorch convention), or torchvision's affine.
struct AffineOp {
    std::array<std::array<double, 3>, 2> theta{};
    GridMode mode = GridMode::Bilinear;
    PaddingMode padding_mode = PaddingMode::Zeros;
    bool align_corners = false;
    std::optional<std::array<std::int64_t, 2>> size;  // (h', w'); default: the input's
    AffineConvention convention = AffineConvention::PyTorch;
    // Torchvision convention, how the PyTorch being matched rounds (both are read from the
    // installed torch by toroid.transforms):
    // - grid_fma: its CPU bmm sums the grid with fused multiply-adds (MKL or OpenBLAS, grids
    //   of 67 pixels or more: 3 * 2 * h' * w' >= 400) or with rounded products (its
    //   small-matrix loop, and builds on a generic BLAS such as Debian's). true follows the
    //   first rule, false always rounds.
    // - sample_fma: its vectorized grid_sample kernel was built with floating-point
    //   contraction (GCC's default; Debian's build): the unnormalize and the bilinear sum are
    //   fused multiply-adds. false: every step rounded, as the PyTorch convention computes.
    bool grid_fma = true;
    bool sample_fma = true;
    // torchvision's fill (nearest or bilinear, zeros padding): empty is fill=None (zeros
    // outside the image); one value for all channels or one per channel. Nearest puts the
    // fill where the picked pixel is outside; bilinear blends it with the warped all-ones
    // mask m as (v - fill) * m + fill.
    std::vector<double> fill;

    bool operator==(const AffineOp&) const = default;
};

// F.grid_sample with a user grid of shape (N, H', W', 2), float32, dense (N, H', W', 2).
struct GridSampleOp {
    std::string grid_path;  // as written in the pipeline (for messages and cache keys)
    Tensor grid;            // loaded data; dims (N, H', W', 2) stored in the Tensor's 4 dims
    GridMode mode = GridMode::Bilinear;
    PaddingMode padding_mode = PaddingMode::Zeros;
    bool align_corners = false;
};

// Tensor.flip(dims); dims normalized to 0..3, unique, sorted.
struct FlipOp {
    std::vector<int> dims;

    bool operator==(const FlipOp&) const = default;
};

// torchvision.transforms.v2.functional.crop: region may extend past the image, where
// it is filled with zeros. With `center` it is center_crop: top and left are worked out
// from the input's size (crop_origin), padding with zeros where the image is smaller.
struct CropOp {
    std::int64_t top = 0, left = 0, height = 0, width = 0;
    bool center = false;

    bool operator==(const CropOp&) const = default;
};

// The (top, left) of `op`'s region in an input of in_h x in_w: torchvision's center_crop
// anchor (round half to even of the margin / 2, or minus the leading padding) when
// op.center, else (op.top, op.left).
std::array<std::int64_t, 2> crop_origin(const CropOp& op, std::int64_t in_h, std::int64_t in_w);

// torchvision.transforms.v2.functional.to_dtype(x, dtype, scale).
struct ConvertOp {
    DType dtype = DType::Float32;
    bool scale = false;

    bool operator==(const ConvertOp&) const = default;
};

// torchvision.transforms.v2.functional.normalize: (x - mean[c]) / std[c]; float32 only.
// mean and std hold one value per channel, or one value for all channels.
struct NormalizeOp {
    std::vector<double> mean, std;

    bool operator==(const NormalizeOp&) const = default;
};

// torchvision.transforms.v2.functional.perspective on a tensor: the output pixel (x, y)
// (pixel centres x + 0.5, y + 0.5) samples the input where
//   ((a x + b y + c) / (g x + h y + 1), (d x + e y + f) / (g x + h y + 1))
// lands, with coefficients = (a, b, c, d, e, f, g, h) as torchvision's
// _get_perspective_coeffs gives them (float32 values). torchvision's _perspective_grid
// (both products as its bmm sums them, see AffineOp::grid_fma), grid_sample with zeros
// padding, its fill and, for uint8, rounding half to even back. The output has the input's
// size.
struct PerspectiveOp {
    std::array<double, 8> coefficients{};
    GridMode mode = GridMode::Bilinear;  // nearest or bilinear
    std::vector<double> fill;            // as AffineOp::fill
    bool grid_fma = true;                // as AffineOp
    bool sample_fma = true;

    bool operator==(const PerspectiveOp&) const = default;
};

// torchvision.transforms.v2.functional's colour ops on tensors, each its own JSON name:
// invert, posterize (bits), solarize (threshold), adjust_brightness, adjust_saturation,
// adjust_contrast (factor), rgb_to_grayscale (num_output_channels), adjust_gamma (gamma,
// gain), adjust_hue (factor), autocontrast and equalize. Pointwise but for contrast, which blends with
// the mean of each image's grey image (a whole-image sum), and autocontrast, which scales by
// each image and channel's minimum and maximum, and equalize, whose table comes from each
// image and channel's cumulative histogram. The arithmetic is torchvision's on CPU
// tensors (ops/color_op.cpp says where it rounds).
enum class ColorFn : std::uint8_t { Invert, Posterize, Solarize, Brightness, Saturation, Contrast, Grayscale, Gamma, Hue, Autocontrast, Equalize };

struct ColorOp {
    ColorFn fn = ColorFn::Invert;
    double value = 0;              // the factor (brightness, saturation, contrast, hue), the threshold (solarize) or gamma
    double gain = 1;               // adjust_gamma's gain
    std::int64_t bits = 8;         // posterize: bits kept, 0..8
    std::int64_t out_channels = 1; // rgb_to_grayscale: 1 or 3

    bool operator==(const ColorOp&) const = default;
};

// torchvision.transforms.v2.functional.pad on an image tensor. Padding may be negative (that
// side is cropped). constant: `fill` outside the image (one value, or one per channel);
// edge: the nearest edge pixel (torch's replicate); reflect: mirrored about the edge pixel
// (torch's reflect: each side's padding below the input's size; with a negative padding on
// the other side, still about the input's own edge); symmetric: mirrored with the edge
// pixel repeated (torchvision's _pad_symmetric: the negative sides are cropped first, then
// each positive padding is at most the cropped size). The result is (H + top + bottom,
// W + left + right); the paddings are run-time values.
enum class PadMode : std::uint8_t { Constant, Edge, Reflect, Symmetric };
std::string_view pad_mode_name(PadMode m);

struct PadOp {
    std::int64_t left = 0, top = 0, right = 0, bottom = 0;
    PadMode mode = PadMode::Constant;
    std::vector<double> fill{0.0};  // one value, or one per channel (constant only)

    bool operator==(const PadOp&) const = default;
};

// The fill of a constant pad per channel, as the image's dtype holds it (torchvision's
// conversions): one value is torch's fill_ (float32: rounded to float; uint8: truncated,
// and a value outside [0, 255] is an error where anything is padded), several are a float32
// tensor converted to the dtype (uint8: truncated toward zero, then modulo 256). Checks the
// channel count and ranges; `channels` is the input's.
std::vector<double> pad_fill_values(const PadOp& op, DType dtype, std::int64_t channels);

// torchvision.transforms.v2.functional.erase(img, top, left, height, width, v): the rows
// top:top+height and columns left:left+width (Python slice rules: negative starts count from
// the end, the region is clipped to the image) take `value` (one value, or one per channel),
// a float32 tensor as torchvision's RandomErasing makes it, converted to the image's dtype
// (uint8: truncated toward zero; values outside (-1, 256) are refused: torch's conversion
// of those depends on the memory layout). The region is a run-time value.
struct EraseOp {
    std::int64_t top = 0, left = 0, height = 0, width = 0;
    std::vector<double> value{0.0};

    bool operator==(const EraseOp&) const = default;
};

// The half-open region [row0, row1) x [col0, col1) an erase covers in an in_h x in_w image
// (empty where row1 <= row0 or col1 <= col0), by Python's slice rules.
std::array<std::int64_t, 4> erase_region(const EraseOp& op, std::int64_t in_h, std::int64_t in_w);
// The erase value per channel as the image's dtype holds it (checks count and range).
std::vector<double> erase_values(const EraseOp& op, DType dtype, std::int64_t channels);

// torchvision.transforms.v2.functional.gaussian_blur(kernel_size, sigma) and
// adjust_sharpness(factor) on image tensors (ops/blur_op.cpp has the arithmetic): a 2-D
// convolution, in float32, of the reflect-padded image (blur) or of the image's interior
// with the 3x3 kernel [[1,1,1],[1,5,1],[1,1,1]] / 13 blended with the image (sharpness, its
// border kept). The kernel size is the structure; sigma and the factor are run-time values.
enum class BlurFn : std::uint8_t { Gaussian, Sharpness };

struct BlurOp {
    BlurFn fn = BlurFn::Gaussian;
    std::array<std::int64_t, 2> kernel_size{3, 3};  // (kx, ky), odd and positive
    std::array<double, 2> sigma{0.8, 0.8};         // (sx, sy), positive
    double factor = 1.0;                            // sharpness, non-negative
    // PyTorch's float vector width the weights follow: 8 (AVX2) or 16 (AVX-512).
    std::int64_t lanes = 16;

    bool operator==(const BlurOp&) const = default;
};

// The weights of a Gaussian blur, row by row (ky rows of kx), as torchvision computes them
// in float32: each 1-D kernel is softmax(-(linspace(-l, l, k) / sigma)^2) with PyTorch's CPU
// linspace, exp and sum (over op.lanes lanes), and the 2-D kernel their outer product.
std::vector<float> gaussian_kernel2d(const BlurOp& op);
// The 3x3 smoothing weights of adjust_sharpness (row by row).
std::vector<float> sharpness_kernel();

using Op = std::variant<ResizeOp, AffineOp, GridSampleOp, FlipOp, CropOp, ConvertOp, NormalizeOp, PerspectiveOp, ColorOp,
                        PadOp, EraseOp, BlurOp>;

std::string_view op_name(const Op& op);

struct Pipeline {
    std::vector<Op> ops;
};

// Output dtype and shape of `op` applied to an input of `in` dtype/shape. Validates
// everything that depends on the input (normalize on uint8, grid batch mismatch,
// sizes too large to allocate...) and throws toroid::Error with a clear message.
struct ShapeInfo {
    DType dtype;
    Dims shape;

    bool operator==(const ShapeInfo&) const = default;
};
ShapeInfo infer_shape(const Op& op, const ShapeInfo& in);
ShapeInfo infer_shape(const Pipeline& p, const ShapeInfo& in);
// The shape after every op: [0] is `in`, [k + 1] the result of op k. What a prepare infers
// once and hands to the decomposition.
std::vector<ShapeInfo> infer_shapes(const Pipeline& p, const ShapeInfo& in);

}  // namespace toroid
