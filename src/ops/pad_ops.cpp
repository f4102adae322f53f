// The definitions of pad and erase (index rewrites with a fill): their JSON, shape rules,
// and the conversions of their fill values to the image's dtype, as torchvision makes them.
#include "ops/define.h"

#include <cfloat>
#include <limits>

namespace toroid {

std::string_view pad_mode_name(PadMode m) {
    switch (m) {
        case PadMode::Constant: return "constant";
        case PadMode::Edge: return "edge";
        case PadMode::Reflect: return "reflect";
        case PadMode::Symmetric: return "symmetric";
    }
    return "?";
}

namespace {

bool pads_anything(const PadOp& o) { return o.left > 0 || o.top > 0 || o.right > 0 || o.bottom > 0; }

// A float32 tensor's value converted to uint8 as torch converts one element: truncated toward
// zero to int64, then the low byte.
double wrap_to_uint8(double v) {
    const auto i = static_cast<std::int64_t>(std::trunc(v));
    return static_cast<double>(static_cast<std::uint8_t>(i & 0xff));
}

}  // namespace

std::vector<double> pad_fill_values(const PadOp& op, DType dtype, std::int64_t channels) {
    const auto c = static_cast<std::size_t>(channels);
    std::vector<double> out(c, 0.0);
    if (op.mode != PadMode::Constant || !pads_anything(op)) return out;  // nothing is filled
    if (op.fill.size() == 1) {
        // torch.nn.functional.pad(value=float(fill)): fill_ converts the number with an
        // overflow check.
        const double f = op.fill[0];
        double v = 0;
        switch (dtype) {
            case DType::UInt8:
                if (f < 0 || f > 255) fail("pad: fill {} cannot be converted to uint8 without overflow", f);
                v = std::trunc(f);
                break;
            case DType::Float32:
                if (std::fabs(f) > static_cast<double>(FLT_MAX))
                    fail("pad: fill {} cannot be converted to float32 without overflow", f);
                v = static_cast<double>(static_cast<float>(f));
                break;
            case DType::UInt16:
                if (f < 0 || f > 65535) fail("pad: fill {} cannot be converted to uint16 without overflow", f);
                v = std::trunc(f);
                break;
            case DType::Float16:
                if (std::fabs(f) > 65504.0) fail("pad: fill {} cannot be converted to float16 without overflow", f);
                v = round_to_dtype(dtype, static_cast<float>(f));
                break;
            case DType::BFloat16:
                if (std::fabs(f) > static_cast<double>(FLT_MAX))
                    fail("pad: fill {} cannot be converted to bfloat16 without overflow", f);
                v = round_to_dtype(dtype, static_cast<float>(f));
                break;
        }
        std::fill(out.begin(), out.end(), v);
        return out;
    }
    // torchvision's _pad_with_vector_fill: torch.tensor(fill) (float32) .to(dtype), assigned
    // to (C, h, w) slices: one value per channel.
    if (op.fill.size() != c)
        fail("pad: 'fill' has {} values but the input has {} channels (give one value per channel, or one for all)",
             op.fill.size(), channels);
    for (std::size_t k = 0; k < c; ++k) {
        const double f = static_cast<double>(static_cast<float>(op.fill[k]));
        switch (dtype) {
            case DType::UInt8:
                if (!(std::fabs(f) < 9.2e18)) fail("pad: fill {} is out of range for uint8", op.fill[k]);
                out[k] = wrap_to_uint8(f);
                break;
            case DType::Float32: out[k] = f; break;
            case DType::UInt16:
                if (!(std::fabs(f) < 9.2e18)) fail("pad: fill {} is out of range for uint16", op.fill[k]);
                out[k] = static_cast<double>(static_cast<std::uint16_t>(static_cast<std::int64_t>(std::trunc(f)) & 0xffff));
                break;
            case DType::Float16:
            case DType::BFloat16: out[k] = round_to_dtype(dtype, static_cast<float>(f)); break;
        }
    }
    return out;
}

std::array<std::int64_t, 4> erase_region(const EraseOp& op, std::int64_t in_h, std::int64_t in_w) {
    // Python's slice start:stop on a sequence of length n (step 1).
    auto bound = [](std::int64_t x, std::int64_t n) {
        if (x < 0) x += n;
        return std::clamp<std::int64_t>(x, 0, n);
    };
    return {bound(op.top, in_h), bound(op.top + op.height, in_h), bound(op.left, in_w),
            bound(op.left + op.width, in_w)};
}

std::vector<double> erase_values(const EraseOp& op, DType dtype, std::int64_t channels) {
    const auto c = static_cast<std::size_t>(channels);
    if (op.value.size() != 1 && op.value.size() != c)
        fail("erase: 'value' has {} values but the input has {} channels (give one value per channel, or one for all)",
             op.value.size(), channels);
    std::vector<double> out(c);
    for (std::size_t k = 0; k < c; ++k) {
        const double v = static_cast<double>(static_cast<float>(op.value.size() == 1 ? op.value[0] : op.value[k]));
        switch (dtype) {
            case DType::UInt8:
                // Inside (-1, 256) every conversion torch may use truncates alike; outside it,
                // its vectorized copy saturates and its scalar one wraps.
                if (!(v > -1.0 && v < 256.0))
                    fail("erase: value {} is outside the range a uint8 image can take (-1, 256)",
                         op.value.size() == 1 ? op.value[0] : op.value[k]);
                out[k] = std::trunc(v) == 0 ? 0.0 : std::trunc(v);  // -0.5 -> 0, not -0
                break;
            case DType::Float32: out[k] = v; break;
            case DType::UInt16:
                if (!(v > -1.0 && v < 65536.0))
                    fail("erase: value {} is outside the range a uint16 image can take (-1, 65536)",
                         op.value.size() == 1 ? op.value[0] : op.value[k]);
                out[k] = std::trunc(v) == 0 ? 0.0 : std::trunc(v);
                break;
            case DType::Float16:
            case DType::BFloat16: out[k] = round_to_dtype(dtype, static_cast<float>(v)); break;
        }
    }
    return out;
}

namespace {

constexpr std::int64_t kPadLimit = std::int64_t{1} << 31;

std::int64_t bounded(const OpReader& r, const json& v, const char* key) {
    const std::int64_t x = r.integer(v, key);
    // Compared on both sides: llabs(INT64_MIN) overflows.
    if (x <= -kPadLimit || x >= kPadLimit) fail("{}: '{}' must be within +-2^31, got {}", r.where(), key, x);
    return x;
}

constexpr std::array<std::pair<const char*, PadMode>, 4> kPadModes{{
    {"constant", PadMode::Constant},
    {"edge", PadMode::Edge},
    {"reflect", PadMode::Reflect},
    {"symmetric", PadMode::Symmetric},
}};

PadOp parse_pad(OpReader& r, const ParseContext&) {
    PadOp op;
    const json* v = r.get("padding");
    if (!v) fail("{}: missing field 'padding' ([left, top, right, bottom])", r.where());
    // torchvision's forms: one number for all sides, [left/right, top/bottom], or
    // [left, top, right, bottom].
    std::vector<std::int64_t> p;
    if (v->is_number()) {
        p.push_back(bounded(r, *v, "padding"));
    } else if (v->is_array() && (v->size() == 1 || v->size() == 2 || v->size() == 4)) {
        for (const json& x : *v) p.push_back(bounded(r, x, "padding"));
    } else {
        r.type_error("padding", "an integer or a list of 1, 2 or 4 integers ([left, top, right, bottom])", *v);
    }
    if (p.size() == 1) p = {p[0], p[0], p[0], p[0]};
    else if (p.size() == 2) p = {p[0], p[1], p[0], p[1]};
    op.left = p[0];
    op.top = p[1];
    op.right = p[2];
    op.bottom = p[3];
    op.mode = parse_enum(r, "mode", kPadModes, std::optional<PadMode>(PadMode::Constant));
    if (r.get("fill")) op.fill = r.number_list("fill");
    if (op.mode != PadMode::Constant && op.fill.size() > 1)
        fail("{}: padding mode '{}' is not supported if fill is not scalar", r.where(), pad_mode_name(op.mode));
    return op;
}

void write_pad(const PadOp& o, JsonWriter& w) {
    w.field("padding", std::array<std::int64_t, 4>{o.left, o.top, o.right, o.bottom});
    w.field("mode", pad_mode_name(o.mode));
    w.field("fill", o.fill);
}

ShapeInfo pad_shape(const PadOp& o, const ShapeInfo& in) {
    const Dims& s = in.shape;
    const std::int64_t H = s[2], W = s[3];
    const std::int64_t out_h = H + o.top + o.bottom, out_w = W + o.left + o.right;
    if (out_h <= 0 || out_w <= 0)
        fail("pad: padding [{}, {}, {}, {}] leaves a {}x{} result of a {}x{} input", o.left, o.top, o.right, o.bottom,
             out_h, out_w, H, W);
    if (o.mode == PadMode::Reflect) {
        // torch's reflection pad: "Padding size should be less than the corresponding input dimension".
        if (o.left >= W || o.right >= W)
            fail("pad: reflect padding should be less than the input's width, got padding ({}, {}) for width {}",
                 o.left, o.right, W);
        if (o.top >= H || o.bottom >= H)
            fail("pad: reflect padding should be less than the input's height, got padding ({}, {}) for height {}",
                 o.top, o.bottom, H);
    }
    if (o.mode == PadMode::Symmetric) {
        // torchvision crops the negative sides first; each positive padding then indexes the
        // cropped image, which must hold it.
        const std::int64_t h = H - std::max<std::int64_t>(-o.top, 0) - std::max<std::int64_t>(-o.bottom, 0);
        const std::int64_t w = W - std::max<std::int64_t>(-o.left, 0) - std::max<std::int64_t>(-o.right, 0);
        if (std::max(o.left, o.right) > w || std::max(o.top, o.bottom) > h || w <= 0 || h <= 0)
            fail("pad: symmetric padding [{}, {}, {}, {}] is larger than the {}x{} image it mirrors", o.left, o.top,
                 o.right, o.bottom, h, w);
    }
    pad_fill_values(o, in.dtype, s[1]);  // the fill's checks
    return {in.dtype, {s[0], s[1], out_h, out_w}};
}

EraseOp parse_erase(OpReader& r, const ParseContext&) {
    EraseOp op;
    auto field = [&](const char* key) {
        const json* v = r.get(key);
        if (!v) fail("{}: missing field '{}'", r.where(), key);
        return bounded(r, *v, key);
    };
    op.top = field("top");
    op.left = field("left");
    op.height = field("height");
    op.width = field("width");
    op.value = r.number_list("value");
    return op;
}

void write_erase(const EraseOp& o, JsonWriter& w) {
    w.field("top", o.top);
    w.field("left", o.left);
    w.field("height", o.height);
    w.field("width", o.width);
    w.field("value", o.value);
}

ShapeInfo erase_shape(const EraseOp& o, const ShapeInfo& in) {
    erase_values(o, in.dtype, in.shape[1]);  // the value's checks
    return in;
}

}  // namespace

OpDef pad_op_def() {
    return make_op_def(TypedOpDef<PadOp>{
        .syntax = {{"pad", parse_pad}},
        .write = write_pad,
        .shape = pad_shape,
        .narrow = narrow_native<PadOp>,
    });
}

OpDef erase_op_def() {
    return make_op_def(TypedOpDef<EraseOp>{
        .syntax = {{"erase", parse_erase}},
        .write = write_erase,
        .shape = erase_shape,
        .narrow = narrow_native<EraseOp>,
    });
}

}  // namespace toroid
