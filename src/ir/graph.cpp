// Graph construction and its debug dump. The add_* methods check what later passes
// assume (unique names, data sizes, bodies that only load earlier tensors with the right
// rank and type and use no free vars beyond the rank): a failure is a decomposition bug.
#include "ir/graph.h"

#include "core/error.h"

#include <fmt/format.h>

#include <set>

namespace toroid::ir {
namespace {

std::int64_t checked_numel(const std::string& name, const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) {
        if (d < 0) fail("ir::Graph: tensor '{}' has a negative dimension {}", name, d);
        if (__builtin_mul_overflow(n, d, &n)) fail("ir::Graph: tensor '{}' has too many elements", name);
    }
    return n;
}

std::string_view kind_name(TensorKind k) {
    switch (k) {
        case TensorKind::Input: return "input";
        case TensorKind::Constant: return "constant";
        case TensorKind::Compute: return "compute";
    }
    return "?";
}

// Free vars must be output indices; loads must name earlier tensors consistently.
void check_body(const std::string& name, const Expr& body, std::size_t rank, const std::vector<GraphTensor>& tensors,
                std::set<int>& bound) {
    switch (body->op) {
        case Op::Var:
            if (!bound.count(body->var) && (body->var < 0 || static_cast<std::size_t>(body->var) >= rank))
                fail("ir::Graph: body of '{}' (rank {}) uses free variable {}", name, rank, to_string(body));
            return;
        case Op::Load: {
            if (body->buffer < 0 || static_cast<std::size_t>(body->buffer) >= tensors.size())
                fail("ir::Graph: body of '{}' loads unknown tensor t{}", name, body->buffer);
            const GraphTensor& src = tensors[static_cast<std::size_t>(body->buffer)];
            if (src.shape.size() != body->args.size())
                fail("ir::Graph: body of '{}' indexes '{}' (rank {}) with {} indices", name, src.name,
                     src.shape.size(), body->args.size());
            if (src.type != body->type)
                fail("ir::Graph: body of '{}' loads '{}' of type {} as {}", name, src.name, type_name(src.type),
                     type_name(body->type));
            break;
        }
        case Op::Sum: {
            const bool added = bound.insert(body->var).second;
            check_body(name, body->args[0], rank, tensors, bound);
            if (added) bound.erase(body->var);
            return;
        }
        default: break;
    }
    for (const Expr& a : body->args) check_body(name, a, rank, tensors, bound);
}

int push(std::vector<GraphTensor>& tensors, GraphTensor t) {
    for (const GraphTensor& o : tensors)
        if (o.name == t.name) fail("ir::Graph: duplicate tensor name '{}'", t.name);
    t.id = static_cast<int>(tensors.size());
    tensors.push_back(std::move(t));
    return tensors.back().id;
}

std::string dims(const std::vector<std::int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

}  // namespace

int Graph::add_input(std::string name, Type t, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides) {
    checked_numel(name, shape);
    if (strides.size() != shape.size())
        fail("ir::Graph: input '{}' has {} dims but {} strides", name, shape.size(), strides.size());
    GraphTensor g;
    g.kind = TensorKind::Input;
    g.name = std::move(name);
    g.type = t;
    g.shape = std::move(shape);
    g.strides = std::move(strides);
    return push(tensors_, std::move(g));
}

int Graph::add_constant(std::string name, Type t, std::vector<std::int64_t> shape, std::vector<std::uint8_t> data) {
    const std::int64_t n = checked_numel(name, shape);
    if (data.size() != static_cast<std::size_t>(n) * type_bytes(t))
        fail("ir::Graph: constant '{}' of {} {} elements has {} bytes of data", name, n, type_name(t), data.size());
    GraphTensor g;
    g.kind = TensorKind::Constant;
    g.name = std::move(name);
    g.type = t;
    g.shape = std::move(shape);
    g.data = std::move(data);
    return push(tensors_, std::move(g));
}

int Graph::add_compute(std::string name, Type t, std::vector<std::int64_t> shape, Expr body, std::string origin,
                       bool realize) {
    checked_numel(name, shape);
    if (!body) fail("ir::Graph: compute '{}' has no body", name);
    if (body->type != t)
        fail("ir::Graph: compute '{}' of type {} has a body of type {}", name, type_name(t), type_name(body->type));
    std::set<int> bound;
    check_body(name, body, shape.size(), tensors_, bound);
    GraphTensor g;
    g.kind = TensorKind::Compute;
    g.name = std::move(name);
    g.type = t;
    g.shape = std::move(shape);
    g.body = std::move(body);
    g.realize = realize;
    g.origin = std::move(origin);
    return push(tensors_, std::move(g));
}

std::string Graph::to_string() const {
    std::string out;
    for (const GraphTensor& t : tensors_) {
        out += fmt::format("t{} {} '{}' {}{}", t.id, kind_name(t.kind), t.name, type_name(t.type), dims(t.shape));
        if (!t.strides.empty()) out += fmt::format(" strides {}", dims(t.strides));
        if (t.realize) out += " realize";
        if (!t.origin.empty() && t.kind == TensorKind::Compute) out += fmt::format(" ({})", t.origin);
        if (t.body) out += fmt::format(" = {}", ir::to_string(t.body));
        out += '\n';
    }
    out += output >= 0 ? fmt::format("output t{}\n", output) : "output (none)\n";
    return out;
}

}  // namespace toroid::ir
