// The shared first steps of the compiling engines (see driver.h).
#include "engine/driver.h"

#include "io/file.h"

#include "core/error.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "ops/registry.h"
#include "runtime/sha256.h"
#include "schedule/bind.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace toroid::driver {

std::string spec_key(const TensorSpec& s) {
    return fmt::format("{} [{}] [{}]", dtype_name(s.dtype), fmt::join(s.shape, ","), fmt::join(s.strides, ","));
}

std::string pipeline_key(const Pipeline& p, const TensorSpec& in) {
    std::string key = pipeline_to_json(p) + "\n" + spec_key(in);
    for (const Op& op : p.ops) {
        const OpDef& def = op_def(op);
        if (const Tensor* data = def.data ? def.data(op) : nullptr) {
            const Tensor dense = data->to_layout(Layout::Contiguous);
            key += "\n" + std::string(def.name()) + " data " +
                   sha256_hex(std::string_view(static_cast<const char*>(dense.data()), dense.nbytes()));
        }
    }
    return key;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f) fail("cannot write debug file '{}'", path.string());
}

namespace {

std::size_t limit_from_env(const char* name, std::size_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    std::size_t n = 0;
    const char* end = v + std::strlen(v);
    const auto [ptr, ec] = std::from_chars(v, end, n);
    if (ec != std::errc() || ptr != end || n == 0)
        fail("${} must be a positive whole number, got '{}'", name, printable(v, 40));
    return n;
}

}  // namespace

Limits effective_limits(const Limits& options) {
    Limits l;
    l.max_ops = options.max_ops ? options.max_ops : limit_from_env("TOROID_MAX_OPS", kDefaultMaxOps);
    l.max_graph_nodes =
        options.max_graph_nodes ? options.max_graph_nodes : limit_from_env("TOROID_MAX_GRAPH_NODES", kDefaultMaxGraphNodes);
    return l;
}

Decomposed decompose_for(const Pipeline& p, const TensorSpec& in, std::span<const ShapeInfo> shapes, bool specialize,
                         const std::string& target, const std::string& debug_dir, const Limits& limits) {
    const Limits lim = effective_limits(limits);
    if (p.ops.size() > lim.max_ops)
        fail("the pipeline has {} ops, more than the limit of {} ($TOROID_MAX_OPS or the max_ops option)", p.ops.size(),
             lim.max_ops);
    // Ops that read their whole input for every value they make (a per-image mean, minimum
    // and maximum, or histogram) work in proportion to its size however small the result
    // (a zero-stride view of 10^10 pixels, then a crop): the image pixel limit of a decoded
    // file applies to their input.
    for (std::size_t i = 0; i < p.ops.size() && i < shapes.size(); ++i) {
        const auto* c = std::get_if<ColorOp>(&p.ops[i]);
        if (c == nullptr || (c->fn != ColorFn::Contrast && c->fn != ColorFn::Autocontrast && c->fn != ColorFn::Equalize))
            continue;
        const Dims& s = shapes[i].shape;  // op i's input
        io::check_image_pixels(s[2] * s[3], fmt::format("op {}", i), "the image it reads whole");
    }
    Decomposed d;
    d.graph = decomp::decompose(p, in, shapes);
    // The tensors the result reads (the scheduler computes no other).
    std::size_t nodes = 0;
    const std::vector<bool> live = d.graph.live();
    for (const ir::GraphTensor& t : d.graph.tensors())
        if (t.kind == ir::TensorKind::Compute && live[static_cast<std::size_t>(t.id)]) nodes += ir::node_count(t.body);
    if (nodes > lim.max_graph_nodes)
        fail("the pipeline's decomposition has {} expression nodes, more than the limit of {} "
             "($TOROID_MAX_GRAPH_NODES or the max_graph_nodes option)",
             nodes, lim.max_graph_nodes);
    if (specialize) d.graph = d.graph.specialized();
    d.width = schedule::fits_index32(d.graph) ? ir::IndexWidth::I32 : ir::IndexWidth::I64;
    d.structure = fmt::format("{}\nint{}\n{}", target, d.width == ir::IndexWidth::I32 ? 32 : 64, d.graph.structure());
    if (!debug_dir.empty()) {
        const std::filesystem::path dir = debug_dir;
        std::filesystem::create_directories(dir);
        write_text(dir / "pipeline.json", pipeline_to_json(p));
        write_text(dir / "0_primitive_graph.txt", d.graph.to_string());
    }
    return d;
}

std::vector<std::vector<std::uint8_t>> take_tables(ir::Graph& g) {
    std::vector<std::vector<std::uint8_t>> tables;
    for (ir::GraphTensor& t : g.tensors())
        if (t.kind == ir::TensorKind::Constant) tables.push_back(std::move(t.data));
    return tables;
}

void write_schedule_dumps(const std::filesystem::path& debug_dir, const std::vector<schedule::PassDump>& dumps,
                          const ir::Program& program) {
    int i = 1;
    for (const auto& d : dumps) write_text(debug_dir / fmt::format("{}_loop_ir_after_{}.txt", i++, d.pass), d.text);
    std::string decisions;
    for (const ir::Kernel& k : program.kernels) {
        decisions += k.name + ":\n";
        for (const auto& d : k.decisions) decisions += "  " + d + "\n";
    }
    write_text(debug_dir / "decisions.txt", decisions);
}

}  // namespace toroid::driver
