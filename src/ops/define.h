// What an op's definition (its OpDef, ops/*_op(s).cpp) is written with: reading and
// validating the fields of its JSON object, writing them back canonically, the shape
// checks several ops share, and make_op_def, which turns functions of the op's own struct
// into an OpDef. Internal to ops/.
#pragma once

#include "core/error.h"
#include "ops/registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace toroid {

using json = nlohmann::json;

// A JSON value as quoted in a message: short, one line, and printed at most two levels
// deep (json::dump recurses once per level, and a pipeline file can nest a million).
std::string describe(const json& v, int depth = 0);

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

inline constexpr std::array<std::pair<const char*, GridMode>, 3> kGridModes{{
    {"bilinear", GridMode::Bilinear},
    {"nearest", GridMode::Nearest},
    {"bicubic", GridMode::Bicubic},
}};
inline constexpr std::array<std::pair<const char*, PaddingMode>, 3> kPaddingModes{{
    {"zeros", PaddingMode::Zeros},
    {"border", PaddingMode::Border},
    {"reflection", PaddingMode::Reflection},
}};

inline std::int64_t positive_size(const OpReader& r, const json& v, const char* key) {
    std::int64_t x = r.integer(v, key);
    if (x <= 0) fail("{}: '{}' must be positive, got {}", r.where(), key, x);
    return x;
}

// The grid of a grid_sample op, read from `grid_path` (relative paths are resolved
// against base_dir) and validated: float32, (N, H, W, 2), no zero-size dimension.
// Defined in pipeline_json.cpp.
Tensor load_grid(const OpReader& r, const std::string& grid_path, const ParseContext& context);

// One op's JSON object in canonical form: compact, keys sorted (as nlohmann::json prints
// an object), numbers as nlohmann::json prints them. Written straight from the structs, no
// JSON document in between.
class JsonWriter {
public:
    template <typename T>
    void field(std::string_view key, const T& value) {
        std::string text;
        render(text, value);
        fields_.emplace_back(key, std::move(text));
    }
    // Appends the object ({"key":value,...}) to `out`.
    void finish(std::string& out) {
        std::sort(fields_.begin(), fields_.end());
        out += '{';
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            if (i > 0) out += ',';
            out += '"';
            out += fields_[i].first;
            out += "\":";
            out += fields_[i].second;
        }
        out += '}';
    }

private:
    static void render(std::string& out, bool v) { out += v ? "true" : "false"; }
    static void render(std::string& out, std::int64_t v) { out += std::to_string(v); }
    static void render(std::string& out, int v) { out += std::to_string(v); }
    static void render(std::string& out, double v) { out += json(v).dump(); }
    static void render(std::string& out, std::string_view v) { out += json(std::string(v)).dump(); }
    static void render(std::string& out, const std::string& v) { out += json(v).dump(); }
    static void render(std::string& out, const char* v) = delete;  // would convert to bool
    template <typename T, std::size_t N>
    static void render(std::string& out, const std::array<T, N>& v) {
        render_list(out, v);
    }
    template <typename T>
    static void render(std::string& out, const std::vector<T>& v) {
        render_list(out, v);
    }
    template <typename List>
    static void render_list(std::string& out, const List& v) {
        out += '[';
        bool first = true;
        for (const auto& x : v) {
            if (!first) out += ',';
            first = false;
            render(out, x);
        }
        out += ']';
    }

    std::vector<std::pair<std::string_view, std::string>> fields_;
};

// Shape checks shared by several ops (ops.cpp).
// A float32 input; with `narrow`, float16 and bfloat16 too (ops whose type-table row takes them).
void require_float(std::string_view op, DType t, bool narrow = false);

// An OpDef from functions of the op's own struct T.
template <typename T>
struct TypedOpDef {
    std::vector<std::pair<std::string_view, T (*)(OpReader&, const ParseContext&)>> syntax;
    std::size_t (*syntax_of)(const T&) = nullptr;
    void (*write)(const T&, JsonWriter&) = nullptr;
    ShapeInfo (*shape)(const T&, const ShapeInfo&) = nullptr;
    const Tensor* (*data)(const T&) = nullptr;
    NarrowTypes (*narrow)(const T&, DType) = nullptr;  // the op's row of the type table (registry.h)
};

// Type-table rows that depend on neither the op's fields nor the narrow dtype.
template <typename T> NarrowTypes narrow_native(const T&, DType) { return NarrowTypes::Native; }
template <typename T> NarrowTypes narrow_own(const T&, DType) { return NarrowTypes::Own; }

template <typename T>
OpDef make_op_def(const TypedOpDef<T>& d) {
    OpDef def;
    def.kind = op_kind_of<T>;
    // (A named copy of the parser: clang before 16 cannot capture a structured binding.)
    for (const auto& syntax : d.syntax) {
        auto* parse = syntax.second;
        def.syntax.push_back({syntax.first, [parse](OpReader& r, const ParseContext& c) -> Op { return parse(r, c); }});
    }
    if (auto* f = d.syntax_of) def.syntax_of = [f](const Op& op) { return f(std::get<T>(op)); };
    if (auto* f = d.write) def.write = [f](const Op& op, JsonWriter& w) { f(std::get<T>(op), w); };
    if (auto* f = d.shape) def.shape = [f](const Op& op, const ShapeInfo& in) { return f(std::get<T>(op), in); };
    if (auto* f = d.data) def.data = [f](const Op& op) { return f(std::get<T>(op)); };
    if (auto* f = d.narrow) def.narrow = [f](const Op& op, DType t) { return f(std::get<T>(op), t); };
    return def;
}

// The OpDef of each kind (registry.cpp lists them).
OpDef resize_op_def();        // resize_op.cpp
OpDef affine_op_def();        // grid_ops.cpp
OpDef grid_sample_op_def();   // grid_ops.cpp
OpDef perspective_op_def();   // grid_ops.cpp
OpDef flip_op_def();          // simple_ops.cpp
OpDef crop_op_def();          // simple_ops.cpp (crop and center_crop)
OpDef convert_op_def();       // simple_ops.cpp
OpDef normalize_op_def();     // simple_ops.cpp
OpDef color_op_def();         // color_op.cpp (invert, posterize, solarize, adjust_*, rgb_to_grayscale)
OpDef pad_op_def();           // pad_ops.cpp
OpDef erase_op_def();         // pad_ops.cpp
OpDef blur_op_def();          // blur_op.cpp (gaussian_blur and adjust_sharpness)

}  // namespace toroid
