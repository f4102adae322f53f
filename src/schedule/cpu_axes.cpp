// The CPU's axis mapping, the target-specific pass after the shared ones: which loop is the
// vector loop (and how many lanes), which small loop is unrolled around it, which outer
// loops are parallel. Codegen prints exactly what is decided here.
#include "schedule/schedule.h"
#include "schedule/access.h"
#include "schedule/partition.h"
#include "schedule/tabulate.h"
#include "schedule/tap_pairs.h"

#include "core/interrupt.h"
#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

namespace toroid::schedule {

using namespace ir;

namespace {

// Whether the output is written at consecutive addresses along loop var `v`.
bool stores_contiguously(const Program& prog, const Kernel& k, int v) {
    const Buffer& out = prog.buffer(k.output);
    std::vector<Expr> idx = k.store_index;
    if (idx.empty())
        for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
    const auto stride = linear_stride(simplify(offset_expr(out, idx)), v);
    return stride && *stride == 1;
}

// Whether every access of `k` moves along the unrolled channel loop `c` (C iterations) and
// the loop `w` around it as one run: offset A + s * (C * w + c), and nothing else in the
// value depends on c or w. Then the two loops are one loop over C * w + c for code
// generation (channels-last pixels as consecutive elements: a vertical resize pass, a
// crop, a conversion), with contiguous vectors instead of interleaved ones.
// With `mirrored` (the target reads byte windows), byte loads may also run through the pixels
// backwards, A + s * (c - C * w) (a horizontal flip of channels-last pixels): the fused
// loop reads them through windows of memory (codegen's gather_window: the lanes' pattern
// depends on the position along the row only, so it is worked out once per call) instead
// of interleaving channels. Sets `*reversed` when some load does.
bool channels_fuse(const Program& prog, const Kernel& k, int w, int c, std::int64_t C, bool mirrored,
                   bool* reversed) {
    *reversed = false;
    auto moves_together = [&](const Expr& off, Type t, bool is_load) {
        if (!depends_on_var(off, c) && !depends_on_var(off, w)) return true;
        const auto sc = linear_stride(off, c), sw = linear_stride(off, w);
        if (!sc || !sw || *sc == 0) return false;
        if (*sw == C * *sc) return true;
        if (mirrored && is_load && type_bytes(t) == 1 && *sw == -C * *sc) {
            *reversed = true;
            return true;
        }
        return false;
    };
    const Buffer& out = prog.buffer(k.output);
    std::vector<Expr> idx;
    for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
    const Expr store = simplify(offset_expr(out, idx));
    if (!depends_on_var(store, c) || !moves_together(store, out.type, false)) return false;
    bool ok = true;
    std::unordered_set<const Node*> seen;  // each distinct node once (a DAG)
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
        if (!ok || !seen.insert(e.get()).second) return;
        if (e->op == Op::Var && (e->var == c || e->var == w)) ok = false;
        if (e->op == Op::Load) {
            // A byte table looked up by a byte the kernel reads (tabulate.h): one table for
            // every channel moves with nothing, so only the byte it looks up must move with
            // the store (a table per channel would need one per lane), and forwards (the
            // byte lanes of a table lookup are not read through windows).
            if (const auto byte = byte_table_argument(prog, e)) {
                bool shared = true;
                for (std::size_t d = 0; d + 1 < e->args.size(); ++d)
                    shared = shared && !depends_on_var(e->args[d], c) && !depends_on_var(e->args[d], w);
                if (shared) {
                    const bool before = *reversed;
                    *reversed = false;
                    walk(*byte);
                    if (*reversed) ok = false;
                    *reversed = before;
                    return;
                }
            }
            const Buffer& b = prog.buffer(e->buffer);
            if (!moves_together(simplify(offset_expr(b, e->args)), b.type, true)) ok = false;
            return;
        }
        for (const auto& a : e->args) walk(a);
    };
    walk(k.value);
    return ok;
}

// The widest element, in bytes, that the vector body of `k` along loop var `v` holds in a
// vector: the values it computes, the elements it loads and stores, and the lane offsets
// of gathers (int32 or int64 vectors) — but not the addresses of affine accesses (one
// scalar base per vector) nor the lanes of byte windows worked out once per call
// (gather_window over a row position's pattern: codegen's window_table).
std::size_t widest_vector_bytes(const Program& prog, const Kernel& k, int v, const Target& target) {
    std::size_t widest = type_bytes(prog.buffer(k.output).type);
    std::vector<Expr> idx = k.store_index;
    const Buffer& out = prog.buffer(k.output);
    if (idx.empty())
        for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
    const Expr store = simplify(offset_expr(out, idx));
    // Each distinct node once per context (a DAG); the addresses it holds stay valid while
    // the walk runs (the offsets it walks are kept in `offsets`).
    DependsOnVar moves(v);
    std::set<std::pair<const Node*, bool>> seen;
    std::vector<Expr> offsets;
    std::function<void(const Expr&, bool)> walk = [&](const Expr& e, bool in_taps) {
        if (!seen.emplace(e.get(), in_taps).second) return;
        if (!moves(e)) return;  // computed once per vector, as a scalar
        if (e->op == Op::Sum) {
            if (!const_extent(e)) in_taps = true;
            walk(e->args[0], in_taps);
            return;
        }
        if (e->op == Op::Load) {
            const Buffer& b = prog.buffer(e->buffer);
            widest = std::max(widest, type_bytes(b.type));
            // A byte table's entries are permuted in registers by the byte it looks up.
            if (target.byte_permute)
                if (const auto byte = byte_table_argument(prog, e);
                    byte && !depends_on_var(e->args[0], v) && !depends_on_var(e->args[1], v)) {
                    walk(*byte, in_taps);
                    return;
                }
            const Expr off = offsets.emplace_back(simplify(offset_expr(b, e->args)));
            if (linear_stride(off, v)) return;
            if (target.byte_windows && !in_taps && type_bytes(b.type) == 1)
                if (const auto g = split_gather(off, v, -1); g && lanes_column_only(g->lanes, v)) return;
            walk(off, in_taps);
            return;
        }
        if (e->type != Type::Bool) widest = std::max(widest, type_bytes(e->type));
        for (const auto& a : e->args) walk(a, in_taps);
    };
    walk(k.value, false);
    if (!linear_stride(store, v)) walk(store, false);
    return widest;
}

// Whether every load of `k` that moves along loop var `v` does so at a constant stride
// (no gathers, no windows).
bool affine_along(const Program& prog, const Kernel& k, int v) {
    bool ok = true;
    visit(k.value, [&](const Expr& e) {
        if (!ok || e->op != Op::Load) return;
        const Expr off = simplify(offset_expr(prog.buffer(e->buffer), e->args));
        if (depends_on_var(off, v) && !linear_stride(off, v)) ok = false;
    });
    return ok;
}

// Vectors a step of a vector loop whose tap loops read at constant strides: a tap's weight
// and row address serve that many vectors (a vertical resize pass over a run of bytes
// or floats). Kernels with unrolled channels already share them across the channels.
constexpr int kVectorUnroll = 4;

}  // namespace

void choose_cpu_axes(Program& prog, const Target& target) {
    for (Kernel& k : prog.kernels) {
        check_interrupt();
        if (k.histogram) continue;  // its loops are the printer's (schedule/histogram.h)
        std::size_t inner = k.loops.size() - 1;
        // A tiny innermost loop (the channels of a channels-last pixel) is unrolled and the
        // loop around it is the vector loop.
        const Loop& last = k.loops[inner];
        if (k.loops.size() >= 2 && is_const(last.extent) && last.extent->ival > 1 && last.extent->ival <= 4) {
            k.loops[inner].kind = LoopKind::Unrolled;
            k.decisions.push_back(fmt::format("unroll v{}: {} iterations, innermost in memory", last.var,
                                              last.extent->ival));
            --inner;
            bool reversed = false;
            if (channels_fuse(prog, k, k.loops[inner].var, last.var, last.extent->ival, target.byte_windows,
                              &reversed)) {
                k.cpu().fused_channels = static_cast<int>(last.extent->ival);
                k.cpu().fused_mirrored = reversed;
                k.decisions.push_back(
                    reversed ? fmt::format("fuse v{} and v{}: the store and forward loads move by the same stride along "
                                           "{} * v{} + v{}, byte loads backwards through the pixels (read through "
                                           "windows); one loop over consecutive elements",
                                           k.loops[inner].var, last.var, last.extent->ival, k.loops[inner].var, last.var)
                             : fmt::format("fuse v{} and v{}: every access moves by the same stride along "
                                           "{} * v{} + v{}, one loop over consecutive elements",
                                           k.loops[inner].var, last.var, last.extent->ival, k.loops[inner].var,
                                           last.var));
            }
        }
        // The vector decision looks at the kernel as it is printed.
        const Kernel printed = k.cpu().fused_channels > 0 ? fused_channel_kernel(prog, k) : k;
        Loop& l = k.loops[inner];
        const bool contiguous = stores_contiguously(prog, printed, l.var);
        // A sum printed as a loop (over a run-time or a long number of taps) is a loop per
        // output: the C++ compiler does not vectorize across it, so it is worth explicit
        // vectors even with interleaved stores, and several vectors a step (their chains of
        // taps are independent, so one's latency hides another's).
        bool tap_loop = false;
        visit(k.value, [&](const Expr& e) { tap_loop = tap_loop || (e->op == Op::Sum && ir::tap_loop(e)); });
        const bool heavy = node_count(k.value) > 40 || tap_loop;
        // Strided stores (channels-last pixels with unrolled channels) cost a lane loop;
        // worth it only when the value itself is expensive to compute.
        // Bytes of 3 or 4 unrolled channels stored pixel by pixel: one byte permute and one
        // store per vector of pixels (codegen's store_interleaved) where the target has it.
        bool pixels = false;
        if (target.byte_permute && !contiguous && printed.loops.back().kind == LoopKind::Unrolled &&
            type_bytes(prog.buffer(k.output).type) == 1) {
            const Loop& c = printed.loops.back();
            const Buffer& out = prog.buffer(k.output);
            std::vector<Expr> idx;
            for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
            const auto s = linear_stride(simplify(offset_expr(out, idx)), l.var);
            pixels = is_const(c.extent) && (c.extent->ival == 3 || c.extent->ival == 4) && s && *s == c.extent->ival;
        }
        std::vector<LoadAccess> loads = analyze_loads(prog, printed, l.var);
        const bool narrow = gathers_narrow(prog, loads, target);
        if ((contiguous || heavy || pixels) && !narrow && target.explicit_vectors) {
            l.kind = LoopKind::Vector;
            // The lane count: a kernel whose vectors hold bytes only (it moves bytes:
            // flips, crops, copies) fills a register with them; anything wider computes in
            // 4-byte lanes (one register of int32 or float), the narrower values beside it
            // in as many lanes. Pixels stored interleaved keep 4-byte lanes: store_interleaved
            // permutes 16 pixels of 3 or 4 bytes within one register.
            // Loop partitioning: the parts' values decide the lanes (a part that only copies
            // bytes has no 4-byte index compares left).
            std::optional<Partition> part;
            if (!tap_loop && contiguous && k.cpu().fused_channels == 0 && printed.loops.back().var == l.var &&
                affine_along(prog, printed, l.var))
                part = find_partition(printed.value, l.var);
            std::size_t widest = 0;
            if (part) {
                Kernel piece = printed;
                for (int i = 0; i < 3; ++i) {
                    piece.value = partitioned_value(printed.value, l.var, i);
                    widest = std::max(widest, widest_vector_bytes(prog, piece, l.var, target));
                }
                k.cpu().partition_lo = part->lo;
                k.cpu().partition_hi = part->hi;
                k.decisions.push_back(fmt::format("v{0} in three parts, before {1}, inside, from {2} on: the tests of "
                                                  "v{0} are constants in each",
                                                  l.var, to_string(part->lo), to_string(part->hi)));
            } else {
                widest = widest_vector_bytes(prog, printed, l.var, target);
            }
            const bool bytes = widest == 1 && !pixels;
            k.cpu().vector_width = bytes ? target.vector_bytes : target.kernel_lanes();
            k.decisions.push_back(fmt::format("vector axis v{} ({} lanes{}): {}", l.var, k.cpu().vector_width,
                                              bytes    ? ", its vectors hold bytes only"
                                              : pixels ? ", 16 pixels a permute"
                                                       : fmt::format(", {}-byte elements", widest),
                                              contiguous ? "stride 1 in the output"
                                              : tap_loop ? "interleaved, a tap loop per output"
                                              : pixels   ? "interleaved pixels of bytes, stored whole"
                                                         : "interleaved, expensive value"));
            k.cpu().loads = std::move(loads);
            k.decisions.push_back(fmt::format("loads along v{}: {}", l.var, describe_loads(k.cpu().loads)));
            if (tap_loop && printed.loops.back().var == l.var && affine_along(prog, printed, l.var)) {
                k.cpu().vector_unroll = kVectorUnroll;
                k.decisions.push_back(fmt::format("{} vectors a step along v{}: their tap loops run as one, each tap's "
                                                  "weight and address loaded once",
                                                  k.cpu().vector_unroll, l.var));
            }
        } else {
            k.cpu().vector_width = 1;
            k.decisions.push_back(fmt::format("no explicit vectors along v{}: {}; left to the C++ compiler", l.var,
                                              !target.explicit_vectors ? "a scalar program (the quick tier)"
                                              : narrow ? "it gathers 1- or 2-byte elements lane by lane"
                                                       : "cheap value, interleaved stores"));
        }
        note_tap_pairs(prog, k, target);
        note_tap_lanes(prog, k, target);
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
