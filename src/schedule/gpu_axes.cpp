// The GPU's axis mapping, the target-specific pass after the shared ones: each output
// element is one thread's work (a pixel with its channels, where a small channel loop is
// innermost and unrolled). The innermost remaining loop — the dense dim in memory — runs
// along grid x, so a warp's threads touch consecutive addresses; the next one along grid y;
// the outer ones are collapsed along grid z. Extents are run-time values: the launch
// dimensions follow from the bound parameters.
#include "schedule/schedule.h"

#include "ir/simplify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace toroid::schedule {

using namespace ir;

namespace {

// Moving data at the memory's speed takes wide accesses: a thread that loads and stores one
// byte spends as many instructions per byte as a thread of 16-byte accesses spends per 16.
// A kernel whose every output is computed alone (no tap sums) and stored densely along its
// grid x loop gets x_outputs = 16 bytes / the widest element it stores or loads along x:
// each load whose offset moves by +1 or -1 element per step of x is read as one access per
// thread (vector loads), every other load stays per output (uniform ones are computed once),
// and the outputs are stored as one. Decided here, printed by codegen/cuda.cpp.
void choose_x_outputs(const Program& prog, Kernel& k, const Loop& x) {
    if (std::any_of(k.loops.begin(), k.loops.end(), [](const Loop& l) { return l.kind == LoopKind::Unrolled; }))
        return;  // channels-last pixels: a thread's channels are its accesses already
    bool sums = false;
    visit(k.value, [&](const Expr& e) { sums = sums || e->op == Op::Sum; });
    if (sums) return;
    const Buffer& out = prog.buffer(k.output);
    std::vector<Expr> store;
    if (!k.store_index.empty()) store = k.store_index;
    else
        for (std::size_t d = 0; d < out.shape.size(); ++d) store.push_back(var(static_cast<int>(d)));
    const auto store_stride = linear_stride(simplify(offset_expr(out, store)), x.var);
    if (!store_stride || *store_stride != 1) return;
    std::size_t widest = type_bytes(out.type);
    std::vector<const Node*> vector_loads;
    std::vector<std::string> forms;
    visit(k.value, [&](const Expr& e) {
        if (e->op != Op::Load) return;
        const Buffer& b = prog.buffer(e->buffer);
        const auto s = linear_stride(simplify(offset_expr(b, e->args)), x.var);
        if (!s || (*s != 1 && *s != -1)) return;  // uniform along x, or gathered: per output
        if (std::find(vector_loads.begin(), vector_loads.end(), e.get()) != vector_loads.end()) return;
        vector_loads.push_back(e.get());
        widest = std::max(widest, type_bytes(e->type));
        forms.push_back(fmt::format("{} {}", b.name, *s == 1 ? "forwards" : "backwards"));
    });
    if (widest > 8) return;
    k.gpu().x_outputs = static_cast<int>(16 / widest);
    k.gpu().vector_loads = std::move(vector_loads);
    k.decisions.push_back(fmt::format("{} outputs along v{} a thread: one {}-byte store{}{}", k.gpu().x_outputs, x.var,
                                      k.gpu().x_outputs * static_cast<int>(type_bytes(out.type)),
                                      forms.empty() ? "" : "; one access each for the loads of ",
                                      fmt::join(forms, ", ")));
}

}  // namespace

void choose_gpu_axes(Program& prog, const Target& target) {
    for (Kernel& k : prog.kernels) {
        k.gpu();  // a GPU plan from here on (no CPU vector loop)
        if (k.histogram) continue;  // a block per plane: the printer's (schedule/histogram.h)
        std::size_t inner = k.loops.size();
        const Loop& last = k.loops.back();
        if (k.gpu().block_sum == nullptr && k.loops.size() >= 2 && is_const(last.extent) && last.extent->ival > 1 && last.extent->ival <= 4) {
            k.loops.back().kind = LoopKind::Unrolled;
            k.decisions.push_back(fmt::format("unroll v{}: {} iterations per thread, innermost in memory", last.var,
                                              last.extent->ival));
            --inner;
        }
        std::vector<std::string> z;
        for (std::size_t i = 0; i < inner; ++i) {
            Loop& l = k.loops[i];
            if (i + 1 == inner) l.kind = LoopKind::GridX;
            else if (i + 2 == inner) l.kind = LoopKind::GridY;
            else {
                l.kind = LoopKind::GridZ;
                z.push_back(fmt::format("v{}", l.var));
            }
        }
        if (k.gpu().block_sum != nullptr) {
            k.decisions.push_back(fmt::format("grid x: v{} (a block of {} threads per output)", k.loops[inner - 1].var,
                                              target.block_threads));
        } else {
            k.decisions.push_back(fmt::format("grid x: v{} ({} threads a block, coalesced along the dense dim)",
                                              k.loops[inner - 1].var, target.block_threads));
            choose_x_outputs(prog, k, k.loops[inner - 1]);
        }
        if (inner >= 2) k.decisions.push_back(fmt::format("grid y: v{}", k.loops[inner - 2].var));
        if (!z.empty()) k.decisions.push_back(fmt::format("grid z: {} (collapsed)", fmt::join(z, " x ")));
    }
}

}  // namespace toroid::schedule
