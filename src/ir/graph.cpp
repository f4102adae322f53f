// Graph construction and its debug dump. The add_* methods check what later passes
// assume (unique names, data sizes, bodies that only load earlier tensors with the right
// rank and type and use no free vars beyond the rank): a failure is a decomposition bug.
#include "ir/graph.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "ir/eval.h"

#include <fmt/format.h>

#include <cstring>
#include <set>
#include <string_view>

namespace toroid::ir {

std::string_view param_kind_name(ParamKind k) {
    switch (k) {
        case ParamKind::Size: return "size";
        case ParamKind::Stride: return "stride";
        case ParamKind::Offset: return "offset";
        case ParamKind::Count: return "count";
        case ParamKind::Shift: return "shift";
    }
    return "?";
}

Interval declared_range(ParamKind k, IndexWidth width) {
    // int32 programs: every index value and every buffer span is below 2^31 (checked when
    // values are bound), so sizes, strides and offsets stay well inside int32.
    const std::int64_t big = width == IndexWidth::I32 ? std::int64_t{1} << 30 : std::int64_t{1} << 40;
    const std::int64_t off = width == IndexWidth::I32 ? std::int64_t{1} << 29 : std::int64_t{1} << 40;
    switch (k) {
        case ParamKind::Size: return {0, big};
        case ParamKind::Stride: return {0, big};
        case ParamKind::Offset: return {-off, off};
        case ParamKind::Count: return {1, 1 << 20};
        case ParamKind::Shift: return {0, 31};
    }
    return {0, 0};
}

namespace {

std::string_view kind_name(TensorKind k) {
    switch (k) {
        case TensorKind::Input: return "input";
        case TensorKind::Constant: return "table";
        case TensorKind::Compute: return "compute";
    }
    return "?";
}

// Free vars must be output indices or parameters; loads must name earlier tensors consistently.
void check_body(const std::string& name, const Expr& body, std::size_t rank, const std::vector<GraphTensor>& tensors,
                std::size_t params, std::set<int>& bound) {
    switch (body->op) {
        case Op::Var:
            if (is_param_var(body->var)) {
                if (static_cast<std::size_t>(body->var - kFirstParamVar) >= params)
                    fail("ir::Graph: body of '{}' uses unknown parameter {}", name, to_string(body));
                return;
            }
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
            check_body(name, body->args[1], rank, tensors, params, bound);
            const bool added = bound.insert(body->var).second;
            check_body(name, body->args[0], rank, tensors, params, bound);
            if (added) bound.erase(body->var);
            return;
        }
        default: break;
    }
    for (const Expr& a : body->args) check_body(name, a, rank, tensors, params, bound);
}

bool data_dependent(const Expr& e) {
    if (e->op == Op::Load || e->op == Op::Sum) return true;
    for (const Expr& a : e->args)
        if (data_dependent(a)) return true;
    return false;
}

void check_shape(const std::string& name, const Shape& shape, std::size_t params) {
    std::set<int> none;
    const std::vector<GraphTensor> no_tensors;
    for (const Expr& d : shape) {
        if (!d || d->type != Type::I64) fail("ir::Graph: tensor '{}' has a dimension that is not an int64 expression", name);
        // (Shapes are small trees of sizes and parameters: walked directly, without
        // visit()'s set of seen nodes, on every prepare of a new image size.)
        if (data_dependent(d)) fail("ir::Graph: tensor '{}' has a data-dependent dimension", name);
        check_body(name, d, 0, no_tensors, params, none);
    }
}

int push(std::vector<GraphTensor>& tensors, std::unordered_set<std::string>& names, GraphTensor t) {
    if (!names.insert(t.name).second) fail("ir::Graph: duplicate tensor name '{}'", t.name);
    t.id = static_cast<int>(tensors.size());
    tensors.push_back(std::move(t));
    return tensors.back().id;
}

}  // namespace

Shape const_shape(const std::vector<std::int64_t>& dims) {
    Shape s;
    for (const std::int64_t d : dims) s.push_back(iconst(d));
    return s;
}

std::string shape_text(const Shape& s) {
    std::vector<std::string> parts;
    for (const Expr& e : s) parts.push_back(ir::to_string(e));
    return fmt::format("[{}]", fmt::join(parts, ", "));
}

Expr Graph::add_param(std::string name, ParamKind kind, std::int64_t value) {
    if (!param_names_.insert(name).second) fail("ir::Graph: duplicate parameter name '{}'", name);
    params_.push_back(Param{std::move(name), kind, value});
    values_.push_back(value);
    return param(static_cast<int>(params_.size()) - 1);
}

std::vector<std::int64_t> Graph::param_values() const { return values_; }

std::int64_t Graph::value_of(const Expr& e) const { return eval_params(e, values_); }

std::vector<std::int64_t> Graph::concrete_shape(int tensor) const {
    std::vector<std::int64_t> out;
    for (const Expr& d : at(tensor).shape) out.push_back(value_of(d));
    return out;
}

namespace {

std::int64_t checked_numel(const std::string& name, const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) {
        if (d < 0) fail("ir::Graph: tensor '{}' has a negative dimension {}", name, d);
        if (__builtin_mul_overflow(n, d, &n)) fail("ir::Graph: tensor '{}' has too many elements", name);
    }
    return n;
}

}  // namespace

int Graph::add_input(std::string name, Type t, Shape shape, Shape strides) {
    check_shape(name, shape, params_.size());
    check_shape(name, strides, params_.size());
    if (strides.size() != shape.size())
        fail("ir::Graph: input '{}' has {} dims but {} strides", name, shape.size(), strides.size());
    GraphTensor g;
    g.kind = TensorKind::Input;
    g.name = std::move(name);
    g.type = t;
    g.shape = std::move(shape);
    g.strides = std::move(strides);
    std::vector<std::int64_t> dims;
    for (const Expr& d : g.shape) dims.push_back(value_of(d));
    checked_numel(g.name, dims);
    return push(tensors_, tensor_names_, std::move(g));
}

int Graph::add_constant(std::string name, Type t, Shape shape, std::vector<std::uint8_t> data,
                        std::optional<Interval> value_range) {
    check_shape(name, shape, params_.size());
    std::vector<std::int64_t> dims;
    for (const Expr& d : shape) dims.push_back(value_of(d));
    const std::int64_t n = checked_numel(name, dims);
    if (data.size() != static_cast<std::size_t>(n) * type_bytes(t))
        fail("ir::Graph: table '{}' of {} {} elements has {} bytes of data", name, n, type_name(t), data.size());
    if (value_range && !data.empty()) {
        const auto r = data_range(t, data);
        if (r && (r->lo < value_range->lo || r->hi > value_range->hi))
            fail("internal: table '{}' holds values in [{}, {}] outside its declared range [{}, {}]", name, r->lo,
                 r->hi, value_range->lo, value_range->hi);
    }
    GraphTensor g;
    g.kind = TensorKind::Constant;
    g.name = std::move(name);
    g.type = t;
    g.shape = std::move(shape);
    g.data = std::move(data);
    g.value_range = value_range;
    return push(tensors_, tensor_names_, std::move(g));
}

int Graph::add_compute(std::string name, Type t, Shape shape, Expr body, std::string origin, bool realize) {
    check_interrupt();  // once per op's result: a long pipeline's decomposition stops here
    check_shape(name, shape, params_.size());
    if (!body) fail("ir::Graph: compute '{}' has no body", name);
    if (body->type != t)
        fail("ir::Graph: compute '{}' of type {} has a body of type {}", name, type_name(t), type_name(body->type));
    std::set<int> bound;
    check_body(name, body, shape.size(), tensors_, params_.size(), bound);
    GraphTensor g;
    g.kind = TensorKind::Compute;
    g.name = std::move(name);
    g.type = t;
    g.shape = std::move(shape);
    g.body = std::move(body);
    g.realize = realize;
    g.origin = std::move(origin);
    std::vector<std::int64_t> dims;
    for (const Expr& d : g.shape) dims.push_back(value_of(d));
    checked_numel(g.name, dims);
    return push(tensors_, tensor_names_, std::move(g));
}

std::vector<bool> Graph::live() const {
    const std::size_t n = tensors_.size();
    std::vector<bool> live(n, false);
    if (output >= 0 && static_cast<std::size_t>(output) < n) live[static_cast<std::size_t>(output)] = true;
    for (std::size_t i = n; i-- > 0;) {
        if (!live[i] || tensors_[i].kind != TensorKind::Compute) continue;
        visit(tensors_[i].body, [&](const Expr& e) {
            if (e->op == Op::Load && e->buffer >= 0 && static_cast<std::size_t>(e->buffer) < n)
                live[static_cast<std::size_t>(e->buffer)] = true;
        });
    }
    return live;
}

Graph Graph::specialized() const {
    std::vector<std::pair<int, Expr>> values;
    for (std::size_t i = 0; i < params_.size(); ++i)
        values.emplace_back(kFirstParamVar + static_cast<int>(i), iconst(params_[i].value));
    auto fix = [&](const Expr& e) { return e ? substitute(e, values) : e; };
    Graph g;
    g.output = output;
    g.channels_last = channels_last;
    g.next_reduction_var_ = next_reduction_var_;
    g.tensor_names_ = tensor_names_;
    for (GraphTensor t : tensors_) {
        for (Expr& d : t.shape) d = fix(d);
        for (Expr& d : t.strides) d = fix(d);
        t.body = fix(t.body);
        if (t.kind == TensorKind::Constant && !is_float(t.type)) t.value_range = data_range(t.type, t.data);
        g.tensors_.push_back(std::move(t));
    }
    return g;
}

namespace {

// The structure key's encoding: bytes appended in a fixed order, every expression written
// out node by node (a node met before is written as a reference to its first occurrence,
// so shared subexpressions cost nothing and the encoding is linear in the DAG). It is
// exact (no hash: equal keys mean equal structures) and, unlike printed text, costs a few
// microseconds, which a new image size pays on every prepare.
class StructureWriter {
public:
    std::string out;

    template <typename T>
    void raw(T v) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        out.append(b, sizeof(T));
    }
    void text(std::string_view s) {
        raw(static_cast<std::uint32_t>(s.size()));
        out.append(s);
    }
    void expr(const Expr& e) {
        if (!e) return raw(std::uint8_t{0xff});
        const std::uint32_t id = ids_.id_of(e.get());
        if (id != NodeIds::kFresh) {
            raw(std::uint8_t{0xfe});
            return raw(id);
        }
        raw(static_cast<std::uint8_t>(e->op));
        raw(static_cast<std::uint8_t>(e->type));
        switch (e->op) {
            case Op::Const:
                if (is_float(e->type)) raw(e->fval);
                else raw(e->ival);
                break;
            case Op::Var: raw(static_cast<std::int32_t>(e->var)); break;
            case Op::Sum:
                raw(static_cast<std::int32_t>(e->var));
                raw(static_cast<std::uint8_t>(e->ival));
                break;
            case Op::Load: raw(static_cast<std::int32_t>(e->buffer)); break;
            default: break;
        }
        raw(static_cast<std::uint8_t>(e->args.size()));
        for (const Expr& a : e->args) expr(a);
    }
    void shape(const Shape& s) {
        raw(static_cast<std::uint8_t>(s.size()));
        for (const Expr& e : s) expr(e);
    }

private:
    NodeIds ids_;  // each node's id, by its first occurrence
};

}  // namespace

std::string Graph::structure() const {
    StructureWriter w;
    w.out.reserve(4096);
    w.raw(static_cast<std::uint8_t>(channels_last));
    w.raw(static_cast<std::uint32_t>(params_.size()));
    for (const Param& p : params_) {
        w.text(p.name);
        w.raw(static_cast<std::uint8_t>(p.kind));
    }
    w.raw(static_cast<std::uint32_t>(tensors_.size()));
    for (const GraphTensor& t : tensors_) {
        w.raw(static_cast<std::uint8_t>(t.kind));
        w.text(t.name);
        w.raw(static_cast<std::uint8_t>(t.type));
        w.shape(t.shape);
        w.shape(t.strides);
        w.raw(static_cast<std::uint8_t>(t.value_range.has_value()));
        if (t.value_range) {
            w.raw(t.value_range->lo);
            w.raw(t.value_range->hi);
        }
        w.raw(static_cast<std::uint8_t>(t.realize));
        w.text(t.kind == TensorKind::Compute ? std::string_view(t.origin) : std::string_view());
        w.expr(t.body);
    }
    w.raw(static_cast<std::int32_t>(output));
    return std::move(w.out);
}

std::string Graph::to_string() const {
    std::string out;
    for (std::size_t i = 0; i < params_.size(); ++i)
        out += fmt::format("p{} {} ({}) = {}\n", i, params_[i].name, param_kind_name(params_[i].kind), params_[i].value);
    for (const GraphTensor& t : tensors_) {
        out += fmt::format("t{} {} '{}' {}{}", t.id, kind_name(t.kind), t.name, type_name(t.type), shape_text(t.shape));
        if (!t.strides.empty()) out += fmt::format(" strides {}", shape_text(t.strides));
        if (t.realize) out += " realize";
        if (!t.origin.empty() && t.kind == TensorKind::Compute) out += fmt::format(" ({})", t.origin);
        if (t.body) out += fmt::format(" = {}", ir::to_string(t.body));
        out += '\n';
    }
    out += output >= 0 ? fmt::format("output t{}\n", output) : "output (none)\n";
    return out;
}

}  // namespace toroid::ir
