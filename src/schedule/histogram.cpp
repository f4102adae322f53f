#include "schedule/histogram.h"

#include "core/error.h"

#include <fmt/format.h>

namespace toroid::schedule {

using namespace ir;

namespace {

// Whether `e` is var(d), perhaps cast to an integer type.
bool is_bin_var(const Expr& e, int d) {
    if (e->op == Op::Var) return e->var == d;
    return e->op == Op::Cast && is_int(e->type) && e->args[0]->op == Op::Var && e->args[0]->var == d;
}

// The comparison a term counts: Select(c, 1, 0) or Cast(int, c).
std::optional<Expr> counted(const Expr& term) {
    if (term->op == Op::Select && is_const(term->args[1], 1) && is_const(term->args[2], 0)) return term->args[0];
    if (term->op == Op::Cast && is_int(term->type) && term->args[0]->type == Type::Bool) return term->args[0];
    return std::nullopt;
}

}  // namespace

std::optional<HistogramForm> histogram_form(const Program& prog, const Kernel& k) {
    const Expr& v = k.value;
    if (v->op != Op::Sum || reduce_kind(v) != Reduce::Add || !is_int(v->type)) return std::nullopt;
    HistogramForm f;
    f.sums.push_back(v);
    Expr term = v->args[0];
    if (term->op == Op::Sum && reduce_kind(term) == Reduce::Add && term->type == v->type) {
        f.sums.push_back(term);
        term = term->args[0];
    }
    const auto c = counted(term);
    if (!c || (*c)->op != Op::Eq) return std::nullopt;
    const Expr& a = (*c)->args[0];
    const Expr& b = (*c)->args[1];
    const Buffer& out = prog.buffer(k.output);
    for (std::size_t d = 0; d < out.logical.size(); ++d) {
        const int dv = static_cast<int>(d);
        Expr key;
        if (is_bin_var(b, dv)) key = a;
        else if (is_bin_var(a, dv)) key = b;
        else continue;
        if (!is_int(key->type) || depends_on_var(key, dv) || !is_const(out.logical[d])) return std::nullopt;
        if (out.logical[d]->ival < 1 || out.logical[d]->ival > kMaxHistogramBins) return std::nullopt;
        for (const Expr& s : f.sums)
            if (depends_on_var(sum_extent(s), dv)) return std::nullopt;
        f.dim = dv;
        f.bins = out.logical[d]->ival;
        f.key = key->type == Type::I64 ? key : cast(Type::I64, key);
        return f;
    }
    return std::nullopt;
}

HistogramLoops histogram_loops(const Kernel& k, const HistogramForm& f) {
    HistogramLoops out;
    for (const Loop& l : k.loops) {
        if (l.var == f.dim) out.bins = &l;
        else out.planes.push_back(&l);
    }
    if (out.bins == nullptr) fail("internal: histogram kernel {} has no loop over its bins", k.name);
    return out;
}

void choose_histograms(Program& prog, const Target& /*target*/) {
    for (Kernel& k : prog.kernels) {
        if (!k.store_index.empty()) continue;
        const auto f = histogram_form(prog, k);
        if (!f) continue;
        k.histogram = true;
        k.decisions.push_back(fmt::format("a histogram of {} bins along v{}: one pass over r{}{} adding one to each "
                                          "term's bin, instead of a pass per bin",
                                          f->bins, f->dim, f->sums.front()->var,
                                          f->sums.size() > 1 ? fmt::format(" x r{}", f->sums.back()->var) : std::string()));
    }
}

}  // namespace toroid::schedule
