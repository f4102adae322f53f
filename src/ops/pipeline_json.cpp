// Parsing and validation of pipeline JSON into the op catalogue's structs. Every
// problem is reported as one line naming the op (by position and name), the field and
// what was expected, so a user can fix the file without reading the source.
#include "ops/pipeline_json.h"

#include "core/error.h"
#include "io/file.h"
#include "io/npy.h"
#include "io/paths.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace toroid {
namespace {

using json = nlohmann::json;

// A JSON value as quoted in a message: short, one line, and printed at most two levels
// deep (json::dump recurses once per level, and a pipeline file can nest a million).
std::string describe(const json& v, int depth = 0) {
    std::string out;
    if (v.is_array() || v.is_object()) {
        bool array = v.is_array();
        if (depth >= 2 && !v.empty()) return array ? "[...]" : "{...}";
        out += array ? '[' : '{';
        std::size_t i = 0;
        for (auto it = v.begin(); it != v.end(); ++it, ++i) {
            if (i > 0) out += ", ";
            if (i == 4) {
                out += "...";
                break;
            }
            if (!array) out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace) + ": ";
            out += describe(*it, depth + 1);
        }
        out += array ? ']' : '}';
    } else {
        out = v.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    return depth == 0 ? printable(out, 80) : out;
}

// Reads the fields of one op object, remembering which were used so that unknown
// fields can be reported.
class OpReader {
public:
    OpReader(const json& obj, std::size_t index, const std::string& name)
        : obj_(obj), where_(fmt::format("op {} ({})", index, printable(name, 40))) {}

    const std::string& where() const { return where_; }

    bool has(const char* key) const {
        auto it = obj_.find(key);
        return it != obj_.end() && !it->is_null();
    }

    const json* get(const char* key) {
        used_.insert(key);
        auto it = obj_.find(key);
        if (it == obj_.end() || it->is_null()) return nullptr;
        return &*it;
    }

    [[noreturn]] void type_error(const char* key, const char* expected, const json& v) const {
        fail("{}: field '{}' must be {}, got {}", where_, key, expected, describe(v));
    }

    bool boolean(const char* key, bool fallback) {
        const json* v = get(key);
        if (!v) return fallback;
        if (!v->is_boolean()) type_error(key, "true or false", *v);
        return v->get<bool>();
    }

    std::string string(const char* key, std::optional<std::string> fallback = std::nullopt) {
        const json* v = get(key);
        if (!v) {
            if (fallback) return *fallback;
            fail("{}: missing field '{}'", where_, key);
        }
        if (!v->is_string()) type_error(key, "a string", *v);
        return v->get<std::string>();
    }

    double number(const json& v, const char* key) const {
        if (!v.is_number()) type_error(key, "a number", v);
        double d = v.get<double>();
        if (!std::isfinite(d)) fail("{}: field '{}' must be finite", where_, key);
        return d;
    }

    std::int64_t integer(const json& v, const char* key) const {
        // Unsigned values above INT64_MAX would wrap to negative numbers in get<int64_t>.
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX})
            fail("{}: field '{}' is too large, got {}", where_, key, describe(v));
        if (v.is_number_integer()) return v.get<std::int64_t>();
        if (v.is_number_float()) {
            double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
                return static_cast<std::int64_t>(d);
        }
        type_error(key, "an integer", v);
    }

    std::int64_t integer(const char* key) {
        const json* v = get(key);
        if (!v) fail("{}: missing field '{}'", where_, key);
        return integer(*v, key);
    }

    // A pair [a, b]; a single number means [x, x] (as torch accepts for size/scale_factor).
    template <typename T, typename Read>
    std::optional<std::array<T, 2>> pair(const char* key, Read read) {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (v->is_number()) {
            T x = read(*v, key);
            return std::array<T, 2>{x, x};
        }
        if (!v->is_array() || v->size() != 2) type_error(key, "a list of two numbers [h, w]", *v);
        return std::array<T, 2>{read((*v)[0], key), read((*v)[1], key)};
    }

    std::vector<double> number_list(const char* key) {
        const json* v = get(key);
        if (!v) fail("{}: missing field '{}'", where_, key);
        if (v->is_number()) return {number(*v, key)};
        if (!v->is_array() || v->empty()) type_error(key, "a non-empty list of numbers", *v);
        std::vector<double> out;
        for (const json& x : *v) out.push_back(number(x, key));
        return out;
    }

    void reject_unknown_fields() const {
        for (auto it = obj_.begin(); it != obj_.end(); ++it)
            if (it.key() != "op" && !used_.count(it.key()))
                fail("{}: unknown field '{}'", where_, printable(it.key(), 40));
    }

private:
    const json& obj_;
    std::string where_;
    std::set<std::string> used_;
};

template <typename Enum, std::size_t N>
Enum parse_enum(OpReader& r, const char* key, const std::array<std::pair<const char*, Enum>, N>& table,
                std::optional<Enum> fallback) {
    const json* v = r.get(key);
    if (!v) {
        if (fallback) return *fallback;
        fail("{}: missing field '{}'", r.where(), key);
    }
    std::string choices;
    for (const auto& [name, value] : table) {
        if (v->is_string() && v->get<std::string>() == name) return value;
        choices += choices.empty() ? "" : ", ";
        choices += name;
    }
    fail("{}: unknown {} {} (expected one of: {})", r.where(), key, describe(*v), choices);
}

constexpr std::array<std::pair<const char*, ResizeMode>, 4> kResizeModes{{
    {"nearest", ResizeMode::Nearest},
    {"nearest-exact", ResizeMode::NearestExact},
    {"bilinear", ResizeMode::Bilinear},
    {"bicubic", ResizeMode::Bicubic},
}};
constexpr std::array<std::pair<const char*, GridMode>, 3> kGridModes{{
    {"bilinear", GridMode::Bilinear},
    {"nearest", GridMode::Nearest},
    {"bicubic", GridMode::Bicubic},
}};
constexpr std::array<std::pair<const char*, PaddingMode>, 3> kPaddingModes{{
    {"zeros", PaddingMode::Zeros},
    {"border", PaddingMode::Border},
    {"reflection", PaddingMode::Reflection},
}};
constexpr std::array<std::pair<const char*, AffineConvention>, 2> kAffineConventions{{
    {"pytorch", AffineConvention::PyTorch},
    {"torchvision", AffineConvention::Torchvision},
}};
constexpr std::array<std::pair<const char*, DType>, 2> kDTypes{{
    {"uint8", DType::UInt8},
    {"float32", DType::Float32},
}};

std::int64_t positive_size(const OpReader& r, const json& v, const char* key) {
    std::int64_t x = r.integer(v, key);
    if (x <= 0) fail("{}: '{}' must be positive, got {}", r.where(), key, x);
    return x;
}

ResizeOp parse_resize(OpReader& r) {
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

AffineOp parse_affine(OpReader& r) {
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

GridSampleOp parse_grid_sample(OpReader& r, const std::filesystem::path& base_dir, bool allow_paths) {
    GridSampleOp op;
    op.grid_path = r.string("grid");
    op.mode = parse_enum(r, "mode", kGridModes, std::optional<GridMode>(GridMode::Bilinear));
    op.padding_mode = parse_enum(r, "padding_mode", kPaddingModes, std::optional<PaddingMode>(PaddingMode::Zeros));
    op.align_corners = r.boolean("align_corners", false);
    const std::filesystem::path path = io::resolve_pipeline_path(op.grid_path, base_dir, allow_paths, r.where());
    io::NpyArray grid = io::read_npy(path);
    if (grid.dtype != DType::Float32)
        fail("{}: grid '{}' must be float32, got {}", r.where(), printable(op.grid_path), dtype_name(grid.dtype));
    if (grid.shape.size() != 4 || grid.shape[3] != 2)
        fail("{}: grid '{}' must have shape (N, H, W, 2), got rank {} with last dim {}", r.where(),
             printable(op.grid_path), grid.shape.size(), grid.shape.empty() ? 0 : grid.shape.back());
    for (auto d : grid.shape)
        if (d == 0) fail("{}: grid '{}' has a zero-size dimension", r.where(), printable(op.grid_path));
    op.grid = grid.data;
    return op;
}

FlipOp parse_flip(OpReader& r) {
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

CropOp parse_crop(OpReader& r) {
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

CropOp parse_center_crop(OpReader& r) {
    CropOp op;
    op.center = true;
    const auto size = r.pair<std::int64_t>("size", [&](const json& v, const char* k) { return positive_size(r, v, k); });
    if (!size) fail("{}: missing field 'size' ([h, w], or one number for a square)", r.where());
    op.height = (*size)[0];
    op.width = (*size)[1];
    return op;
}

ConvertOp parse_convert(OpReader& r) {
    ConvertOp op;
    op.dtype = parse_enum(r, "dtype", kDTypes, std::optional<DType>());
    op.scale = r.boolean("scale", false);
    return op;
}

NormalizeOp parse_normalize(OpReader& r) {
    NormalizeOp op;
    op.mean = r.number_list("mean");
    op.std = r.number_list("std");
    for (double s : op.std)
        if (s == 0) fail("{}: 'std' must not contain 0", r.where());
    return op;
}

Op parse_op(const json& obj, std::size_t index, const std::filesystem::path& base_dir, bool allow_paths) {
    if (!obj.is_object()) fail("op {} must be a JSON object, got {}", index, describe(obj));
    auto it = obj.find("op");
    if (it == obj.end()) fail("op {}: missing field 'op'", index);
    if (!it->is_string()) fail("op {}: field 'op' must be a string, got {}", index, describe(*it));
    std::string name = it->get<std::string>();
    OpReader r(obj, index, name);
    Op op;
    if (name == "resize") op = parse_resize(r);
    else if (name == "affine") op = parse_affine(r);
    else if (name == "grid_sample") op = parse_grid_sample(r, base_dir, allow_paths);
    else if (name == "flip") op = parse_flip(r);
    else if (name == "crop") op = parse_crop(r);
    else if (name == "center_crop") op = parse_center_crop(r);
    else if (name == "convert") op = parse_convert(r);
    else if (name == "normalize") op = parse_normalize(r);
    else
        fail("op {}: unknown op '{}' (expected resize, affine, grid_sample, flip, crop, center_crop, convert or "
             "normalize)",
             index, printable(name, 40));
    r.reject_unknown_fields();
    return op;
}

std::string one_line(std::string s) {
    // nlohmann's messages start with "[json.exception.parse_error.101] "; keep what follows.
    if (auto pos = s.find("] "); pos != std::string::npos && s.rfind("[json.exception", 0) == 0)
        s = s.substr(pos + 2);
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

}  // namespace

Pipeline parse_pipeline(const std::string& text, const std::filesystem::path& base_dir, bool allow_paths) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::out_of_range& e) {
        // 406: a literal like 1e999 overflows a double. The grammar allows it, so say
        // what is wrong with it rather than "not valid JSON".
        if (e.id == 406)
            fail("pipeline holds a number that is not finite ({})", printable(one_line(e.what()), 200));
        fail("pipeline is not valid JSON: {}", printable(one_line(e.what()), 200));
    } catch (const json::exception& e) {
        // The message quotes the last token read, which can be as long as the file.
        fail("pipeline is not valid JSON: {}", printable(one_line(e.what()), 200));
    }
    if (!doc.is_array()) fail("pipeline must be a JSON list of ops, got {}", doc.type_name());
    Pipeline p;
    for (std::size_t i = 0; i < doc.size(); ++i) p.ops.push_back(parse_op(doc[i], i, base_dir, allow_paths));
    return p;
}

Pipeline load_pipeline(const std::string& arg, bool allow_paths) {
    std::size_t first = arg.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && arg[first] == '[') return parse_pipeline(arg, std::filesystem::current_path(), allow_paths);
    std::filesystem::path path(arg);
    std::string text = io::read_file(path, io::kMaxPipelineBytes);
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    try {
        return parse_pipeline(text, dir, allow_paths);
    } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", printable(arg), e.what()));
    }
}

std::string pipeline_to_json(const Pipeline& p) {
    json out = json::array();
    for (const Op& op : p.ops) {
        json j;
        j["op"] = std::string(op_name(op));
        std::visit(
            [&](const auto& o) {
                using T = std::decay_t<decltype(o)>;
                if constexpr (std::is_same_v<T, ResizeOp>) {
                    j["mode"] = std::string(resize_mode_name(o.mode));
                    if (o.size) j["size"] = {(*o.size)[0], (*o.size)[1]};
                    if (o.scale_factor) j["scale_factor"] = {(*o.scale_factor)[0], (*o.scale_factor)[1]};
                    if (o.smaller_edge) j["smaller_edge"] = *o.smaller_edge;
                    if (o.max_size) j["max_size"] = *o.max_size;
                    if (o.mode == ResizeMode::Bilinear || o.mode == ResizeMode::Bicubic) {
                        j["align_corners"] = o.align_corners;
                        j["antialias"] = o.antialias;
                    }
                    if (o.recompute_scale_factor) j["recompute_scale_factor"] = true;
                } else if constexpr (std::is_same_v<T, AffineOp>) {
                    j["theta"] = {{o.theta[0][0], o.theta[0][1], o.theta[0][2]},
                                  {o.theta[1][0], o.theta[1][1], o.theta[1][2]}};
                    j["mode"] = std::string(grid_mode_name(o.mode));
                    j["padding_mode"] = std::string(padding_mode_name(o.padding_mode));
                    j["align_corners"] = o.align_corners;
                    if (o.size) j["size"] = {(*o.size)[0], (*o.size)[1]};
                    if (o.convention != AffineConvention::PyTorch) {
                        j["convention"] = std::string(affine_convention_name(o.convention));
                        j["grid_fma"] = o.grid_fma;
                        j["sample_fma"] = o.sample_fma;
                    }
                    if (!o.fill.empty()) j["fill"] = o.fill;
                } else if constexpr (std::is_same_v<T, GridSampleOp>) {
                    j["grid"] = o.grid_path;
                    j["mode"] = std::string(grid_mode_name(o.mode));
                    j["padding_mode"] = std::string(padding_mode_name(o.padding_mode));
                    j["align_corners"] = o.align_corners;
                } else if constexpr (std::is_same_v<T, FlipOp>) {
                    j["dims"] = o.dims;
                } else if constexpr (std::is_same_v<T, CropOp>) {
                    if (o.center) {
                        j["size"] = {o.height, o.width};
                        return;
                    }
                    j["top"] = o.top;
                    j["left"] = o.left;
                    j["height"] = o.height;
                    j["width"] = o.width;
                } else if constexpr (std::is_same_v<T, ConvertOp>) {
                    j["dtype"] = std::string(dtype_name(o.dtype));
                    j["scale"] = o.scale;
                } else if constexpr (std::is_same_v<T, NormalizeOp>) {
                    j["mean"] = o.mean;
                    j["std"] = o.std;
                }
            },
            op);
        out.push_back(std::move(j));
    }
    return out.dump();
}

}  // namespace toroid
