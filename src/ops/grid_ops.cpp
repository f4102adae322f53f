// The definitions of the ops that sample through a grid: affine (F.affine_grid then
// F.grid_sample, or torchvision's affine), torchvision's perspective and grid_sample (a
// user's grid from a .npy file): their JSON and shape rules.
#include "ops/define.h"

namespace toroid {
namespace {

void check_fill(const char* op, const std::vector<double>& fill, const ShapeInfo& in);

constexpr std::array<std::pair<const char*, AffineConvention>, 2> kAffineConventions{{
    {"pytorch", AffineConvention::PyTorch},
    {"torchvision", AffineConvention::Torchvision},
}};

AffineOp parse_affine(OpReader& r, const ParseContext&) {
    AffineOp op;
    const json* t = r.get("theta");
    if (!t) fail("{}: missing field 'theta'", r.where());
    if (!t->is_array() || t->size() != 2 || !(*t)[0].is_array() || !(*t)[1].is_array() ||
        (*t)[0].size() != 3 || (*t)[1].size() != 3)
        r.type_error("theta", "a 2x3 matrix [[a, b, c], [d, e, f]]", *t);
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j) op.theta[i][j] = r.number((*t)[i][j], "theta");
    op.mode = parse_enum(r, "mode", kGridModes, std::optional<GridMode>(GridMode::Bilinear));
    op.padding_mode = parse_enum(r, "padding_mode", kPaddingModes, std::optional<PaddingMode>(PaddingMode::Zeros));
    op.align_corners = r.boolean("align_corners", false);
    op.size = r.pair<std::int64_t>("size", [&](const json& v, const char* k) { return positive_size(r, v, k); });
    op.convention = parse_enum(r, "convention", kAffineConventions,
                               std::optional<AffineConvention>(AffineConvention::PyTorch));
    if (r.get("fill")) op.fill = r.number_list("fill");
    const bool torchvision = op.convention == AffineConvention::Torchvision;
    for (const char* key : {"grid_fma", "sample_fma"})
        if (r.has(key) && !torchvision) fail("{}: '{}' needs \"convention\": \"torchvision\"", r.where(), key);
    op.grid_fma = r.boolean("grid_fma", true);
    op.sample_fma = r.boolean("sample_fma", true);
    if (torchvision) {
        if (op.mode == GridMode::Bicubic)
            fail("{}: the torchvision convention supports nearest and bilinear mode, not bicubic", r.where());
        if (op.padding_mode != PaddingMode::Zeros)
            fail("{}: the torchvision convention pads with zeros (or 'fill'), not {}", r.where(),
                 padding_mode_name(op.padding_mode));
        if (op.align_corners) fail("{}: the torchvision convention has no align_corners", r.where());
    }
    if (!op.fill.empty()) {
        if (op.mode == GridMode::Bicubic) fail("{}: 'fill' works with nearest and bilinear mode, not bicubic", r.where());
        if (op.padding_mode != PaddingMode::Zeros)
            fail("{}: 'fill' needs padding_mode 'zeros', got '{}'", r.where(), padding_mode_name(op.padding_mode));
    }
    return op;
}

void write_affine(const AffineOp& o, JsonWriter& w) {
    w.field("theta", o.theta);
    w.field("mode", grid_mode_name(o.mode));
    w.field("padding_mode", padding_mode_name(o.padding_mode));
    w.field("align_corners", o.align_corners);
    if (o.size) w.field("size", *o.size);
    if (o.convention != AffineConvention::PyTorch) {
        w.field("convention", affine_convention_name(o.convention));
        w.field("grid_fma", o.grid_fma);
        w.field("sample_fma", o.sample_fma);
    }
    if (!o.fill.empty()) w.field("fill", o.fill);
}

ShapeInfo affine_shape(const AffineOp& o, const ShapeInfo& in) {
    const Dims& s = in.shape;
    ShapeInfo out = in;
    // The torchvision convention samples uint8 in float32 and rounds back.
    if (o.convention == AffineConvention::PyTorch) require_float("affine", in.dtype);
    if (o.size) out.shape = {s[0], s[1], (*o.size)[0], (*o.size)[1]};
    check_fill("affine", o.fill, in);
    return out;
}

GridSampleOp parse_grid_sample(OpReader& r, const ParseContext& c) {
    GridSampleOp op;
    op.grid_path = r.string("grid");
    op.mode = parse_enum(r, "mode", kGridModes, std::optional<GridMode>(GridMode::Bilinear));
    op.padding_mode = parse_enum(r, "padding_mode", kPaddingModes, std::optional<PaddingMode>(PaddingMode::Zeros));
    op.align_corners = r.boolean("align_corners", false);
    op.grid = load_grid(r, op.grid_path, c);
    return op;
}

void write_grid_sample(const GridSampleOp& o, JsonWriter& w) {
    w.field("grid", o.grid_path);
    w.field("mode", grid_mode_name(o.mode));
    w.field("padding_mode", padding_mode_name(o.padding_mode));
    w.field("align_corners", o.align_corners);
}

ShapeInfo grid_sample_shape(const GridSampleOp& o, const ShapeInfo& in) {
    const Dims& s = in.shape;
    require_float("grid_sample", in.dtype);
    const Dims& g = o.grid.shape();
    if (g[0] != s[0])
        fail("grid_sample: grid '{}' has batch {} but the input has batch {}", o.grid_path, g[0], s[0]);
    return {in.dtype, {s[0], s[1], g[1], g[2]}};
}

const Tensor* grid_sample_data(const GridSampleOp& o) { return &o.grid; }

// The fill checks affine and perspective share (torchvision's _apply_grid_transform).
void check_fill(const char* op, const std::vector<double>& fill, const ShapeInfo& in) {
    if (fill.size() > 1 && static_cast<std::int64_t>(fill.size()) != in.shape[1])
        fail("{}: 'fill' has {} values but the input has {} channels (give one value per channel, or one for all)", op,
             fill.size(), in.shape[1]);
    if (in.dtype == DType::UInt8)
        for (double v : fill)
            if (!(v >= 0.0 && v <= 255.0)) fail("{}: fill {} is outside 0..255, the range of the uint8 input", op, v);
}

PerspectiveOp parse_perspective(OpReader& r, const ParseContext&) {
    PerspectiveOp op;
    const json* c = r.get("coefficients");
    if (!c) fail("{}: missing field 'coefficients'", r.where());
    if (!c->is_array() || c->size() != 8) r.type_error("coefficients", "8 numbers [a, b, c, d, e, f, g, h]", *c);
    for (std::size_t i = 0; i < 8; ++i) op.coefficients[i] = r.number((*c)[i], "coefficients");
    op.mode = parse_enum(r, "mode", kGridModes, std::optional<GridMode>(GridMode::Bilinear));
    if (op.mode == GridMode::Bicubic) fail("{}: perspective supports nearest and bilinear mode, not bicubic", r.where());
    if (r.get("fill")) op.fill = r.number_list("fill");
    op.grid_fma = r.boolean("grid_fma", true);
    op.sample_fma = r.boolean("sample_fma", true);
    return op;
}

void write_perspective(const PerspectiveOp& o, JsonWriter& w) {
    w.field("coefficients", o.coefficients);
    w.field("mode", grid_mode_name(o.mode));
    w.field("grid_fma", o.grid_fma);
    w.field("sample_fma", o.sample_fma);
    if (!o.fill.empty()) w.field("fill", o.fill);
}

ShapeInfo perspective_shape(const PerspectiveOp& o, const ShapeInfo& in) {
    check_fill("perspective", o.fill, in);
    return in;
}

}  // namespace

// uint16 images go through torchvision's grid transforms as float32 and are rounded back
// (its _apply_grid_transform; the sampling grid is float32 for every integer dtype). float16
// and bfloat16 are not taken: torchvision builds their grids in the image's own dtype.
NarrowTypes grid_narrow(DType t) { return t == DType::UInt16 ? NarrowTypes::ViaFloat32 : NarrowTypes::Refused; }
NarrowTypes perspective_narrow(const PerspectiveOp&, DType t) { return grid_narrow(t); }
NarrowTypes affine_narrow(const AffineOp& o, DType t) {
    return o.convention == AffineConvention::Torchvision ? grid_narrow(t) : NarrowTypes::Refused;
}
// F.grid_sample takes float16 and bfloat16 images (with a grid of the same dtype, which
// toroid reads as float32: exactly) and no integer ones. The samples are computed in float32
// and rounded once, which is PyTorch's CUDA kernels' answer; its CPU kernel unnormalizes the
// coordinates in the image's dtype, which moves them by up to a pixel (docs/reference.md).
NarrowTypes grid_sample_narrow(const GridSampleOp&, DType t) {
    return t == DType::Float16 || t == DType::BFloat16 ? NarrowTypes::ViaFloat32 : NarrowTypes::Refused;
}

OpDef perspective_op_def() {
    return make_op_def(TypedOpDef<PerspectiveOp>{
        .syntax = {{"perspective", parse_perspective}},
        .write = write_perspective,
        .shape = perspective_shape,
        .narrow = perspective_narrow,
    });
}

OpDef affine_op_def() {
    return make_op_def(TypedOpDef<AffineOp>{
        .syntax = {{"affine", parse_affine}},
        .write = write_affine,
        .shape = affine_shape,
        .narrow = affine_narrow,
    });
}

OpDef grid_sample_op_def() {
    return make_op_def(TypedOpDef<GridSampleOp>{
        .syntax = {{"grid_sample", parse_grid_sample}},
        .write = write_grid_sample,
        .shape = grid_sample_shape,
        .data = grid_sample_data,
        .narrow = grid_sample_narrow,
    });
}

}  // namespace toroid
