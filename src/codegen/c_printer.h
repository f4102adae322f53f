// The C-like printer shared by the code generators: one kernel's scalar code from the loop
// IR. Every distinct subexpression becomes one named temporary (structural sharing, so the
// unrolled channels of a pixel or the taps of a sample share their coordinates), small sums
// are unrolled and larger ones become loops (the loops of a pixel's channels run as one,
// their tap-invariant parts computed before them), integer index arithmetic is int32
// wherever range analysis proves it fits, and offsets are int32 in int32 programs. The
// C++ printer adds explicit vectors and OpenMP loops, the CUDA printer a thread mapping;
// the spelling that differs (type names, the unroll pragma) is a hook. Three parts: this
// scalar core (what every target prints alike), the CPU-vector printer (cpu_vector.h:
// vector bodies, windows, tap pairs, interleaved stores) that the C++ printer (cpp.cpp: the
// loop nest, OpenMP, partitions, taps in lanes) derives from, and the CUDA printer's grid
// (cuda.cpp). The core has no vector spelling: where a vector body differs, it calls a hook.
#pragma once

#include "core/half.h"
#include "core/error.h"
#include "ir/loop.h"
#include "ir/simplify.h"
#include "schedule/access.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace toroid::codegen {

using namespace ir;

inline std::string std_ctype(Type t) {
    switch (t) {
        case Type::Bool: return "bool";
        case Type::U8: return "std::uint8_t";
        case Type::I16: return "std::int16_t";
        case Type::I32: return "std::int32_t";
        case Type::I64: return "std::int64_t";
        case Type::F32: return "float";
        case Type::F64: return "double";
        case Type::U16:
        case Type::F16:
        case Type::BF16: return "std::uint16_t";  // float16 / bfloat16: their bits
    }
    return "?";
}

// The preambles' conversion between F32 and a narrow float (ir::Cast): "t_f16_to_f32" for
// F16 -> F32, "t_f32_to_bf16" for F32 -> BF16; empty for any other cast. The vector forms
// add "_v".
inline std::string narrow_cast_fn(Type to, Type from) {
    const auto tag = [](Type t) { return t == Type::F16 ? "f16" : "bf16"; };
    if (is_storage_only(from)) return fmt::format("t_{}_to_f32", tag(from));
    if (is_storage_only(to)) return fmt::format("t_f32_to_{}", tag(to));
    return {};
}

// The 16-bit pattern of a narrow float constant's value (core/half.h).
inline unsigned narrow_bits(Type t, double v) {
    return t == Type::F16 ? float_to_half_bits(static_cast<float>(v)) : float_to_bfloat16_bits(static_cast<float>(v));
}

inline bool fits_i32(const std::optional<Interval>& iv) {
    return iv && iv->lo >= std::numeric_limits<std::int32_t>::min() && iv->hi <= std::numeric_limits<std::int32_t>::max();
}

inline std::string float_literal(double v, Type t) {
    if (std::isnan(v)) return t == Type::F32 ? "NAN" : "static_cast<double>(NAN)";
    if (std::isinf(v)) return v > 0 ? (t == Type::F32 ? "INFINITY" : "static_cast<double>(INFINITY)")
                                    : (t == Type::F32 ? "(-INFINITY)" : "(-static_cast<double>(INFINITY))");
    // Hexadecimal literals are exact.
    char buf[64];
    if (t == Type::F32) std::snprintf(buf, sizeof buf, "%af", static_cast<double>(static_cast<float>(v)));
    else std::snprintf(buf, sizeof buf, "%a", v);
    return buf;
}

struct VName {
    std::string name;
    bool vector;
    std::string elem;  // C++ element type (for masks: the mask's integer type)
};


class CPrinter {
public:
    CPrinter(const Program& p, const Kernel& k, LoadBounds lb) : prog_(p), k_(k), lb_(std::move(lb)) {
        ranges_ = p.kernel_ranges(k, lb_);  // the parameters and loop variables it can name
        add_sum_ranges(k.value);
    }
    virtual ~CPrinter() = default;
    CPrinter(const CPrinter&) = delete;
    CPrinter& operator=(const CPrinter&) = delete;

protected:
    // Spelling hooks.
    virtual std::string ctype(Type t) const { return std_ctype(t); }
    virtual std::string unroll_pragma() const { return "#pragma GCC unroll 4"; }
    // How tap loops treat a window's padding taps (see padding_window): kept and selected
    // away (vector targets, whose lanes have windows of their own), or left out by running
    // each loop over its window's taps only (scalar targets, where a thread's window is its
    // own). Sums of several windows that share a loop (a thread's outputs a warp apart) keep
    // their selects (kPeelSharedWindow), or run in loops of their own (kPeelSplit: fewer
    // registers, but the copies' shared tap arithmetic is lost; docs/results/history.md 5.1).
    static constexpr int kPeelNone = 0, kPeelSharedWindow = 1, kPeelSplit = 2;
    virtual int peel_padding_taps() const { return kPeelNone; }

    // A tap sum whose term is select(lo <= r && r < hi, term, identity), the identity -0.0
    // for floats or 0 for integers (a window's padding taps, kept out of the sum): adding
    // the identity leaves every partial sum as it was, bit for bit, so a loop over
    // max(lo, 0) <= r < min(hi, n) of `term` alone sums the same values in the same order
    // (without the select, its condition, or the padding taps' loads and products).
    struct PaddingWindow {
        Expr lo, hi, term;
    };
    std::optional<PaddingWindow> padding_window(const Expr& sum) const {
        if (peel_padding_taps() == kPeelNone || sum->op != Op::Sum || reduce_kind(sum) != Reduce::Add) return std::nullopt;
        const int r = sum->var;
        const Expr& body = sum->args[0];
        if (body->op != Op::Select || body->args[2]->op != Op::Const) return std::nullopt;
        const Node& identity = *body->args[2];
        if (is_float(identity.type) ? (identity.fval != 0.0 || !std::signbit(identity.fval)) : identity.ival != 0)
            return std::nullopt;
        const Expr& cond = body->args[0];
        if (cond->op != Op::And) return std::nullopt;
        Expr lo, hi;
        for (const Expr& c : cond->args) {
            if (c->op == Op::Le && c->args[1]->op == Op::Var && c->args[1]->var == r) lo = c->args[0];
            else if (c->op == Op::Lt && c->args[0]->op == Op::Var && c->args[0]->var == r) hi = c->args[1];
        }
        if (!lo || !hi || depends_on_var(lo, r) || depends_on_var(hi, r) || is_float(lo->type) || is_float(hi->type))
            return std::nullopt;
        return PaddingWindow{lo, hi, body->args[1]};
    }
    // Whether two tap sums may share one loop: both with a padding window, or neither.
    bool same_window(const Expr& a, const Expr& b) const {
        const auto wa = padding_window(a), wb = padding_window(b);
        if (!wa || !wb) return !wa && !wb;
        if (peel_padding_taps() != kPeelSplit) return true;
        return structurally_equal(wa->lo, wb->lo) && structurally_equal(wa->hi, wb->hi);
    }
    // A peeled window's first tap and end, clamped to the loop's [0, n) in 64 bits (the
    // bounds may be of a 64-bit program) and then narrowed: two temporaries.
    std::pair<std::string, std::string> window_taps(const PaddingWindow& w, const std::string& n) {
        const std::string t = ctype(Type::I32), wide = ctype(Type::I64);
        const std::string lo = emit(w.lo), hi = emit(w.hi);
        const std::string first = fmt::format("t{}", next_temp_++), end = fmt::format("t{}", next_temp_++);
        line(fmt::format("const {0} {1} = static_cast<{2}>({3}) > 0 ? static_cast<{0}>({3}) : 0;", t, first, wide, lo));
        line(fmt::format("const {0} {1} = static_cast<{4}>({2}) < static_cast<{4}>({3}) ? static_cast<{0}>({2}) : "
                         "static_cast<{0}>({3});",
                         t, end, hi, n, wide));
        return {first, end};
    }
    // The head of a tap loop over r < n: from 0, or over a padding window's own taps.
    std::string tap_loop_head(const Expr& sum, int r, const std::string& n) {
        const auto w = padding_window(sum);
        if (!w) return fmt::format("for ({0} r{1} = 0; r{1} < {2}; ++r{1}) {{", ctype(Type::I32), r, n);
        const auto [first, end] = window_taps(*w, n);
        return fmt::format("for ({0} r{1} = {2}; r{1} < {3}; ++r{1}) {{", ctype(Type::I32), r, first, end);
    }
    // The term a tap loop accumulates: the select's value where the loop is peeled.
    Expr tap_term(const Expr& sum) const {
        const auto w = padding_window(sum);
        return w ? w->term : sum->args[0];
    }

    // A tap loop over a 2-D window (schedule/access.h, tap_window): printed as a loop over
    // the rows around a loop over the K columns, the term rewritten with a row and a column
    // variable: a row's index math is then done once per row, and a column step is an
    // address increment. Taps are taken in the same order (row-major), so every sum is the
    // same.
    using Window = schedule::TapWindow;
    static std::optional<Window> window_of(const Expr& sum, const Expr& term) { return schedule::tap_window(sum, term); }
    // The two loops of windows (of one tap variable: the same rows and columns) around
    // `step` (given each window's index and rewritten, simplified term, once per tap): the
    // terms' parts that depend on neither variable are computed before them, those of the
    // row alone between them.
    void window_loops(const std::vector<Window>& ws, const std::string& pragma, bool vector,
                      const std::function<void(std::size_t, const Expr&)>& step) {
        const Window& w = ws.front();
        ranges_[w.row] = Interval{0, w.rows - 1};
        ranges_[w.col] = Interval{0, w.cols - 1};
        std::vector<Expr> terms;
        for (const Window& x : ws) {
            terms.push_back(simplify(x.term, ranges_, lb_));
            pinned_.push_back(terms.back());
        }
        for (const Expr& t : terms) hoist_invariants(t, {w.row, w.col}, vector);
        const std::string t = ctype(Type::I32);
        line(fmt::format("for ({0} r{1} = 0; r{1} < {2}; ++r{1}) {{", t, w.row, w.rows));
        ++indent_;
        scopes_.emplace_back();
        for (const Expr& x : terms) hoist_invariants(x, {w.col}, vector);
        line(pragma);
        line(fmt::format("for ({0} r{1} = 0; r{1} < {2}; ++r{1}) {{", t, w.col, w.cols));
        ++indent_;
        scopes_.emplace_back();
        for (std::size_t i = 0; i < terms.size(); ++i) step(i, terms[i]);
        for (int i = 0; i < 2; ++i) {
            scopes_.pop_back();
            --indent_;
            line("}");
        }
    }
    // The windows of sums that share one tap loop (all of them, or none).
    static std::vector<Window> windows_of(const std::vector<Expr>& sums) {
        std::vector<Window> ws;
        for (const Expr& sum : sums) {
            const auto w = window_of(sum, sum->args[0]);
            if (!w || (!ws.empty() && (w->row != ws.front().row || w->cols != ws.front().cols || w->rows != ws.front().rows)))
                return {};
            ws.push_back(*w);
        }
        return ws;
    }

    // Before a summation loop: computes the parts of its body that do not depend on the
    // tap index (table loads and index math of the output position), so that the loop
    // body keeps only the per-tap work. Later uses find them by node.
    void hoist_invariants(const Expr& body, int r, bool vector) { hoist_invariants(body, std::vector<int>{r}, vector); }
    void hoist_invariants(const Expr& body, const std::vector<int>& taps, bool vector) {
        std::unordered_set<const Node*> seen;
        const auto moves = [&](const Expr& x) {
            return std::any_of(taps.begin(), taps.end(), [&](int r) { return depends_on_var(x, r); });
        };
        std::function<void(const Expr&)> walk = [&](const Expr& x) {
            if (!seen.insert(x.get()).second || x->op == Op::Const || x->op == Op::Var) return;
            if (x->op == Op::Sum || moves(x)) {
                if (x->op == Op::Sum) return;
                for (const auto& a : x->args) walk(a);
                // A load's address is computed from its indices: the parts of that sum that
                // do not move with the tap (the row's base) are computed once.
                if (x->op == Op::Load) {
                    const Expr off = offset_expr(prog_.buffer(x->buffer), x->args);
                    pinned_.push_back(off);
                    walk(off);
                    if (vector && taps.size() == 1) hoist_gather(x, off, taps.front());
                }
                return;
            }
            if (vector) hoist_vector(x);
            else emit(x);
        };
        walk(body);
    }

    // Sums of the unrolled copies of a body (a pixel's channels) that run over the same
    // taps: one loop computes them all, so the tap's index math and weights are shared.
    // Each accumulates its own terms in tap order, as a loop of its own would.
    void emit_fused_sums(const std::vector<Expr>& sums, bool vector) {
        const std::string n = emit(sum_extent(sums.front()));
        std::vector<std::string> accs;
        std::vector<std::string> elems;
        for (const Expr& e : sums) {
            const std::string acc = fmt::format("t{}", next_temp_++);
            std::string el;  // empty: a scalar accumulator
            if (vector && varying(e)) el = declare_vector_accumulator(e, acc);
            else line(fmt::format("{} {} = {};", expr_ctype(e), acc, scalar_identity(e)));
            accs.push_back(acc);
            elems.push_back(el);
        }
        if (const std::vector<Window> ws = windows_of(sums); !ws.empty()) {
            window_loops(ws, unroll_pragma(), vector,
                         [&](std::size_t i, const Expr& t) { accumulate(sums[i], accs[i], elems[i], t); });
        } else {
            emit_fused_tap_loop(sums, accs, elems, n, vector);
        }
        for (std::size_t i = 0; i < sums.size(); ++i) {
            pinned_.push_back(sums[i]);
            if (!elems[i].empty()) scopes_.back().vby_node[sums[i].get()] = VName{accs[i], true, elems[i]};
            else scopes_.back().by_node[sums[i].get()] = accs[i];
        }
    }
    void emit_fused_tap_loop(const std::vector<Expr>& sums, const std::vector<std::string>& accs,
                             const std::vector<std::string>& elems, const std::string& n, bool vector) {
        const Expr& first = sums.front();
        const int r = first->var;
        for (const Expr& e : sums) hoist_invariants(e->args[0], r, vector);
        const bool pairs = vector && std::none_of(elems.begin(), elems.end(), [](const std::string& el) { return el.empty(); }) &&
                           std::all_of(sums.begin(), sums.end(), [](const Expr& e) { return reduce_kind(e) == Reduce::Add; }) &&
                           prepare_tap_pairs(sums);
        emit_tap_loop_variants([&] {
            if (pairs) {
                emit_tap_pairs(sums, accs, n);
                return;
            }
            // One loop over every sum's taps; `peeled`: the terms without their selects.
            const auto loop = [&](const std::string& head, const std::string& pragma, bool peeled) {
                line(pragma);
                line(head);
                ++indent_;
                scopes_.emplace_back();
                for (std::size_t i = 0; i < sums.size(); ++i) {
                    const Expr body = peeled ? tap_term(sums[i]) : sums[i]->args[0];
                    accumulate(sums[i], accs[i], elems[i], body);
                }
                scopes_.pop_back();
                --indent_;
                line("}");
            };
            // The padding windows of the sums (none, or one each: same_window).
            std::vector<std::pair<Expr, Expr>> windows;
            for (const Expr& sum : sums) {
                const auto w = padding_window(sum);
                if (!w) break;
                if (std::none_of(windows.begin(), windows.end(), [&](const auto& x) {
                        return structurally_equal(x.first, w->lo) && structurally_equal(x.second, w->hi);
                    }))
                    windows.emplace_back(w->lo, w->hi);
            }
            if (windows.size() < 2) {
                loop(tap_loop_head(first, r, n), unroll_pragma(), true);  // the sums share their window
                return;
            }
            // Several windows in one loop: every tap, the padding ones selected away.
            loop(fmt::format("for ({0} r{1} = 0; r{1} < {2}; ++r{1}) {{", ctype(Type::I32), r, n), unroll_pragma(),
                 false);
        });
    }

    // The outermost Sums of e that become loops (run-time or long extents).
    static void loop_sums(const Expr& e, std::vector<Expr>& out) {
        std::unordered_set<const Node*> seen;
        std::function<void(const Expr&)> walk = [&](const Expr& x) {
            if (!seen.insert(x.get()).second) return;
            if (x->op == Op::Sum) {
                if (ir::tap_loop(x)) out.push_back(x);
                return;
            }
            for (const auto& a : x->args) walk(a);
        };
        walk(e);
    }

    // Ranges of the reduction variables of every Sum in e (extents may be parameters).
    void add_sum_ranges(const Expr& e) {
        visit(e, [&](const Expr& x) {
            if (x->op != Op::Sum) return;
            const auto n = bounds(sum_extent(x), ranges_, lb_);
            if (n && n->hi >= 1) ranges_[x->var] = Interval{0, n->hi - 1};
        });
    }

    // The body at loop depth `depth` (the loops from there on are unrolled). With
    // `vectors` > 1 (the kernel's vector_unroll, inside its vector loop): that many copies,
    // each kLanes further along the vector loop, whose tap loops run as one.
    void emit_body(std::size_t depth, const Buffer& out, int vectors = 1) {
        scopes_.emplace_back();
        if (depth < k_.loops.size() || vectors > 1) {
            // The unrolled loops: one copy of the body per iteration, sharing temporaries.
            std::vector<UnrolledCopy> copies;
            for (int u = 0; u < vectors; ++u) {
                std::vector<std::pair<int, std::int64_t>> fixed;
                shift_ = static_cast<std::int64_t>(u) * (copy_stride_ > 0 ? copy_stride_ : k_.cpu().vector_width);
                collect_unrolled(depth, fixed, copies);
            }
            shift_ = 0;
            emit_unrolled(copies, out);
        } else {
            emit_store(value(), out);
        }
        scopes_.pop_back();
    }
    // The value the body computes: the kernel's, or a part's (loop partitioning).
    const Expr& value() const { return part_value_ ? part_value_ : k_.value; }
    Expr part_value_;

    const Program& prog_;
    const Kernel& k_;
    LoadBounds lb_;
    int vector_var_ = -1;  // the loop var a vector body spans several values of, or -1
    // Targets without vector bodies (CUDA): the loop var whose consecutive values emit_body's
    // copies (`vectors` > 1) compute, as scalars; -1: the vector var.
    int shift_var_ = -1;
    int shifted_var() const { return shift_var_ >= 0 ? shift_var_ : vector_var_; }
    // How far apart those copies lie along it (0: the kernel's vector width).
    int copy_stride_ = 0;
    std::vector<Expr> pinned_;
    std::unordered_set<const Node*> offset_nodes_;  // I64 nodes of offsets (int32 programs)
    VarRanges ranges_;
    std::ostringstream text_;
    int indent_ = 0;
    int next_temp_ = 0;
    // Temporaries visible at this point, innermost scope last: by node identity and by
    // structure (operator and operand names), so equal subtrees share one temporary.
    struct Scope {
        std::unordered_map<const Node*, std::string> by_node;
        std::unordered_map<std::string, std::string> by_key;
        std::vector<Expr> pinned;  // keeps by_node's keys alive, so no address is reused
        std::unordered_map<const Node*, VName> vby_node;  // vector values in the vector body
        // Byte gathers prepared before a tap loop: load node -> (window temporary, the
        // lane-uniform part of its offset, evaluated per tap).
        std::unordered_map<const Node*, std::pair<std::string, Expr>> windows;
    };
    std::vector<Scope> scopes_;

    void line(const std::string& s) { text_ << std::string(static_cast<std::size_t>(indent_) * 4, ' ') << s << '\n'; }

    struct UnrolledCopy {
        std::vector<std::pair<int, std::int64_t>> fixed;
        std::int64_t shift = 0;  // the vector loop's variable is v + shift in this copy
        Expr value;
    };
    // While collecting copies and storing one: how far it lies along the vector loop.
    std::int64_t shift_ = 0;

    void collect_unrolled(std::size_t depth, std::vector<std::pair<int, std::int64_t>>& fixed,
                          std::vector<UnrolledCopy>& copies) {
        if (depth == k_.loops.size()) {
            std::vector<std::pair<int, Expr>> sub;
            VarRanges r = ranges_;
            for (auto [v, val] : fixed) {
                sub.emplace_back(v, iconst(val));
                r[v] = Interval{val, val};
            }
            // (The vector variable keeps its loop's range: v + shift stays within it.)
            if (shift_ != 0) sub.emplace_back(shifted_var(), add(var(shifted_var()), iconst(shift_)));
            copies.push_back(UnrolledCopy{fixed, shift_, simplify(substitute(value(), sub), r, lb_)});
            return;
        }
        const Loop& l = k_.loops[depth];
        if (!is_const(l.begin) || !is_const(l.extent)) fail("internal: unrolled loop v{} has a run-time extent", l.var);
        for (std::int64_t i = l.begin->ival; i < l.begin->ival + l.extent->ival; ++i) {
            fixed.emplace_back(l.var, i);
            collect_unrolled(depth + 1, fixed, copies);
            fixed.pop_back();
        }
    }

    void emit_unrolled(const std::vector<UnrolledCopy>& copies, const Buffer& out) {
        // Tap loops of the copies with the same reduction variable and extent run as one.
        std::vector<std::vector<Expr>> groups;
        for (const UnrolledCopy& c : copies) {
            pinned_.push_back(c.value);
            std::vector<Expr> sums;
            loop_sums(c.value, sums);
            for (const Expr& e : sums) {
                auto g = std::find_if(groups.begin(), groups.end(), [&](const std::vector<Expr>& grp) {
                    return grp.front()->var == e->var && structurally_equal(sum_extent(grp.front()), sum_extent(e)) &&
                           same_window(grp.front(), e);
                });
                if (g == groups.end()) groups.push_back({e});
                else g->push_back(e);
            }
        }
        for (const auto& grp : groups)
            if (grp.size() > 1) emit_fused_sums(grp, vector_var_ >= 0);
        for (const UnrolledCopy& c : copies) {
            const VarRanges saved = ranges_;
            for (auto [v, val] : c.fixed) ranges_[v] = Interval{val, val};
            shift_ = c.shift;
            emit_store(c.value, out, &c.fixed);
            shift_ = 0;
            ranges_ = saved;
        }
        end_stores();
    }

    // Emits a tap loop (`emit_loop` prints it, after hoist_invariants): targets may print
    // it more than once, each copy under a run-time condition that lets it be simpler.
    virtual void emit_tap_loop_variants(const std::function<void()>& emit_loop) { emit_loop(); }

    // After the stores of a pixel's unrolled copies (targets that combine them).
    virtual void end_stores() {}

    // Vector tap loops whose terms a target multiplies and adds two taps at a time
    // (schedule/tap_pairs.h): after hoist_invariants, whether it does for these sums (one
    // loop over the same taps, each into its own vector accumulator), then the loop.
    virtual bool prepare_tap_pairs(const std::vector<Expr>& /*sums*/) { return false; }
    virtual void emit_tap_pairs(const std::vector<Expr>& /*sums*/, const std::vector<std::string>& /*accs*/,
                                const std::string& /*n*/) {}

    // The element offset of a load or store: sum over dims of (index - origin) * stride.
    // Programs with int32 indices compute every offset in int32: binding checked that each
    // buffer's span, and so each partial sum of an in-bounds offset, fits.
    Expr offset_expr(const Buffer& b, const std::vector<Expr>& idx) {
        const Expr off = simplify(ir::offset_expr(b, idx), ranges_, lb_);
        if (prog_.index_width == IndexWidth::I32) {
            visit(off, [&](const Expr& x) {
                if (x->type == Type::I64 && offset_nodes_.insert(x.get()).second) pinned_.push_back(x);
            });
        }
        return off;
    }

    // Stores the value at the output element `fixed` (the unrolled loops' values) or the
    // loop variables name. Targets with vector bodies override it.
    virtual void emit_store(const Expr& value, const Buffer& out,
                            const std::vector<std::pair<int, std::int64_t>>* fixed = nullptr) {
        const Expr off_e = offset_expr(out, store_index(out, fixed));
        const std::string off = emit(off_e);
        const std::string val = emit(value);
        line(fmt::format("b{}[{}] = {};", out.id, off, val));
    }

    std::vector<Expr> store_index(const Buffer& out, const std::vector<std::pair<int, std::int64_t>>* fixed) const {
        std::vector<Expr> idx;
        if (!k_.store_index.empty()) {
            idx = k_.store_index;
        } else {
            for (std::size_t d = 0; d < out.shape.size(); ++d) {
                Expr v = var(static_cast<int>(d));
                if (fixed)
                    for (auto [fv, val] : *fixed)
                        if (fv == static_cast<int>(d)) v = iconst(val);
                idx.push_back(v);
            }
        }
        if (shift_ != 0)
            for (Expr& x : idx) x = substitute(x, {{shifted_var(), add(var(shifted_var()), iconst(shift_))}});
        return idx;
    }

    // Vector bodies: the hooks the CPU-vector printer (cpu_vector.h) implements; targets
    // without vector bodies (CUDA) have none, and the scalar core calls them only with
    // vector_var_ set. Whether e differs across lanes of the vector body:
    virtual bool varying(const Expr&) { return false; }
    // Before a vector tap loop: computes a tap-invariant part of its body as a vector...
    virtual void hoist_vector(const Expr& e) { fail("internal: no vector code for {} on this target", op_name(e->op)); }
    // ...and prepares what a load whose address moves with the tap (`off`, its element
    // offset) reads through (the C++ printer's byte windows).
    virtual void hoist_gather(const Expr& /*load*/, const Expr& /*off*/, int /*r*/) {}
    // Declares a vector accumulator `acc` for `sum`, at its identity; returns its element type.
    virtual std::string declare_vector_accumulator(const Expr& sum, const std::string& /*acc*/) {
        fail("internal: no vector code for {} on this target", op_name(sum->op));
    }
    // One tap's vector step of `sum` into `acc` (element type `elem`).
    virtual void accumulate_vector(const Expr& sum, const std::string& /*acc*/, const std::string& /*elem*/,
                                   const Expr& /*term*/) {
        fail("internal: no vector code for {} on this target", op_name(sum->op));
    }

    std::string lookup_node(const Node* n) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->by_node.find(n);
            if (f != it->by_node.end()) return f->second;
        }
        return {};
    }
    std::string lookup_key(const std::string& k) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->by_key.find(k);
            if (f != it->by_key.end()) return f->second;
        }
        return {};
    }

    // The C++ type an expression is computed in: its IR type, with I64 narrowed to
    // int32 where its range fits.
    std::string expr_ctype(const Expr& e) {
        if (e->type == Type::I64 && (offset_nodes_.count(e.get()) || fits_i32(bounds(e, ranges_, lb_))))
            return ctype(Type::I32);
        return ctype(e->type);
    }

    // Returns a C++ expression (a temporary's name or a literal) with the value of e.
    std::string emit(const Expr& e) {
        if (auto found = lookup_node(e.get()); !found.empty()) return found;
        std::string result;
        switch (e->op) {
            case Op::Const:
                if (is_storage_only(e->type)) result = fmt::format("{}(0x{:04x})", ctype(e->type), narrow_bits(e->type, e->fval));
                else if (is_float(e->type)) result = float_literal(e->fval, e->type);
                else if (e->type == Type::Bool) result = e->ival ? "true" : "false";
                else if (e->type == Type::I64 && (e->ival > INT32_MAX || e->ival < INT32_MIN))
                    result = fmt::format("{}{{{}}}", ctype(Type::I64), e->ival);
                else result = fmt::format("{}", e->ival);
                break;
            case Op::Var:
                if (is_param_var(e->var)) result = fmt::format("p{}", e->var - kFirstParamVar);
                else result = fmt::format("{}{}", e->var >= kFirstReductionVar ? "r" : "v", e->var);
                break;
            default: result = emit_compound(e); break;
        }
        scopes_.back().by_node[e.get()] = result;
        scopes_.back().pinned.push_back(e);
        return result;
    }

    std::string temp(const std::string& type, const std::string& code) {
        const std::string key = type + "|" + code;
        if (auto found = lookup_key(key); !found.empty()) return found;
        const std::string name = fmt::format("t{}", next_temp_++);
        line(fmt::format("const {} {} = {};", type, name, code));
        scopes_.back().by_key[key] = name;
        return name;
    }

    // Operands keep the C++ types they were computed in; the usual arithmetic
    // conversions widen mixed int32/int64 operands, and a temporary narrowed to int32
    // only ever receives a value range analysis proved to fit.
    std::string emit_compound(const Expr& e) {
        const std::string ty = expr_ctype(e);
        auto a = [&](std::size_t i) { return emit(e->args[i]); };
        switch (e->op) {
            case Op::Load: {
                const Buffer& b = prog_.buffer(e->buffer);
                const std::string off = emit(offset_expr(b, e->args));
                return temp(ty, fmt::format("b{}[{}]", b.id, off));
            }
            case Op::Add: return temp(ty, fmt::format("{} + {}", a(0), a(1)));
            case Op::Sub: return temp(ty, fmt::format("{} - {}", a(0), a(1)));
            case Op::Mul: return temp(ty, fmt::format("{} * {}", a(0), a(1)));
            case Op::Div: return temp(ty, fmt::format("{} / {}", a(0), a(1)));
            case Op::FloorDiv:
            case Op::Mod: {
                const auto lhs = bounds(e->args[0], ranges_, lb_);
                const bool plain = lhs && lhs->lo >= 0;
                const char* sym = e->op == Op::FloorDiv ? "/" : "%";
                const char* fn = e->op == Op::FloorDiv ? "t_floordiv" : "t_mod";
                if (plain) return temp(ty, fmt::format("{} {} {}", a(0), sym, a(1)));
                return temp(ty, fmt::format("{}<{}>({}, {})", fn, ctype(Type::I64), a(0), a(1)));
            }
            case Op::Min: return temp(ty, fmt::format("t_min<{}>({}, {})", ty, a(0), a(1)));
            case Op::Max: return temp(ty, fmt::format("t_max<{}>({}, {})", ty, a(0), a(1)));
            case Op::Neg: return temp(ty, fmt::format("-{}", a(0)));
            case Op::Fma: return temp(ty, fmt::format("t_fma({}, {}, {})", a(0), a(1), a(2)));
            case Op::Floor: return temp(ty, fmt::format("t_floor({})", a(0)));
            case Op::Pow: return temp(ty, fmt::format("t_pow({}, {})", a(0), a(1)));
            case Op::RoundEven: return temp(ty, fmt::format("t_round_even({})", a(0)));
            case Op::Abs:
                return temp(ty, is_float(e->type) ? fmt::format("t_fabs({})", a(0))
                                                  : fmt::format("({0} < 0 ? -{0} : {0})", a(0)));
            case Op::ShiftRight: return temp(ty, fmt::format("{} >> {}", a(0), a(1)));
            case Op::Lt: return temp("bool", fmt::format("{} < {}", a(0), a(1)));
            case Op::Le: return temp("bool", fmt::format("{} <= {}", a(0), a(1)));
            case Op::Eq: return temp("bool", fmt::format("{} == {}", a(0), a(1)));
            case Op::Ne: return temp("bool", fmt::format("{} != {}", a(0), a(1)));
            case Op::And: return temp("bool", fmt::format("{} && {}", a(0), a(1)));
            case Op::Or: return temp("bool", fmt::format("{} || {}", a(0), a(1)));
            case Op::Not: return temp("bool", fmt::format("!{}", a(0)));
            case Op::Select: return temp(ty, fmt::format("{} ? {} : {}", a(0), a(1), a(2)));
            case Op::Cast:
                if (const std::string fn = narrow_cast_fn(e->type, e->args[0]->type); !fn.empty())
                    return temp(ty, fmt::format("{}({})", fn, a(0)));
                return temp(ty, fmt::format("static_cast<{}>({})", ty, a(0)));
            case Op::SatCast:
                switch (e->type) {
                    case Type::U8: return temp(ty, fmt::format("sat_u8({})", a(0)));
                    case Type::U16: return temp(ty, fmt::format("sat_u16({})", a(0)));
                    case Type::I16: return temp(ty, fmt::format("sat_i16({})", a(0)));
                    case Type::I32: return temp(ty, fmt::format("sat_i32({})", a(0)));
                    default: return temp(ty, fmt::format("static_cast<{}>({})", ty, a(0)));
                }
            case Op::Sum: return emit_sum(e, ty);
            default: break;
        }
        fail("internal: codegen cannot print op {}", op_name(e->op));
    }

    // A reduction's starting value and step (ir::Reduce): `acc += v` for a sum; for Min /
    // Max the identity (+-inf, the type's max or min) and t_rmin / t_rmax, which take a
    // NaN term (torch.amin / amax propagate NaN).
    // Fma chains start from 0 too and take a product term with t_fma / fma_v.
    static bool extreme(const Expr& sum) { return reduce_kind(sum) == Reduce::Min || reduce_kind(sum) == Reduce::Max; }
    std::string scalar_identity(const Expr& sum) {
        if (!extreme(sum)) return "0";
        return emit(reduce_identity(reduce_kind(sum), sum->type));
    }
    std::string reduce_step(const Expr& sum, const std::string& acc, const Expr& term) {
        if (const auto f = fma_factors(sum, term)) {
            const std::string a = emit(f->first), b = emit(f->second);
            return fmt::format("{0} = t_fma({1}, {2}, {0});", acc, a, b);
        }
        const std::string v = emit(term);
        switch (reduce_kind(sum)) {
            case Reduce::Add:
            case Reduce::Fma: return fmt::format("{} += {};", acc, v);
            case Reduce::Min: return fmt::format("{0} = t_rmin({0}, {1});", acc, v);
            case Reduce::Max: return fmt::format("{0} = t_rmax({0}, {1});", acc, v);
        }
        return {};
    }
    // One tap's step of `sum` into `acc`: a scalar step where `elem` is empty, else the
    // vector one.
    void accumulate(const Expr& sum, const std::string& acc, const std::string& elem, const Expr& term) {
        if (elem.empty()) line(reduce_step(sum, acc, term));
        else accumulate_vector(sum, acc, elem, term);
    }

    // Small sums are unrolled (each term simplified with its tap index); larger ones
    // become a loop. Both accumulate from zero in term order.
    virtual std::string emit_sum(const Expr& e, const std::string& ty) {
        const int r = e->var;
        const auto fixed = const_extent(e);
        const std::string acc = fmt::format("t{}", next_temp_++);
        line(fmt::format("{} {} = {};", ty, acc, scalar_identity(e)));
        if (!ir::tap_loop(e)) {
            for (std::int64_t j = 0; j < *fixed; ++j) {
                const VarRanges saved = ranges_;
                ranges_[r] = Interval{j, j};
                const Expr term = simplify(substitute(e->args[0], {{r, iconst(j)}}), ranges_, lb_);
                const std::string step = reduce_kind(e) == Reduce::Add
                                             ? fmt::format("{} = {} + {};", acc, acc, emit(term))
                                             : reduce_step(e, acc, term);
                ranges_ = saved;
                line(step);
            }
        } else {
            if (const auto w = window_of(e, tap_term(e))) {
                window_loops({*w}, unroll_pragma(), /*vector=*/false,
                             [&](std::size_t, const Expr& t) { line(reduce_step(e, acc, t)); });
                return acc;
            }
            const std::string n = emit(sum_extent(e));
            hoist_invariants(e->args[0], r, /*vector=*/false);
            const std::string head = tap_loop_head(e, r, n);
            line(unroll_pragma());
            line(head);
            ++indent_;
            scopes_.emplace_back();
            line(reduce_step(e, acc, tap_term(e)));
            scopes_.pop_back();
            --indent_;
            line("}");
        }
        return acc;
    }
};

}  // namespace toroid::codegen
