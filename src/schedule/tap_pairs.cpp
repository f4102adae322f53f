// Which tap sums the C++ printer multiplies and adds two taps at a time (tap_pairs.h).
#include "schedule/tap_pairs.h"

#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace toroid::schedule {

using namespace ir;

namespace {

bool fits_i16(Type t) { return t == Type::U8 || t == Type::I16; }

}  // namespace

std::optional<TapPairFactors> tap_pair_factors(const Expr& sum) {
    if (sum->op != Op::Sum || sum->type != Type::I32) return std::nullopt;
    // Small constant sums are unrolled term by term, not printed as a tap loop.
    if (const auto n = const_extent(sum); n && *n <= 8) return std::nullopt;
    const Expr& term = sum->args[0];
    if (term->op != Op::Mul || term->type != Type::I32) return std::nullopt;
    const Expr& x = term->args[0];
    const Expr& y = term->args[1];
    for (const Expr& f : {x, y})
        if (f->op != Op::Cast || f->type != Type::I32 || !fits_i16(f->args[0]->type)) return std::nullopt;
    return TapPairFactors{x->args[0], y->args[0]};
}

void note_tap_pairs(const Program& prog, Kernel& k, const Target& target) {
    (void)prog;
    if (!target.tap_pairs || k.vector_width <= 1) return;
    const Kernel printed = k.fused_channels > 0 ? fused_channel_kernel(prog, k) : k;
    int v = -1;
    for (const Loop& l : printed.loops)
        if (l.kind == LoopKind::Vector) v = l.var;
    if (v < 0) return;
    std::vector<std::string> sums;
    visit(printed.value, [&](const Expr& e) {
        const auto f = tap_pair_factors(e);
        if (!f || !depends_on_var(e, v)) return;
        const std::string s = fmt::format("r{} ({} x {})", e->var, type_name(f->a->type), type_name(f->b->type));
        if (std::find(sums.begin(), sums.end(), s) == sums.end()) sums.push_back(s);
    });
    if (sums.empty()) return;
    k.tap_pairs = true;
    k.decisions.push_back(fmt::format(
        "tap pairs: {}: two taps per 16-bit multiply-add into int32 ({}) from kTapPairsMin taps at run time, an "
        "odd last tap alone",
        fmt::join(sums, ", "),
        target.vector_bytes == 64 ? (target.byte_permute ? "vpmaddwd"
                                                         : "vpmaddwd with AVX-512BW, else plain multiply-adds")
                                  : "vpmaddwd with AVX2, else plain multiply-adds"));
}

}  // namespace toroid::schedule
