// The definition of the colour ops (one ColorOp kind, one JSON name per function):
// invert, posterize, solarize, adjust_brightness, adjust_saturation, adjust_contrast and
// rgb_to_grayscale, with torchvision.transforms.v2.functional's checks and wording.
//
// The arithmetic the decomposition and the reference both follow (torchvision 0.26 on CPU
// tensors, PyTorch's CPU kernels):
// - a Python float meeting a uint8 or float32 tensor is rounded to float32 first
//   (image.mul(ratio), image >= threshold), and uint8 pixels are compared or multiplied as
//   float32;
// - grey = r * 0.2989f, then fma(g, 0.587f, grey), then fma(b, 0.114f, grey): `.add_(x,
//   alpha=a)` is PyTorch's fused multiply-add; rgb_to_grayscale of uint8 truncates it,
//   saturation and contrast floor it (and keep it float32);
// - blend(a, b, r) = clamp(fma(b, float(1 - r), a * float(r)), 0, max), truncated to uint8;
// - contrast's mean is the grey image's sum over the image divided by float(H * W) in
//   float32 (the sum is exact for uint8 images: integers, summed in double).
// The fused multiply-adds are those of PyTorch's vectorized loop (vec::fmadd); elements in
// its scalar remainder loop (or in loops it does not vectorize) are fused only where its
// build contracts `self + alpha * other`, which Debian's PyTorch 1.13 does not.
// - adjust_gamma: uint8 is scaled to float32 (x * float(1/255)), raised to gamma by PyTorch's
//   pow of a tensor by a scalar (ir::torch_pow: its special exponents, else pow), times
//   float(gain) and clamped to [0, 1] where gain != 1, and for uint8 scaled back by
//   to_dtype (x * float(255 + 1 - 1e-3), truncated);
// - adjust_hue: torchvision's _rgb_to_hsv, the hue shifted (h + float(factor), Python's
//   remainder by 1) and _hsv_to_rgb, every float32 op in its order (decomp/color.cpp lists
//   them); uint8 goes through to_dtype both ways; 1-channel images are returned as they are;
// - autocontrast: per image and channel, min and max over the image (float32); where they
//   are equal the minimum is 0 and the scale 1, else inv_scale = (max - min) * float(1 /
//   bound); the result is clamp((x - min) / inv_scale, 0, bound), truncated for uint8;
// - equalize: per image and channel of the uint8 image (float inputs through to_dtype and
//   back), cum[k] = the number of pixels <= k, the count of the greatest value m, step =
//   (H * W - count) floordiv 255; where step is 0 the image is kept, else pixel x becomes
//   0 for x = 0 and clamp((cum[x - 1] + step floordiv 2) floordiv step, 0, 255) (int32).
#include "ops/define.h"

namespace toroid {
namespace {

constexpr std::array<std::string_view, 11> kColorNames{
    "invert",          "posterize",        "solarize",     "adjust_brightness", "adjust_saturation", "adjust_contrast",
    "rgb_to_grayscale", "adjust_gamma",    "adjust_hue",   "autocontrast",      "equalize",
};

ColorOp parse_invert(OpReader&, const ParseContext&) { return {ColorFn::Invert}; }

ColorOp parse_posterize(OpReader& r, const ParseContext&) {
    const json* v = r.get("bits");
    if (!v) fail("{}: missing field 'bits'", r.where());
    // torchvision: "bits must be a positive integer in the range [0, 8]" (a TypeError).
    // (A uint64 past INT64_MAX reads as a negative int64.)
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > 8)
        fail("{}: bits must be a positive integer in the range [0, 8], got {} instead", r.where(), describe(*v));
    ColorOp op{ColorFn::Posterize};
    op.bits = v->get<std::int64_t>();
    return op;
}

ColorOp parse_solarize(OpReader& r, const ParseContext&) {
    const json* v = r.get("threshold");
    if (!v) fail("{}: missing field 'threshold'", r.where());
    ColorOp op{ColorFn::Solarize};
    op.value = r.number(*v, "threshold");
    return op;
}

ColorOp parse_factor(OpReader& r, ColorFn fn) {
    const json* v = r.get("factor");
    if (!v) fail("{}: missing field 'factor'", r.where());
    ColorOp op{fn};
    op.value = r.number(*v, "factor");
    if (op.value < 0) fail("{}: factor ({}) is not non-negative", r.where(), op.value);
    return op;
}

ColorOp parse_brightness(OpReader& r, const ParseContext&) { return parse_factor(r, ColorFn::Brightness); }
ColorOp parse_saturation(OpReader& r, const ParseContext&) { return parse_factor(r, ColorFn::Saturation); }
ColorOp parse_contrast(OpReader& r, const ParseContext&) { return parse_factor(r, ColorFn::Contrast); }

ColorOp parse_grayscale(OpReader& r, const ParseContext&) {
    ColorOp op{ColorFn::Grayscale};
    const json* v = r.get("num_output_channels");
    if (v) {
        if (!v->is_number_integer() || (v->get<std::int64_t>() != 1 && v->get<std::int64_t>() != 3))
            fail("{}: num_output_channels must be 1 or 3, got {}", r.where(), describe(*v));
        op.out_channels = v->get<std::int64_t>();
    }
    return op;
}

ColorOp parse_gamma(OpReader& r, const ParseContext&) {
    const json* v = r.get("gamma");
    if (!v) fail("{}: missing field 'gamma'", r.where());
    ColorOp op{ColorFn::Gamma};
    op.value = r.number(*v, "gamma");
    // torchvision: "Gamma should be a non-negative real number" (a ValueError).
    if (op.value < 0) fail("{}: Gamma should be a non-negative real number, got {}", r.where(), op.value);
    if (const json* g = r.get("gain")) op.gain = r.number(*g, "gain");
    return op;
}

ColorOp parse_hue(OpReader& r, const ParseContext&) {
    const json* v = r.get("factor");
    if (!v) fail("{}: missing field 'factor'", r.where());
    ColorOp op{ColorFn::Hue};
    op.value = r.number(*v, "factor");
    if (!(op.value >= -0.5 && op.value <= 0.5)) fail("{}: hue_factor ({}) is not in [-0.5, 0.5]", r.where(), op.value);
    return op;
}

ColorOp parse_autocontrast(OpReader&, const ParseContext&) { return {ColorFn::Autocontrast}; }
ColorOp parse_equalize(OpReader&, const ParseContext&) { return {ColorFn::Equalize}; }

std::size_t color_syntax(const ColorOp& o) { return static_cast<std::size_t>(o.fn); }

void write_color(const ColorOp& o, JsonWriter& w) {
    switch (o.fn) {
        case ColorFn::Invert: return;
        case ColorFn::Posterize: w.field("bits", o.bits); return;
        case ColorFn::Solarize: w.field("threshold", o.value); return;
        case ColorFn::Brightness:
        case ColorFn::Saturation:
        case ColorFn::Contrast: w.field("factor", o.value); return;
        case ColorFn::Grayscale: w.field("num_output_channels", o.out_channels); return;
        case ColorFn::Gamma:
            w.field("gain", o.gain);
            w.field("gamma", o.value);
            return;
        case ColorFn::Hue: w.field("factor", o.value); return;
        case ColorFn::Autocontrast:
        case ColorFn::Equalize: return;
    }
}

ShapeInfo color_shape(const ColorOp& o, const ShapeInfo& in) {
    const std::string_view name = kColorNames[static_cast<std::size_t>(o.fn)];
    const std::int64_t c = in.shape[1];
    switch (o.fn) {
        case ColorFn::Invert:
        case ColorFn::Posterize:
        case ColorFn::Gamma:
        case ColorFn::Equalize: return in;
        case ColorFn::Solarize: {
            const double max = in.dtype == DType::UInt8 ? 255.0 : 1.0;
            if (o.value > max)
                fail("solarize: threshold should be less or equal the maximum value of the dtype ({} for {}), but got {}",
                     max, dtype_name(in.dtype), o.value);
            return in;
        }
        case ColorFn::Brightness:
        case ColorFn::Saturation:
        case ColorFn::Contrast:
        case ColorFn::Hue:
        case ColorFn::Autocontrast:
            if (c != 1 && c != 3)
                fail("{}: input image tensor permitted channel values are 1 or 3, but found {}", name, c);
            return in;
        case ColorFn::Grayscale:
            if (c != 1 && c != 3) fail("{}: the input must have 1 or 3 channels (RGB), but found {}", name, c);
            return {in.dtype, {in.shape[0], o.out_channels, in.shape[2], in.shape[3]}};
    }
    return in;
}

}  // namespace

OpDef color_op_def() {
    // The syntaxes follow ColorFn's order (color_syntax is the enum's value).
    return make_op_def(TypedOpDef<ColorOp>{
        .syntax = {{kColorNames[0], parse_invert},
                   {kColorNames[1], parse_posterize},
                   {kColorNames[2], parse_solarize},
                   {kColorNames[3], parse_brightness},
                   {kColorNames[4], parse_saturation},
                   {kColorNames[5], parse_contrast},
                   {kColorNames[6], parse_grayscale},
                   {kColorNames[7], parse_gamma},
                   {kColorNames[8], parse_hue},
                   {kColorNames[9], parse_autocontrast},
                   {kColorNames[10], parse_equalize}},
        .syntax_of = color_syntax,
        .write = write_color,
        .shape = color_shape,
    });
}

}  // namespace toroid
