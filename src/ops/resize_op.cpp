// The resize op's definition: its JSON (F.interpolate's arguments, or torchvision's
// smaller_edge / max_size rule) and its shape rule (ops/resize_math.h).
#include "ops/define.h"
#include "ops/resize_math.h"

namespace toroid {
namespace {

constexpr std::array<std::pair<const char*, ResizeMode>, 4> kResizeModes{{
    {"nearest", ResizeMode::Nearest},
    {"nearest-exact", ResizeMode::NearestExact},
    {"bilinear", ResizeMode::Bilinear},
    {"bicubic", ResizeMode::Bicubic},
}};

ResizeOp parse_resize(OpReader& r, const ParseContext&) {
    ResizeOp op;
    op.mode = parse_enum(r, "mode", kResizeModes, std::optional<ResizeMode>(ResizeMode::Nearest));
    op.size = r.pair<std::int64_t>("size", [&](const json& v, const char* k) { return positive_size(r, v, k); });
    op.scale_factor = r.pair<double>("scale_factor", [&](const json& v, const char* k) {
        double d = r.number(v, k);
        if (!(d > 0)) fail("{}: 'scale_factor' must be positive, got {}", r.where(), d);
        return d;
    });
    if (r.has("smaller_edge")) op.smaller_edge = positive_size(r, *r.get("smaller_edge"), "smaller_edge");
    if (r.has("max_size")) op.max_size = positive_size(r, *r.get("max_size"), "max_size");
    const int ways = (op.size ? 1 : 0) + (op.scale_factor ? 1 : 0) + (op.smaller_edge || op.max_size ? 1 : 0);
    if (ways > 1)
        fail("{}: give one of 'size', 'scale_factor' or 'smaller_edge'/'max_size', not several", r.where());
    if (ways == 0) fail("{}: needs 'size', 'scale_factor' or 'smaller_edge'/'max_size'", r.where());
    if (op.smaller_edge && op.max_size && *op.max_size <= *op.smaller_edge)
        fail("{}: 'max_size' ({}) must be larger than 'smaller_edge' ({})", r.where(), *op.max_size, *op.smaller_edge);
    bool nearest = op.mode == ResizeMode::Nearest || op.mode == ResizeMode::NearestExact;
    if (nearest && r.has("align_corners"))
        fail("{}: 'align_corners' can only be set with bilinear or bicubic mode", r.where());
    op.align_corners = r.boolean("align_corners", false);
    op.antialias = r.boolean("antialias", false);
    if (nearest && op.antialias)
        fail("{}: 'antialias' can only be used with bilinear or bicubic mode", r.where());
    op.recompute_scale_factor = r.boolean("recompute_scale_factor", false);
    if (op.recompute_scale_factor && !op.scale_factor)
        fail("{}: 'recompute_scale_factor' needs 'scale_factor'", r.where());
    return op;
}

void write_resize(const ResizeOp& o, JsonWriter& w) {
    w.field("mode", resize_mode_name(o.mode));
    if (o.size) w.field("size", *o.size);
    if (o.scale_factor) w.field("scale_factor", *o.scale_factor);
    if (o.smaller_edge) w.field("smaller_edge", *o.smaller_edge);
    if (o.max_size) w.field("max_size", *o.max_size);
    if (o.mode == ResizeMode::Bilinear || o.mode == ResizeMode::Bicubic) {
        w.field("align_corners", o.align_corners);
        w.field("antialias", o.antialias);
    }
    if (o.recompute_scale_factor) w.field("recompute_scale_factor", true);
}

ShapeInfo resize_shape(const ResizeOp& o, const ShapeInfo& in) {
    const Dims& s = in.shape;
    const auto hw = resize_output_size(o, s[2], s[3]);
    return {in.dtype, {s[0], s[1], hw[0], hw[1]}};
}

// Nearest modes copy elements; bilinear and bicubic compute in float32 for the narrow
// dtypes, as torchvision.v2's resize casts them.
NarrowTypes resize_narrow(const ResizeOp& o, DType) {
    return o.mode == ResizeMode::Nearest || o.mode == ResizeMode::NearestExact ? NarrowTypes::Native
                                                                                : NarrowTypes::ViaFloat32;
}

}  // namespace

OpDef resize_op_def() {
    return make_op_def(TypedOpDef<ResizeOp>{
        .syntax = {{"resize", parse_resize}},
        .write = write_resize,
        .shape = resize_shape,
        .narrow = resize_narrow,
    });
}

}  // namespace toroid
