#include "schedule/rfactor.h"

#include "ir/simplify.h"
#include "schedule/block_reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace toroid::schedule {

using namespace ir;

namespace {

// Every read of the term that depends on r moves along a row with it: r only in its last
// index, with coefficient 1 (the buffers are dense along W, a pixel apart in channels-last
// memory).
bool reads_rows(const Expr& term, int r) {
    bool ok = true, any = false;
    visit(term, [&](const Expr& e) {
        if (!ok || e->op != Op::Load || !depends_on_var(e, r)) return;
        any = true;
        for (std::size_t d = 0; d + 1 < e->args.size(); ++d)
            if (depends_on_var(e->args[d], r)) ok = false;
        if (e->args.size() != 4 || linear_stride(e->args[3], r) != std::optional<std::int64_t>(1)) ok = false;
    });
    return ok && any;
}

// The nest of `chain` with the innermost reduction replaced: variable r becomes `at`, over
// `extent` values of the new variable `k`.
Expr rebuild(const ReductionChain& chain, int k, const Expr& extent, const Expr& at) {
    const int r = chain.sums.back()->var;
    Expr body = substitute(chain.term, {{r, at}});
    body = reduce(reduce_kind(chain.sums.back()), k, extent, body, chain.sums.back()->type);
    for (std::size_t i = chain.sums.size() - 1; i-- > 0;) {
        const Expr& s = chain.sums[i];
        body = reduce(reduce_kind(s), s->var, sum_extent(s), body, s->type);
    }
    return body;
}

int max_reduction_var(const Expr& e) {
    int m = kFirstReductionVar - 1;
    visit(e, [&](const Expr& x) {
        if ((x->op == Op::Var || x->op == Op::Sum) && x->var >= kFirstReductionVar && x->var < kFirstParamVar)
            m = std::max(m, x->var);
    });
    return m;
}

}  // namespace

bool regroupable(const Expr& sum) {
    const Reduce kind = reduce_kind(sum);
    if (kind == Reduce::Min || kind == Reduce::Max) return true;
    return kind == Reduce::Add && !is_float(sum->type);
}

std::optional<ReductionChain> reduction_chain(const Expr& value, const std::function<bool(const Expr&)>& exact) {
    ReductionChain c;
    Expr e = value;
    while (e->op == Op::Sum) {
        if (!exact(e) || (!c.sums.empty() && (reduce_kind(e) != reduce_kind(c.sums[0]) || e->type != c.sums[0]->type)))
            return std::nullopt;
        c.sums.push_back(e);
        e = e->args[0];
    }
    if (c.sums.empty()) return std::nullopt;
    bool inner = false;
    visit(e, [&](const Expr& x) { inner = inner || x->op == Op::Sum; });
    if (inner) return std::nullopt;
    c.term = e;
    return c;
}

void rfactor_row_reductions(Program& prog, const Target& target) {
    const Buffer& input = prog.buffer(prog.input);
    // Planar or channels-last input (W's stride a constant; the program's buffers follow it).
    if (input.strides.size() != 4 || input.strides[3]->op != ir::Op::Const) return;
    const std::int64_t lanes = std::max(1, target.vector_bytes / 4);
    if (lanes < 2) return;
    // Each kernel's reduction chain, worked out while every kernel is in place (whether a
    // term is integer-valued may depend on the kernels that compute what it reads).
    // Also a double sum of integer values (contrast's uint8 grey rows): exact in any
    // grouping, as on CUDA (schedule/block_reduce.h).
    const auto exact = [&](const Expr& s) {
        return regroupable(s) || (reduce_kind(s) == Reduce::Add && s->type == Type::F64 && integer_valued(prog, s->args[0]));
    };
    std::vector<std::optional<ReductionChain>> chains(prog.kernels.size());
    std::vector<Expr> values(prog.kernels.size());
    for (std::size_t i = 0; i < prog.kernels.size(); ++i) {
        const Kernel& k = prog.kernels[i];
        if (k.histogram) continue;
        const Buffer& out = prog.buffer(k.output);
        // The output's last dim holds one element: the lanes take its place in P.
        if (out.shape.size() != 4 || !is_const(out.shape[3], 1)) continue;
        values[i] = substitute(k.value, {{3, iconst(0)}});
        chains[i] = reduction_chain(values[i], exact);
    }
    std::vector<Kernel> kernels;
    kernels.reserve(prog.kernels.size());
    for (std::size_t i = 0; i < prog.kernels.size(); ++i) {
        Kernel& k = prog.kernels[i];
        const auto& chain = chains[i];
        const int r = chain ? chain->sums.back()->var : -1;
        if (!chain || !reads_rows(chain->term, r)) {
            kernels.push_back(std::move(k));
            continue;
        }
        const Expr& value = values[i];
        const Buffer& out = prog.buffer(k.output);
        const Expr n = sum_extent(chain->sums.back());
        const Expr L = iconst(lanes);
        const Expr whole = floordiv(n, L);  // steps of L along the row
        const int kv = max_reduction_var(value) + 1, jv = kv + 1, lv = kv + 2;
        const Reduce kind = reduce_kind(chain->sums.back());
        const Type acc = chain->sums.back()->type;

        const std::string name = out.name + ".lanes";
        Kernel lanes_kernel = new_temp_kernel(
            prog, name, acc, {out.shape[0], out.shape[1], out.shape[2], L},
            rebuild(*chain, kv, whole, add(mul(L, var(kv)), var(3))),
            fmt::format("computes {}: {}'s reduction along rows, {} consecutive elements a step in lanes", name, out.name,
                        lanes));

        // The lanes combined, then the row ends (n % L elements), as one reduction of two.
        const Expr lanes_combined =
            reduce(kind, lv, L, load(lanes_kernel.output, acc, {var(0), var(1), var(2), var(lv)}), acc);
        const Expr ends = rebuild(*chain, kv, mod(n, L), add(mul(whole, L), var(kv)));
        k.value = reduce(kind, jv, iconst(2), select(eq(var(jv), iconst(0)), lanes_combined, ends), acc);
        k.decisions.push_back(fmt::format("rfactor: combines the {} lanes of {} and the row ends", lanes, name));
        kernels.push_back(std::move(lanes_kernel));
        kernels.push_back(std::move(k));
    }
    number_kernels(kernels);
    prog.kernels = std::move(kernels);
}

}  // namespace toroid::schedule
