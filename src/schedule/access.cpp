// The access analysis (access.h): one rule for the scheduler's vector decision and the C++
// printer's lowering of each load.
#include "schedule/access.h"
#include "schedule/tabulate.h"

#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace toroid::schedule {

using namespace ir;

bool lanes_column_only(const Expr& lanes, int v) {
    bool other = false;
    visit(lanes, [&](const Expr& x) { other = other || (x->op == Op::Var && x->var != v && !is_param_var(x->var)); });
    return !other;
}

std::optional<GatherSplit> split_gather(const Expr& off, int v, int tap) {
    if (!depends_on_var(off, v) || linear_stride(off, v)) return std::nullopt;
    GatherSplit s;
    auto split = [&](const std::vector<Expr>& terms) {
        s = GatherSplit{};
        for (const Expr& t : terms) {
            if (depends_on_var(t, v)) {
                if (tap >= 0 && depends_on_var(t, tap)) return false;
                s.lanes = s.lanes ? add(s.lanes, t) : t;
            } else {
                s.uniform = s.uniform ? add(s.uniform, t) : t;
            }
        }
        return true;
    };
    if (!split(sum_terms(off))) {
        // A tap's term under a subtraction (`row(r) - floordiv(x, 3) * 3`: a mirrored
        // channels-last pixel in a vertical pass): split through the subtractions.
        if (!split(signed_sum_terms(off))) return std::nullopt;
    } else if (!lanes_column_only(s.lanes, v)) {
        const GatherSplit first = s;
        if (!split(signed_sum_terms(off)) || !lanes_column_only(s.lanes, v)) s = first;
    }
    if (!s.uniform) s.uniform = iconst(0, off->type);
    return s;
}

std::optional<TapWindow> tap_window(const Expr& sum, const Expr& term) {
    const auto n = const_extent(sum);
    const int r = sum->var;
    if (!n || r < kFirstReductionVar || r >= kTapWindowVars) return std::nullopt;
    std::optional<std::int64_t> k;
    bool mixed = false;
    const auto split_of = [&](const Expr& x) {
        return (x->op == Op::FloorDiv || x->op == Op::Mod) && x->args[0]->op == Op::Var && x->args[0]->var == r &&
               x->args[1]->op == Op::Const;
    };
    visit(term, [&](const Expr& x) {
        mixed = mixed || x->op == Op::Sum;
        if (!split_of(x)) return;
        mixed = mixed || (k && *k != x->args[1]->ival);
        k = x->args[1]->ival;
    });
    if (mixed || !k || *k <= 1 || *n % *k != 0 || *n / *k <= 1) return std::nullopt;
    TapWindow w;
    w.row = kTapWindowVars + 2 * (r - kFirstReductionVar);
    w.col = w.row + 1;
    w.rows = *n / *k;
    w.cols = *k;
    // r / K and r % K become the row and the column, then r itself row * K + column.
    const Expr split =
        rewrite(term, [&](const Expr& x) { return split_of(x) ? var(x->op == Op::FloorDiv ? w.row : w.col) : x; });
    w.term = substitute(split, {{r, add(mul(var(w.row), iconst(*k)), var(w.col))}});
    return w;
}

LoadForm load_form(const Program& prog, const Expr& load, const Expr& off, int v, int tap) {
    const Buffer& b = prog.buffer(load->buffer);
    if (!depends_on_var(off, v)) return LoadForm::Uniform;
    // In a tap loop: lanes fixed per vector, the tap's part the same in every lane.
    if (tap >= 0 && read_through_windows(b.type) && depends_on_var(off, tap) && split_gather(off, v, tap)) return LoadForm::Window;
    if (const auto byte = byte_table_argument(prog, load)) {
        const Expr plane = offset_expr(b, {load->args[0], load->args[1], iconst(0), iconst(0)});
        if (!depends_on_var(plane, v)) return LoadForm::ByteTable;
    }
    const auto stride = linear_stride(off, v);
    if (!stride && read_through_windows(b.type))
        if (const auto s = split_gather(off, v, -1); s && lanes_column_only(s->lanes, v)) return LoadForm::Window;
    if (stride) {
        if (*stride == 0) return LoadForm::Uniform;
        if (*stride == 1) return LoadForm::Contiguous;
        if (*stride == -1) return LoadForm::Reversed;
        return LoadForm::Strided;
    }
    if (type_bytes(b.type) == 1 && b.role == BufferRole::Input) return LoadForm::BoundedWordGather;
    if (type_bytes(b.type) == 1 && b.role == BufferRole::Temp) return LoadForm::WordGather;
    return LoadForm::LaneGather;
}

std::vector<LoadAccess> analyze_loads(const Program& prog, const Kernel& k, int v) {
    std::map<std::pair<int, LoadForm>, int> counts;
    // Each distinct node once per tap context: the value is a DAG (inlined tensors share
    // their index expressions), and a tree walk takes time exponential in its depth.
    std::set<std::pair<const Node*, int>> seen;
    std::function<void(const Expr&, int)> walk = [&](const Expr& e, int tap) {
        if (!seen.emplace(e.get(), tap).second) return;
        if (e->op == Op::Sum) {
            // The printer hoists windows for the loads of a one-variable tap loop's body;
            // an unrolled sum's copies (each tap substituted) and a 2-D window's rewritten
            // terms are new expressions, read the way loads outside tap loops are.
            const bool hoists = ir::tap_loop(e) && !tap_window(e, e->args[0]);
            walk(e->args[0], hoists ? e->var : -1);
            return;
        }
        for (const auto& a : e->args) walk(a, tap);
        if (e->op != Op::Load) return;
        const Expr off = simplify(offset_expr(prog.buffer(e->buffer), e->args));
        ++counts[{e->buffer, load_form(prog, e, off, v, tap)}];
    };
    walk(k.value, -1);
    std::vector<LoadAccess> out;
    for (const auto& [key, n] : counts) out.push_back(LoadAccess{key.first, key.second, n});
    return out;
}

bool gathers_narrow(const Program& prog, const std::vector<LoadAccess>& loads, const Target& target) {
    return std::any_of(loads.begin(), loads.end(), [&](const LoadAccess& a) {
        const Buffer& b = prog.buffer(a.buffer);
        const std::size_t bytes = type_bytes(b.type);
        switch (a.form) {
            case LoadForm::Uniform:
            case LoadForm::Contiguous:
            case LoadForm::Reversed:
            case LoadForm::Strided: return false;
            default: break;
        }
        if (bytes > 2) return false;
        if (bytes == 1 && target.byte_windows && a.form == LoadForm::Window) return false;
        // Bytes gathered as 4-byte words: of a Temp buffer (kTempTailBytes to spare), and of
        // the input, each word kept inside its span.
        if (bytes == 1 && target.word_gather && (b.role == BufferRole::Temp || b.role == BufferRole::Input)) return false;
        return true;
    });
}

std::string describe_loads(const std::vector<LoadAccess>& loads) {
    std::vector<std::string> parts;
    for (const LoadAccess& a : loads)
        parts.push_back(a.count > 1 ? fmt::format("b{} {} x{}", a.buffer, load_form_name(a.form), a.count)
                                    : fmt::format("b{} {}", a.buffer, load_form_name(a.form)));
    return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace toroid::schedule
