// The GPU's axis mapping, the target-specific pass after the shared ones: each output
// element is one thread's work (a pixel with its channels, where a small channel loop is
// innermost and unrolled). The innermost remaining loop — the dense dim in memory — runs
// along grid x, so a warp's threads touch consecutive addresses; the next one along grid y;
// the outer ones are collapsed along grid z. Extents are run-time values: the launch
// dimensions follow from the bound parameters.
#include "schedule/schedule.h"

#include <fmt/format.h>

namespace toroid::schedule {

using namespace ir;

void choose_gpu_axes(Program& prog, const Target& target) {
    for (Kernel& k : prog.kernels) {
        k.vector_width = 1;
        std::size_t inner = k.loops.size();
        const Loop& last = k.loops.back();
        if (k.loops.size() >= 2 && is_const(last.extent) && last.extent->ival > 1 && last.extent->ival <= 4) {
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
        k.decisions.push_back(fmt::format("grid x: v{} ({} threads a block, coalesced along the dense dim)",
                                          k.loops[inner - 1].var, target.block_threads));
        if (inner >= 2) k.decisions.push_back(fmt::format("grid y: v{}", k.loops[inner - 2].var));
        if (!z.empty()) k.decisions.push_back(fmt::format("grid z: {} (collapsed)", fmt::join(z, " x ")));
    }
}

}  // namespace toroid::schedule
