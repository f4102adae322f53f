// The CPU's axis mapping, the target-specific pass after the shared ones: which loop is the
// vector loop (and how many lanes), which small loop is unrolled around it, which outer
// loops are parallel. Codegen prints exactly what is decided here.
#include "schedule/schedule.h"

#include "ir/simplify.h"

#include <fmt/format.h>

namespace toroid::schedule {

using namespace ir;

namespace {

// Whether the output is written at consecutive addresses along loop var `v`.
bool stores_contiguously(const Program& prog, const Kernel& k, int v) {
    const Buffer& out = prog.buffer(k.output);
    std::vector<Expr> idx;
    for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
    const auto stride = linear_stride(simplify(offset_expr(out, idx)), v);
    return stride && *stride == 1;
}

// Whether the value gathers 1- or 2-byte elements along loop var `v` (computed addresses):
// there is no gather instruction for those, and lane-by-lane loads in vector code lose to
// the scalar loop (uint8 separable resize passes, say).
bool gathers_narrow(const Program& prog, const Kernel& k, int v) {
    bool found = false;
    visit(k.value, [&](const Expr& e) {
        if (found || e->op != Op::Load) return;
        const Buffer& b = prog.buffer(e->buffer);
        if (type_bytes(b.type) >= 4) return;
        if (!linear_stride(simplify(offset_expr(b, e->args)), v)) found = true;
    });
    return found;
}

}  // namespace

void choose_cpu_axes(Program& prog, const Target& target) {
    for (Kernel& k : prog.kernels) {
        std::size_t inner = k.loops.size() - 1;
        // A tiny innermost loop (the channels of a channels-last pixel) is unrolled and the
        // loop around it is the vector loop.
        const Loop& last = k.loops[inner];
        if (k.loops.size() >= 2 && is_const(last.extent) && last.extent->ival > 1 && last.extent->ival <= 4) {
            k.loops[inner].kind = LoopKind::Unrolled;
            k.decisions.push_back(fmt::format("unroll v{}: {} iterations, innermost in memory", last.var,
                                              last.extent->ival));
            --inner;
        }
        Loop& l = k.loops[inner];
        const bool contiguous = stores_contiguously(prog, k, l.var);
        // A sum over a run-time number of taps is a loop per output: the C++ compiler does not
        // vectorize across it, so it is worth explicit vectors even with interleaved stores.
        bool tap_loop = false;
        visit(k.value, [&](const Expr& e) { tap_loop = tap_loop || (e->op == Op::Sum && !const_extent(e)); });
        const bool heavy = node_count(k.value) > 40 || tap_loop;
        // Strided stores (channels-last pixels with unrolled channels) cost a lane loop;
        // worth it only when the value itself is expensive to compute.
        if ((contiguous || heavy) && !gathers_narrow(prog, k, l.var)) {
            l.kind = LoopKind::Vector;
            k.vector_width = target.kernel_lanes();
            k.decisions.push_back(fmt::format("vector axis v{} ({} lanes): {}", l.var, k.vector_width,
                                              contiguous ? "stride 1 in the output"
                                              : tap_loop ? "interleaved, a tap loop per output"
                                                         : "interleaved, expensive value"));
        } else {
            k.vector_width = 1;
            k.decisions.push_back(fmt::format("no explicit vectors along v{}: {}; left to the C++ compiler", l.var,
                                              contiguous ? "narrow gathers" : "cheap value, interleaved stores"));
        }
        std::vector<std::string> par;
        for (std::size_t i = 0; i < inner; ++i) {
            k.loops[i].kind = LoopKind::Parallel;
            par.push_back(fmt::format("v{}", k.loops[i].var));
        }
        if (!par.empty())
            k.decisions.push_back(fmt::format("parallel over {} (collapsed, shared by the threads)", fmt::join(par, " x ")));
        else
            k.decisions.push_back("no parallel loop: only the innermost loop remains");
    }
}

}  // namespace toroid::schedule
