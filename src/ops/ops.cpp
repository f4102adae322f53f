// Names of the op catalogue's enums, and shape inference: the checks every op shares
// around each op's own shape rule (its OpDef, ops/registry.h).
#include "ops/ops.h"

#include "core/error.h"
#include "ops/define.h"
#include "ops/registry.h"

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

std::string_view op_name(const Op& op) { return op_def(op).name_of(op); }

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

}  // namespace

void require_float(std::string_view op, DType t, bool narrow) {
    if (narrow ? !dtype_is_float(t) : t != DType::Float32)
        fail("{} needs {} input{}, got {} (add {{\"op\": \"convert\", \"dtype\": \"float32\"}} before it)", op,
             narrow ? "float" : "float32", narrow ? " (float32, float16 or bfloat16)" : "", dtype_name(t));
}

NarrowTypes narrow_types(const Op& op, DType dtype) {
    if (dtype == DType::UInt8 || dtype == DType::Float32) return NarrowTypes::Native;
    const OpDef& def = op_def(op);
    return def.narrow ? def.narrow(op, dtype) : NarrowTypes::Refused;
}

ShapeInfo infer_shape(const Op& op, const ShapeInfo& in) {
    const Dims& s = in.shape;
    for (auto d : s)
        if (d <= 0) fail("{}: input has a zero-size dimension ({}, {}, {}, {})", op_name(op), s[0], s[1], s[2], s[3]);
    ShapeInfo out;
    switch (narrow_types(op, in.dtype)) {
        case NarrowTypes::Refused:
            fail("{}: {} images are not supported yet (add {{\"op\": \"convert\", "
                 "\"dtype\": \"float32\"}} before it)",
                 op_name(op), dtype_name(in.dtype));
        case NarrowTypes::ViaFloat32:
            out = op_def(op).shape(op, ShapeInfo{DType::Float32, in.shape});
            out.dtype = in.dtype;
            break;
        case NarrowTypes::Native:
        case NarrowTypes::Own: out = op_def(op).shape(op, in); break;
    }
    check_result_size(op_name(op), out.shape);
    return out;
}

namespace {

// Every op refuses an input with a zero-size dimension; a pipeline of no ops (a copy) does
// too, so that no kernel is run over an empty extent.
void check_empty_pipeline_input(const Pipeline& p, const ShapeInfo& in) {
    const Dims& s = in.shape;
    if (!p.ops.empty()) return;
    for (auto d : s)
        if (d <= 0) fail("pipeline: input has a zero-size dimension ({}, {}, {}, {})", s[0], s[1], s[2], s[3]);
}

}  // namespace

std::vector<ShapeInfo> infer_shapes(const Pipeline& p, const ShapeInfo& in) {
    check_empty_pipeline_input(p, in);
    std::vector<ShapeInfo> shapes;
    shapes.reserve(p.ops.size() + 1);
    shapes.push_back(in);
    for (const Op& op : p.ops) shapes.push_back(infer_shape(op, shapes.back()));
    return shapes;
}

ShapeInfo infer_shape(const Pipeline& p, const ShapeInfo& in) {
    check_empty_pipeline_input(p, in);
    ShapeInfo cur = in;
    for (const Op& op : p.ops) cur = infer_shape(op, cur);
    return cur;
}

}  // namespace toroid
