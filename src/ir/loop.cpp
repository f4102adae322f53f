// Loop IR helpers and the Program dump used by --explain and the scheduler's debug
// output: buffers first (role, type, shape, strides), then each kernel's loop nest with
// the stored value, the scheduler's reasons and cost estimates.
#include "ir/loop.h"

#include "ir/simplify.h"

#include <stdexcept>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <unordered_set>

namespace toroid::ir {

std::string_view buffer_role_name(BufferRole r) {
    switch (r) {
        case BufferRole::Input: return "input";
        case BufferRole::Constant: return "constant";
        case BufferRole::Temp: return "temp";
        case BufferRole::Output: return "output";
    }
    return "?";
}

std::string_view loop_kind_name(LoopKind k) {
    switch (k) {
        case LoopKind::Serial: return "serial";
        case LoopKind::Parallel: return "parallel";
        case LoopKind::Vector: return "vector";
        case LoopKind::Unrolled: return "unrolled";
        case LoopKind::GridX: return "grid x";
        case LoopKind::GridY: return "grid y";
        case LoopKind::GridZ: return "grid z";
    }
    return "?";
}

namespace {

// A kernel's plan of kind Plan: read (a default where it has none), or written (made on
// first use; a kernel planned for the other kind of target has none to write).
template <typename Plan>
const Plan& read_plan(const Kernel& k) {
    static const Plan none;
    const auto* p = std::get_if<Plan>(&k.plan);
    return p ? *p : none;
}
template <typename Plan>
Plan& write_plan(Kernel& k, const char* other) {
    if (std::holds_alternative<std::monostate>(k.plan)) k.plan = Plan{};
    if (auto* p = std::get_if<Plan>(&k.plan)) return *p;
    throw std::logic_error("internal: kernel " + k.name + " is planned for the " + other);
}

}  // namespace

const CpuPlan& Kernel::cpu() const { return read_plan<CpuPlan>(*this); }
CpuPlan& Kernel::cpu() { return write_plan<CpuPlan>(*this, "GPU, not the CPU"); }
const GpuPlan& Kernel::gpu() const { return read_plan<GpuPlan>(*this); }
GpuPlan& Kernel::gpu() { return write_plan<GpuPlan>(*this, "CPU, not the GPU"); }

std::string_view load_form_name(LoadForm f) {
    switch (f) {
        case LoadForm::Uniform: return "uniform";
        case LoadForm::Contiguous: return "contiguous";
        case LoadForm::Reversed: return "reversed";
        case LoadForm::Strided: return "strided";
        case LoadForm::ByteTable: return "byte table";
        case LoadForm::Window: return "window";
        case LoadForm::WordGather: return "word gather";
        case LoadForm::BoundedWordGather: return "bounded word gather";
        case LoadForm::LaneGather: return "lane gather";
    }
    return "?";
}

Expr offset_expr(const Buffer& b, const std::vector<Expr>& idx) {
    Expr off = iconst(0);
    for (std::size_t d = 0; d < idx.size(); ++d) {
        if (is_const(b.shape[d], 1) && b.role != BufferRole::Input && b.role != BufferRole::Constant) continue;
        Expr i = idx[d];
        if (!b.origin.empty() && !is_const(b.origin[d], 0)) i = sub(i, b.origin[d]);
        off = add(off, mul(i, b.strides[d]));
    }
    return off;
}

Kernel new_temp_kernel(Program& prog, const std::string& name, Type type, Shape shape, Expr value,
                       std::string decision) {
    Buffer b;
    b.id = static_cast<int>(prog.buffers.size());
    b.name = name;
    b.role = BufferRole::Temp;
    b.type = type;
    b.logical = b.shape = std::move(shape);
    b.origin.assign(b.shape.size(), iconst(0));
    Kernel k;
    k.output = b.id;
    k.value = std::move(value);
    for (std::size_t d = 0; d < b.shape.size(); ++d) k.loops.push_back(Loop{static_cast<int>(d), iconst(0), b.shape[d]});
    k.decisions.push_back(std::move(decision));
    prog.buffers.push_back(std::move(b));
    return k;
}

void number_kernels(std::vector<Kernel>& kernels) {
    for (std::size_t i = 0; i < kernels.size(); ++i) kernels[i].name = "kernel_" + std::to_string(i);
}

Kernel fused_channel_kernel(const Program& prog, const Kernel& k) {
    const std::size_t n = k.loops.size();
    if (k.cpu().fused_channels <= 0 || n < 2 || k.loops[n - 1].kind != LoopKind::Unrolled)
        throw std::logic_error("fused_channel_kernel: the kernel has no fused channel loop");
    const int c = k.loops[n - 1].var, w = k.loops[n - 2].var;
    Kernel f = k;
    f.loops.pop_back();
    Loop& l = f.loops.back();
    l.begin = mul(iconst(k.cpu().fused_channels), l.begin);
    l.extent = mul(iconst(k.cpu().fused_channels), l.extent);
    if (k.cpu().fused_mirrored) {
        // Per load: forward runs keep the plain substitution (affine, contiguous vectors),
        // backward ones take f's pixel and channel.
        const std::int64_t C = k.cpu().fused_channels;
        f.value = rewrite(k.value, [&](const Expr& e) {
            if (e->op != Op::Load || (!depends_on_var(e, c) && !depends_on_var(e, w))) return e;
            const Expr off = simplify(offset_expr(prog.buffer(e->buffer), e->args));
            const auto sc = linear_stride(off, c), sw = linear_stride(off, w);
            if (sc && sw && *sc != 0 && *sw == -C * *sc)
                return substitute(e, {{c, mod(var(w), iconst(C))}, {w, floordiv(var(w), iconst(C))}});
            return substitute(e, {{c, var(w)}, {w, iconst(0)}});
        });
    } else {
        f.value = substitute(k.value, {{c, var(w)}, {w, iconst(0)}});
    }
    f.store_index.clear();
    for (std::size_t d = 0; d < n; ++d) {
        const int dv = static_cast<int>(d);
        f.store_index.push_back(dv == c ? var(w) : dv == w ? iconst(0) : var(dv));
    }
    f.cpu().fused_channels = 0;
    return f;
}

LoadBounds Program::load_bounds() const {
    std::vector<std::optional<Interval>> ranges(buffers.size());
    for (const Buffer& b : buffers)
        if (b.id >= 0 && static_cast<std::size_t>(b.id) < ranges.size()) ranges[static_cast<std::size_t>(b.id)] = b.value_range;
    return [ranges = std::move(ranges)](int buffer) -> std::optional<Interval> {
        if (buffer < 0 || static_cast<std::size_t>(buffer) >= ranges.size()) return std::nullopt;
        return ranges[static_cast<std::size_t>(buffer)];
    };
}

VarRanges Program::kernel_ranges(const Kernel& k, const LoadBounds& lb) const {
    VarRanges r = param_ranges(k);
    for (const Loop& l : k.loops) {
        const auto b = bounds(l.begin, r, lb), e = bounds(l.extent, r, lb);
        if (b && e) r[l.var] = Interval{b->lo, b->hi + std::max<std::int64_t>(e->hi, 1) - 1};
    }
    return r;
}

VarRanges Program::param_ranges() const {
    VarRanges r;
    for (std::size_t i = 0; i < params.size(); ++i)
        r[kFirstParamVar + static_cast<int>(i)] = declared_range(params[i].kind, index_width);
    return r;
}

VarRanges Program::param_ranges(const Kernel& k) const {
    VarRanges r;
    std::unordered_set<const Node*> seen;
    std::vector<bool> buffer_seen(buffers.size(), false);
    std::function<void(const Expr&)> walk;
    auto use_buffer = [&](int id) {
        if (id < 0 || static_cast<std::size_t>(id) >= buffers.size() || buffer_seen[static_cast<std::size_t>(id)]) return;
        buffer_seen[static_cast<std::size_t>(id)] = true;
        const Buffer& b = buffers[static_cast<std::size_t>(id)];
        for (const auto* v : {&b.shape, &b.strides, &b.origin, &b.logical})
            for (const Expr& e : *v)
                if (e) walk(e);
    };
    walk = [&](const Expr& e) {
        if (!seen.insert(e.get()).second) return;
        if (e->op == Op::Var && is_param_var(e->var)) {
            const auto i = static_cast<std::size_t>(e->var - kFirstParamVar);
            if (i < params.size()) r[e->var] = declared_range(params[i].kind, index_width);
        }
        if (e->op == Op::Load) use_buffer(e->buffer);
        for (const Expr& a : e->args) walk(a);
    };
    if (k.value) walk(k.value);
    for (const Expr& e : k.store_index)
        if (e) walk(e);
    for (const Loop& l : k.loops) {
        if (l.begin) walk(l.begin);
        if (l.extent) walk(l.extent);
    }
    use_buffer(k.output);
    return r;
}

namespace {

std::string_view source_name(ParamSource::Kind k) {
    switch (k) {
        case ParamSource::Kind::Graph: return "graph";
        case ParamSource::Kind::RegionOrigin: return "region origin";
        case ParamSource::Kind::RegionExtent: return "region extent";
        case ParamSource::Kind::DenseStride: return "dense stride";
        case ParamSource::Kind::OutputStride: return "output stride";
    }
    return "?";
}

}  // namespace

std::string Program::to_string() const {
    std::string out = fmt::format("program: input t{}, output t{}, int{} indices\n", input, output,
                                  index_width == IndexWidth::I32 ? 32 : 64);
    for (std::size_t i = 0; i < params.size(); ++i) {
        const ProgramParam& p = params[i];
        out += fmt::format("param p{} {} ({}, {}", i, p.name, param_kind_name(p.kind), source_name(p.source.kind));
        if (p.source.buffer >= 0) out += fmt::format(" of t{} dim {}", p.source.buffer, p.source.dim);
        out += ")\n";
    }
    for (const Buffer& b : buffers) {
        out += fmt::format("buffer t{} {} '{}' {}{}", b.id, buffer_role_name(b.role), b.name, type_name(b.type),
                           shape_text(b.shape));
        if (!b.strides.empty()) out += fmt::format(" strides {}", shape_text(b.strides));
        if (!b.origin.empty()) out += fmt::format(" origin {}", shape_text(b.origin));
        out += '\n';
    }
    for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
        const Kernel& k = kernels[ki];
        out += fmt::format("kernel {} '{}' -> t{}\n", ki, k.name, k.output);
        std::string indent = "  ";
        std::vector<std::string> index;
        for (const Loop& l : k.loops) {
            std::string kind;
            switch (l.kind) {
                case LoopKind::Serial: break;
                case LoopKind::Parallel: kind = "parallel "; break;
                case LoopKind::Vector: kind = fmt::format("vector({}) ", k.cpu().vector_width); break;
                case LoopKind::Unrolled: kind = "unrolled "; break;
                case LoopKind::GridX:
                case LoopKind::GridY:
                case LoopKind::GridZ: kind = std::string(loop_kind_name(l.kind)) + " "; break;
            }
            out += fmt::format("{}{}for v{} in {} + [0, {})\n", indent, kind, l.var, ir::to_string(l.begin),
                               ir::to_string(l.extent));
            indent += "  ";
        }
        // The stored element is indexed by the output dims in order, whatever the loop order.
        std::size_t rank = k.loops.size();
        if (k.output >= 0 && static_cast<std::size_t>(k.output) < buffers.size())
            rank = buffers[static_cast<std::size_t>(k.output)].shape.size();
        for (std::size_t d = 0; d < rank; ++d) index.push_back(fmt::format("v{}", d));
        out += fmt::format("{}t{}[{}] = {}\n", indent, k.output, fmt::join(index, ", "), ir::to_string(k.value));
        for (const std::string& why : k.decisions) out += fmt::format("  # {}\n", why);
    }
    for (const GpuFusion& f : gpu_fusions)
        out += fmt::format("fused: kernel {} into kernel {} through t{} (shared memory, {}x{} threads a block, {} "
                           "outputs along x per thread)\n",
                           f.producer, f.consumer, f.temp, f.block_x, f.block_y, f.outputs_x);
    return out;
}

}  // namespace toroid::ir
