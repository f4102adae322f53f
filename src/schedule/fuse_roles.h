// What GPU fusion's pass (gpu_fuse.cpp) and its launch planner (fused_launch.cpp) both ask
// of a consumer kernel: its loops' roles and how it indexes the producer's Temp buffer.
// Internal to schedule/.
#pragma once

#include "ir/loop.h"

#include <map>
#include <set>
#include <vector>

namespace toroid::schedule::fuse_detail {

using namespace ir;

inline bool is_loop_var(int id) { return id >= 0 && id < kFirstReductionVar; }
inline bool is_reduction_var(int id) { return id >= kFirstReductionVar && !is_param_var(id); }

// The distinct Load nodes of `buffer` in e.
inline std::vector<Expr> loads_of(const Expr& e, int buffer) {
    std::vector<Expr> out;
    visit(e, [&](const Expr& x) {
        if (x->op == Op::Load && x->buffer == buffer) out.push_back(x);
    });
    return out;
}

inline void vars_of(const Expr& e, std::set<int>& loop, std::set<int>& reduction) {
    visit(e, [&](const Expr& x) {
        if (x->op != Op::Var) return;
        if (is_loop_var(x->var)) loop.insert(x->var);
        else if (is_reduction_var(x->var)) reduction.insert(x->var);
    });
}

// The index expressions of every load of `temp` in `k`, per dim, structurally distinct.
inline std::vector<std::vector<Expr>> index_exprs(const Kernel& k, int temp, std::size_t rank) {
    std::vector<std::vector<Expr>> out(rank);
    for (const Expr& l : loads_of(k.value, temp)) {
        for (std::size_t d = 0; d < rank && d < l->args.size(); ++d) {
            auto& v = out[d];
            if (std::none_of(v.begin(), v.end(), [&](const Expr& e) { return structurally_equal(e, l->args[d]); }))
                v.push_back(l->args[d]);
        }
    }
    return out;
}

struct LoopRoles {
    int x = -1, y = -1;
    std::set<int> z, unrolled;
    std::map<int, const Loop*> by_var;
};

inline LoopRoles roles_of(const Kernel& k) {
    LoopRoles r;
    for (const Loop& l : k.loops) {
        r.by_var[l.var] = &l;
        if (l.kind == LoopKind::GridX) r.x = l.var;
        else if (l.kind == LoopKind::GridY) r.y = l.var;
        else if (l.kind == LoopKind::GridZ) r.z.insert(l.var);
        else if (l.kind == LoopKind::Unrolled) r.unrolled.insert(l.var);
    }
    return r;
}

}  // namespace toroid::schedule::fuse_detail
