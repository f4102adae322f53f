// Names of the op catalogue's enums and the shape rules of every op: what comes out
// of an op for a given input dtype and shape, with every input-dependent check.
#include "ops/ops.h"

#include "core/error.h"
#include "ops/resize_math.h"

#include <limits>

namespace toroid {

std::string_view resize_mode_name(ResizeMode m) {
    switch (m) {
        case ResizeMode::Nearest: return "nearest";
        case ResizeMode::NearestExact: return "nearest-exact";
        case ResizeMode::Bilinear: return "bilinear";
        case ResizeMode::Bicubic: return "bicubic";
    }
    return "?";
}

std::string_view grid_mode_name(GridMode m) {
    switch (m) {
        case GridMode::Bilinear: return "bilinear";
        case GridMode::Nearest: return "nearest";
        case GridMode::Bicubic: return "bicubic";
    }
    return "?";
}

std::string_view padding_mode_name(PaddingMode m) {
    switch (m) {
        case PaddingMode::Zeros: return "zeros";
        case PaddingMode::Border: return "border";
        case PaddingMode::Reflection: return "reflection";
    }
    return "?";
}

std::string_view affine_convention_name(AffineConvention c) {
    switch (c) {
        case AffineConvention::PyTorch: return "pytorch";
        case AffineConvention::Torchvision: return "torchvision";
    }
    return "?";
}

std::string_view op_name(const Op& op) {
    static constexpr std::string_view names[] = {"resize", "affine", "grid_sample", "flip",
                                                 "crop",   "convert", "normalize"};
    if (const auto* c = std::get_if<CropOp>(&op); c && c->center) return "center_crop";
    return names[op.index()];
}

std::array<std::int64_t, 2> crop_origin(const CropOp& op, std::int64_t in_h, std::int64_t in_w) {
    if (!op.center) return {op.top, op.left};
    // Per axis: a crop larger than the image pads it (the leading half of the padding,
    // rounded down, comes first) and takes it whole; a smaller one starts at
    // round((size - crop) / 2), Python's round: half to even.
    auto origin = [](std::int64_t crop, std::int64_t size) -> std::int64_t {
        if (crop > size) return -((crop - size) / 2);
        const std::int64_t margin = size - crop;
        const std::int64_t half = margin / 2;
        return margin % 2 == 0 ? half : (half % 2 == 0 ? half : half + 1);
    };
    return {origin(op.height, in_h), origin(op.width, in_w)};
}

namespace {

// Every tensor toroid makes must be allocatable and indexable: each dim below 2^31
// and the element count at most kMaxElements.
void check_result_size(std::string_view op, const Dims& s) {
    constexpr std::int64_t max_dim = std::numeric_limits<std::int32_t>::max();
    for (auto d : s)
        if (d > max_dim)
            fail("{}: result ({}, {}, {}, {}) is too large (a dimension exceeds {})", op, s[0], s[1],
                 s[2], s[3], max_dim);
    std::int64_t n = 1;
    for (auto d : s) {
        if (d != 0 && n > kMaxElements / d)
            fail("{}: result ({}, {}, {}, {}) is too large to allocate", op, s[0], s[1], s[2], s[3]);
        n *= d;
    }
}

void require_float(std::string_view op, DType t) {
    if (t != DType::Float32)
        fail("{} needs float32 input, got {} (add {{\"op\": \"convert\", \"dtype\": \"float32\"}} "
             "before it)",
             op, dtype_name(t));
}

}  // namespace

ShapeInfo infer_shape(const Op& op, const ShapeInfo& in) {
    const Dims& s = in.shape;
    for (auto d : s)
        if (d <= 0) fail("{}: input has a zero-size dimension ({}, {}, {}, {})", op_name(op), s[0], s[1], s[2], s[3]);
    ShapeInfo out = in;
    std::visit(
        [&](const auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, ResizeOp>) {
                auto hw = resize_output_size(o, s[2], s[3]);
                out.shape = {s[0], s[1], hw[0], hw[1]};
            } else if constexpr (std::is_same_v<T, AffineOp>) {
                // The torchvision convention samples uint8 in float32 and rounds back.
                if (o.convention == AffineConvention::PyTorch) require_float("affine", in.dtype);
                if (o.size) out.shape = {s[0], s[1], (*o.size)[0], (*o.size)[1]};
                if (o.fill.size() > 1 && static_cast<std::int64_t>(o.fill.size()) != s[1])
                    fail("affine: 'fill' has {} values but the input has {} channels (give one value per "
                         "channel, or one for all)",
                         o.fill.size(), s[1]);
                if (in.dtype == DType::UInt8)
                    for (double v : o.fill)
                        if (!(v >= 0.0 && v <= 255.0))
                            fail("affine: fill {} is outside 0..255, the range of the uint8 input", v);
            } else if constexpr (std::is_same_v<T, GridSampleOp>) {
                require_float("grid_sample", in.dtype);
                const Dims& g = o.grid.shape();
                if (g[0] != s[0])
                    fail("grid_sample: grid '{}' has batch {} but the input has batch {}", o.grid_path,
                         g[0], s[0]);
                out.shape = {s[0], s[1], g[1], g[2]};
            } else if constexpr (std::is_same_v<T, FlipOp>) {
                // shape unchanged
            } else if constexpr (std::is_same_v<T, CropOp>) {
                out.shape = {s[0], s[1], o.height, o.width};
            } else if constexpr (std::is_same_v<T, ConvertOp>) {
                out.dtype = o.dtype;
            } else if constexpr (std::is_same_v<T, NormalizeOp>) {
                require_float("normalize", in.dtype);
                auto c = static_cast<std::size_t>(s[1]);
                if ((o.mean.size() != 1 && o.mean.size() != c) || (o.std.size() != 1 && o.std.size() != c))
                    fail("normalize: mean has {} and std has {} values, but the input has {} channels "
                         "(give one value per channel, or one for all)",
                         o.mean.size(), o.std.size(), c);
            }
        },
        op);
    check_result_size(op_name(op), out.shape);
    return out;
}

ShapeInfo infer_shape(const Pipeline& p, const ShapeInfo& in) {
    ShapeInfo cur = in;
    for (const Op& op : p.ops) cur = infer_shape(op, cur);
    return cur;
}

}  // namespace toroid
