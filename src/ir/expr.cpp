// Expr builders, queries and the one-line printer. Builders are the only way nodes are
// made, so their type checks hold for every tree; a failed check is a compiler bug and
// throws toroid::Error naming the op and the types. Folding goes through ir::apply_op.
#include "ir/expr.h"

#include "core/error.h"
#include "ir/eval.h"
#include "ir/graph.h"

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace toroid::ir {

bool is_float(Type t) { return t == Type::F32 || t == Type::F64 || t == Type::F16 || t == Type::BF16; }
bool is_int(Type t) {
    return t == Type::U8 || t == Type::U16 || t == Type::I16 || t == Type::I32 || t == Type::I64;
}
bool is_storage_only(Type t) { return t == Type::F16 || t == Type::BF16; }

std::string_view type_name(Type t) {
    switch (t) {
        case Type::Bool: return "bool";
        case Type::U8: return "uint8_t";
        case Type::I16: return "int16_t";
        case Type::I32: return "int32_t";
        case Type::I64: return "int64_t";
        case Type::F32: return "float";
        case Type::F64: return "double";
        case Type::U16: return "uint16_t";
        case Type::F16: return "float16";
        case Type::BF16: return "bfloat16";
    }
    return "?";
}

std::size_t type_bytes(Type t) {
    switch (t) {
        case Type::Bool:
        case Type::U8: return 1;
        case Type::U16:
        case Type::F16:
        case Type::BF16:
        case Type::I16: return 2;
        case Type::I32:
        case Type::F32: return 4;
        case Type::I64:
        case Type::F64: return 8;
    }
    return 0;
}

std::int64_t int_min(Type t) {
    switch (t) {
        case Type::Bool:
        case Type::U8: return 0;
        case Type::I16: return std::numeric_limits<std::int16_t>::min();
        case Type::I32: return std::numeric_limits<std::int32_t>::min();
        case Type::I64: return std::numeric_limits<std::int64_t>::min();
        case Type::U16: return 0;
        case Type::F32:
        case Type::F64:
        case Type::F16:
        case Type::BF16: break;
    }
    fail("ir::int_min: {} is not an integer type", type_name(t));
}

std::int64_t int_max(Type t) {
    switch (t) {
        case Type::Bool: return 1;
        case Type::U8: return std::numeric_limits<std::uint8_t>::max();
        case Type::I16: return std::numeric_limits<std::int16_t>::max();
        case Type::I32: return std::numeric_limits<std::int32_t>::max();
        case Type::I64: return std::numeric_limits<std::int64_t>::max();
        case Type::U16: return std::numeric_limits<std::uint16_t>::max();
        case Type::F32:
        case Type::F64:
        case Type::F16:
        case Type::BF16: break;
    }
    fail("ir::int_max: {} is not an integer type", type_name(t));
}

std::string_view op_name(Op op) {
    switch (op) {
        case Op::Const: return "const";
        case Op::Var: return "var";
        case Op::Load: return "load";
        case Op::Add: return "add";
        case Op::Sub: return "sub";
        case Op::Mul: return "mul";
        case Op::Div: return "div";
        case Op::FloorDiv: return "floordiv";
        case Op::Mod: return "mod";
        case Op::Min: return "min";
        case Op::Max: return "max";
        case Op::Neg: return "neg";
        case Op::Fma: return "fma";
        case Op::Floor: return "floor";
        case Op::RoundEven: return "round_even";
        case Op::Abs: return "abs";
        case Op::ShiftRight: return "shift_right";
        case Op::Lt: return "lt";
        case Op::Le: return "le";
        case Op::Eq: return "eq";
        case Op::Ne: return "ne";
        case Op::And: return "and";
        case Op::Or: return "or";
        case Op::Not: return "not";
        case Op::Select: return "select";
        case Op::Cast: return "cast";
        case Op::SatCast: return "sat_cast";
        case Op::Sum: return "sum";
        case Op::Pow: return "pow";
    }
    return "?";
}

namespace {

bool is_numeric(Type t) { return t != Type::Bool && !is_storage_only(t); }

// Nodes are mutable only here, between creation and publication as an Expr.
std::shared_ptr<Node> node(Op op, Type t, std::vector<Expr> args = {}) {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->type = t;
    n->args = std::move(args);
    return n;
}
Expr make(Op op, Type t, std::vector<Expr> args = {}) { return node(op, t, std::move(args)); }

void need_args(Op op, std::initializer_list<const Expr*> args) {
    for (const Expr* a : args)
        if (!*a) fail("ir::{}: null operand", op_name(op));
}

void need_same(Op op, const Expr& a, const Expr& b) {
    if (a->type != b->type)
        fail("ir::{}: mismatched operand types {} and {}", op_name(op), type_name(a->type), type_name(b->type));
}

[[noreturn]] void bad_type(Op op, Type t, std::string_view wanted) {
    fail("ir::{}: operand type {} is not {}", op_name(op), type_name(t), wanted);
}

Expr const_of(Type t, Scalar v) {
    const Scalar n = normalize_value(t, v);
    auto c = node(Op::Const, t);
    if (is_float(t)) c->fval = n.f;
    else c->ival = n.i;
    return c;
}

// Replaces e by a Const when every operand is a Const and the op is defined on them.
Expr fold(Expr e) {
    std::vector<Scalar> vals;
    vals.reserve(e->args.size());
    for (const Expr& a : e->args) {
        if (a->op != Op::Const) return e;
        vals.push_back(const_value(a));
    }
    const auto v = apply_op(*e, vals);
    return v ? const_of(e->type, *v) : e;
}

// Float zero of a given sign (x + -0.0 == x and x - +0.0 == x hold for every float x).
bool is_fzero(const Expr& e, bool negative) {
    return e->op == Op::Const && is_float(e->type) && e->fval == 0 && std::signbit(e->fval) == negative;
}

Expr binary(Op op, Expr a, Expr b, Type result) { return fold(make(op, result, {std::move(a), std::move(b)})); }
// The result type is the operands' (read before they are moved from).
Expr arith(Op op, Expr a, Expr b) {
    const Type t = a->type;
    return binary(op, std::move(a), std::move(b), t);
}

void need_arith(Op op, const Expr& a, const Expr& b) {
    need_args(op, {&a, &b});
    need_same(op, a, b);
    if (!is_numeric(a->type)) bad_type(op, a->type, "numeric");
}

void need_int(Op op, const Expr& a) {
    if (!is_int(a->type)) bad_type(op, a->type, "an integer type");
}
void need_float(Op op, const Expr& a) {
    if (!is_float(a->type)) bad_type(op, a->type, "a float type");
}

}  // namespace

Expr iconst(std::int64_t v, Type t) {
    if (is_float(t)) fail("ir::iconst: {} is not an integer type", type_name(t));
    if (v < int_min(t) || v > int_max(t)) fail("ir::iconst: {} is out of range for {}", v, type_name(t));
    return const_of(t, Scalar::of_int(v));
}

Expr fconst(double v, Type t) {
    if (!is_float(t)) fail("ir::fconst: {} is not a float type", type_name(t));
    return const_of(t, Scalar::of_float(v));
}

Expr bconst(bool v) { return const_of(Type::Bool, Scalar::of_int(v ? 1 : 0)); }

Expr var(int id) {
    if (id < 0) fail("ir::var: negative variable id {}", id);
    auto e = node(Op::Var, Type::I64);
    e->var = id;
    return e;
}

Expr load(int buffer, Type t, std::vector<Expr> indices) {
    if (buffer < 0) fail("ir::load: negative tensor id {}", buffer);
    for (const Expr& i : indices) {
        if (!i) fail("ir::load: null index");
        if (i->type != Type::I64) fail("ir::load: index of t{} has type {}, not int64_t", buffer, type_name(i->type));
    }
    auto e = node(Op::Load, t, std::move(indices));
    e->buffer = buffer;
    return e;
}

Expr add(Expr a, Expr b) {
    need_arith(Op::Add, a, b);
    if (is_int(a->type)) {
        if (is_const(b, 0)) return a;
        if (is_const(a, 0)) return b;
    } else {
        if (is_fzero(b, true)) return a;
        if (is_fzero(a, true)) return b;
    }
    return arith(Op::Add, std::move(a), std::move(b));
}

Expr sub(Expr a, Expr b) {
    need_arith(Op::Sub, a, b);
    if (is_int(a->type)) {
        if (is_const(b, 0)) return a;
        if (structurally_equal(a, b)) return iconst(0, a->type);
    } else if (is_fzero(b, false)) {
        return a;
    }
    return arith(Op::Sub, std::move(a), std::move(b));
}

Expr mul(Expr a, Expr b) {
    need_arith(Op::Mul, a, b);
    if (is_const(b, 1)) return a;
    if (is_const(a, 1)) return b;
    // x * 0 is not 0 for floats (NaN, inf, -0.0).
    if (is_int(a->type) && (is_const(a, 0) || is_const(b, 0))) return iconst(0, a->type);
    return arith(Op::Mul, std::move(a), std::move(b));
}

Expr div(Expr a, Expr b) {
    need_arith(Op::Div, a, b);
    need_float(Op::Div, a);
    if (is_const(b, 1)) return a;
    return arith(Op::Div, std::move(a), std::move(b));
}

Expr floordiv(Expr a, Expr b) {
    need_arith(Op::FloorDiv, a, b);
    need_int(Op::FloorDiv, a);
    if (is_const(b, 1)) return a;
    return arith(Op::FloorDiv, std::move(a), std::move(b));
}

Expr mod(Expr a, Expr b) {
    need_arith(Op::Mod, a, b);
    need_int(Op::Mod, a);
    if (is_const(b, 1)) return iconst(0, a->type);
    return arith(Op::Mod, std::move(a), std::move(b));
}

Expr min(Expr a, Expr b) {
    need_arith(Op::Min, a, b);
    if (structurally_equal(a, b)) return a;
    return arith(Op::Min, std::move(a), std::move(b));
}

Expr max(Expr a, Expr b) {
    need_arith(Op::Max, a, b);
    if (structurally_equal(a, b)) return a;
    return arith(Op::Max, std::move(a), std::move(b));
}

Expr clamp(Expr x, Expr lo, Expr hi) { return min(max(std::move(x), std::move(lo)), std::move(hi)); }

Expr neg(Expr a) {
    need_args(Op::Neg, {&a});
    if (!is_numeric(a->type)) bad_type(Op::Neg, a->type, "numeric");
    if (a->op == Op::Neg) return a->args[0];
    const Type t = a->type;
    return fold(make(Op::Neg, t, {std::move(a)}));
}

Expr fma(Expr a, Expr b, Expr c) {
    need_args(Op::Fma, {&a, &b, &c});
    need_same(Op::Fma, a, b);
    need_same(Op::Fma, a, c);
    need_float(Op::Fma, a);
    const Type t = a->type;
    return fold(make(Op::Fma, t, {std::move(a), std::move(b), std::move(c)}));
}

Expr floor(Expr a) {
    need_args(Op::Floor, {&a});
    need_float(Op::Floor, a);
    const Type t = a->type;
    return fold(make(Op::Floor, t, {std::move(a)}));
}

Expr round_even(Expr a) {
    need_args(Op::RoundEven, {&a});
    need_float(Op::RoundEven, a);
    const Type t = a->type;
    return fold(make(Op::RoundEven, t, {std::move(a)}));
}

Expr abs(Expr a) {
    need_args(Op::Abs, {&a});
    if (!is_numeric(a->type)) bad_type(Op::Abs, a->type, "numeric");
    if (a->type == Type::U8) return a;
    const Type t = a->type;
    return fold(make(Op::Abs, t, {std::move(a)}));
}

Expr shift_right(Expr a, int bits) {
    need_args(Op::ShiftRight, {&a});
    need_int(Op::ShiftRight, a);
    const Type t = a->type;
    return shift_right(std::move(a), iconst(bits, t));
}

Expr shift_right(Expr a, Expr bits) {
    need_args(Op::ShiftRight, {&a, &bits});
    need_int(Op::ShiftRight, a);
    need_same(Op::ShiftRight, a, bits);
    const int width = static_cast<int>(type_bytes(a->type) * 8);
    if (is_const(bits)) {
        if (bits->ival < 0 || bits->ival >= width)
            fail("ir::shift_right: shift {} is out of range for {}", bits->ival, type_name(a->type));
        if (bits->ival == 0) return a;
    }
    const Type t = a->type;
    return fold(make(Op::ShiftRight, t, {std::move(a), std::move(bits)}));
}

namespace {

Expr compare(Op op, Expr a, Expr b) {
    need_args(op, {&a, &b});
    need_same(op, a, b);
    if (is_storage_only(a->type)) bad_type(op, a->type, "a type computed on (widen it to float)");
    // x == x is not true for a NaN float.
    if (!is_float(a->type) && structurally_equal(a, b)) return bconst(op == Op::Le || op == Op::Eq);
    return binary(op, std::move(a), std::move(b), Type::Bool);
}

void need_bool(Op op, const Expr& a) {
    if (a->type != Type::Bool) bad_type(op, a->type, "bool");
}

}  // namespace

Expr lt(Expr a, Expr b) { return compare(Op::Lt, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return compare(Op::Le, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return compare(Op::Eq, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return compare(Op::Ne, std::move(a), std::move(b)); }

Expr logical_and(Expr a, Expr b) {
    need_args(Op::And, {&a, &b});
    need_bool(Op::And, a);
    need_bool(Op::And, b);
    if (is_const(a)) return a->ival ? b : a;
    if (is_const(b)) return b->ival ? a : b;
    if (structurally_equal(a, b)) return a;
    return make(Op::And, Type::Bool, {std::move(a), std::move(b)});
}

Expr logical_or(Expr a, Expr b) {
    need_args(Op::Or, {&a, &b});
    need_bool(Op::Or, a);
    need_bool(Op::Or, b);
    if (is_const(a)) return a->ival ? a : b;
    if (is_const(b)) return b->ival ? b : a;
    if (structurally_equal(a, b)) return a;
    return make(Op::Or, Type::Bool, {std::move(a), std::move(b)});
}

Expr logical_not(Expr a) {
    need_args(Op::Not, {&a});
    need_bool(Op::Not, a);
    if (a->op == Op::Not) return a->args[0];
    return fold(make(Op::Not, Type::Bool, {std::move(a)}));
}

Expr select(Expr c, Expr a, Expr b) {
    need_args(Op::Select, {&c, &a, &b});
    need_bool(Op::Select, c);
    need_same(Op::Select, a, b);
    if (is_const(c)) return c->ival ? a : b;
    if (structurally_equal(a, b)) return a;
    if (a->type == Type::Bool && is_const(a) && is_const(b)) return a->ival ? c : logical_not(c);
    const Type t = a->type;
    return make(Op::Select, t, {std::move(c), std::move(a), std::move(b)});
}

Expr cast(Type t, Expr a) {
    need_args(Op::Cast, {&a});
    if (a->type == t) return a;
    // The narrow floats convert to and from F32 only (so that no value rounds twice).
    if ((is_storage_only(t) && a->type != Type::F32) || (is_storage_only(a->type) && t != Type::F32))
        fail("ir::cast: {} converts to and from float only, not {}", type_name(is_storage_only(t) ? t : a->type),
             type_name(is_storage_only(t) ? a->type : t));
    return fold(make(Op::Cast, t, {std::move(a)}));
}

Expr sat_cast(Type t, Expr a) {
    need_args(Op::SatCast, {&a});
    if (t == Type::Bool) fail("ir::sat_cast: to bool is not defined (from {})", type_name(a->type));
    if (is_float(t)) return cast(t, std::move(a));
    // Saturation is a plain cast when every source value is in the target's range.
    if (!is_float(a->type) && int_min(a->type) >= int_min(t) && int_max(a->type) <= int_max(t))
        return cast(t, std::move(a));
    return fold(make(Op::SatCast, t, {std::move(a)}));
}

Expr sum(int reduction_var, std::int64_t extent, Expr body, Type acc) {
    if (extent < 0) fail("ir::sum: negative extent {}", extent);
    return sum(reduction_var, iconst(extent), std::move(body), acc);
}

Expr reduce(Reduce kind, int reduction_var, Expr extent, Expr body, Type acc) {
    need_args(Op::Sum, {&body, &extent});
    if (acc == Type::Bool) fail("ir::sum: cannot accumulate in bool");
    if (reduction_var < 0) fail("ir::sum: negative reduction variable id {}", reduction_var);
    if (extent->type != Type::I64) fail("ir::sum: extent must be int64_t, got {}", type_name(extent->type));
    if (is_const(extent) && extent->ival < 0) fail("ir::sum: negative extent {}", extent->ival);
    if (depends_on_var(extent, reduction_var)) fail("ir::sum: the extent depends on the reduction variable");
    body = cast(acc, std::move(body));
    if (kind == Reduce::Fma) {
        if (!is_float(acc)) fail("ir::reduce: a fused multiply-add chain accumulates in a float type, not {}", type_name(acc));
        // No folding beyond the empty chain: fma(a, b, +0) differs from a * b where the product is -0.
        if (is_const(extent, 0)) return fconst(0, acc);
        auto e = node(Op::Sum, acc, {std::move(body), std::move(extent)});
        e->var = reduction_var;
        e->ival = static_cast<std::int64_t>(kind);
        return e;
    }
    if (kind != Reduce::Add) {
        if (is_const(extent, 0)) return reduce_identity(kind, acc);
        // The least or greatest of one term, or of one value taken many times, is that term.
        if (is_const(extent, 1)) return substitute(body, {{reduction_var, iconst(0)}});
        if (is_const(extent) && !depends_on_var(body, reduction_var)) return body;
        auto e = node(Op::Sum, acc, {std::move(body), std::move(extent)});
        e->var = reduction_var;
        e->ival = static_cast<std::int64_t>(kind);
        return e;
    }
    if (is_const(extent, 0)) return is_float(acc) ? fconst(0, acc) : iconst(0, acc);
    // Integer sums are exact in the ring of the type; float sums round at every step, so
    // only an integer sum of one term or of a term independent of the variable folds.
    if (!is_float(acc) && is_const(extent)) {
        if (extent->ival == 1) return substitute(body, {{reduction_var, iconst(0)}});
        if (!depends_on_var(body, reduction_var))
            return mul(body, const_of(acc, Scalar::of_int(extent->ival)));
    }
    auto e = node(Op::Sum, acc, {std::move(body), std::move(extent)});
    e->var = reduction_var;
    return e;
}

Expr sum(int reduction_var, Expr extent, Expr body, Type acc) {
    return reduce(Reduce::Add, reduction_var, std::move(extent), std::move(body), acc);
}

Expr reduce_identity(Reduce kind, Type t) {
    if (kind == Reduce::Add || kind == Reduce::Fma) return is_float(t) ? fconst(0, t) : iconst(0, t);
    const bool least = kind == Reduce::Min;
    if (is_float(t)) return fconst(least ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity(), t);
    return iconst(least ? int_max(t) : int_min(t), t);
}

Reduce reduce_kind(const Expr& s) {
    if (!s || s->op != Op::Sum) fail("ir::reduce_kind: not a sum");
    return static_cast<Reduce>(s->ival);
}

std::optional<std::pair<Expr, Expr>> fma_factors(const Expr& s, const Expr& term) {
    if (reduce_kind(s) != Reduce::Fma || term->op != Op::Mul) return std::nullopt;
    return std::make_pair(term->args[0], term->args[1]);
}

Expr pow(Expr base, Expr exponent) {
    need_arith(Op::Pow, base, exponent);
    need_float(Op::Pow, base);
    return arith(Op::Pow, std::move(base), std::move(exponent));
}

const Expr& sum_extent(const Expr& s) {
    if (!s || s->op != Op::Sum) fail("ir::sum_extent: not a sum");
    return s->args[1];
}

std::optional<std::int64_t> const_extent(const Expr& s) {
    const Expr& e = sum_extent(s);
    if (!is_const(e)) return std::nullopt;
    return e->ival;
}

Expr param(int index) {
    if (index < 0) fail("ir::param: negative parameter index {}", index);
    return var(kFirstParamVar + index);
}

// ---- queries and rewrites ----

bool is_const(const Expr& e) { return e && e->op == Op::Const; }

bool is_const(const Expr& e, std::int64_t v) {
    if (!is_const(e)) return false;
    if (is_float(e->type)) return e->fval == static_cast<double>(v);
    return e->ival == v;
}

Expr with_args(const Expr& e, std::vector<Expr> args) {
    if (!e) fail("ir::with_args: null expression");
    if (args.size() != e->args.size())
        fail("ir::with_args: {} has {} operands, got {}", op_name(e->op), e->args.size(), args.size());
    auto& x = args;
    switch (e->op) {
        case Op::Const:
        case Op::Var: return e;
        case Op::Load: return load(e->buffer, e->type, std::move(args));
        case Op::Add: return add(x[0], x[1]);
        case Op::Sub: return sub(x[0], x[1]);
        case Op::Mul: return mul(x[0], x[1]);
        case Op::Div: return div(x[0], x[1]);
        case Op::FloorDiv: return floordiv(x[0], x[1]);
        case Op::Mod: return mod(x[0], x[1]);
        case Op::Min: return min(x[0], x[1]);
        case Op::Max: return max(x[0], x[1]);
        case Op::Neg: return neg(x[0]);
        case Op::Fma: return fma(x[0], x[1], x[2]);
        case Op::Floor: return floor(x[0]);
        case Op::RoundEven: return round_even(x[0]);
        case Op::Abs: return abs(x[0]);
        case Op::ShiftRight: return shift_right(x[0], x[1]);
        case Op::Lt: return lt(x[0], x[1]);
        case Op::Le: return le(x[0], x[1]);
        case Op::Eq: return eq(x[0], x[1]);
        case Op::Ne: return ne(x[0], x[1]);
        case Op::And: return logical_and(x[0], x[1]);
        case Op::Or: return logical_or(x[0], x[1]);
        case Op::Not: return logical_not(x[0]);
        case Op::Select: return select(x[0], x[1], x[2]);
        case Op::Cast: return cast(e->type, x[0]);
        case Op::SatCast: return sat_cast(e->type, x[0]);
        case Op::Sum: return reduce(static_cast<Reduce>(e->ival), e->var, x[1], x[0], e->type);
        case Op::Pow: return pow(x[0], x[1]);
    }
    fail("ir::with_args: unknown op");
}

namespace {

// Expressions are DAGs (an inlined tensor's index expressions are shared by every load
// that uses them), so every walk below visits each distinct node once: a tree walk would
// take time exponential in the depth of the sharing.
using Memo = std::unordered_map<const Node*, Expr>;

Expr substitute_rec(const Expr& e, const std::map<int, Expr>& repl, Memo& memo) {
    if (e->op == Op::Var) {
        const auto it = repl.find(e->var);
        return it == repl.end() ? e : it->second;
    }
    if (e->args.empty()) return e;
    if (const auto it = memo.find(e.get()); it != memo.end()) return it->second;
    Expr result;
    if (e->op == Op::Sum && repl.count(e->var)) {
        // The reduction variable is bound inside its Sum: not replaced there.
        auto inner = repl;
        inner.erase(e->var);
        Memo inner_memo;
        result = with_args(e, {inner.empty() ? e->args[0] : substitute_rec(e->args[0], inner, inner_memo),
                               substitute_rec(e->args[1], repl, memo)});
    } else {
        std::vector<Expr> args;
        args.reserve(e->args.size());
        bool changed = false;
        for (const Expr& a : e->args) {
            args.push_back(substitute_rec(a, repl, memo));
            changed |= args.back() != a;
        }
        result = changed ? with_args(e, std::move(args)) : e;
    }
    memo[e.get()] = result;
    return result;
}

}  // namespace

Expr substitute(const Expr& e, const std::vector<std::pair<int, Expr>>& replacements) {
    if (!e) fail("ir::substitute: null expression");
    std::map<int, Expr> repl;
    for (const auto& [id, r] : replacements) {
        if (!r) fail("ir::substitute: null replacement for variable {}", id);
        if (r->type != Type::I64) fail("ir::substitute: replacement for variable {} has type {}", id, type_name(r->type));
        repl[id] = r;
    }
    if (repl.empty()) return e;
    Memo memo;
    return substitute_rec(e, repl, memo);
}

namespace {

Expr rewrite_rec(const Expr& e, const std::function<Expr(const Expr&)>& f, Memo& memo) {
    if (const auto it = memo.find(e.get()); it != memo.end()) return it->second;
    std::vector<Expr> args;
    args.reserve(e->args.size());
    bool changed = false;
    for (const Expr& a : e->args) {
        args.push_back(rewrite_rec(a, f, memo));
        changed |= args.back() != a;
    }
    Expr r = f(changed ? with_args(e, std::move(args)) : e);
    memo[e.get()] = r;
    return r;
}

void visit_rec(const Expr& e, const std::function<void(const Expr&)>& f, NodeIds& seen) {
    if (!seen.insert(e.get())) return;
    f(e);
    for (const Expr& a : e->args) visit_rec(a, f, seen);
}

bool depends_rec(const Expr& e, int id, std::unordered_map<const Node*, bool>& memo) {
    if (e->op == Op::Var) return e->var == id;
    if (e->op == Op::Sum && e->var == id) return depends_rec(e->args[1], id, memo);  // bound in the body
    if (const auto it = memo.find(e.get()); it != memo.end()) return it->second;
    bool d = false;
    for (const Expr& a : e->args)
        if (depends_rec(a, id, memo)) {
            d = true;
            break;
        }
    memo[e.get()] = d;
    return d;
}

}  // namespace

Expr rewrite(const Expr& e, const std::function<Expr(const Expr&)>& f) {
    if (!e) fail("ir::rewrite: null expression");
    Memo memo;
    return rewrite_rec(e, f, memo);
}

void visit(const Expr& e, const std::function<void(const Expr&)>& f) {
    NodeIds seen;
    visit_rec(e, f, seen);
}

bool depends_on_var(const Expr& e, int id) {
    std::unordered_map<const Node*, bool> memo;
    return depends_rec(e, id, memo);
}

bool DependsOnVar::operator()(const Expr& e) {
    if (e->op != Op::Var && !memo_.count(e.get())) pinned_.push_back(e);
    return depends_rec(e, id_, memo_);
}

std::size_t node_count(const Expr& e) {
    std::size_t n = 0;
    visit(e, [&](const Expr&) { ++n; });
    return n;
}

namespace {

std::uint64_t hash_rec(const Expr& e, std::unordered_map<const Node*, std::uint64_t>& memo) {
    if (const auto it = memo.find(e.get()); it != memo.end()) return it->second;
    // FNV-1a over the node's fields and its operands' hashes.
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xffu;
            h *= 1099511628211ull;
        }
    };
    mix(static_cast<std::uint64_t>(e->op));
    mix(static_cast<std::uint64_t>(e->type));
    mix(static_cast<std::uint64_t>(e->ival));
    mix(std::bit_cast<std::uint64_t>(e->fval));
    mix(static_cast<std::uint64_t>(static_cast<std::int64_t>(e->var)));
    mix(static_cast<std::uint64_t>(static_cast<std::int64_t>(e->buffer)));
    for (const Expr& a : e->args) mix(hash_rec(a, memo));
    memo[e.get()] = h;
    return h;
}

}  // namespace

std::uint64_t structural_hash(const Expr& e) {
    std::unordered_map<const Node*, std::uint64_t> memo;
    return hash_rec(e, memo);
}

namespace {

// Pairs of distinct nodes already found equal: operands shared inside each side (a DAG)
// are compared once, not once per path to them.
using EqualPairs = std::set<std::pair<const Node*, const Node*>>;

bool equal_rec(const Expr& a, const Expr& b, EqualPairs& equal) {
    if (a == b) return true;
    if (!a || !b) return false;
    // Float constants compare by bits: -0.0 differs from 0.0 and a NaN equals itself.
    if (a->op != b->op || a->type != b->type || a->ival != b->ival ||
        std::bit_cast<std::uint64_t>(a->fval) != std::bit_cast<std::uint64_t>(b->fval) || a->var != b->var ||
        a->buffer != b->buffer || a->args.size() != b->args.size())
        return false;
    if (a->args.empty()) return true;
    if (equal.count({a.get(), b.get()})) return true;
    for (std::size_t i = 0; i < a->args.size(); ++i)
        if (!equal_rec(a->args[i], b->args[i], equal)) return false;
    equal.emplace(a.get(), b.get());
    return true;
}

}  // namespace

bool structurally_equal(const Expr& a, const Expr& b) {
    EqualPairs equal;
    return equal_rec(a, b, equal);
}

std::uint64_t StructuralHash::operator()(const Expr& e) {
    if (!memo_.count(e.get())) pinned_.push_back(e);
    return hash_rec(e, memo_);
}

// ---- printing ----

namespace {

// C-like binding strength; higher binds tighter.
int precedence(const Expr& e) {
    switch (e->op) {
        case Op::Or: return 1;
        case Op::And: return 2;
        case Op::Eq:
        case Op::Ne: return 3;
        case Op::Lt:
        case Op::Le: return 4;
        case Op::ShiftRight: return 5;
        case Op::Add:
        case Op::Sub: return 6;
        case Op::Mul:
        case Op::Div:
        case Op::FloorDiv:
        case Op::Mod: return 7;
        case Op::Neg:
        case Op::Not: return 8;
        case Op::Const:
            if (is_float(e->type) ? std::signbit(e->fval) : e->ival < 0) return 8;
            return 9;
        default: return 9;
    }
}

std::string_view infix(Op op) {
    switch (op) {
        case Op::Or: return "||";
        case Op::And: return "&&";
        case Op::Eq: return "==";
        case Op::Ne: return "!=";
        case Op::Lt: return "<";
        case Op::Le: return "<=";
        case Op::ShiftRight: return ">>";
        case Op::Add: return "+";
        case Op::Sub: return "-";
        case Op::Mul: return "*";
        case Op::Div: return "/";
        case Op::FloorDiv: return "//";  // Python's spelling: distinct from float division
        case Op::Mod: return "%";
        default: return "?";
    }
}

std::string float_text(double v, Type t) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    std::string s = t == Type::F32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (t == Type::F32) s += 'f';
    return s;
}

void print(const Expr& e, std::string& out);

void print_operand(const Expr& e, int min_prec, std::string& out) {
    if (precedence(e) < min_prec) {
        out += '(';
        print(e, out);
        out += ')';
    } else {
        print(e, out);
    }
}

void print_call(std::string_view name, const std::vector<Expr>& args, std::string& out) {
    out += name;
    out += '(';
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (i) out += ", ";
        print(args[i], out);
    }
    out += ')';
}

// Printing walks the tree, not the DAG: a kernel that shares big subexpressions many
// times would print to an enormous line, so the text is cut at this length.
constexpr std::size_t kMaxPrinted = 16384;

void print(const Expr& e, std::string& out) {
    if (out.size() >= kMaxPrinted) {
        if (out.size() < kMaxPrinted + 16 && out.find("...(cut)") == std::string::npos) out += " ...(cut)";
        return;
    }
    switch (e->op) {
        case Op::Const:
            if (is_float(e->type)) {
                out += float_text(e->fval, e->type);
            } else if (e->type == Type::Bool) {
                out += e->ival ? "true" : "false";
            } else {
                out += fmt::format("{}", e->ival);
                if (e->type == Type::U8) out += "u8";
                if (e->type == Type::I16) out += "i16";
                if (e->type == Type::I32) out += "i32";
            }
            return;
        case Op::Var:
            if (is_param_var(e->var)) out += fmt::format("p{}", e->var - kFirstParamVar);
            else out += fmt::format("{}{}", e->var >= kFirstReductionVar ? 'r' : 'v', e->var);
            return;
        case Op::Load:
            out += fmt::format("load(t{}, [", e->buffer);
            for (std::size_t i = 0; i < e->args.size(); ++i) {
                if (i) out += ", ";
                print(e->args[i], out);
            }
            out += "])";
            return;
        case Op::Or:
        case Op::And:
        case Op::Eq:
        case Op::Ne:
        case Op::Lt:
        case Op::Le:
        case Op::ShiftRight:
        case Op::Add:
        case Op::Sub:
        case Op::Mul:
        case Op::Div:
        case Op::FloorDiv:
        case Op::Mod: {
            // Left-associative: a right operand of equal precedence needs parentheses.
            const int p = precedence(e);
            print_operand(e->args[0], p, out);
            out += fmt::format(" {} ", infix(e->op));
            print_operand(e->args[1], p + 1, out);
            return;
        }
        case Op::Neg:
        case Op::Not:
            out += e->op == Op::Neg ? '-' : '!';
            // Parenthesize nested unary operands too, so that "- -x" never reads as "--x".
            print_operand(e->args[0], 9, out);
            return;
        case Op::Min: {
            const Expr& a = e->args[0];
            if (a->op == Op::Max) {  // min(max(x, lo), hi): what clamp() builds
                print_call("clamp", {a->args[0], a->args[1], e->args[1]}, out);
                return;
            }
            print_call("min", e->args, out);
            return;
        }
        case Op::Max: print_call("max", e->args, out); return;
        case Op::Fma: print_call("fma", e->args, out); return;
        case Op::Pow: print_call("pow", e->args, out); return;
        case Op::Floor: print_call("floor", e->args, out); return;
        case Op::RoundEven: print_call("round_even", e->args, out); return;
        case Op::Abs: print_call("abs", e->args, out); return;
        case Op::Select: print_call("select", e->args, out); return;
        case Op::Cast:
        case Op::SatCast:
            print_call(fmt::format("{}<{}>", e->op == Op::Cast ? "cast" : "sat_cast", type_name(e->type)), e->args, out);
            return;
        case Op::Sum:
            out += fmt::format("{}<{}>({}{} < ", e->ival == 1 ? "min" : e->ival == 2 ? "max" : e->ival == 3 ? "fma_sum" : "sum", type_name(e->type), e->var >= kFirstReductionVar ? 'r' : 'v',
                               e->var);
            print(e->args[1], out);
            out += ": ";
            print(e->args[0], out);
            out += ')';
            return;
    }
}

}  // namespace

std::string to_string(const Expr& e) {
    if (!e) return "<null>";
    std::string out;
    print(e, out);
    return out;
}

}  // namespace toroid::ir
