// The definitions of the index-remapping and pointwise ops: flip, crop (and center_crop,
// the same struct), convert and normalize: their JSON and shape rules.
#include "ops/define.h"

namespace toroid {
namespace {

FlipOp parse_flip(OpReader& r, const ParseContext&) {
    const json* v = r.get("dims");
    if (!v) fail("{}: missing field 'dims'", r.where());
    if (!v->is_array()) r.type_error("dims", "a list of dims", *v);
    FlipOp op;
    for (const json& d : *v) {
        std::int64_t x = r.integer(d, "dims");
        if (x < -4 || x > 3) fail("{}: flip dim {} is out of range for a 4-D (N, C, H, W) tensor", r.where(), x);
        int n = static_cast<int>(x < 0 ? x + 4 : x);
        if (std::find(op.dims.begin(), op.dims.end(), n) != op.dims.end())
            fail("{}: flip dim {} appears more than once", r.where(), x);
        op.dims.push_back(n);
    }
    std::sort(op.dims.begin(), op.dims.end());
    return op;
}

void write_flip(const FlipOp& o, JsonWriter& w) { w.field("dims", o.dims); }

ShapeInfo flip_shape(const FlipOp&, const ShapeInfo& in) { return in; }

CropOp parse_crop(OpReader& r, const ParseContext&) {
    CropOp op;
    op.top = r.integer("top");
    op.left = r.integer("left");
    op.height = r.integer("height");
    op.width = r.integer("width");
    if (op.height <= 0 || op.width <= 0)
        fail("{}: 'height' and 'width' must be positive, got {} and {}", r.where(), op.height, op.width);
    constexpr std::int64_t limit = std::int64_t{1} << 31;
    // Compared on both sides: llabs(INT64_MIN) overflows.
    if (op.top <= -limit || op.top >= limit || op.left <= -limit || op.left >= limit)
        fail("{}: 'top' and 'left' must be within +-2^31", r.where());
    return op;
}

CropOp parse_center_crop(OpReader& r, const ParseContext&) {
    CropOp op;
    op.center = true;
    const auto size = r.pair<std::int64_t>("size", [&](const json& v, const char* k) { return positive_size(r, v, k); });
    if (!size) fail("{}: missing field 'size' ([h, w], or one number for a square)", r.where());
    op.height = (*size)[0];
    op.width = (*size)[1];
    return op;
}

// Syntax 0 is "crop", 1 "center_crop".
std::size_t crop_syntax(const CropOp& o) { return o.center ? 1 : 0; }

void write_crop(const CropOp& o, JsonWriter& w) {
    if (o.center) {
        w.field("size", std::array<std::int64_t, 2>{o.height, o.width});
        return;
    }
    w.field("top", o.top);
    w.field("left", o.left);
    w.field("height", o.height);
    w.field("width", o.width);
}

ShapeInfo crop_shape(const CropOp& o, const ShapeInfo& in) {
    const Dims& s = in.shape;
    return {in.dtype, {s[0], s[1], o.height, o.width}};
}

constexpr std::array<std::pair<const char*, DType>, 5> kDTypes{{
    {"uint8", DType::UInt8},
    {"float32", DType::Float32},
    {"uint16", DType::UInt16},
    {"float16", DType::Float16},
    {"bfloat16", DType::BFloat16},
}};

ConvertOp parse_convert(OpReader& r, const ParseContext&) {
    ConvertOp op;
    op.dtype = parse_enum(r, "dtype", kDTypes, std::optional<DType>());
    op.scale = r.boolean("scale", false);
    return op;
}

void write_convert(const ConvertOp& o, JsonWriter& w) {
    w.field("dtype", dtype_name(o.dtype));
    w.field("scale", o.scale);
}

ShapeInfo convert_shape(const ConvertOp& o, const ShapeInfo& in) { return {o.dtype, in.shape}; }

NormalizeOp parse_normalize(OpReader& r, const ParseContext&) {
    NormalizeOp op;
    op.mean = r.number_list("mean");
    op.std = r.number_list("std");
    for (double s : op.std)
        if (s == 0) fail("{}: 'std' must not contain 0", r.where());
    return op;
}

void write_normalize(const NormalizeOp& o, JsonWriter& w) {
    w.field("mean", o.mean);
    w.field("std", o.std);
}

ShapeInfo normalize_shape(const NormalizeOp& o, const ShapeInfo& in) {
    require_float("normalize", in.dtype, /*narrow=*/true);
    auto c = static_cast<std::size_t>(in.shape[1]);
    if ((o.mean.size() != 1 && o.mean.size() != c) || (o.std.size() != 1 && o.std.size() != c))
        fail("normalize: mean has {} and std has {} values, but the input has {} channels "
             "(give one value per channel, or one for all)",
             o.mean.size(), o.std.size(), c);
    return in;
}

}  // namespace

OpDef flip_op_def() {
    return make_op_def(TypedOpDef<FlipOp>{
        .syntax = {{"flip", parse_flip}},
        .write = write_flip,
        .shape = flip_shape,
        .narrow = narrow_native<FlipOp>,
    });
}

OpDef crop_op_def() {
    return make_op_def(TypedOpDef<CropOp>{
        .syntax = {{"crop", parse_crop}, {"center_crop", parse_center_crop}},
        .syntax_of = crop_syntax,
        .write = write_crop,
        .shape = crop_shape,
        .narrow = narrow_native<CropOp>,
    });
}

OpDef convert_op_def() {
    return make_op_def(TypedOpDef<ConvertOp>{
        .syntax = {{"convert", parse_convert}},
        .write = write_convert,
        .shape = convert_shape,
        .narrow = narrow_own<ConvertOp>,
    });
}

OpDef normalize_op_def() {
    return make_op_def(TypedOpDef<NormalizeOp>{
        .syntax = {{"normalize", parse_normalize}},
        .write = write_normalize,
        .shape = normalize_shape,
        .narrow = narrow_own<NormalizeOp>,
    });
}

}  // namespace toroid
