// Binding a graph instance's values to a scheduled program (see bind.h).
#include "schedule/bind.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "ir/eval.h"
#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <unordered_set>

namespace toroid::schedule {

using namespace ir;

namespace {

// Parameter values as they become known: the graph's first, then regions and strides.
struct Values {
    const Program& p;
    std::vector<std::int64_t>& params;
    std::vector<bool> known;

    std::int64_t eval(const Expr& e) const { return eval_params(e, params, &known); }
    void set(std::size_t i, std::int64_t v) {
        params[i] = v;
        known[i] = true;
    }
};

// The concrete [lo, hi] a kernel's loops run over (parameters are Values' own).
VarRanges loop_ranges(const Kernel& k, const Values& v) {
    VarRanges r;
    for (const Loop& l : k.loops) {
        const std::int64_t b = v.eval(l.begin), e = v.eval(l.extent);
        if (e >= 1) r[l.var] = Interval{b, b + e - 1};
    }
    return r;
}

bool kernel_is_empty(const Kernel& k, const Values& v) {
    for (const Loop& l : k.loops)
        if (v.eval(l.extent) <= 0) return true;
    return false;
}

// The region of `buf` that the loads in `e` read, dim by dim, under `r` (the consumer's
// loop ranges and the parameters), each Sum's reduction variable bound to its taps: the
// hull of every load's index, with tables bounded by the entries the indices reach.
void read_region(const Expr& e, int buf, VarRanges& r, const IndexedLoadBounds& tables, const Values& v,
                 std::vector<std::optional<Interval>>& region, std::vector<bool>& unknown,
                 NodeIds& seen) {
    auto bounds_of = [&](const Expr& x) { return bounds_indexed(x, r, tables, v.params, &v.known); };
    if (!seen.insert(e.get())) return;
    if (e->op == Op::Sum) {
        read_region(e->args[1], buf, r, tables, v, region, unknown, seen);
        const auto n = bounds_of(e->args[1]);
        if (n && n->hi <= 0) return;  // no taps: the body reads nothing
        const auto saved = r.find(e->var) != r.end() ? std::optional<Interval>(r[e->var]) : std::nullopt;
        if (n) r[e->var] = Interval{0, n->hi - 1};
        else r.erase(e->var);  // an unknown tap count: its loads' indices are unknown
        // The body's nodes are seen afresh under this tap range: a node shared with another
        // sum (or with code outside it) may reach other indices there.
        NodeIds body_seen;
        read_region(e->args[0], buf, r, tables, v, region, unknown, body_seen);
        if (saved) r[e->var] = *saved;
        else r.erase(e->var);
        return;
    }
    if (e->op == Op::Load && e->buffer == buf) {
        for (std::size_t d = 0; d < region.size(); ++d) {
            const auto iv = bounds_of(e->args[d]);
            if (!iv) {
                unknown[d] = true;
                continue;
            }
            region[d] = region[d] ? Interval{std::min(region[d]->lo, iv->lo), std::max(region[d]->hi, iv->hi)} : *iv;
        }
    }
    for (const Expr& a : e->args) read_region(a, buf, r, tables, v, region, unknown, seen);
}

}  // namespace

Binding bind(const Program& p, const Graph& g) {
    Binding b;
    b.params.assign(p.params.size(), 0);
    Values v{p, b.params, std::vector<bool>(p.params.size(), false)};
    for (std::size_t i = 0; i < p.params.size(); ++i) {
        const ParamSource& s = p.params[i].source;
        if (s.kind != ParamSource::Kind::Graph) continue;
        if (s.index < 0 || static_cast<std::size_t>(s.index) >= g.params().size())
            fail("internal: program parameter {} names graph parameter {} of {}", i, s.index, g.params().size());
        v.set(i, g.params()[static_cast<std::size_t>(s.index)].value);
    }
    // Table data, and the tables' extents (constants and the graph's parameters: known now).
    b.tables.assign(p.buffers.size(), nullptr);
    b.shapes.assign(p.buffers.size(), {});
    for (const Buffer& buf : p.buffers) {
        if (buf.role != BufferRole::Constant) continue;
        const GraphTensor& t = g.at(buf.tensor);
        b.tables[static_cast<std::size_t>(buf.id)] = t.data.data();
        auto& shape = b.shapes[static_cast<std::size_t>(buf.id)];
        for (const Expr& e : buf.shape) shape.push_back(v.eval(e));
    }
    // A table read in an index is bounded by its entries at the indices read: a vertical
    // pass's start table over the rows a crop keeps says which rows of the pass before it
    // are read, where the whole table's range would be every row of the image.
    const IndexedLoadBounds tables = [&](int id, std::span<const Interval> index) -> std::optional<Interval> {
        if (id < 0 || static_cast<std::size_t>(id) >= p.buffers.size()) return std::nullopt;
        const Buffer& buf = p.buffers[static_cast<std::size_t>(id)];
        if (buf.role != BufferRole::Constant) return std::nullopt;
        const GraphTensor& t = g.at(buf.tensor);
        return data_range(t.type, t.data, b.shapes[static_cast<std::size_t>(id)], index);
    };
    auto param_index = [](const Expr& e) -> std::optional<std::size_t> {
        if (e->op != Op::Var || !is_param_var(e->var)) return std::nullopt;
        return static_cast<std::size_t>(e->var - kFirstParamVar);
    };

    // Regions, from the last kernel back: a consumer's own loops may be a region too.
    for (std::size_t ki = p.kernels.size(); ki-- > 0;) {
        const Buffer& buf = p.buffer(p.kernels[ki].output);
        if (buf.role != BufferRole::Temp) continue;
        check_interrupt();
        const std::size_t rank = buf.shape.size();
        std::vector<std::optional<Interval>> region(rank);
        std::vector<bool> unknown(rank, false);
        for (std::size_t kj = ki + 1; kj < p.kernels.size(); ++kj) {
            const Kernel& consumer = p.kernels[kj];
            if (kernel_is_empty(consumer, v)) continue;
            VarRanges r = loop_ranges(consumer, v);
            NodeIds seen;
            read_region(consumer.value, buf.id, r, tables, v, region, unknown, seen);
        }
        for (std::size_t d = 0; d < rank; ++d) {
            const auto oi = param_index(buf.origin[d]), ei = param_index(buf.shape[d]);
            if (!oi || !ei) continue;
            const std::int64_t logical = v.eval(buf.logical[d]);
            Interval iv = unknown[d] || !region[d] ? Interval{0, logical - 1} : *region[d];
            if (!region[d] && !unknown[d]) iv = Interval{0, -1};  // nothing reads it
            iv.lo = std::max<std::int64_t>(iv.lo, 0);
            iv.hi = std::min<std::int64_t>(iv.hi, logical - 1);
            if (iv.hi < iv.lo) iv = Interval{0, -1};
            v.set(*oi, iv.lo);
            v.set(*ei, iv.hi - iv.lo + 1);
        }
    }
    // Stored extents, dense strides of intermediates, bytes to allocate.
    b.temp_bytes.assign(p.buffers.size(), 0);
    for (const Buffer& buf : p.buffers) {
        auto& shape = b.shapes[static_cast<std::size_t>(buf.id)];
        if (buf.role == BufferRole::Constant) continue;
        for (const Expr& e : buf.shape) shape.push_back(v.eval(e));
        if (buf.role != BufferRole::Temp) continue;
        std::int64_t inner = 1;
        for (auto it = buf.memory_order.rbegin(); it != buf.memory_order.rend(); ++it) {
            const auto d = static_cast<std::size_t>(*it);
            if (const auto si = param_index(buf.strides[d])) v.set(*si, inner);
            inner *= std::max<std::int64_t>(shape[d], 1);
        }
        std::int64_t span = 1;
        bool empty = false;
        for (std::size_t d = 0; d < shape.size(); ++d) {
            if (shape[d] <= 0) empty = true;
            else span += (shape[d] - 1) * v.eval(buf.strides[d]);
        }
        b.temp_bytes[static_cast<std::size_t>(buf.id)] = empty ? 0 : span * static_cast<std::int64_t>(type_bytes(buf.type));
    }
    return b;
}

namespace {

std::optional<std::size_t> output_stride_param(const Program& p, std::size_t d) {
    const Expr& e = p.buffer(p.output).strides[d];
    if (e->op == Op::Var && is_param_var(e->var)) return static_cast<std::size_t>(e->var - kFirstParamVar);
    return std::nullopt;
}

}  // namespace

bool output_strides_match(const Program& p, const Binding& b, const std::array<std::int64_t, 4>& strides) {
    const Buffer& out = p.buffer(p.output);
    const auto& shape = b.shapes[static_cast<std::size_t>(out.id)];
    for (std::size_t d = 0; d < 4; ++d) {
        if (strides[d] < 0) return false;
        if (output_stride_param(p, d) || shape[d] == 1) continue;
        if (out.strides[d]->ival != strides[d]) return false;
    }
    if (p.index_width == IndexWidth::I32) {
        std::int64_t span = 0;
        for (std::size_t d = 0; d < 4; ++d) span += std::max<std::int64_t>(shape[d] - 1, 0) * strides[d];
        if (span >= std::numeric_limits<std::int32_t>::max() / 2) return false;
        for (std::size_t d = 0; d < 4; ++d)
            if (strides[d] > std::numeric_limits<std::int32_t>::max() / 2) return false;
    }
    return true;
}

void bind_output_strides(const Program& p, Binding& b, const std::array<std::int64_t, 4>& strides) {
    if (!output_strides_match(p, b, strides)) fail("internal: output strides do not fit the compiled program");
    for (std::size_t d = 0; d < 4; ++d)
        if (const auto i = output_stride_param(p, d)) b.params[*i] = strides[d];
}

bool fits_index32(const Graph& g) {
    constexpr std::int64_t limit = std::int64_t{1} << 30;  // margin for index arithmetic around a span
    for (const Param& prm : g.params()) {
        const Interval r = declared_range(prm.kind, IndexWidth::I32);
        if (prm.value < r.lo || prm.value > r.hi) return false;
    }
    for (const GraphTensor& t : g.tensors()) {
        const auto shape = g.concrete_shape(t.id);
        std::int64_t span = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) {
            std::int64_t stride = 1;
            if (!t.strides.empty()) stride = g.value_of(t.strides[d]);
            else
                for (std::size_t e = d + 1; e < shape.size(); ++e) stride *= std::max<std::int64_t>(shape[e], 1);
            if (shape[d] > limit || stride > limit) return false;
            span += shape[d] * stride;
            if (span > limit) return false;
        }
    }
    return true;
}

std::string explain(const Program& p, const Binding& b) {
    std::vector<bool> known(p.params.size(), true);
    std::vector<std::int64_t> values = b.params;
    Values v{p, values, known};
    std::string s = p.kernels.size() == 1 ? "1 kernel\n" : fmt::format("{} kernels\n", p.kernels.size());
    for (const Kernel& k : p.kernels) {
        const Buffer& out = p.buffer(k.output);
        std::string loops, vec = "none";
        std::vector<std::string> pars;
        std::int64_t points = 1;
        for (const Loop& l : k.loops) {
            const std::int64_t begin = v.eval(l.begin), extent = v.eval(l.extent);
            points *= std::max<std::int64_t>(extent, 0);
            if (!loops.empty()) loops += " > ";
            loops += fmt::format("{}v{}[{}..{})", l.kind == LoopKind::Parallel ? "parallel " :
                                                  l.kind == LoopKind::Vector   ? "vector "
                                                  : l.kind == LoopKind::Unrolled ? "unrolled " : "",
                                 l.var, begin, begin + extent);
            if (l.kind == LoopKind::Vector) vec = fmt::format("v{} ({} lanes)", l.var, k.cpu().vector_width);
            if (l.kind == LoopKind::Parallel) pars.push_back(fmt::format("v{}", l.var));
        }
        // Per output point each distinct operation once, times the extents of the Sums around it.
        std::int64_t flops = 0;
        std::unordered_set<const Node*> walked;
        std::function<void(const Expr&, std::int64_t)> walk = [&](const Expr& e, std::int64_t m) {
            if (!walked.insert(e.get()).second) return;
            if (e->op == Op::Sum) {
                std::int64_t n = 1;
                try {
                    n = v.eval(sum_extent(e));
                } catch (const Error&) {
                }
                m *= n;
            }
            if (is_float(e->type) && e->op != Op::Load && e->op != Op::Const && e->op != Op::Cast) flops += m;
            for (const auto& a : e->args) walk(a, m);
        };
        walk(k.value, 1);
        std::int64_t bytes_read = 0;
        std::vector<bool> seen(p.buffers.size(), false);
        visit(k.value, [&](const Expr& e) {
            if (e->op != Op::Load || seen[static_cast<std::size_t>(e->buffer)]) return;
            seen[static_cast<std::size_t>(e->buffer)] = true;
            std::int64_t n = 1;
            for (const std::int64_t d : b.shapes[static_cast<std::size_t>(e->buffer)]) n *= d;
            bytes_read += n * static_cast<std::int64_t>(type_bytes(p.buffer(e->buffer).type));
        });
        const auto& shape = b.shapes[static_cast<std::size_t>(out.id)];
        s += fmt::format("{}: {} -> {} {}[{}]\n", k.name, loops, out.name, type_name(out.type), fmt::join(shape, ", "));
        s += fmt::format("  vector axis: {}; parallel: {}\n", vec, pars.empty() ? "none" : fmt::format("{}", fmt::join(pars, " x ")));
        s += fmt::format("  bytes read: {}, written: {}, FLOPs: {}\n", bytes_read,
                         points * static_cast<std::int64_t>(type_bytes(out.type)), flops * points);
    }
    return s;
}

}  // namespace toroid::schedule
