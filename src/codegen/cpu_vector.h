// The CPU-vector printer: the vector body of a C++ kernel's vector loop (GCC/Clang vector
// extensions, the preamble's vec<T> and its helpers), between the scalar core
// (c_printer.h) and the C++ kernel writer (cpp.cpp: the loop nest around it). Each load is
// lowered in the form the scheduler's access analysis gave it (schedule/access.h: windows,
// byte tables, word gathers...), and a gather the plan does not list is an internal error;
// tap loops run in window copies (one window, two, general), uint8 x int16 taps in pairs,
// the unrolled channels of a pixel are stored interleaved at once.
#pragma once

#include "codegen/c_printer.h"

#include "schedule/access.h"
#include "schedule/tabulate.h"
#include "schedule/tap_pairs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace toroid::codegen {

class CpuVectorPrinter : public CPrinter {
public:
    CpuVectorPrinter(const Program& p, const Kernel& k, LoadBounds lb) : CPrinter(p, k, std::move(lb)) {}

protected:
    // Set while a loop partition's short vector is printed: the lanes its store writes.
    std::string store_lanes_;

    // The element type of e's lanes.
    std::string velem(const Expr& e) { return expr_ctype(e); }
    std::string vector_identity(const Expr& sum, const std::string& el) {
        if (!extreme(sum)) return "{}";
        return fmt::format("to_v<vec<{}>>({})", el, scalar_identity(sum));
    }
    // The vector step of a Min, Max or Fma reduction.
    std::string reduce_step_v(const Expr& sum, const std::string& acc, const std::string& el, const Expr& term) {
        const auto V = [&](const Expr& x) { return fmt::format("to_v<vec<{}>>({})", el, emitv(x).name); };
        if (const auto f = fma_factors(sum, term)) {
            const std::string a = V(f->first), b = V(f->second);
            return fmt::format("{0} = fma_v({1}, {2}, {0});", acc, a, b);
        }
        const std::string v = V(term);
        if (!extreme(sum)) return fmt::format("{0} = {0} + {1};", acc, v);
        return fmt::format("{0} = {1}({0}, {2});", acc, reduce_kind(sum) == Reduce::Min ? "rmin_v" : "rmax_v", v);
    }

    // The scalar core's vector hooks.
    void hoist_vector(const Expr& e) override { emitv(e); }
    std::string declare_vector_accumulator(const Expr& sum, const std::string& acc) override {
        const std::string el = velem(sum);
        line(fmt::format("vec<{}> {} = {};", el, acc, vector_identity(sum, el)));
        return el;
    }
    void accumulate_vector(const Expr& sum, const std::string& acc, const std::string& elem, const Expr& term) override {
        if (reduce_kind(sum) == Reduce::Add) accumulate_v(acc, elem, term);
        else line(reduce_step_v(sum, acc, elem, term));
    }

    // Elements from a buffer's first to its last: 1 + sum of (extent - 1) * stride (strides
    // are never negative).
    Expr buffer_span(const Buffer& b) {
        Expr span = iconst(1);
        for (std::size_t d = 0; d < b.shape.size(); ++d)
            span = add(span, mul(sub(b.shape[d], iconst(1)), b.strides[d]));
        const Expr e = simplify(span, ranges_, lb_);
        pinned_.push_back(e);
        return e;
    }

    // For an int32 product whose factors fit in 16 bits, one of them in [0, 32767]: the
    // index of that factor (mul16_v's first operand); else nullopt.
    std::optional<int> mul16_order(const Expr& e) {
        if (e->op != Op::Mul || e->type != Type::I32) return std::nullopt;
        const auto x = bounds(e->args[0], ranges_, lb_), y = bounds(e->args[1], ranges_, lb_);
        auto small = [](const std::optional<Interval>& i) { return i && i->lo >= -32768 && i->hi <= 32767; };
        auto unsigned15 = [](const std::optional<Interval>& i) { return i && i->lo >= 0 && i->hi <= 32767; };
        if (!small(x) || !small(y) || (!unsigned15(x) && !unsigned15(y))) return std::nullopt;
        return unsigned15(x) ? 0 : 1;
    }

    // A tap's 16-bit product added to its int32 accumulator as one multiply-add (dp16_v,
    // vpdpwssd where the preamble uses it).
    void accumulate_v(const std::string& acc, const std::string& elem, const Expr& term) {
        const auto f = elem == "std::int32_t" && varying(term) ? mul16_order(term) : std::nullopt;
        if (!f) {
            line(fmt::format("{} += to_v<vec<{}>>({});", acc, elem, emitv(term).name));
            return;
        }
        const VName a = emitv(term->args[static_cast<std::size_t>(*f)]), b = emitv(term->args[static_cast<std::size_t>(1 - *f)]);
        auto V = [&](const VName& x) { return fmt::format("to_v<vec<std::int32_t>>({})", x.name); };
        line(fmt::format("{0} = dp16_v({0}, {1}, {2});", acc, V(a), V(b)));
    }

    const Loop& loop_of(int v) const {
        for (const Loop& l : k_.loops)
            if (l.var == v) return l;
        fail("internal: kernel {} has no loop v{}", k_.name, v);
    }

    void emit_store(const Expr& value, const Buffer& out,
                    const std::vector<std::pair<int, std::int64_t>>* fixed = nullptr) override {
        const Expr off_e = offset_expr(out, store_index(out, fixed));
        if (vector_var_ < 0) {
            const std::string off = emit(off_e);
            const std::string val = emit(value);
            line(fmt::format("b{}[{}] = {};", out.id, off, val));
            return;
        }
        const std::string vt = fmt::format("vec<{}>", ctype(out.type));
        const std::string val = fmt::format("to_v<{}>({})", vt, emitv(value).name);
        const auto stride = linear_stride(off_e, vector_var_);
        const std::string base = emit(off_e);  // lane 0
        // The unrolled channels of a pixel, stored at stride C from consecutive bases, are
        // collected and stored interleaved at once.
        if (fixed && stride && *stride > 1 && *stride <= 4) {
            if (!pending_.empty()) {
                const auto gap = bounds(simplify(sub(off_e, pending_.front().off), ranges_, lb_), ranges_, lb_);
                const bool next = gap && gap->lo == gap->hi && gap->lo == static_cast<std::int64_t>(pending_.size()) &&
                                  *stride == pending_.front().stride;
                if (!next) end_stores();
            }
            pending_.push_back(PendingStore{off_e, *stride, base, val});
            pinned_.push_back(off_e);
            if (static_cast<std::int64_t>(pending_.size()) == *stride) {
                std::string vals;
                for (const PendingStore& p : pending_) vals += ", " + p.val;
                line(fmt::format("store_interleaved(b{} + {}{});", out.id, pending_.front().base, vals));
                pending_.clear();
            }
            store_buffer_ = out.id;
            return;
        }
        if (stride && *stride == 1 && !store_lanes_.empty())
            line(fmt::format("store_lanes_v(b{} + {}, {}, {});", out.id, base, val, store_lanes_));
        else if (stride && *stride == 1) line(fmt::format("store_v(b{} + {}, {});", out.id, base, val));
        else if (stride) line(fmt::format("scatter_stride_v(b{} + {}, {}, {});", out.id, base, *stride, val));
        else line(fmt::format("scatter_v(b{}, {}, {});", out.id, emitv(off_e).name, val));
    }

    // Tap loops with windows: a copy for the usual case, every window one 128-byte span
    // (gather_window1 keeps its index and masks in registers), one for byte windows in two
    // groups (gather_window2), and the general one.
    void emit_tap_loop_variants(const std::function<void()>& emit_loop) override {
        std::vector<std::string> names;
        for (const auto& [node, w] : scopes_.back().windows)
            if (std::find(names.begin(), names.end(), w.first) == names.end()) names.push_back(w.first);
        if (names.empty()) {
            emit_loop();
            return;
        }
        std::sort(names.begin(), names.end());
        const auto all_groups = [&](int g) {
            std::string cond;
            for (const std::string& n : names) cond += fmt::format("{}{}.groups == {}", cond.empty() ? "" : " && ", n, g);
            return cond;
        };
        // One copy of the loop per case, under its condition (the window copy the printer
        // reads while printing it).
        const auto copy = [&](const std::string& opening, WindowCopy which) {
            line(opening);
            ++indent_;
            window_copy_ = which;
            emit_loop();
            window_copy_ = WindowCopy::None;
            --indent_;
        };
        copy(fmt::format("if ({}) {{", all_groups(1)), WindowCopy::One);
        // Byte windows of downscales by about 2.5 to 5 (16 outputs span more than one
        // 128-byte window): two groups of lanes, each its own window, blended by a fixed mask.
        const bool bytes_only = std::all_of(scopes_.back().windows.begin(), scopes_.back().windows.end(),
                                            [&](const auto& w) { return type_bytes(prog_.buffer(w.first->buffer).type) == 1; });
        if (bytes_only) copy(fmt::format("}} else if ({}) {{", all_groups(2)), WindowCopy::Two);
        // Words too far apart for one window: the hardware gather, straight from the
        // lanes' offsets (no window in between). The general copy (rare: windows in 4
        // groups, or lanes read one by one) is not unrolled: about a tenth of a large
        // kernel's compile time for a loop whose gathers dominate it anyway.
        copy("} else {", WindowCopy::General);
        line("}");
    }
    // Which copy of a tap loop with windows is being printed (emit_tap_loop_variants).
    enum class WindowCopy : std::uint8_t { None, One, Two, General };
    WindowCopy window_copy_ = WindowCopy::None;
    bool one_window() const { return window_copy_ == WindowCopy::One; }
    bool two_windows() const { return window_copy_ == WindowCopy::Two; }
    std::string unroll_pragma() const override {
        return window_copy_ == WindowCopy::General ? "#pragma GCC unroll 1" : "#pragma GCC unroll 4";
    }

    struct PendingStore {
        Expr off;
        std::int64_t stride;
        std::string base, val;
    };
    std::vector<PendingStore> pending_;
    int store_buffer_ = -1;

    // Channels that did not make a whole interleaved pixel are stored one by one.
    void end_stores() override {
        for (const PendingStore& p : pending_)
            line(fmt::format("scatter_stride_v(b{} + {}, {}, {});", store_buffer_, p.base, p.stride, p.val));
        pending_.clear();
    }

    // A load's offset split for a read through a window (schedule::split_gather, the
    // scheduler's rule), its parts kept alive for the printer's memos.
    bool split_gather(const Expr& off, int r, Expr& lanes, Expr& uniform) {
        if (vector_var_ < 0) return false;
        const auto s = schedule::split_gather(off, vector_var_, r);
        if (!s) return false;
        lanes = s->lanes;
        uniform = s->uniform;
        pinned_.push_back(lanes);
        pinned_.push_back(uniform);
        return true;
    }

    // A gather (word, bounded word or lane) of buffer b that the scheduler's access analysis
    // (CpuPlan::loads) does not list is a misprediction: the vector decision was made for other
    // code. Words read through a window may also be the hardware gather (the general copy of
    // a loop whose windows do not fit: kept for words, whose gathers are not lane by lane).
    void check_planned(const Buffer& b, LoadForm form) const {
        const auto has = [&](LoadForm f) {
            return std::any_of(k_.cpu().loads.begin(), k_.cpu().loads.end(),
                               [&](const LoadAccess& a) { return a.buffer == b.id && a.form == f; });
        };
        if (has(form)) return;
        if (form == LoadForm::LaneGather && type_bytes(b.type) == 4 && has(LoadForm::Window)) return;
        fail("internal: kernel {} prints a {} of b{}, which its access plan does not list ({})", k_.name,
             load_form_name(form), b.id, schedule::describe_loads(k_.cpu().loads));
    }

    // Windows whose lanes depend on the vector loop's position only (a resize's start
    // table, a nearest resize's index table, not the row): computed once per kernel call
    // for every block of kLanes outputs, before the loop nest, instead of once per row.
    // Gathers in tap loops and outside them both read through them.
    void precompute_windows(const std::vector<std::pair<std::string, std::string>>& bounds_text) {
        std::size_t d = 0;
        while (d < k_.loops.size() && k_.loops[d].kind != LoopKind::Vector) ++d;
        if (d == k_.loops.size()) return;
        const int v = k_.loops[d].var;
        std::vector<Expr> window_lanes;
        std::vector<std::string> keys;
        std::vector<std::size_t> window_bytes;
        // key -> the lane-uniform part of each byte load in a tap loop, less its constant
        // term -> the least and greatest constant term.
        std::map<std::string, std::map<std::string, std::pair<std::int64_t, std::int64_t>>> offsets;
        vector_var_ = v;
        // Each distinct node once per tap loop: the value is a DAG, and a tree walk takes
        // time exponential in the depth of its sharing (chains of inlined warps). A repeated
        // visit would find the same window and offsets again.
        std::set<std::pair<const Node*, int>> seen;
        std::function<void(const Expr&, int)> walk = [&](const Expr& e, int tap) {
            if (!seen.emplace(e.get(), tap).second) return;
            if (e->op == Op::Sum) {
                walk(e->args[0], const_extent(e) ? tap : e->var);
                return;
            }
            for (const auto& a : e->args) walk(a, tap);
            if (e->op != Op::Load || !schedule::read_through_windows(prog_.buffer(e->buffer).type)) return;
            Expr lanes, uniform;
            if (!split_gather(offset_expr(prog_.buffer(e->buffer), e->args), tap, lanes, uniform)) return;
            bool outer = false;
            visit(lanes, [&](const Expr& x) {
                if (x->op != Op::Var || x->var == v || is_param_var(x->var)) return;
                outer = true;  // another loop's variable, or a tap's
            });
            const std::size_t e_bytes = type_bytes(prog_.buffer(e->buffer).type);
            const std::string key = fmt::format("{}|{}", e_bytes, to_string(lanes));
            if (outer) return;
            if (e_bytes == 1 && tap >= 0) {
                // The offsets of this load in the unrolled copies of the body: its part
                // without the unrolled loops' variables, plus a constant per copy.
                std::vector<std::pair<int, Expr>> zero;
                std::int64_t lo = 0, hi = 0;
                bool affine = true;
                for (const Loop& l : k_.loops) {
                    if (l.kind != LoopKind::Unrolled || !depends_on_var(uniform, l.var)) continue;
                    const auto st = linear_stride(uniform, l.var);
                    if (!st || !is_const(l.begin) || !is_const(l.extent)) {
                        affine = false;
                        break;
                    }
                    zero.emplace_back(l.var, iconst(0));
                    const std::int64_t a = *st * l.begin->ival, b = *st * (l.begin->ival + l.extent->ival - 1);
                    lo += std::min(a, b);
                    hi += std::max(a, b);
                }
                if (affine) {
                    const auto [rest, k] = split_constant(simplify(substitute(uniform, zero), ranges_, lb_));
                    auto& rests = offsets[key];
                    const auto [at, fresh] = rests.try_emplace(to_string(rest), k + lo, k + hi);
                    if (!fresh) at->second = {std::min(at->second.first, k + lo), std::max(at->second.second, k + hi)};
                }
            }
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
            // The lanes' part of an in-bounds offset: int32 in int32 programs, as the offset
            // is (a range worked out from run-time sizes alone would make it int64, and the
            // window's offsets twice as wide to build).
            if (prog_.index_width == IndexWidth::I32)
                visit(lanes, [&](const Expr& x) {
                    if (x->type == Type::I64 && offset_nodes_.insert(x.get()).second) pinned_.push_back(x);
                });
            keys.push_back(key);
            window_lanes.push_back(lanes);
            window_bytes.push_back(e_bytes);
        };
        walk(k_.value, -1);
        vector_var_ = -1;
        // Byte windows read in a tap loop at a few consecutive offsets (the channels of
        // channels-last pixels: c = 0, 1, 2 of the same taps): their windows reach `slack`
        // bytes further, so that one pair of loads per tap serves all of them (shared_).
        std::map<std::string, int> slack;
        for (const auto& [key, rests] : offsets) {
            std::int64_t most = 0;
            for (const auto& [rest, span] : rests) most = std::max(most, span.second - span.first);
            if (most <= 0 || most > 3) continue;
            slack[key] = static_cast<int>(most);
            for (const auto& [rest, span] : rests)
                if (span.second - span.first == most) shared_[key][rest] = span.first;
        }
        const auto& [begin, end] = bounds_text[d];
        for (std::size_t i = 0; i < window_lanes.size(); ++i) {
            const std::string table = fmt::format("wt{}", next_temp_++);
            // One window per block of kLanes outputs, and one more for the vector that ends
            // at the loop's end (the tail).
            line(fmt::format("const window_table<{}> {}(({} - {}) / kLanes + 1);", window_bytes[i], table, end, begin));
            for (int tail = 0; tail < 2; ++tail) {
                if (tail == 0)
                    line(fmt::format("for (std::int64_t v{0} = {1}; v{0} + kLanes <= {2}; v{0} += kLanes) {{", v, begin, end));
                else
                    line(fmt::format("if ({1} - ({0}) >= kLanes) {{ const std::int64_t v{2} = {1} - kLanes;", begin, end, v));
                ++indent_;
                scopes_.emplace_back();
                // The block's index, as in the loop nest: a window whose lanes come from a
                // gather through an earlier window (a table indexed by a clamped column)
                // reads that window's entry for this block.
                line(fmt::format("const std::int64_t blk{} = {};", v,
                                 tail == 0 ? fmt::format("(v{} - {}) / kLanes", v, begin)
                                           : fmt::format("({} - {}) / kLanes", end, begin)));
                line(fmt::format("(void)blk{};", v));
                std::string lanes;
                if (k_.cpu().vector_width > 16) {
                    // Vectors of more lanes than a register holds of 4-byte elements (a
                    // kernel of bytes): its index vectors are wider than any register, and
                    // GCC lowers their division lane by lane with a divide instruction. Each
                    // lane's offset is worked out by the scalar code instead (a multiply for
                    // a constant divisor), in a loop the compiler vectorizes.
                    const std::string el = expr_ctype(window_lanes[i]);
                    const std::string arr = fmt::format("t{}", next_temp_++), block = fmt::format("t{}", next_temp_++);
                    lanes = fmt::format("t{}", next_temp_++);
                    line(fmt::format("const std::int64_t {} = v{};", block, v));
                    line(fmt::format("{} {}[kLanes];", el, arr));
                    line("for (int lane = 0; lane < kLanes; ++lane) {");
                    ++indent_;
                    scopes_.emplace_back();
                    // (int32 in int32 programs, whose loops run over the dims of buffers of
                    // fewer than 2^30 elements, or where the loop's range allows: the
                    // compiler vectorizes the lanes' division by a constant then, not in
                    // int64.)
                    const std::string vt =
                        prog_.index_width == IndexWidth::I32 ||
                                fits_i32(ranges_.count(v) ? std::optional<Interval>(ranges_.at(v)) : std::nullopt)
                            ? "std::int32_t" : "std::int64_t";
                    line(fmt::format("const {0} v{1} = static_cast<{0}>({2} + lane);", vt, v, block));
                    line(fmt::format("{}[lane] = {};", arr, emit(window_lanes[i])));
                    scopes_.pop_back();
                    --indent_;
                    line("}");
                    line(fmt::format("vec<{}> {};", el, lanes));
                    line(fmt::format("__builtin_memcpy(&{}, {}, sizeof {});", lanes, arr, lanes));
                } else {
                    vector_var_ = v;
                    lanes = emitv(window_lanes[i]).name;
                    vector_var_ = -1;
                }
                const auto sl = slack.find(keys[i]);
                line(fmt::format("{}[blk{}] = make_window<{}>({}{});", table, v, window_bytes[i], lanes,
                                 sl == slack.end() ? "" : fmt::format(", {}", sl->second)));
                scopes_.pop_back();
                --indent_;
                line("}");
            }
            window_tables_[keys[i]] = fmt::format("{}[blk{}]", table, v);
        }
    }
    std::map<std::string, std::string> window_tables_;  // lanes expression -> its precomputed window
    // Window key -> the lane-uniform parts (less their constant term) whose loads share one
    // window read per tap -> the least constant term (the shared read's).
    std::map<std::string, std::map<std::string, std::int64_t>> shared_;
    std::map<std::string, std::string> window_key_;  // window temporary -> its key

    // e as (the sum of its non-constant terms, its constant term).
    std::pair<Expr, std::int64_t> split_constant(const Expr& e) const {
        Expr rest;
        std::int64_t k = 0;
        for (const Expr& t : sum_terms(e)) {
            if (is_const(t)) k += t->ival;
            else rest = rest ? add(rest, t) : t;
        }
        return {rest ? rest : iconst(0, e->type), k};
    }

    // A byte load in a tap loop whose offset is (a part that differs across lanes but not
    // across taps) + (a part the same in every lane): the lanes' offsets are worked out once
    // before the loop (window_u8) and each tap reads them from one window of memory.
    void hoist_gather(const Expr& load, const Expr& off, int r) override {
        if (vector_var_ < 0 || !schedule::read_through_windows(prog_.buffer(load->buffer).type)) return;
        Expr lanes, uniform;
        if (!split_gather(off, r, lanes, uniform)) return;
        const std::size_t e_bytes = type_bytes(prog_.buffer(load->buffer).type);
        std::string w;
        // (The last vector starts off the blocks' grid: it has its own entry.)
        const auto& tables = window_tables_;
        if (auto t = tables.find(fmt::format("{}|{}", e_bytes, to_string(lanes))); t != tables.end()) {
            w = temp(fmt::format("lane_window<{}>&", e_bytes), t->second);
            window_key_[w] = t->first;
        } else {
            const VName v = emitv(lanes);
            w = temp(fmt::format("lane_window<{}>", e_bytes), fmt::format("make_window<{}>({})", e_bytes, v.name));
        }
        scopes_.back().windows[load.get()] = {w, uniform};
    }

    // Tap pairs (schedule/tap_pairs.h): a tap loop of cast<i32>(a) * cast<i32>(b) terms
    // with 16-bit-range factors runs two taps per step, each pair one 16-bit multiply-add
    // into the int32 accumulator (the preamble's t_madd_pairs: pmaddwd), then an odd last tap
    // the plain way. Per sum: a(r), b(r), a(r + 1), b(r + 1); the second tap's loads read
    // the windows hoisted for them here, before the loop.
    std::unordered_map<const Node*, std::array<Expr, 4>> pair_terms_;

    bool prepare_tap_pairs(const std::vector<Expr>& sums) override {
        if (vector_var_ < 0 || !k_.cpu().tap_pairs) return false;
        std::vector<std::array<Expr, 4>> terms;
        for (const Expr& s : sums) {
            const auto f = schedule::tap_pair_factors(s);
            if (!f || !varying(s)) return false;
            const int r = s->var;
            Expr rv = var(r);
            visit(s->args[0], [&](const Expr& x) {
                if (x->op == Op::Var && x->var == r) rv = x;
            });
            const std::vector<std::pair<int, Expr>> next = {{r, add(rv, iconst(1, rv->type))}};
            std::array<Expr, 4> t = {f->a, f->b, simplify(substitute(f->a, next), ranges_, lb_),
                                     simplify(substitute(f->b, next), ranges_, lb_)};
            for (const Expr& x : t) pinned_.push_back(x);
            terms.push_back(t);
        }
        for (std::size_t i = 0; i < sums.size(); ++i) {
            hoist_invariants(terms[i][2], sums[i]->var, /*vector=*/true);
            hoist_invariants(terms[i][3], sums[i]->var, /*vector=*/true);
            pair_terms_[sums[i].get()] = terms[i];
            // A factor whose two taps are bytes of the same window, a tap-invariant distance
            // apart: its pair gather's masks and index, once before the loop.
            for (int f = 0; f < 2; ++f) {
                const Expr& x0 = terms[i][static_cast<std::size_t>(f)];
                const Expr& x1 = terms[i][static_cast<std::size_t>(f + 2)];
                const auto* w0 = find_window(x0);
                const auto* w1 = find_window(x1);
                if (!w0 || !w1 || w0->first != w1->first || type_bytes(x0->type) != 1 ||
                    w0->second->type != w1->second->type)
                    continue;
                const Expr step = simplify(sub(w1->second, w0->second), ranges_, lb_);
                pinned_.push_back(step);
                if (varying(step) || depends_on_var(step, sums[i]->var)) continue;
                pair_windows_[x0.get()] = step;
            }
        }
        return true;
    }
    // A factor's first-tap load -> the distance of its second tap in its window (its pair
    // window is made at the top of the pair loop's branch: the plain branch does not pay).
    std::unordered_map<const Node*, Expr> pair_windows_;

    void emit_tap_pairs(const std::vector<Expr>& sums, const std::vector<std::string>& accs,
                        const std::string& n) override {
        const int r = sums.front()->var;
        // Both taps' factors in one element type each (a scalar: the same for every lane).
        auto factor = [&](const Expr& x) {
            const VName v = emitv(x);
            const std::string el = ctype(x->type);
            return v.vector ? fmt::format("to_v<vec<{}>>({})", el, v.name) : fmt::format("static_cast<{}>({})", el, v.name);
        };
        // A factor's two taps as 16-bit pairs: where both are bytes read through the same
        // window, one gather of both taps in pair order (gather_window_pairs); else the two
        // values, interleaved.
        std::unordered_map<const Node*, std::string> made;  // first-tap load -> its pair window
        auto pairs = [&](const Expr& x0, const Expr& x1) {
            const auto pw = made.find(x0.get());
            const auto* w0 = find_window(x0);
            if (pw != made.end() && w0) {
                const std::string g = temp(fmt::format("pair_v<{}>", ctype(x0->type)),
                                           fmt::format("{}(b{} + {} + {}.first, {}, {})",
                                                       one_window() ? "gather_window_pairs1" : "gather_window_pairs",
                                                       x0->buffer, emit(w0->second), w0->first, w0->first, pw->second));
                return fmt::format("t_widen_pairs<{}>({})", ctype(x0->type), g);
            }
            return fmt::format("t_pairs16({}, {})", factor(x0), factor(x1));
        };
        // One tap the plain way (the odd last tap, and every tap of the plain loop).
        auto plain_tap = [&] {
            ++indent_;
            scopes_.emplace_back();
            for (std::size_t i = 0; i < sums.size(); ++i) accumulate_v(accs[i], "std::int32_t", sums[i]->args[0]);
            scopes_.pop_back();
            --indent_;
            line("}");
        };
        // Few taps: the plain loop (the pairs' setup and odd last tap would cost more than
        // they save); the preamble's kTapPairsMin says how few.
        line(fmt::format("if ({} >= kTapPairsMin) {{", n));
        ++indent_;
        scopes_.emplace_back();
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const std::array<Expr, 4>& t = pair_terms_.at(sums[i].get());
            for (std::size_t f = 0; f < 2; ++f) {
                const auto step = pair_windows_.find(t[f].get());
                const auto* w0 = find_window(t[f]);
                if (step == pair_windows_.end() || !w0) continue;
                made[t[f].get()] = temp("pair_window", fmt::format("make_pair_window({}, {})", w0->first, emit(step->second)));
            }
        }
        line(fmt::format("std::int32_t r{} = 0;", r));
        line("#pragma GCC unroll 2");
        line(fmt::format("for (; r{0} + 1 < {1}; r{0} += 2) {{", r, n));
        ++indent_;
        scopes_.emplace_back();
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const std::array<Expr, 4>& t = pair_terms_.at(sums[i].get());
            const std::string a = pairs(t[0], t[2]), b = pairs(t[1], t[3]);
            line(fmt::format("{0} = t_madd_pairs({0}, {1}, {2});", accs[i], a, b));
        }
        scopes_.pop_back();
        --indent_;
        line("}");
        // An odd number of taps: the last one alone.
        line(fmt::format("if (r{} < {}) {{", r, n));
        plain_tap();
        scopes_.pop_back();
        --indent_;
        line("} else {");
        ++indent_;
        line(unroll_pragma());
        line(fmt::format("for (std::int32_t r{0} = 0; r{0} < {1}; ++r{0}) {{", r, n));
        plain_tap();
        --indent_;
        line("}");
    }

    // The window a load in a tap loop reads through (its name and the lane-uniform part of
    // its offset), or null.
    const std::pair<std::string, Expr>* find_window(const Expr& load) const {
        if (load->op != Op::Load) return nullptr;
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->windows.find(load.get());
            if (f != it->windows.end()) return &f->second;
        }
        return nullptr;
    }

    // Whether e takes a different value in each lane of the vector body.
    bool varying(const Expr& e) override {
        if (vector_var_ < 0) return false;
        auto it = varying_memo_.find(e.get());
        if (it != varying_memo_.end()) return it->second;
        bool v = e->op == Op::Var && e->var == vector_var_;
        for (const auto& a : e->args) v = varying(a) || v;
        pinned_.push_back(e);
        varying_memo_[e.get()] = v;
        return v;
    }

    std::string vtemp(const std::string& elem, const std::string& code) {
        return temp(fmt::format("vec<{}>", elem), code);
    }

    static std::string mask_elem(const std::string& elem) {
        if (elem == "float" || elem == "std::int32_t" || elem == "std::uint32_t") return "std::int32_t";
        if (elem == "double" || elem == "std::int64_t") return "std::int64_t";
        if (elem == "std::int16_t" || elem == "std::uint16_t") return "std::int16_t";
        return "std::int8_t";
    }

    // The vector (or, where uniform, scalar) value of e in the vector body.
    VName emitv(const Expr& e) {
        if (!varying(e)) return {emit(e), false, e->type == Type::Bool ? "bool" : expr_ctype(e)};
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->vby_node.find(e.get());
            if (f != it->vby_node.end()) return f->second;
        }
        VName r = emitv_compound(e);
        scopes_.back().vby_node[e.get()] = r;
        scopes_.back().pinned.push_back(e);
        return r;
    }


    // A load in a tap loop that reads through a window prepared before the loop (else
    // nothing): its gather, from a read this tap shares with the other channels where
    // there is one. With `widen` (bytes, one or two groups), straight into int32 lanes.
    std::optional<VName> window_gather(const Expr& e, bool widen) {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            if (window_copy_ == WindowCopy::General && type_bytes(prog_.buffer(e->buffer).type) == 4) break;
            auto f = it->windows.find(e.get());
            if (f == it->windows.end()) continue;
            const std::string& w = f->second.first;
            const std::string el = widen ? "std::int32_t" : ctype(prog_.buffer(e->buffer).type);
            const int groups = one_window() ? 1 : 2;
            // A byte window whose read this tap serves several loads: read once (in the tap
            // loop's scope), each load's lanes picked at its distance.
            if (const auto wk = window_key_.find(w); wk != window_key_.end() && (one_window() || two_windows())) {
                if (const auto sh = shared_.find(wk->second); sh != shared_.end()) {
                    const auto [rest, k] = split_constant(f->second.second);
                    if (const auto least = sh->second.find(to_string(rest)); least != sh->second.end()) {
                        const std::string name = fmt::format("window-read|{}|{}", w, least->first);
                        auto& reads = scopes_.back().by_key;
                        auto read = reads.find(name);
                        if (read == reads.end()) {
                            pinned_.push_back(rest);
                            const std::string t = fmt::format("t{}", next_temp_++);
                            line(fmt::format("const t_window_reads {} = read_window{}(b{} + {} + {} + {}.first, {});", t,
                                             one_window() ? 1 : 2, e->buffer, emit(rest), least->second, w, w));
                            read = reads.emplace(name, t).first;
                        }
                        return VName{vtemp(el, fmt::format("{}({}, {}, {})",
                                                           widen ? fmt::format("pick_window_u32<{}>", groups)
                                                                 : fmt::format("pick_window{}", groups),
                                                           read->second, w, k - least->second)),
                                     true, el};
                    }
                }
            }
            const std::string gather = !one_window() && !two_windows() ? "gather_window"
                                       : widen ? fmt::format("gather_window_u32<{}>", groups)
                                               : fmt::format("gather_window{}", groups);
            return VName{vtemp(el, fmt::format("{}(b{} + {} + {}.first, {})", gather, e->buffer, emit(f->second.second), w, w)),
                         true, el};
        }
        return std::nullopt;
    }

    VName emitv_compound(const Expr& e) {
        auto V = [&](const std::string& elem, const VName& x) {
            return fmt::format("to_v<vec<{}>>({})", elem, x.name);
        };
        if (e->op == Op::Var) {
            const std::string el = ranges_.count(e->var) && fits_i32(ranges_.at(e->var)) ? "std::int32_t" : "std::int64_t";
            return {vtemp(el, fmt::format("iota_v<vec<{}>>(v{})", el, e->var)), true, el};
        }
        // Bytes read through a window in a tap loop and widened to int32 (a uint8 pass's
        // pixel): the window's permute puts each byte straight into its int32 lane.
        if (e->op == Op::Cast && e->type == Type::I32 && e->args[0]->op == Op::Load &&
            type_bytes(prog_.buffer(e->args[0]->buffer).type) == 1 && (one_window() || two_windows()))
            if (auto g = window_gather(e->args[0], true)) return *g;
        if (e->op == Op::Load) {
            if (auto g = window_gather(e, false)) return *g;
            const Buffer& b = prog_.buffer(e->buffer);
            // An entry of a byte function's table, by the byte it looks up.
            // (Its plane's entries, from a start the same in every lane.)
            if (const auto byte = schedule::byte_table_argument(prog_, e)) {
                const Expr plane = offset_expr(b, {e->args[0], e->args[1], iconst(0), iconst(0)});
                if (!depends_on_var(plane, vector_var_)) {
                    const VName x = emitv(*byte);
                    const std::string bytes =
                        x.vector && x.elem == "std::uint8_t" ? x.name : fmt::format("to_v<vec<std::uint8_t>>({})", x.name);
                    return {vtemp("std::uint8_t", fmt::format("lut256_v(b{} + {}, {})", b.id, emit(simplify(plane)), bytes)),
                            true, "std::uint8_t"};
                }
            }
            const Expr off = offset_expr(b, e->args);
            const std::string el = ctype(b.type);
            const auto stride = linear_stride(off, vector_var_);
            if (!stride && schedule::read_through_windows(b.type)) {
                // A gather whose lanes' part has a precomputed window (outside tap loops).
                Expr lanes, uniform;
                if (split_gather(off, -1, lanes, uniform)) {
                    const std::size_t e_bytes = type_bytes(b.type);
                    const auto& tables = window_tables_;
                    if (auto t = tables.find(fmt::format("{}|{}", e_bytes, to_string(lanes))); t != tables.end()) {
                        const std::string w = temp(fmt::format("lane_window<{}>&", e_bytes), t->second);
                        return {vtemp(el, fmt::format("gather_window_any(b{} + {} + {}.first, {})", b.id, emit(uniform), w, w)),
                                true, el};
                    }
                }
            }
            if (stride && *stride == 0) {
                // The address does not vary across lanes (e.g. a clamp pins it): one
                // load, broadcast.
                return {vtemp(el, fmt::format("to_v<vec<{}>>(b{}[{}])", el, b.id, emit(off))), true, el};
            }
            if (stride) {
                const std::string base = emit(off);  // lane 0
                if (*stride == 1) return {vtemp(el, fmt::format("load_v(b{} + {})", b.id, base)), true, el};
                if (*stride == -1)
                    return {vtemp(el, fmt::format("reverse_v(load_v(b{} + {} - (kLanes - 1)))", b.id, base)), true, el};
                return {vtemp(el, fmt::format("gather_stride_v(b{} + {}, {})", b.id, base, *stride)), true, el};
            }
            const VName o = emitv(off);
            // Bytes of a Temp buffer, which has kTempTailBytes to spare: gathered as words;
            // of the caller's input, as words that stay inside its span.
            if (type_bytes(b.type) == 1 && b.role == BufferRole::Input) {
                check_planned(b, LoadForm::BoundedWordGather);
                return {vtemp(el, fmt::format("gather_bytes_bounded_v(b{}, {}, {})", b.id, o.name, emit(buffer_span(b)))),
                        true, el};
            }
            const bool words = type_bytes(b.type) == 1 && b.role == BufferRole::Temp;
            check_planned(b, words ? LoadForm::WordGather : LoadForm::LaneGather);
            return {vtemp(el, fmt::format("{}(b{}, {})", words ? "gather_bytes_v" : "gather_v", b.id, o.name)), true, el};
        }
        if (e->op == Op::Sum) {
            const std::string el = velem(e);
            const int r = e->var;
            const std::string acc = fmt::format("t{}", next_temp_++);
            const bool plain = reduce_kind(e) == Reduce::Add;
            line(fmt::format("vec<{}> {} = {};", el, acc, vector_identity(e, el)));
            const auto fixed = const_extent(e);
            if (!ir::tap_loop(e)) {
                for (std::int64_t j = 0; j < *fixed; ++j) {
                    const VarRanges saved = ranges_;
                    ranges_[r] = Interval{j, j};
                    const Expr term = simplify(substitute(e->args[0], {{r, iconst(j)}}), ranges_, lb_);
                    pinned_.push_back(term);
                    const std::string step = plain ? fmt::format("{} = {} + {};", acc, acc, V(el, emitv(term)))
                                                   : reduce_step_v(e, acc, el, term);
                    ranges_ = saved;
                    line(step);
                }
            } else if (const auto w = window_of(e, e->args[0])) {
                window_loops({*w}, unroll_pragma(), /*vector=*/true,
                             [&](std::size_t, const Expr& t) { accumulate(e, acc, el, t); });
            } else {
                const std::string n = emit(sum_extent(e));
                hoist_invariants(e->args[0], r, /*vector=*/true);
                const bool pairs = plain && prepare_tap_pairs({e});
                emit_tap_loop_variants([&] {
                    if (pairs) {
                        emit_tap_pairs({e}, {acc}, n);
                        return;
                    }
                    line(unroll_pragma());
                    line(fmt::format("for (std::int32_t r{0} = 0; r{0} < {1}; ++r{0}) {{", r, n));
                    ++indent_;
                    scopes_.emplace_back();
                    accumulate(e, acc, el, e->args[0]);
                    scopes_.pop_back();
                    --indent_;
                    line("}");
                });
            }
            return {acc, true, el};
        }
        std::vector<VName> a;
        for (const auto& x : e->args) a.push_back(emitv(x));
        const std::string el = e->type == Type::Bool ? "" : velem(e);
        auto bin = [&](const char* sym) {
            return VName{vtemp(el, fmt::format("{} {} {}", V(el, a[0]), sym, V(el, a[1]))), true, el};
        };
        // Operands of a comparison compute in the wider of their types.
        auto cmp = [&](const char* sym) {
            std::string c = a[0].vector ? a[0].elem : a[1].elem;
            if (a[0].vector && a[1].vector && a[0].elem != a[1].elem)
                c = (a[0].elem == "std::int64_t" || a[1].elem == "std::int64_t") ? "std::int64_t" : a[0].elem;
            if (!a[0].vector && !a[1].vector) c = a[0].elem;
            const std::string m = mask_elem(c);
            return VName{vtemp(m, fmt::format("{} {} {}", V(c, a[0]), sym, V(c, a[1]))), true, m};
        };
        auto mask = [&](const VName& x, const std::string& m) {
            if (!x.vector) return fmt::format("to_v<vec<{}>>({} ? -1 : 0)", m, x.name);
            return V(m, x);
        };
        switch (e->op) {
            case Op::Add: return bin("+");
            case Op::Sub: return bin("-");
            case Op::Mul: {
                // int32 products of factors that fit in 16 bits, one of them not negative
                // (a byte times a 16-bit weight): one 16-bit multiply-add (mul16_v) instead
                // of a 32-bit multiply, which costs twice as much on Intel cores.
                if (el == "std::int32_t") {
                    if (const auto f = mul16_order(e))
                        return {vtemp(el, fmt::format("mul16_v({}, {})", V(el, a[*f]), V(el, a[1 - *f]))), true, el};
                }
                return bin("*");
            }
            case Op::Div: return bin("/");
            case Op::Min: return {vtemp(el, fmt::format("min_v({}, {})", V(el, a[0]), V(el, a[1]))), true, el};
            case Op::Max: return {vtemp(el, fmt::format("max_v({}, {})", V(el, a[0]), V(el, a[1]))), true, el};
            case Op::Neg: return {vtemp(el, fmt::format("-{}", V(el, a[0]))), true, el};
            case Op::Fma:
                return {vtemp(el, fmt::format("fma_v({}, {}, {})", V(el, a[0]), V(el, a[1]), V(el, a[2]))), true, el};
            case Op::Floor:
                if (el != "float") break;
                return {vtemp(el, fmt::format("floor_v({})", V(el, a[0]))), true, el};
            case Op::Pow:
                if (el != "float") break;
                return {vtemp(el, fmt::format("pow_v({}, {})", V(el, a[0]), V(el, a[1]))), true, el};
            case Op::RoundEven:
                if (el != "float") break;
                return {vtemp(el, fmt::format("round_even_v({})", V(el, a[0]))), true, el};
            case Op::Abs: return {vtemp(el, fmt::format("abs_v({})", V(el, a[0]))), true, el};
            case Op::ShiftRight:
                return {vtemp(el, fmt::format("{} >> {}", V(el, a[0]), emit(e->args[1]))), true, el};
            case Op::FloorDiv:
            case Op::Mod: {
                const auto lhs = bounds(e->args[0], ranges_, lb_);
                const bool plain = lhs && lhs->lo >= 0;
                if (plain) return bin(e->op == Op::FloorDiv ? "/" : "%");
                return {vtemp(el, fmt::format("{}({}, {})", e->op == Op::FloorDiv ? "lanewise_floordiv" : "lanewise_mod",
                                              V(el, a[0]), V(el, a[1]))),
                        true, el};
            }
            case Op::Lt: return cmp("<");
            case Op::Le: return cmp("<=");
            case Op::Eq: return cmp("==");
            case Op::Ne: return cmp("!=");
            case Op::And:
            case Op::Or: {
                const std::string m = a[0].vector ? a[0].elem : a[1].elem;
                return {vtemp(m, fmt::format("{} {} {}", mask(a[0], m), e->op == Op::And ? "&" : "|", mask(a[1], m))),
                        true, m};
            }
            case Op::Not: return {vtemp(a[0].elem, fmt::format("~{}", mask(a[0], a[0].elem))), true, a[0].elem};
            case Op::Select: {
                if (!a[0].vector)
                    return {vtemp(el, fmt::format("{} ? {} : {}", a[0].name, V(el, a[1]), V(el, a[2]))), true, el};
                const std::string m = mask_elem(el);
                return {vtemp(el, fmt::format("{} ? {} : {}", mask(a[0], m), V(el, a[1]), V(el, a[2]))), true, el};
            }
            case Op::Cast:
                if (e->args[0]->type == Type::Bool)
                    return {vtemp(el, fmt::format("{} ? to_v<vec<{}>>(1) : to_v<vec<{}>>(0)", mask(a[0], mask_elem(el)), el, el)),
                            true, el};
                if (const std::string fn = narrow_cast_fn(e->type, e->args[0]->type); !fn.empty()) {
                    const std::string src = is_storage_only(e->args[0]->type) ? "std::uint16_t" : "float";
                    return {vtemp(el, fmt::format("{}_v({})", fn, V(src, a[0]))), true, el};
                }
                return {vtemp(el, V(el, a[0])), true, el};
            case Op::SatCast: {
                const std::string src = a[0].vector ? a[0].elem : velem(e->args[0]);
                if (is_int(e->type) && e->type != Type::I64)
                    return {vtemp(el, fmt::format("sat_v<{}>({})", el, V(src, a[0]))), true, el};
                return {vtemp(el, V(el, a[0])), true, el};
            }
            default: break;
        }
        // Anything else: lane by lane through the scalar code path would need the
        // lane's variables; no decomposition produces such a node today.
        fail("internal: codegen cannot vectorize op {} of type {}", op_name(e->op), type_name(e->type));
    }

    std::unordered_map<const Node*, bool> varying_memo_;
};

}  // namespace toroid::codegen
