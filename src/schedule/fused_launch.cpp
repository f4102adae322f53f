// GPU fusion's bind-time half (gpu_fuse.h, plan_fused_launch): one instance's tiles, the
// ranges of the producer's Temp each tile reads, and the shared memory a block needs.
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

// An element of a bound table (dense, C order), as a Scalar of its type.
Scalar table_element(const Program& p, const Binding& b, int buffer, const std::vector<std::int64_t>& index) {
    const auto id = static_cast<std::size_t>(buffer);
    const Buffer& buf = p.buffer(buffer);
    const void* data = id < b.tables.size() ? b.tables[id] : nullptr;
    if (buf.role != BufferRole::Constant || data == nullptr)
        fail("internal: a fused tile's index reads buffer t{}, which is not a table", buffer);
    const auto& shape = b.shapes[id];
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (index[d] < 0 || index[d] >= shape[d]) fail("internal: table t{} read out of its bounds", buffer);
        off = off * shape[d] + index[d];
    }
    const auto* bytes = static_cast<const unsigned char*>(data) + off * static_cast<std::int64_t>(type_bytes(buf.type));
    switch (buf.type) {
        case Type::I32: {
            std::int32_t v;
            std::memcpy(&v, bytes, sizeof v);
            return Scalar::of_int(v);
        }
        case Type::I16: {
            std::int16_t v;
            std::memcpy(&v, bytes, sizeof v);
            return Scalar::of_int(v);
        }
        case Type::I64: {
            std::int64_t v;
            std::memcpy(&v, bytes, sizeof v);
            return Scalar::of_int(v);
        }
        case Type::U8: return Scalar::of_int(*bytes);
        case Type::F32: {
            float v;
            std::memcpy(&v, bytes, sizeof v);
            return Scalar::of_float(v);
        }
        default: fail("internal: table t{} of an unexpected type", buffer);
    }
}

// An integer expression's values over a run of one loop variable's values (begin, begin +
// 1, ...): each node is worked out once for the whole run instead of the expression being
// interpreted once per value (a large image's plan would otherwise spend milliseconds in
// the interpreter). The arithmetic is ir::eval's: integers wrap to their node's type, and
// ops without a run form here go through ir::apply_op element by element.
class RunEvaluator {
public:
    RunEvaluator(const Program& p, const Binding& b, const VarValues& params, int var, std::int64_t begin,
                 std::int64_t extent)
        : p_(p), b_(b), params_(params), var_(var), begin_(begin), n_(static_cast<std::size_t>(extent)) {}

    // e's value at every value of the variable (one entry when e does not depend on it).
    std::vector<std::int64_t> values(const Expr& e) {
        // Nodes are known by address: only within one expression, which keeps them alive.
        depends_.clear();
        memo_.clear();
        const Values& v = eval(e);
        if (v.uniform) return {v.scalar};
        return v.run;
    }

private:
    struct Values {
        bool uniform = true;
        std::int64_t scalar = 0;
        std::vector<std::int64_t> run;
        std::int64_t at(std::size_t j) const { return uniform ? scalar : run[j]; }
    };

    bool depends(const Expr& e) {
        const auto it = depends_.find(e.get());
        if (it != depends_.end()) return it->second;
        bool d = false;
        if (e->op == Op::Var) d = e->var == var_ || (!is_param_var(e->var) && e->var >= kFirstReductionVar);
        for (const Expr& a : e->args) d = depends(a) || d;
        depends_[e.get()] = d;
        return d;
    }

    Scalar load(int buffer, const std::vector<std::int64_t>& index) const {
        return table_element(p_, b_, buffer, index);
    }

    // Element by element through the interpreter: what has no run form here.
    Values per_element(const Expr& e) {
        Values out;
        out.uniform = false;
        out.run.resize(n_);
        VarValues vars = params_;
        const LoadFn fn = [&](int buffer, const std::vector<std::int64_t>& index) { return load(buffer, index); };
        for (std::size_t j = 0; j < n_; ++j) {
            vars[var_] = begin_ + static_cast<std::int64_t>(j);
            out.run[j] = eval_int(e, vars, fn);
        }
        return out;
    }

    // e's values, kept until the next values() call (map entries do not move).
    const Values& eval(const Expr& e) {
        if (const auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
        Values out;
        if (!depends(e))
            out.scalar = eval_int(e, params_, [&](int buffer, const std::vector<std::int64_t>& index) {
                return load(buffer, index);
            });
        else out = compute(e);
        return memo_.emplace(e.get(), std::move(out)).first->second;
    }

    Values compute(const Expr& e) {
        if (is_float(e->type)) return per_element(e);
        if (e->op == Op::Var) {
            if (e->var != var_) return per_element(e);  // a tap variable: not bound here
            Values out;
            out.uniform = false;
            out.run.resize(n_);
            for (std::size_t j = 0; j < n_; ++j) out.run[j] = begin_ + static_cast<std::int64_t>(j);
            return out;
        }
        if (e->op == Op::Sum) return per_element(e);
        for (const Expr& a : e->args)
            if (is_float(a->type)) return per_element(e);
        std::vector<const Values*> arg_values;
        for (const Expr& a : e->args) arg_values.push_back(&eval(a));
        const auto arg = [&](std::size_t d, std::size_t j) { return arg_values[d]->at(j); };
        Values out;
        out.uniform = false;
        out.run.resize(n_);
        if (e->op == Op::Load) {
            std::vector<std::int64_t> index(arg_values.size());
            for (std::size_t j = 0; j < n_; ++j) {
                for (std::size_t d = 0; d < index.size(); ++d) index[d] = arg(d, j);
                out.run[j] = load(e->buffer, index).i;
            }
            return out;
        }
        const Type t = e->type;
        const auto wrap = [t](std::uint64_t v) {
            return normalize_value(t, Scalar::of_int(static_cast<std::int64_t>(v))).i;
        };
        const auto binary = [&](auto f) {
            for (std::size_t j = 0; j < n_; ++j) out.run[j] = f(arg(0, j), arg(1, j));
        };
        switch (e->op) {
            case Op::Add:
                binary([&](std::int64_t a, std::int64_t c) {
                    return wrap(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(c));
                });
                return out;
            case Op::Sub:
                binary([&](std::int64_t a, std::int64_t c) {
                    return wrap(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(c));
                });
                return out;
            case Op::Mul:
                binary([&](std::int64_t a, std::int64_t c) {
                    return wrap(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(c));
                });
                return out;
            case Op::Min: binary([](std::int64_t a, std::int64_t c) { return c < a ? c : a; }); return out;
            case Op::Max: binary([](std::int64_t a, std::int64_t c) { return a < c ? c : a; }); return out;
            case Op::Cast:
                for (std::size_t j = 0; j < n_; ++j) out.run[j] = wrap(static_cast<std::uint64_t>(arg(0, j)));
                return out;
            default: break;
        }
        // Every other integer op, element by element with the interpreter's own op.
        std::vector<Scalar> a(arg_values.size());
        for (std::size_t j = 0; j < n_; ++j) {
            for (std::size_t d = 0; d < a.size(); ++d) a[d] = Scalar::of_int(arg(d, j));
            const auto r = apply_op(*e, a);
            if (!r) fail("internal: a fused tile's index is undefined ({} of {})", op_name(e->op), a.size());
            out.run[j] = r->i;
        }
        return out;
    }

    const Program& p_;
    const Binding& b_;
    const VarValues& params_;
    int var_;
    std::int64_t begin_;
    std::size_t n_;
    std::map<const Node*, bool> depends_;
    std::map<const Node*, Values> memo_;
};

// Per value of a loop variable (from `begin`, `extent` values): the lowest and highest
// index that dim's loads read, over every tap.
struct PerValue {
    std::vector<std::int64_t> lo, hi;
};

PerValue ranges_per_value(const Program& p, const Binding& b, const std::vector<Expr>& exprs, int loop_var,
                          std::int64_t begin, std::int64_t extent, const std::map<int, Expr>& sum_extents,
                          const VarValues& params) {
    PerValue out;
    const auto n = static_cast<std::size_t>(extent);
    out.lo.assign(n, std::numeric_limits<std::int64_t>::max());
    out.hi.assign(n, std::numeric_limits<std::int64_t>::min());
    const LoadFn load = [&](int buffer, const std::vector<std::int64_t>& index) {
        return table_element(p, b, buffer, index);
    };
    RunEvaluator run(p, b, params, loop_var, begin, extent);
    for (const Expr& e : exprs) {
        std::set<int> loop, reduction;
        vars_of(e, loop, reduction);
        int r = -1;
        std::int64_t taps = 1;
        if (!reduction.empty()) {
            r = *reduction.begin();
            const auto it = sum_extents.find(r);
            if (it == sum_extents.end()) fail("internal: tap variable r{} has no sum", r);
            taps = eval_int(it->second, params);
            if (taps <= 0) continue;  // no tap is ever read
        }
        // Linear in the tap (start[v] + tap): two ends per value instead of every tap, from
        // the tap-0 index of every value at once.
        std::optional<std::int64_t> step;
        if (r >= 0) step = linear_stride(e, r);
        if (r < 0 || step) {
            const Expr base = r < 0 ? e : simplify(substitute(e, {{r, iconst(0)}}));
            const std::vector<std::int64_t> a = run.values(base);
            const std::int64_t span = step ? *step * (taps - 1) : 0;
            const std::int64_t below = std::min<std::int64_t>(0, span), above = std::max<std::int64_t>(0, span);
            for (std::size_t i = 0; i < n; ++i) {
                const std::int64_t v = a.size() == 1 ? a[0] : a[i];
                out.lo[i] = std::min(out.lo[i], v + below);
                out.hi[i] = std::max(out.hi[i], v + above);
            }
            continue;
        }
        // Not linear in the tap: every tap of every value (of one value when the dim is read
        // at the same indices for every value).
        VarValues vars = params;
        for (std::size_t i = 0; i < (loop_var >= 0 ? n : std::min<std::size_t>(n, 1)); ++i) {
            if (loop_var >= 0) vars[loop_var] = begin + static_cast<std::int64_t>(i);
            for (std::int64_t j = 0; j < taps; ++j) {
                vars[r] = j;
                const std::int64_t a = eval_int(e, vars, load);
                out.lo[i] = std::min(out.lo[i], a);
                out.hi[i] = std::max(out.hi[i], a);
            }
        }
        if (loop_var < 0 && n > 1) {
            std::fill(out.lo.begin() + 1, out.lo.end(), out.lo[0]);
            std::fill(out.hi.begin() + 1, out.hi.end(), out.hi[0]);
        }
    }
    return out;
}

// One axis's tilings (sizes 1, 2, 4, ... up to `largest`): per tile, each dim's lowest and
// highest index read over the tile's values; tiles of size 2s are pairs of tiles of size s,
// so every size costs a pass over the previous one's tiles, not over the values.
struct AxisTiling {
    int size = 1;
    std::int64_t tiles = 0;
    std::vector<std::vector<std::int64_t>> lo, hi;  // per dim (of this axis), per tile
};

std::vector<AxisTiling> axis_tilings(const std::vector<std::size_t>& dims, const std::vector<PerValue>& per,
                                     std::int64_t extent, int largest) {
    std::vector<AxisTiling> out;
    AxisTiling t;
    t.size = 1;
    t.tiles = extent;
    for (const std::size_t d : dims) {
        t.lo.push_back(per[d].lo);
        t.hi.push_back(per[d].hi);
    }
    out.push_back(t);
    while (out.back().size < largest) {
        const AxisTiling& prev = out.back();
        AxisTiling next;
        next.size = prev.size * 2;
        next.tiles = (extent + next.size - 1) / next.size;
        const auto tiles = static_cast<std::size_t>(next.tiles), prev_tiles = static_cast<std::size_t>(prev.tiles);
        for (std::size_t k = 0; k < dims.size(); ++k) {
            std::vector<std::int64_t> lo(tiles), hi(tiles);
            for (std::size_t i = 0; i < tiles; ++i) {
                lo[i] = prev.lo[k][2 * i];
                hi[i] = prev.hi[k][2 * i];
                if (2 * i + 1 < prev_tiles) {
                    lo[i] = std::min(lo[i], prev.lo[k][2 * i + 1]);
                    hi[i] = std::max(hi[i], prev.hi[k][2 * i + 1]);
                }
            }
            next.lo.push_back(std::move(lo));
            next.hi.push_back(std::move(hi));
        }
        out.push_back(std::move(next));
    }
    return out;
}

}  // namespace

FusedLaunch plan_fused_launch(const Program& p, const GpuFusion& f, const Binding& b, const FusedLimits& limits) {
    FusedLaunch L;
    L.offset.fill(-1);
    if (!limits.fuse) {
        L.why = "TOROID_CUDA_FUSE=0";
        return L;
    }
    const Kernel& k = p.kernels[static_cast<std::size_t>(f.consumer)];
    const Buffer& t = p.buffer(f.temp);
    const std::size_t rank = t.shape.size();
    VarValues params;
    for (std::size_t i = 0; i < b.params.size(); ++i) params[kFirstParamVar + static_cast<int>(i)] = b.params[i];
    const LoopRoles kr = roles_of(k);
    struct Axis {
        std::int64_t begin = 0, extent = 1;
    };
    Axis ax, ay;
    std::int64_t blocks_z = 1;
    for (const Loop& l : k.loops) {
        const std::int64_t bg = eval_int(l.begin, params), ex = eval_int(l.extent, params);
        if (ex <= 0) {
            L.why = "nothing to compute";
            return L;
        }
        if (l.kind == LoopKind::GridX) ax = {bg, ex};
        else if (l.kind == LoopKind::GridY) ay = {bg, ex};
        else if (l.kind == LoopKind::GridZ) blocks_z *= ex;
    }
    std::map<int, Expr> sum_extents;
    visit(k.value, [&](const Expr& x) {
        if (x->op == Op::Sum) sum_extents[x->var] = sum_extent(x);
    });
    const auto idx = index_exprs(k, f.temp, rank);
    const auto& region = b.shapes[static_cast<std::size_t>(f.temp)];
    // Per tiled dim, the indices read per value of its loop variable, clamped to the stored
    // region (the unfused consumer reads nothing outside it either).
    std::vector<PerValue> per(rank);
    std::vector<std::int64_t> origin(rank, 0);
    std::int64_t whole = 1;
    for (std::size_t d = 0; d < rank; ++d) {
        origin[d] = eval_int(t.origin[d], params);
        if (f.dims[d] == DimKind::Whole) whole *= region[d];
        if (f.dims[d] != DimKind::TiledX && f.dims[d] != DimKind::TiledY) continue;
        const bool x = f.dims[d] == DimKind::TiledX;
        const Axis& a = x ? ax : ay;
        per[d] = ranges_per_value(p, b, idx[d], x ? kr.x : kr.y, a.begin, a.extent, sum_extents, params);
        for (std::size_t i = 0; i < per[d].lo.size(); ++i) {
            per[d].lo[i] = std::max(per[d].lo[i], origin[d]);
            per[d].hi[i] = std::min(per[d].hi[i], origin[d] + region[d] - 1);
        }
    }
    const auto elem = static_cast<std::int64_t>(type_bytes(t.type));
    struct Candidate {
        int tx = 1, ty = 1;
        std::int64_t tiles_x = 0, tiles_y = 0, shared = 0;
        double computed = 0;  // elements of T computed per output
    };
    // Every tiling of each axis at once (sizes 1 to 128 along x, 1 to 32 along y), then per
    // size the tiles' count, their largest and their summed product of the tiled dims' extents.
    std::vector<std::size_t> x_dims, y_dims;
    for (std::size_t d = 0; d < rank; ++d) {
        if (f.dims[d] == DimKind::TiledX) x_dims.push_back(d);
        if (f.dims[d] == DimKind::TiledY) y_dims.push_back(d);
    }
    const std::vector<AxisTiling> x_tilings = axis_tilings(x_dims, per, ax.extent, 128);
    const std::vector<AxisTiling> y_tilings = axis_tilings(y_dims, per, ay.extent, 32);
    const auto count = [](const AxisTiling& t, std::size_t k, std::size_t i) {
        return t.hi[k][i] >= t.lo[k][i] ? t.hi[k][i] - t.lo[k][i] + 1 : 0;
    };
    struct SizeStats {
        std::int64_t tiles = 0, max_product = 0, sum_product = 0;
    };
    const auto stats = [&](const AxisTiling& t, std::size_t dims) {
        SizeStats st;
        st.tiles = t.tiles;
        for (std::size_t i = 0; i < static_cast<std::size_t>(t.tiles); ++i) {
            std::int64_t product = 1;
            for (std::size_t k = 0; k < dims; ++k) product *= count(t, k, i);
            st.max_product = std::max(st.max_product, product);
            st.sum_product += product;
        }
        return st;
    };
    const auto level = [](int size) {
        std::size_t l = 0;
        while ((1 << l) < size) ++l;
        return l;
    };
    std::vector<Candidate> feasible;
    // A warp spreads its lanes along x (codegen/cuda.cpp): tiles narrower than a warp leave
    // lanes idle, so they serve only images that narrow.
    std::vector<std::pair<int, SizeStats>> ys;
    for (int ty : {32, 16, 8, 4, 2, 1})
        if (!(ty > 2 * ay.extent && ty > 1)) ys.emplace_back(ty, stats(y_tilings[level(ty)], y_dims.size()));
    for (int tx : {128, 64, 32, 16, 8, 4, 2, 1}) {
        if ((tx > 2 * ax.extent && tx > 1) || (tx < 32 && ax.extent >= 32)) continue;
        const SizeStats sx = stats(x_tilings[level(tx)], x_dims.size());
        for (const auto& [ty, sy] : ys) {
            Candidate c;
            c.tx = tx;
            c.ty = ty;
            c.tiles_x = sx.tiles;
            c.tiles_y = sy.tiles;
            c.shared = sx.max_product * sy.max_product * whole * elem;
            c.computed = static_cast<double>(sx.sum_product) * static_cast<double>(sy.sum_product) /
                         (static_cast<double>(ax.extent) * static_cast<double>(ay.extent));
            if (c.shared <= limits.shared_limit && sx.tiles <= std::numeric_limits<std::int32_t>::max())
                feasible.push_back(c);
        }
    }
    if (feasible.empty()) {
        L.why = fmt::format("even a one-output tile needs more shared memory than the device's {} bytes",
                            limits.shared_limit);
        return L;
    }
    // The least T computed per output within the budget, with blocks enough to fill the
    // device (else the most blocks); beyond the budget, the least shared memory.
    const std::int64_t min_blocks = 4 * static_cast<std::int64_t>(std::max(limits.multiprocessors, 1));
    auto blocks = [&](const Candidate& c) { return c.tiles_x * c.tiles_y * blocks_z; };
    const Candidate* best = nullptr;
    for (const Candidate& c : feasible) {
        if (c.shared > limits.shared_budget || blocks(c) < min_blocks) continue;
        if (!best || c.computed < best->computed - 1e-9 ||
            (c.computed <= best->computed + 1e-9 && c.tx * c.ty > best->tx * best->ty))
            best = &c;
    }
    if (!best)
        for (const Candidate& c : feasible) {
            if (c.shared > limits.shared_budget) continue;
            if (!best || blocks(c) > blocks(*best) || (blocks(c) == blocks(*best) && c.computed < best->computed))
                best = &c;
        }
    if (!best)
        for (const Candidate& c : feasible)
            if (!best || c.shared < best->shared) best = &c;
    L.tile_x = best->tx;
    L.tile_y = best->ty;
    L.tiles_x = best->tiles_x;
    L.tiles_y = best->tiles_y;
    L.blocks_z = blocks_z;
    L.shared_bytes = best->shared;
    // The chosen tiles' (lo, n) pairs, per tiled dim in dim order; an empty range starts at
    // the region's origin.
    std::vector<std::pair<const AxisTiling*, std::size_t>> where(rank, {nullptr, 0});
    for (std::size_t k = 0; k < x_dims.size(); ++k) where[x_dims[k]] = {&x_tilings[level(L.tile_x)], k};
    for (std::size_t k = 0; k < y_dims.size(); ++k) where[y_dims[k]] = {&y_tilings[level(L.tile_y)], k};
    for (std::size_t d = 0; d < rank; ++d) {
        const auto [tiling, k] = where[d];
        if (!tiling) continue;
        L.offset[d] = static_cast<std::int32_t>(L.ranges.size() / 2);
        for (std::size_t i = 0; i < static_cast<std::size_t>(tiling->tiles); ++i) {
            const std::int64_t n = count(*tiling, k, i);
            const std::int64_t lo = n == 0 ? origin[d] : tiling->lo[k][i];
            for (const std::int64_t v : {lo, n}) {
                if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
                    FusedLaunch none;
                    none.why = "an index of the intermediate does not fit 32 bits";
                    return none;
                }
                L.ranges.push_back(static_cast<std::int32_t>(v));
            }
        }
    }
    L.fused = true;
    L.why = fmt::format("tiles of {}x{} outputs, {} blocks, {} bytes of shared memory each, {:.2f} elements of t{} "
                        "computed per output",
                        L.tile_x, L.tile_y, L.tiles_x * L.tiles_y * L.blocks_z, L.shared_bytes, best->computed, f.temp);
    return L;
}

}  // namespace toroid::schedule
