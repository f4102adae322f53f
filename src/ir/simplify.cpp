// Interval analysis, affine normalization and the range-driven rewrites of simplify().
// Affine rewrites are identities in the ring of int64 (wrap-around included), so they
// need no ranges; every rewrite that divides or compares first proves the values exact.
#include "ir/simplify.h"

#include <functional>

#include <cstring>

#include "core/error.h"

#include <algorithm>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <string>
#include <vector>

namespace toroid::ir {
namespace {

using I64 = std::int64_t;
constexpr I64 kI64Min = std::numeric_limits<I64>::min();

I64 wadd(I64 a, I64 b) { return static_cast<I64>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b)); }
I64 wmul(I64 a, I64 b) { return static_cast<I64>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b)); }
I64 wneg(I64 a) { return static_cast<I64>(0 - static_cast<std::uint64_t>(a)); }

std::optional<I64> cadd(I64 a, I64 b) {
    I64 r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}
std::optional<I64> csub(I64 a, I64 b) {
    I64 r;
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    return r;
}
std::optional<I64> cmul(I64 a, I64 b) {
    I64 r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// Python-style division; nullopt for a zero divisor or INT64_MIN / -1.
std::optional<I64> cfloordiv(I64 a, I64 b) {
    if (b == 0 || (a == kI64Min && b == -1)) return std::nullopt;
    I64 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}
I64 floordiv_pos(I64 a, I64 c) { return *cfloordiv(a, c); }  // c > 0
I64 floormod_pos(I64 a, I64 c) {                              // c > 0
    const I64 r = a % c;
    return r < 0 ? r + c : r;
}

std::optional<Interval> iadd(Interval a, Interval b) {
    const auto lo = cadd(a.lo, b.lo), hi = cadd(a.hi, b.hi);
    if (!lo || !hi) return std::nullopt;
    return Interval{*lo, *hi};
}
std::optional<Interval> isub(Interval a, Interval b) {
    const auto lo = csub(a.lo, b.hi), hi = csub(a.hi, b.lo);
    if (!lo || !hi) return std::nullopt;
    return Interval{*lo, *hi};
}
// The hull of f over the four corners (f monotone in each argument on the intervals).
template <typename F>
std::optional<Interval> corners(Interval a, Interval b, F f) {
    const std::optional<I64> v[4] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
    Interval r{std::numeric_limits<I64>::max(), kI64Min};
    for (const auto& x : v) {
        if (!x) return std::nullopt;
        r.lo = std::min(r.lo, *x);
        r.hi = std::max(r.hi, *x);
    }
    return r;
}

Interval type_range(Type t) { return {int_min(t), int_max(t)}; }
bool within(Interval a, Interval outer) { return a.lo >= outer.lo && a.hi <= outer.hi; }

// What interval analysis works in: the var ranges of the current scope, the tables'
// ranges, and a cache of results per node and scope. Nodes are immutable and the cache
// holds them alive (so an address is never reused for another node while it is cached);
// ranges change only through ScopedRange, which gives the new scope a fresh id.
struct Analysis {
    Analysis(const VarRanges& r, const LoadBounds& l, const IndexedLoadBounds* il = nullptr) : ranges(r), lb(l), ilb(il) {}
    // The caller's ranges, not a copy (binding a new image size runs many small analyses),
    // and the Sums' reduction variables bound inside them, innermost last.
    const VarRanges& ranges;
    std::vector<std::pair<int, Interval>> scoped;
    std::optional<Interval> range_of(int var) const {
        for (auto it = scoped.rbegin(); it != scoped.rend(); ++it)
            if (it->first == var) return it->second;
        const auto it = ranges.find(var);
        if (it != ranges.end()) return it->second;
        if (is_param_var(var)) {
            const auto i = static_cast<std::size_t>(var - kFirstParamVar);
            if (i < params.size() && (!known || (*known)[i])) return Interval{params[i], params[i]};
        }
        return std::nullopt;
    }
    std::span<const std::int64_t> params;
    const std::vector<bool>* known = nullptr;
    const LoadBounds& lb;
    const IndexedLoadBounds* ilb;
    std::uint64_t scope = 0, next_scope = 0;
    std::map<std::pair<const Node*, std::uint64_t>, std::pair<Expr, std::optional<Interval>>> cache;
};

// Binds a Sum's reduction variable to [0, extent) for the extent of a scope.
class ScopedRange {
public:
    ScopedRange(Analysis& an, int var, Interval iv) : an_(an), outer_scope_(an.scope) {
        an_.scoped.emplace_back(var, iv);
        an_.scope = ++an_.next_scope;
    }
    ~ScopedRange() {
        an_.scoped.pop_back();
        an_.scope = outer_scope_;
    }
    ScopedRange(const ScopedRange&) = delete;
    ScopedRange& operator=(const ScopedRange&) = delete;

private:
    Analysis& an_;
    std::uint64_t outer_scope_;
};

// 1 / 0 when a op b holds for all / no values in the intervals; nullopt when undecided.
std::optional<bool> decide(Op op, Interval a, Interval b) {
    switch (op) {
        case Op::Lt:
            if (a.hi < b.lo) return true;
            if (a.lo >= b.hi) return false;
            break;
        case Op::Le:
            if (a.hi <= b.lo) return true;
            if (a.lo > b.hi) return false;
            break;
        case Op::Eq:
        case Op::Ne: {
            std::optional<bool> equal;
            if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) equal = true;
            if (a.hi < b.lo || b.hi < a.lo) equal = false;
            if (equal && op == Op::Ne) return !*equal;
            return equal;
        }
        default: break;
    }
    return std::nullopt;
}

std::optional<Interval> bounds_rec(const Expr& e, Analysis& an);

std::optional<Interval> bounds_raw(const Expr& e, Analysis& an) {
    auto arg = [&](std::size_t i) { return bounds_rec(e->args[i], an); };
    switch (e->op) {
        case Op::Const: return Interval{e->ival, e->ival};
        case Op::Var: return an.range_of(e->var);
        case Op::Load: {
            if (an.ilb) {
                std::vector<Interval> index;
                index.reserve(e->args.size());
                for (std::size_t i = 0; i < e->args.size(); ++i) {
                    const auto a = arg(i);
                    if (!a) {
                        index.clear();
                        break;
                    }
                    index.push_back(*a);
                }
                return (*an.ilb)(e->buffer, index);
            }
            if (!an.lb) return std::nullopt;
            return an.lb(e->buffer);
        }
        case Op::Add: {
            const auto a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            return iadd(*a, *b);
        }
        case Op::Sub: {
            const auto a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            return isub(*a, *b);
        }
        case Op::Mul: {
            const auto a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            return corners(*a, *b, cmul);
        }
        case Op::FloorDiv: {
            const auto a = arg(0), d = arg(1);
            if (!a || !d || (d->lo <= 0 && d->hi >= 0)) return std::nullopt;
            // For a divisor of fixed sign, floor(x / d) is monotone in x and in d.
            return corners(*a, *d, cfloordiv);
        }
        case Op::Mod: {
            const auto a = arg(0), d = arg(1);
            if (!d) return std::nullopt;
            if (d->lo > 0) {
                if (a && a->lo >= 0 && a->hi < d->lo) return a;
                if (a && d->lo == d->hi) {
                    const I64 c = d->lo;
                    if (floordiv_pos(a->lo, c) == floordiv_pos(a->hi, c))
                        return Interval{floormod_pos(a->lo, c), floormod_pos(a->hi, c)};
                }
                I64 hi = d->hi - 1;
                if (a && a->lo >= 0) hi = std::min(hi, a->hi);
                return Interval{0, hi};
            }
            if (d->hi < 0) return Interval{d->lo + 1, 0};
            return std::nullopt;
        }
        case Op::Min:
        case Op::Max: {
            // An unknown operand may hold any value of its type: min/max with a
            // known one still bounds one side (clamp(cast(float), lo, hi) is known).
            auto a = arg(0), b = arg(1);
            if (!a && !b) return std::nullopt;
            if (!a) a = type_range(e->type);
            if (!b) b = type_range(e->type);
            if (e->op == Op::Min) return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
            return Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
        }
        case Op::Neg: {
            const auto a = arg(0);
            if (!a) return std::nullopt;
            return isub(Interval{0, 0}, *a);
        }
        case Op::Abs: {
            const auto a = arg(0);
            if (!a) return std::nullopt;
            if (a->lo >= 0) return a;
            const auto n = isub(Interval{0, 0}, *a);
            if (!n) return std::nullopt;
            if (a->hi <= 0) return n;
            return Interval{0, std::max(n->hi, a->hi)};
        }
        case Op::ShiftRight: {
            const auto a = arg(0), s = arg(1);
            if (!a || !s || s->lo < 0 || s->hi > 63) return std::nullopt;
            // Shifting right moves a value toward 0 (or -1): the extremes are at the extreme shifts.
            return Interval{std::min(a->lo >> s->lo, a->lo >> s->hi), std::max(a->hi >> s->lo, a->hi >> s->hi)};
        }
        case Op::Lt:
        case Op::Le:
        case Op::Eq:
        case Op::Ne: {
            if (is_float(e->args[0]->type)) return Interval{0, 1};
            const auto a = arg(0), b = arg(1);
            if (!a || !b) return Interval{0, 1};
            const auto d = decide(e->op, *a, *b);
            if (!d) return Interval{0, 1};
            return Interval{*d ? 1 : 0, *d ? 1 : 0};
        }
        case Op::And:
        case Op::Or: {
            const auto a = arg(0), b = arg(1);
            if (!a || !b) return Interval{0, 1};
            if (e->op == Op::And) return Interval{a->lo && b->lo ? 1 : 0, a->hi && b->hi ? 1 : 0};
            return Interval{a->lo || b->lo ? 1 : 0, a->hi || b->hi ? 1 : 0};
        }
        case Op::Not: {
            const auto a = arg(0);
            if (!a) return Interval{0, 1};
            return Interval{1 - a->hi, 1 - a->lo};
        }
        case Op::Select: {
            const auto c = arg(0);
            if (c && c->lo == 1) return arg(1);
            if (c && c->hi == 0) return arg(2);
            const auto a = arg(1), b = arg(2);
            if (!a || !b) return std::nullopt;
            return Interval{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
        }
        case Op::Cast: {
            const Expr& src = e->args[0];
            if (is_float(src->type)) return e->type == Type::Bool ? std::optional<Interval>(Interval{0, 1}) : std::nullopt;
            const auto a = arg(0);
            if (e->type == Type::Bool) {
                if (!a) return Interval{0, 1};
                if (a->lo > 0 || a->hi < 0) return Interval{1, 1};
                if (a->lo == 0 && a->hi == 0) return Interval{0, 0};
                return Interval{0, 1};
            }
            return a;  // a value outside the target type wraps: bounds_rec widens to the type
        }
        case Op::SatCast: {
            const Interval tr = type_range(e->type);
            if (is_float(e->args[0]->type)) return tr;
            const auto a = arg(0);
            if (!a) return tr;
            return Interval{std::clamp(a->lo, tr.lo, tr.hi), std::clamp(a->hi, tr.lo, tr.hi)};
        }
        case Op::Sum: {
            const auto n = arg(1);
            if (!n) return std::nullopt;
            const I64 most = std::max<I64>(n->hi, 0), least = std::max<I64>(n->lo, 0);
            if (most == 0) return Interval{0, 0};
            std::optional<Interval> body;
            {
                ScopedRange scope(an, e->var, Interval{0, most - 1});
                body = arg(0);
            }
            if (!body) return std::nullopt;
            // The least or greatest of at least one term lies in the body's range.
            if (reduce_kind(e) == Reduce::Min || reduce_kind(e) == Reduce::Max) return least >= 1 ? body : std::nullopt;
            // Between `least` and `most` terms, each within the body's range (and 0 terms: 0).
            const auto a = cmul(body->lo, least), b = cmul(body->lo, most), c = cmul(body->hi, least),
                       d = cmul(body->hi, most);
            if (!a || !b || !c || !d) return std::nullopt;
            return Interval{std::min({*a, *b, I64{0}}), std::max({*c, *d, I64{0}})};
        }
        case Op::Div:
        case Op::Fma:
        case Op::Pow:
        case Op::Floor:
        case Op::RoundEven: break;
    }
    return std::nullopt;
}

std::optional<Interval> bounds_rec(const Expr& e, Analysis& an) {
    if (is_float(e->type)) return std::nullopt;
    const auto key = std::make_pair(e.get(), an.scope);
    if (const auto it = an.cache.find(key); it != an.cache.end()) return it->second.second;
    auto r = bounds_raw(e, an);
    if (r && r->lo > r->hi) return std::nullopt;  // an empty range given for a var or a table
    // Every value of a narrow type lies in its range, whatever wrapped on the way.
    if (e->type != Type::I64) {
        const Interval tr = type_range(e->type);
        if (!r || !within(*r, tr)) r = tr;
    }
    an.cache.emplace(key, std::make_pair(e, r));
    return r;
}

// ---- affine forms ----

// sum(coefficient * atom) + k, in the ring of int64.
struct Linear {
    std::vector<std::pair<Expr, I64>> terms;
    I64 k = 0;

    void add(const Expr& atom, I64 c) {
        if (c == 0) return;
        for (auto& t : terms)
            if (structurally_equal(t.first, atom)) {
                t.second = wadd(t.second, c);
                return;
            }
        terms.emplace_back(atom, c);
    }
    void prune() {
        std::erase_if(terms, [](const auto& t) { return t.second == 0; });
    }
};

void collect(const Expr& e, I64 scale, Linear& out) {
    if (scale == 0) return;
    switch (e->op) {
        case Op::Const: out.k = wadd(out.k, wmul(scale, e->ival)); return;
        case Op::Add:
            collect(e->args[0], scale, out);
            collect(e->args[1], scale, out);
            return;
        case Op::Sub:
            collect(e->args[0], scale, out);
            collect(e->args[1], wneg(scale), out);
            return;
        case Op::Neg: collect(e->args[0], wneg(scale), out); return;
        case Op::Mul:
            if (is_const(e->args[1])) return collect(e->args[0], wmul(scale, e->args[1]->ival), out);
            if (is_const(e->args[0])) return collect(e->args[1], wmul(scale, e->args[0]->ival), out);
            break;
        default: break;
    }
    out.add(e, scale);
}

// c * floordiv(x, c) + mod(x, c) == x for every integer x and c > 0 (in the ring, too).
void merge_div_mod(Linear& l) {
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t i = 0; i < l.terms.size() && !changed; ++i) {
            const auto [d, kd] = l.terms[i];
            if (d->op != Op::FloorDiv || !is_const(d->args[1]) || d->args[1]->ival <= 0) continue;
            for (std::size_t j = 0; j < l.terms.size(); ++j) {
                const auto [m, km] = l.terms[j];
                if (m->op != Op::Mod || !structurally_equal(m->args[1], d->args[1]) ||
                    !structurally_equal(m->args[0], d->args[0]))
                    continue;
                const auto expect = cmul(km, d->args[1]->ival);
                if (!expect || *expect != kd) continue;
                l.terms[i].second = 0;
                l.terms[j].second = 0;
                l.prune();
                collect(d->args[0], km, l);
                changed = true;
                break;
            }
        }
    }
}

Linear linearize(const Expr& e) {
    Linear l;
    collect(e, 1, l);
    l.prune();
    merge_div_mod(l);
    return l;
}

Expr build(Linear l, StructuralHash& hash) {
    l.prune();
    // Canonical order, from the terms that vary least to those that vary most: run-time
    // parameters, then other terms by a structural hash (the same in every run, so generated
    // code and its cache key are stable), then loop vars by id (outer loops first), then
    // reduction vars. Every prefix of the sum is then a subexpression that code generation
    // can compute once outside the loops that do not change it (a tap loop's base address).
    std::vector<std::pair<std::string, std::size_t>> keys;
    for (std::size_t i = 0; i < l.terms.size(); ++i) {
        const Expr& a = l.terms[i].first;
        std::string key;
        if (a->op != Op::Var) key = fmt::format("1{:016x}", hash(a));
        else if (is_param_var(a->var)) key = fmt::format("0{:010}", a->var);
        else if (a->var < kFirstReductionVar) key = fmt::format("2{:010}", a->var);
        else key = fmt::format("3{:010}", a->var);
        keys.emplace_back(std::move(key), i);
    }
    std::stable_sort(keys.begin(), keys.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    auto scaled = [](const Expr& atom, I64 c) { return c == 1 ? atom : mul(atom, iconst(c)); };
    // Adds c * atom to r (r may be null), subtracting where c is negative.
    auto append = [&](Expr r, const Expr& atom, I64 c) -> Expr {
        if (!r) return c == -1 ? neg(atom) : scaled(atom, c);
        if (c > 0 || c == kI64Min) return add(r, scaled(atom, c));
        return sub(r, scaled(atom, -c));
    };
    const bool all_negative = std::all_of(l.terms.begin(), l.terms.end(), [](const auto& t) { return t.second < 0; });
    Expr r;
    if (all_negative && l.k > 0) r = iconst(l.k);  // "5 - v0" rather than "-v0 + 5"
    for (const auto& [key, i] : keys) r = append(r, l.terms[i].first, l.terms[i].second);
    if (!r) return iconst(l.k);
    if (all_negative && l.k > 0) return r;
    if (l.k > 0 || l.k == kI64Min) return add(r, iconst(l.k));
    if (l.k < 0) return sub(r, iconst(-l.k));
    return r;
}

// ---- the simplifier ----

class Simplifier {
public:
    Simplifier(const VarRanges& ranges, const LoadBounds& lb) : an_(ranges, lb) {}

    Expr run(const Expr& e) {
        // Memoized per node and range scope: expressions are DAGs.
        const auto key = std::make_pair(e.get(), an_.scope);
        if (const auto it = memo_.find(key); it != memo_.end()) return it->second.second;
        Expr r = run_uncached(e);
        memo_[key] = {e, r};
        return r;
    }

    Expr run_uncached(const Expr& e) {
        Expr n = e;
        if (e->op == Op::Sum) {
            const Expr extent = run(e->args[1]);
            const auto nb = bounds_of(extent);
            if (nb && nb->hi <= 0) return reduce_identity(reduce_kind(e), e->type);
            Expr body;
            if (nb) {
                ScopedRange scope(an_, e->var, Interval{0, nb->hi - 1});
                body = run(e->args[0]);
            } else {
                body = run(e->args[0]);
            }
            if (body != e->args[0] || extent != e->args[1]) n = with_args(e, {body, extent});
        } else if (!e->args.empty()) {
            std::vector<Expr> args;
            args.reserve(e->args.size());
            bool changed = false;
            for (const Expr& a : e->args) {
                args.push_back(run(a));
                changed |= args.back() != a;
            }
            if (changed) n = with_args(e, std::move(args));
        }
        n = rules(n);
        if (!is_float(n->type) && n->op != Op::Const) {
            const auto b = bounds_of(n);
            if (b && b->lo == b->hi) return n->type == Type::Bool ? bconst(b->lo != 0) : iconst(b->lo, n->type);
        }
        return n;
    }

private:
    std::optional<Interval> bounds_of(const Expr& e) { return bounds_rec(e, an_); }

    // Bounds of a - b where a and b have known bounds (so their values are exact); for
    // int64 the difference is also taken in canonical form, where common terms cancel.
    std::optional<Interval> diff_bounds(const Expr& a, const Expr& b) {
        const auto ba = bounds_of(a), bb = bounds_of(b);
        if (!ba || !bb) return std::nullopt;
        auto d = isub(*ba, *bb);
        if (!d) return std::nullopt;
        if (a->type == Type::I64) {
            Linear l = linearize(a);
            const Linear lb = linearize(b);
            for (const auto& [atom, c] : lb.terms) l.add(atom, wneg(c));
            l.k = wadd(l.k, wneg(lb.k));
            if (const auto dd = bounds_of(build(std::move(l), hash_))) {
                // Both are exact values of a - b, which fits in int64: intersect.
                d->lo = std::max(d->lo, dd->lo);
                d->hi = std::min(d->hi, dd->hi);
            }
        }
        return d;
    }

    Expr rules(const Expr& n) {
        switch (n->op) {
            case Op::Add:
            case Op::Sub:
            case Op::Mul:
            case Op::Neg:
                if (n->type == Type::I64) {
                    // Keep the node itself when already canonical: parents then see no change.
                    Expr c = build(linearize(n), hash_);
                    return structurally_equal(c, n) ? n : c;
                }
                return n;
            case Op::FloorDiv:
            case Op::Mod:
                if (n->type == Type::I64 && is_const(n->args[1]) && n->args[1]->ival > 0) return div_mod(n);
                return n;
            case Op::Min:
            case Op::Max: {
                if (!is_int(n->type)) return n;
                const auto d = diff_bounds(n->args[0], n->args[1]);
                if (!d) return n;
                const bool first_smaller = d->hi <= 0, first_larger = d->lo >= 0;
                if (n->op == Op::Min) {
                    if (first_smaller) return n->args[0];
                    if (first_larger) return n->args[1];
                } else {
                    if (first_larger) return n->args[0];
                    if (first_smaller) return n->args[1];
                }
                return n;
            }
            case Op::Lt:
            case Op::Le:
            case Op::Eq:
            case Op::Ne: {
                if (is_float(n->args[0]->type)) return n;
                const auto d = diff_bounds(n->args[0], n->args[1]);
                if (!d) return n;
                const auto r = decide(n->op, *d, Interval{0, 0});
                return r ? bconst(*r) : n;
            }
            case Op::SatCast: {
                const Expr& src = n->args[0];
                if (is_float(src->type)) return n;
                const auto b = bounds_of(src);
                if (b && within(*b, type_range(n->type))) return cast(n->type, src);
                return n;
            }
            case Op::Cast: {
                // cast<T>(cast<U>(x)) with x of type T is x when x's values all fit in U.
                const Expr& inner = n->args[0];
                if (inner->op != Op::Cast || !is_int(n->type) || !is_int(inner->type)) return n;
                const Expr& x = inner->args[0];
                if (x->type != n->type) return n;
                const auto b = bounds_of(x);
                if (b && within(*b, type_range(inner->type))) return x;
                return n;
            }
            default: return n;
        }
    }

    // floordiv / mod of an int64 expr by a constant c > 0.
    Expr div_mod(const Expr& n) {
        const Expr& a = n->args[0];
        const I64 c = n->args[1]->ival;
        const bool is_div = n->op == Op::FloorDiv;
        // Nested by constants: floor(floor(x / c1) / c2) == floor(x / (c1 c2)); (x % c1) % c2
        // == x % c2 when c2 divides c1 (both hold for all integers, no ranges needed).
        if (a->op == n->op && is_const(a->args[1]) && a->args[1]->ival > 0) {
            const I64 c1 = a->args[1]->ival;
            if (is_div) {
                if (const auto cc = cmul(c1, c)) return rules(floordiv(a->args[0], iconst(*cc)));
            } else if (c1 % c == 0) {
                return rules(mod(a->args[0], n->args[1]));
            }
        }
        // a = c * Q + R, splitting each coefficient by truncation (so R keeps its signs) and
        // the constant by floor (so R's constant lies in [0, c)). Then floor(a / c) = Q +
        // floor(R / c) and a mod c = R mod c, valid where a, Q and R are exact (bounded).
        if (!bounds_of(a)) return n;
        const Linear l = linearize(a);
        Linear q, r;
        for (const auto& [atom, ci] : l.terms) {
            q.add(atom, ci / c);
            r.add(atom, ci % c);
        }
        q.k = floordiv_pos(l.k, c);
        r.k = floormod_pos(l.k, c);
        const Expr re = build(r, hash_);
        const auto br = bounds_of(re), bq = bounds_of(build(q, hash_));
        if (!br || !bq) return n;
        // c * Q + R must not overflow either: then it equals a, not just modulo 2^64.
        const auto cq = corners(*bq, Interval{c, c}, cmul);
        if (!cq || !iadd(*cq, *br)) return n;
        const I64 m_lo = floordiv_pos(br->lo, c), m_hi = floordiv_pos(br->hi, c);
        if (is_div) {
            if (m_lo == m_hi) {
                q.k = wadd(q.k, m_lo);
                return build(std::move(q), hash_);
            }
            if (q.terms.empty()) return n;
            q.add(floordiv(re, n->args[1]), 1);
            return build(std::move(q), hash_);
        }
        if (m_lo == m_hi) {
            r.k = wadd(r.k, wneg(wmul(m_lo, c)));
            return build(std::move(r), hash_);
        }
        if (q.terms.empty() && q.k == 0) return n;
        return mod(re, n->args[1]);
    }

    Analysis an_;
    std::map<std::pair<const Node*, std::uint64_t>, std::pair<Expr, Expr>> memo_;  // key node pinned in .first
    StructuralHash hash_;  // the canonical order's keys, shared by every sum built
};

bool fits_rec(const Expr& e, Analysis& an) {
    if (is_int(e->type)) {
        const auto b = bounds_rec(e, an);
        if (!b || b->lo < std::numeric_limits<std::int32_t>::min() || b->hi > std::numeric_limits<std::int32_t>::max())
            return false;
    }
    if (e->op == Op::Sum) {
        const auto n = bounds_rec(e->args[1], an);
        if (!n) return false;
        if (n->hi <= 0) return true;  // the body is never evaluated
        ScopedRange scope(an, e->var, Interval{0, n->hi - 1});
        return fits_rec(e->args[0], an) && fits_rec(e->args[1], an);
    }
    for (const Expr& a : e->args)
        if (!fits_rec(a, an)) return false;
    return true;
}

}  // namespace

std::optional<Interval> bounds(const Expr& e, const VarRanges& ranges, const LoadBounds& load_bounds) {
    if (!e) fail("ir::bounds: null expression");
    Analysis an(ranges, load_bounds);
    return bounds_rec(e, an);
}

std::optional<Interval> bounds_indexed(const Expr& e, const VarRanges& ranges, const IndexedLoadBounds& load_bounds,
                                       std::span<const std::int64_t> params, const std::vector<bool>* known) {
    if (!e) fail("ir::bounds: null expression");
    static const LoadBounds none;
    Analysis an(ranges, none, &load_bounds);
    an.params = params;
    an.known = known;
    return bounds_rec(e, an);
}

Expr simplify(const Expr& e, const VarRanges& ranges, const LoadBounds& load_bounds) {
    if (!e) fail("ir::simplify: null expression");
    Simplifier s(ranges, load_bounds);
    return s.run(e);
}

std::vector<Expr> sum_terms(const Expr& e) {
    std::vector<Expr> terms;
    std::function<void(const Expr&)> flatten = [&](const Expr& x) {
        if (x->op == Op::Add) {
            for (const auto& a : x->args) flatten(a);
        } else {
            terms.push_back(x);
        }
    };
    flatten(e);
    return terms;
}

std::vector<Expr> signed_sum_terms(const Expr& e) {
    std::vector<Expr> terms;
    std::function<void(const Expr&, bool)> flatten = [&](const Expr& x, bool negated) {
        if (x->op == Op::Add) {
            for (const auto& a : x->args) flatten(a, negated);
        } else if (x->op == Op::Sub) {
            flatten(x->args[0], negated);
            flatten(x->args[1], !negated);
        } else if (x->op == Op::Neg) {
            flatten(x->args[0], !negated);
        } else {
            terms.push_back(negated ? neg(x) : x);
        }
    };
    flatten(e, false);
    return terms;
}

std::optional<std::int64_t> linear_stride(const Expr& e, int var) {
    if (!e) fail("ir::linear_stride: null expression");
    if (!depends_on_var(e, var)) return 0;
    if (is_float(e->type)) return std::nullopt;
    switch (e->op) {
        case Op::Var: return 1;
        case Op::Add:
        case Op::Sub: {
            const auto a = linear_stride(e->args[0], var), b = linear_stride(e->args[1], var);
            if (!a || !b) return std::nullopt;
            return e->op == Op::Add ? cadd(*a, *b) : csub(*a, *b);
        }
        case Op::Neg: {
            const auto a = linear_stride(e->args[0], var);
            if (!a) return std::nullopt;
            return csub(0, *a);
        }
        case Op::Mul:
            for (int i = 0; i < 2; ++i) {
                const Expr& k = e->args[static_cast<std::size_t>(i)];
                if (!is_const(k)) continue;
                const auto s = linear_stride(e->args[static_cast<std::size_t>(1 - i)], var);
                if (!s) return std::nullopt;
                return cmul(*s, k->ival);
            }
            return std::nullopt;
        default: return std::nullopt;
    }
}

bool fits_int32(const Expr& e, const VarRanges& ranges, const LoadBounds& load_bounds) {
    if (!e) fail("ir::fits_int32: null expression");
    Analysis an(ranges, load_bounds);
    return fits_rec(e, an);
}

std::optional<Interval> data_range(Type t, const std::vector<std::uint8_t>& data) {
    const std::int64_t n = static_cast<std::int64_t>(data.size() / std::max<std::size_t>(type_bytes(t), 1));
    return data_range(t, data, std::span<const std::int64_t>(&n, 1), {});
}

std::optional<Interval> data_range(Type t, const std::vector<std::uint8_t>& data, std::span<const std::int64_t> shape,
                                   std::span<const Interval> box) {
    if (data.empty()) return std::nullopt;
    if (shape.empty()) {  // a scalar: one element
        const std::int64_t one = 1;
        return data_range(t, data, std::span<const std::int64_t>(&one, 1), {});
    }
    auto scan = [&](auto tag) -> std::optional<Interval> {
        using T = decltype(tag);
        const std::size_t rank = shape.size();
        std::size_t numel = 1;
        std::vector<std::int64_t> lo(rank), hi(rank);
        for (std::size_t d = 0; d < rank; ++d) {
            if (shape[d] <= 0) return std::nullopt;
            numel *= static_cast<std::size_t>(shape[d]);
            lo[d] = 0;
            hi[d] = shape[d] - 1;
            if (box.size() == rank) {
                lo[d] = std::max(lo[d], box[d].lo);
                hi[d] = std::min(hi[d], box[d].hi);
            }
            if (hi[d] < lo[d]) return std::nullopt;  // the box reads nothing there
        }
        if (numel * sizeof(T) != data.size()) return std::nullopt;
        // Over the box in C order: the innermost dim's run is contiguous.
        std::optional<Interval> r;
        std::vector<std::int64_t> at = lo;
        for (;;) {
            std::size_t base = 0;
            for (std::size_t d = 0; d + 1 < rank; ++d)
                base = base * static_cast<std::size_t>(shape[d]) + static_cast<std::size_t>(at[d]);
            base *= static_cast<std::size_t>(shape[rank - 1]);
            for (std::int64_t x = lo[rank - 1]; x <= hi[rank - 1]; ++x) {
                T v;
                std::memcpy(&v, data.data() + (base + static_cast<std::size_t>(x)) * sizeof(T), sizeof(T));
                const auto e = static_cast<std::int64_t>(v);
                r = r ? Interval{std::min(r->lo, e), std::max(r->hi, e)} : Interval{e, e};
            }
            std::size_t d = rank - 1;  // the dims outside the innermost, inside out
            for (; d > 0; --d) {
                if (++at[d - 1] <= hi[d - 1]) break;
                at[d - 1] = lo[d - 1];
            }
            if (d == 0) return r;
        }
    };
    switch (t) {
        case Type::U8: return scan(std::uint8_t{});
        case Type::U16: return scan(std::uint16_t{});
        case Type::I16: return scan(std::int16_t{});
        case Type::I32: return scan(std::int32_t{});
        case Type::I64: return scan(std::int64_t{});
        default: return std::nullopt;
    }
}

}  // namespace toroid::ir
