// Which tap sums the C++ printer multiplies and adds two taps at a time (tap_pairs.h).
#include "schedule/tap_pairs.h"

#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

namespace toroid::schedule {

using namespace ir;

namespace {

bool fits_i16(Type t) { return t == Type::U8 || t == Type::I16; }

}  // namespace

std::optional<TapPairFactors> tap_pair_factors(const Expr& sum) {
    if (sum->op != Op::Sum || sum->type != Type::I32) return std::nullopt;
    // Small constant sums are unrolled term by term, not printed as a tap loop.
    if (!tap_loop(sum)) return std::nullopt;
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
    if (!target.tap_pairs || k.cpu().vector_width <= 1) return;
    const Kernel printed = k.cpu().fused_channels > 0 ? fused_channel_kernel(prog, k) : k;
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
    k.cpu().tap_pairs = true;
    k.decisions.push_back(fmt::format(
        "tap pairs: {}: two taps per 16-bit multiply-add into int32 ({}) from kTapPairsMin taps at run time, an "
        "odd last tap alone",
        fmt::join(sums, ", "),
        target.vector_bytes == 64 ? (target.byte_permute ? "vpmaddwd"
                                                         : "vpmaddwd with AVX-512BW, else plain multiply-adds")
                                  : "vpmaddwd with AVX2, else plain multiply-adds"));
}

std::optional<TapLanes> tap_lanes_form(const Program& prog, const Kernel& k) {
    if (k.cpu().vector_width <= 1 || k.cpu().fused_channels > 0 || k.cpu().vector_unroll > 1 || !k.store_index.empty() ||
        k.loops.size() < 2)
        return std::nullopt;
    const Loop& c = k.loops.back();
    const Loop& x = k.loops[k.loops.size() - 2];
    if (c.kind != LoopKind::Unrolled || x.kind != LoopKind::Vector || !is_const(c.begin, 0) || !is_const(c.extent))
        return std::nullopt;
    const int channels = static_cast<int>(c.extent->ival);
    if (channels != 3 && channels != 4) return std::nullopt;
    const Buffer& out = prog.buffer(k.output);
    if (out.type != Type::U8) return std::nullopt;
    std::vector<Expr> idx;
    for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
    const Expr out_off = simplify(offset_expr(out, idx));
    if (linear_stride(out_off, c.var) != 1 || linear_stride(out_off, x.var) != channels) return std::nullopt;

    // One tap sum; outside it nothing but parameters and constants.
    std::vector<Expr> sums;
    bool other = false;
    std::unordered_set<const Node*> seen;  // each distinct node once (a DAG)
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
        if (other || !seen.insert(e.get()).second) return;
        if (e->op == Op::Sum) {
            if (std::none_of(sums.begin(), sums.end(), [&](const Expr& s) { return s.get() == e.get(); }))
                sums.push_back(e);
            return;
        }
        if (e->op == Op::Load || (e->op == Op::Var && !is_param_var(e->var))) other = true;
        for (const Expr& a : e->args) walk(a);
    };
    walk(k.value);
    if (other || sums.size() != 1) return std::nullopt;
    const Expr& s = sums.front();
    const auto f = tap_pair_factors(s);
    if (!f) return std::nullopt;
    const int r = s->var;

    TapLanes t;
    t.sum = s;
    t.channels = channels;
    t.x_var = x.var;
    t.c_var = c.var;
    for (const auto& [p, w] : {std::pair{f->a, f->b}, std::pair{f->b, f->a}}) {
        if (p->op != Op::Load || prog.buffer(p->buffer).type != Type::U8) continue;
        const Expr off = simplify(offset_expr(prog.buffer(p->buffer), p->args));
        if (linear_stride(off, c.var) != 1 || linear_stride(off, r) != channels) continue;
        bool rows = depends_on_var(w, c.var);
        visit(w, [&](const Expr& e) {
            if (e->op == Op::Sum || (e->op == Op::Var && !is_param_var(e->var) && e->var != r && e->var != x.var))
                rows = true;
        });
        if (rows) continue;
        Expr px = iconst(0), row = iconst(0);
        bool mixed = false;
        for (const Expr& term : signed_sum_terms(simplify(substitute(off, {{r, iconst(0)}, {c.var, iconst(0)}})))) {
            bool on_row = false;
            visit(term, [&](const Expr& e) {
                if (e->op == Op::Var && !is_param_var(e->var) && e->var != x.var) on_row = true;
            });
            const bool on_x = depends_on_var(term, x.var);
            mixed = mixed || (on_x && on_row);
            (on_x ? px : row) = add(on_x ? px : row, term);
        }
        if (mixed) continue;
        t.pixel = p;
        t.weight = w;
        t.pixel_x = simplify(px);
        t.pixel_row = simplify(row);
        return t;
    }
    return std::nullopt;
}

std::optional<Expr> tap_lanes_row_step(const TapLanes& t, int row_var) {
    // Each term of the offset is free of the row, the row itself, or a product of one factor
    // in the row by factors free of it (the simplifier keeps `v * stride` as a product).
    std::function<std::optional<Expr>(const Expr&)> step = [&](const Expr& e) -> std::optional<Expr> {
        if (!depends_on_var(e, row_var)) return iconst(0);
        if (e->op == Op::Var) return iconst(1);
        if (e->op == Op::Neg) {
            const auto s = step(e->args[0]);
            return s ? std::optional<Expr>(neg(*s)) : std::nullopt;
        }
        if (e->op == Op::Mul && e->type == Type::I64) {
            const bool a = depends_on_var(e->args[0], row_var), b = depends_on_var(e->args[1], row_var);
            if (a && b) return std::nullopt;
            const auto s = step(e->args[a ? 0 : 1]);
            return s ? std::optional<Expr>(mul(*s, e->args[a ? 1 : 0])) : std::nullopt;
        }
        return std::nullopt;
    };
    Expr total = iconst(0);
    for (const Expr& term : signed_sum_terms(t.pixel_row)) {
        const auto s = step(term);
        if (!s) return std::nullopt;
        total = add(total, *s);
    }
    return simplify(total);
}

int tap_lanes_row_var(const Kernel& k, const TapLanes& t) {
    for (std::size_t i = 1; i < k.loops.size(); ++i)
        if (k.loops[i].var == t.x_var) return k.loops[i - 1].var;
    return -1;
}

void note_tap_lanes(const Program& prog, Kernel& k, const Target& target) {
    // A byte permute of 64-byte registers (AVX-512 VBMI), or AVX2's in-lane byte shuffle
    // of 32-byte ones (byte_windows at 32 bytes: the preamble's AVX2 code).
    const bool wide = target.byte_permute && target.vector_bytes == 64;
    const bool avx2 = target.byte_windows && target.vector_bytes == 32;
    if (!target.explicit_vectors || !(wide || avx2) || target.tap_lanes_span < 0) return;
    const auto t = tap_lanes_form(prog, k);
    if (!t) return;
    k.cpu().tap_lanes = t->channels;
    k.cpu().tap_lanes_pixels = target.vector_bytes / 16;
    k.cpu().tap_lanes_span = target.tap_lanes_span;
    k.cpu().tap_lanes_past_window = target.tap_lanes_past_window && wide;
    const int lanes = target.vector_bytes / 4, taps = 2 * k.cpu().tap_lanes_pixels;
    const std::string where = k.cpu().tap_lanes_past_window
                                  ? fmt::format("one tap of {} outputs spans more than one window", lanes)
                                  : fmt::format("the taps of {} outputs span more than {} bytes", lanes, target.tap_lanes_span);
    k.decisions.push_back(fmt::format(
        "taps in lanes: where {} at run time (or there are fewer than {}), each output pixel's {} channels x {} "
        "taps of r{} are one register of 16-bit pairs (a {}, a byte {}, a multiply-add per {} taps), {} pixels "
        "summed across lanes at once, the weights laid out per pixel once per call; elsewhere the vector loop over "
        "v{}",
        where, lanes, t->channels, taps, t->sum->var, wide ? "masked load" : "load",
        wide ? "permute" : "shuffle", taps,
        k.cpu().tap_lanes_pixels, t->x_var));
    if (wide && target.tap_lanes_whole_loads) {
        k.cpu().tap_lanes_whole_loads = true;
        k.decisions.push_back("taps in lanes: each register's 32 pixel bytes read whole where they stay inside the "
                              "page (the bytes past the taps meet zero weights)");
    }
    // Several rows a step: each pixel's offset and weights, loaded once, serve them all
    // (their byte loads differ by the row step alone). 4 rows of P pixels keep 4P
    // accumulators: 16 of the 32 registers of AVX-512, 8 of AVX2's 16.
    const int row = tap_lanes_row_var(k, *t);
    if (target.tap_lanes_rows > 1 && row >= 0 && tap_lanes_row_step(*t, row)) {
        k.cpu().tap_lanes_rows = target.tap_lanes_rows;
        k.decisions.push_back(fmt::format("taps in lanes, {} rows of v{} a step: each pixel's offset and weights "
                                          "loaded once for them",
                                          target.tap_lanes_rows, row));
    }
}

}  // namespace toroid::schedule
