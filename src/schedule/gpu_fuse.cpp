// GPU fusion of a producer with its one consumer through shared memory: the pass (see
// gpu_fuse.h; its bind-time half is fused_launch.cpp).
#include "schedule/gpu_fuse.h"
#include "schedule/fuse_roles.h"

#include "core/error.h"
#include "ir/eval.h"
#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string_view>

namespace toroid::schedule {

using namespace ir;
using DimKind = GpuFusion::DimKind;
using namespace fuse_detail;

namespace {

std::string_view dim_kind_name(DimKind k) {
    switch (k) {
        case DimKind::TiledX: return "per x tile";
        case DimKind::TiledY: return "per y tile";
        case DimKind::PerBlock: return "per block";
        case DimKind::Whole: return "whole";
    }
    return "?";
}

// Whether kernel `ci` may take `temp` (written by one earlier kernel, read by `ci` only)
// into its blocks; the fusion, or why not.
std::optional<GpuFusion> try_fuse(const Program& prog, std::size_t ci, int temp, std::string& why) {
    const Kernel& k = prog.kernels[ci];
    const Buffer& t = prog.buffer(temp);
    int producer = -1;
    for (std::size_t i = 0; i < prog.kernels.size(); ++i) {
        const Kernel& o = prog.kernels[i];
        if (o.output == temp) {
            if (producer >= 0 || i >= ci) {
                why = "written by more than one kernel, or after its reader";
                return std::nullopt;
            }
            producer = static_cast<int>(i);
        }
        if (i != ci && !loads_of(o.value, temp).empty()) {
            why = fmt::format("also read by kernel {}", i);
            return std::nullopt;
        }
    }
    if (producer < 0) {
        why = "no kernel writes it";
        return std::nullopt;
    }
    const std::size_t rank = t.shape.size();
    if (rank > static_cast<std::size_t>(kFusedMaxDims)) {
        why = "too many dims";
        return std::nullopt;
    }
    const Kernel& p = prog.kernels[static_cast<std::size_t>(producer)];
    if (p.gpu().block_sum != nullptr || k.gpu().block_sum != nullptr || p.histogram || k.histogram) {
        why = "a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram)";
        return std::nullopt;
    }
    if (!p.store_index.empty()) {
        why = "the producer stores away from its loop variables";
        return std::nullopt;
    }
    const LoopRoles kr = roles_of(k), pr = roles_of(p);
    if (kr.x < 0 || pr.x < 0) {
        why = "a kernel has no grid x loop";
        return std::nullopt;
    }
    GpuFusion f;
    f.producer = producer;
    f.consumer = static_cast<int>(ci);
    f.temp = temp;
    const auto idx = index_exprs(k, temp, rank);
    for (std::size_t d = 0; d < rank; ++d) {
        std::set<int> loop, reduction;
        for (const Expr& e : idx[d]) vars_of(e, loop, reduction);
        if (loop.size() > 1 || reduction.size() > 1) {
            why = fmt::format("dim {} is read at indices of several variables", d);
            return std::nullopt;
        }
        const int v = loop.empty() ? -1 : *loop.begin();
        DimKind kind;
        if (v == kr.x || (v < 0 && !reduction.empty())) kind = DimKind::TiledX;
        else if (v == kr.y) kind = DimKind::TiledY;
        else if (v < 0 || kr.z.count(v)) kind = DimKind::PerBlock;
        else if (kr.unrolled.count(v)) kind = DimKind::Whole;
        else {
            why = fmt::format("dim {} is read along a loop the grid does not map", d);
            return std::nullopt;
        }
        if ((kind == DimKind::PerBlock || kind == DimKind::Whole) && (!reduction.empty() || idx[d].size() > 1)) {
            why = fmt::format("dim {} is read at several indices per block", d);
            return std::nullopt;
        }
        if (kind == DimKind::Whole && (!is_const(t.shape[d]) || !is_const(t.origin[d]))) {
            why = fmt::format("dim {} has a run-time extent", d);
            return std::nullopt;
        }
        f.dims.push_back(kind);
    }
    // A reduction read at one element per block (an image's mean, read by every pixel of
    // that image): each block would sum the whole image again.
    bool sums = false;
    visit(p.value, [&](const Expr& e) { sums = sums || e->op == Op::Sum; });
    if (sums && std::none_of(f.dims.begin(), f.dims.end(),
                             [](DimKind d) { return d == DimKind::TiledX || d == DimKind::TiledY; })) {
        why = "a sum read at one element per block: every block would compute it again";
        return std::nullopt;
    }
    // The producer's loops: its grid x and y loops run over the tile's region (any kind of
    // dim), its z loops are one index per block, its unrolled loops the whole extent.
    for (const Loop& l : p.loops) {
        const DimKind kind = f.dims[static_cast<std::size_t>(l.var)];
        bool ok = true;
        switch (l.kind) {
            case LoopKind::GridX:
            case LoopKind::GridY: ok = kind != DimKind::Whole; break;
            case LoopKind::GridZ: ok = kind == DimKind::PerBlock; break;
            case LoopKind::Unrolled:
                ok = kind == DimKind::Whole && is_const(l.begin) && is_const(l.extent) &&
                     structurally_equal(l.begin, t.origin[static_cast<std::size_t>(l.var)]) &&
                     structurally_equal(l.extent, t.shape[static_cast<std::size_t>(l.var)]);
                break;
            default: ok = false;
        }
        if (!ok) {
            why = fmt::format("the producer's loop v{} does not match how the consumer reads it", l.var);
            return std::nullopt;
        }
    }
    return f;
}


}  // namespace

void fuse_gpu_pairs(Program& prog, const Target& target) {
    (void)target;
    std::vector<bool> taken(prog.kernels.size(), false);
    for (std::size_t ci = 0; ci < prog.kernels.size(); ++ci) {
        if (taken[ci]) continue;
        std::set<int> temps;
        visit(prog.kernels[ci].value, [&](const Expr& x) {
            if (x->op == Op::Load && prog.buffer(x->buffer).role == BufferRole::Temp) temps.insert(x->buffer);
        });
        for (const int t : temps) {
            std::string why;
            const auto f = try_fuse(prog, ci, t, why);
            Kernel& k = prog.kernels[ci];
            if (!f) {
                k.decisions.push_back(fmt::format("fuse t{}: no ({})", t, why));
                continue;
            }
            const auto pi = static_cast<std::size_t>(f->producer);
            if (taken[pi]) {
                k.decisions.push_back(fmt::format("fuse t{}: no (its producer is fused with another kernel)", t));
                continue;
            }
            std::vector<std::string> dims;
            for (std::size_t d = 0; d < f->dims.size(); ++d)
                dims.push_back(fmt::format("dim {} {}", d, dim_kind_name(f->dims[d])));
            k.decisions.push_back(fmt::format(
                "fuse t{}: kernel {} computes the part of it each tile reads in shared memory ({}; {}x{} threads "
                "a block, {} consecutive outputs along x per thread); the two kernels stay for launches whose tile "
                "does not fit",
                t, pi, fmt::join(dims, ", "), f->block_x, f->block_y, f->outputs_x));
            prog.kernels[pi].decisions.push_back(
                fmt::format("fused into kernel {}: computed in its blocks' shared memory where the tile fits", ci));
            taken[pi] = taken[ci] = true;
            prog.gpu_fusions.push_back(*f);
            break;
        }
    }
}

}  // namespace toroid::schedule
