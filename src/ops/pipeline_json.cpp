// Parsing and validation of pipeline JSON into the op catalogue's structs, through the
// op registry (each op's fields are read by its OpDef, ops/registry.h). Every problem is
// reported as one line naming the op (by position and name), the field and what was
// expected, so a user can fix the file without reading the source.
#include "ops/pipeline_json.h"

#include "core/error.h"
#include "core/half.h"
#include "io/file.h"
#include "io/npy.h"
#include "io/paths.h"
#include "ops/define.h"

#include <algorithm>

namespace toroid {

// A JSON value as quoted in a message (ops/define.h).
std::string describe(const json& v, int depth) {
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

// A grid_sample op's grid (its other fields: ops/grid_ops.cpp): the path resolved under the
// path policy (io::resolve_pipeline_path), the file read and checked.
Tensor load_grid(const OpReader& r, const std::string& grid_path, const ParseContext& context) {
    const std::filesystem::path path =
        io::resolve_pipeline_path(grid_path, context.base_dir, context.allow_paths, r.where());
    io::NpyArray grid = io::read_npy(path);
    if (grid.dtype != DType::Float32 && grid.dtype != DType::Float16)
        fail("{}: grid '{}' must be float32 or float16, got {}", r.where(), printable(grid_path),
             dtype_name(grid.dtype));
    if (grid.dtype == DType::Float16) {
        // F.grid_sample's grid for a float16 image: its values are float32 values, exactly.
        const Tensor half = grid.data.to_layout(Layout::Contiguous);
        Tensor wide = Tensor::empty(DType::Float32, half.shape());
        const auto* h = half.data_as<std::uint16_t>();
        float* f = wide.data_as<float>();
        for (std::int64_t i = 0; i < half.numel(); ++i) f[i] = half_bits_to_float(h[i]);
        grid.data = wide;
        grid.dtype = DType::Float32;
    }
    if (grid.shape.size() != 4 || grid.shape[3] != 2)
        fail("{}: grid '{}' must have shape (N, H, W, 2), got rank {} with last dim {}", r.where(),
             printable(grid_path), grid.shape.size(), grid.shape.empty() ? 0 : grid.shape.back());
    for (auto d : grid.shape)
        if (d == 0) fail("{}: grid '{}' has a zero-size dimension", r.where(), printable(grid_path));
    return grid.data;
}

namespace {

Op parse_op(const json& obj, std::size_t index, const ParseContext& context) {
    if (!obj.is_object()) fail("op {} must be a JSON object, got {}", index, describe(obj));
    auto it = obj.find("op");
    if (it == obj.end()) fail("op {}: missing field 'op'", index);
    if (!it->is_string()) fail("op {}: field 'op' must be a string, got {}", index, describe(*it));
    std::string name = it->get<std::string>();
    const FoundSyntax found = find_op_syntax(name);
    if (!found.syntax) fail("op {}: unknown op '{}' (expected {})", index, printable(name, 40), op_names_text());
    OpReader r(obj, index, name);
    Op op = found.syntax->parse(r, context);
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
    return parse_pipeline_doc(doc, base_dir, allow_paths);
}

Pipeline parse_pipeline_doc(const json& doc, const std::filesystem::path& base_dir, bool allow_paths) {
    if (!doc.is_array()) fail("pipeline must be a JSON list of ops, got {}", doc.type_name());
    const ParseContext context{base_dir, allow_paths};
    Pipeline p;
    for (std::size_t i = 0; i < doc.size(); ++i) p.ops.push_back(parse_op(doc[i], i, context));
    return p;
}

Pipeline load_pipeline(const std::string& arg, bool allow_paths) {
    std::size_t first = arg.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && arg[first] == '[')
        return parse_pipeline(arg, std::filesystem::current_path(), allow_paths);
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
    std::string out = "[";
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        const OpDef& def = op_def(op);
        JsonWriter w;
        w.field("op", def.name_of(op));
        def.write(op, w);
        if (i > 0) out += ',';
        w.finish(out);
    }
    out += ']';
    return out;
}

}  // namespace toroid
