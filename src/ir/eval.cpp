// The scalar interpreter and the per-op semantics shared with constant folding. Integer
// arithmetic goes through uint64 so that wrap-around is defined behaviour here whatever
// the generated code does; float ops are computed in double and rounded to F32 where needed.
#include "core/half.h"
#include "ir/eval.h"

#include "core/error.h"

#include <cmath>

namespace toroid::ir {
namespace {

std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

// Python-style floor division and modulo; b != 0. INT64_MIN / -1 wraps.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    if (b == -1) return wrap_sub(0, a);
    std::int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}
std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
    if (b == -1) return 0;
    std::int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

constexpr double kTwo63 = 9223372036854775808.0;

// static_cast<int type>(f) where it is defined (truncation lands inside the type).
std::optional<std::int64_t> float_to_int(Type t, double f) {
    if (std::isnan(f)) return std::nullopt;
    const double tr = std::trunc(f);
    if (t == Type::I64) {
        if (tr < -kTwo63 || tr >= kTwo63) return std::nullopt;
    } else if (tr < static_cast<double>(int_min(t)) || tr > static_cast<double>(int_max(t))) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(tr);
}

Scalar int_to_float(Type t, std::int64_t v) {
    // Converted directly (not through double) so that large int64 values round once.
    if (t == Type::F32) return Scalar::of_float(static_cast<double>(static_cast<float>(v)));
    return Scalar::of_float(static_cast<double>(v));
}

Scalar do_cast(Type to, Type from, Scalar v, bool& ok) {
    ok = true;
    if (is_float(from)) {
        if (to == Type::Bool) return Scalar::of_int(v.f != 0 ? 1 : 0);
        if (is_float(to)) return normalize_value(to, v);
        const auto i = float_to_int(to, v.f);
        if (!i) {
            ok = false;
            return {};
        }
        return Scalar::of_int(*i);
    }
    if (is_float(to)) return int_to_float(to, v.i);
    return normalize_value(to, v);
}

Scalar do_sat_cast(Type to, Type from, Scalar v) {
    if (is_float(to)) {
        bool ok = true;
        return do_cast(to, from, v, ok);
    }
    const std::int64_t lo = int_min(to), hi = int_max(to);
    if (!is_float(from)) return Scalar::of_int(std::clamp(v.i, lo, hi));
    if (std::isnan(v.f)) return Scalar::of_int(0);
    if (to == Type::I64) {
        if (v.f >= kTwo63) return Scalar::of_int(hi);
        if (v.f <= -kTwo63) return Scalar::of_int(lo);
        return Scalar::of_int(static_cast<std::int64_t>(v.f));
    }
    const double c = std::clamp(v.f, static_cast<double>(lo), static_cast<double>(hi));
    return Scalar::of_int(static_cast<std::int64_t>(c));
}

// a + b in type t (Sum's accumulation step), or the Min / Max step (a NaN term is taken).
Scalar add_in(Type t, Scalar a, Scalar b, Reduce kind = Reduce::Add) {
    if (kind == Reduce::Min || kind == Reduce::Max) {
        const Scalar v = normalize_value(t, b);
        bool take;
        if (is_float(t)) take = (kind == Reduce::Min ? v.f < a.f : a.f < v.f) || std::isnan(v.f);
        else take = kind == Reduce::Min ? v.i < a.i : a.i < v.i;
        return take ? v : a;
    }
    if (is_float(t)) return normalize_value(t, Scalar::of_float(a.f + b.f));
    return normalize_value(t, Scalar::of_int(wrap_add(a.i, b.i)));
}

}  // namespace

// The kernels' scalar helpers (one text with both preambles).
namespace kernel_math {
#include "core/scalar_math.h"
}  // namespace kernel_math

float torch_pow(float a, float b) { return kernel_math::t_pow(a, b); }

Scalar normalize_value(Type t, Scalar v) {
    switch (t) {
        case Type::Bool: return Scalar::of_int(v.i != 0 ? 1 : 0);
        case Type::U8: return Scalar::of_int(static_cast<std::uint8_t>(v.i));
        case Type::I16: return Scalar::of_int(static_cast<std::int16_t>(v.i));
        case Type::I32: return Scalar::of_int(static_cast<std::int32_t>(v.i));
        case Type::I64: return Scalar::of_int(v.i);
        case Type::F32: return Scalar::of_float(static_cast<double>(static_cast<float>(v.f)));
        case Type::F64: return Scalar::of_float(v.f);
        case Type::U16: return Scalar::of_int(static_cast<std::uint16_t>(v.i));
        case Type::F16: return Scalar::of_float(half_bits_to_float(float_to_half_bits(static_cast<float>(v.f))));
        case Type::BF16: return Scalar::of_float(bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v.f))));
    }
    return v;
}

Scalar const_value(const Expr& e) {
    if (!e || e->op != Op::Const) fail("ir::const_value: not a constant");
    return is_float(e->type) ? Scalar::of_float(e->fval) : Scalar::of_int(e->ival);
}

std::optional<Scalar> apply_op(const Node& n, const std::vector<Scalar>& args) {
    if (args.size() != n.args.size()) fail("ir::apply_op: {} needs {} operands, got {}", op_name(n.op), n.args.size(), args.size());
    const Type t = n.type;
    const bool fl = !n.args.empty() && is_float(n.args[0]->type);
    auto num = [&](auto int_op, auto float_op) -> Scalar {
        if (fl) return normalize_value(t, Scalar::of_float(float_op(args[0].f, args[1].f)));
        return normalize_value(t, Scalar::of_int(int_op(args[0].i, args[1].i)));
    };
    auto cmp = [&](auto op) -> Scalar {
        return Scalar::of_int(fl ? op(args[0].f, args[1].f) : op(args[0].i, args[1].i));
    };
    switch (n.op) {
        case Op::Add: return num(wrap_add, [](double a, double b) { return a + b; });
        case Op::Sub: return num(wrap_sub, [](double a, double b) { return a - b; });
        case Op::Mul: return num(wrap_mul, [](double a, double b) { return a * b; });
        case Op::Div: return normalize_value(t, Scalar::of_float(args[0].f / args[1].f));
        case Op::FloorDiv:
            if (args[1].i == 0) return std::nullopt;
            return normalize_value(t, Scalar::of_int(floor_div(args[0].i, args[1].i)));
        case Op::Mod:
            if (args[1].i == 0) return std::nullopt;
            return normalize_value(t, Scalar::of_int(floor_mod(args[0].i, args[1].i)));
        case Op::Min:
            if (fl) return args[1].f < args[0].f ? args[1] : args[0];
            return args[1].i < args[0].i ? args[1] : args[0];
        case Op::Max:
            if (fl) return args[0].f < args[1].f ? args[1] : args[0];
            return args[0].i < args[1].i ? args[1] : args[0];
        case Op::Neg:
            if (fl) return Scalar::of_float(-args[0].f);
            return normalize_value(t, Scalar::of_int(wrap_sub(0, args[0].i)));
        case Op::Fma:
            if (t == Type::F32) {
                const float r = std::fma(static_cast<float>(args[0].f), static_cast<float>(args[1].f),
                                         static_cast<float>(args[2].f));
                return Scalar::of_float(static_cast<double>(r));
            }
            return Scalar::of_float(std::fma(args[0].f, args[1].f, args[2].f));
        case Op::Pow: {
            if (t != Type::F32) return Scalar::of_float(std::pow(args[0].f, args[1].f));
            return Scalar::of_float(static_cast<double>(torch_pow(static_cast<float>(args[0].f), static_cast<float>(args[1].f))));
        }
        case Op::Floor: return Scalar::of_float(std::floor(args[0].f));
        case Op::RoundEven: return Scalar::of_float(std::nearbyint(args[0].f));
        case Op::Abs:
            if (fl) return Scalar::of_float(std::fabs(args[0].f));
            return normalize_value(t, Scalar::of_int(args[0].i < 0 ? wrap_sub(0, args[0].i) : args[0].i));
        case Op::ShiftRight: return normalize_value(t, Scalar::of_int(args[0].i >> args[1].i));
        case Op::Lt: return cmp([](auto a, auto b) { return a < b ? 1 : 0; });
        case Op::Le: return cmp([](auto a, auto b) { return a <= b ? 1 : 0; });
        case Op::Eq: return cmp([](auto a, auto b) { return a == b ? 1 : 0; });
        case Op::Ne: return cmp([](auto a, auto b) { return a != b ? 1 : 0; });
        case Op::And: return Scalar::of_int(args[0].i != 0 && args[1].i != 0 ? 1 : 0);
        case Op::Or: return Scalar::of_int(args[0].i != 0 || args[1].i != 0 ? 1 : 0);
        case Op::Not: return Scalar::of_int(args[0].i != 0 ? 0 : 1);
        case Op::Select: return args[0].i != 0 ? args[1] : args[2];
        case Op::Cast: {
            bool ok = true;
            const Scalar v = do_cast(t, n.args[0]->type, args[0], ok);
            if (!ok) return std::nullopt;
            return v;
        }
        case Op::SatCast: return do_sat_cast(t, n.args[0]->type, args[0]);
        case Op::Const:
        case Op::Var:
        case Op::Load:
        case Op::Sum: break;
    }
    fail("ir::apply_op: {} is not an operator on values", op_name(n.op));
}

namespace {

Scalar eval_rec(const Expr& e, VarValues& vars, const LoadFn& load) {
    switch (e->op) {
        case Op::Const: return const_value(e);
        case Op::Var: {
            const auto it = vars.find(e->var);
            if (it == vars.end()) fail("ir::evaluate: unbound variable {}", to_string(e));
            return Scalar::of_int(it->second);
        }
        case Op::Load: {
            if (!load) fail("ir::evaluate: load from t{} without a load callback", e->buffer);
            std::vector<std::int64_t> index;
            index.reserve(e->args.size());
            for (const Expr& a : e->args) index.push_back(eval_rec(a, vars, load).i);
            return normalize_value(e->type, load(e->buffer, index));
        }
        case Op::Sum: {
            // The reduction var shadows any outer binding of the same id for the body only.
            const auto saved = vars.find(e->var) != vars.end() ? std::optional<std::int64_t>(vars[e->var]) : std::nullopt;
            const Reduce kind = reduce_kind(e);
            Scalar acc = const_value(reduce_identity(kind, e->type));
            const std::int64_t extent = eval_rec(e->args[1], vars, load).i;
            const auto factors = fma_factors(e, e->args[0]);
            for (std::int64_t r = 0; r < extent; ++r) {
                vars[e->var] = r;
                if (factors) {
                    const Scalar a = eval_rec(factors->first, vars, load), b = eval_rec(factors->second, vars, load);
                    acc = e->type == Type::F32 ? Scalar::of_float(static_cast<double>(std::fma(
                                                     static_cast<float>(a.f), static_cast<float>(b.f), static_cast<float>(acc.f))))
                                               : Scalar::of_float(std::fma(a.f, b.f, acc.f));
                } else {
                    acc = add_in(e->type, acc, eval_rec(e->args[0], vars, load), kind);
                }
            }
            if (saved) vars[e->var] = *saved;
            else vars.erase(e->var);
            return acc;
        }
        case Op::Select: {
            // Only the chosen branch is evaluated: the other may be undefined (e.g. divide by 0).
            const Scalar c = eval_rec(e->args[0], vars, load);
            return eval_rec(e->args[c.i != 0 ? 1 : 2], vars, load);
        }
        default: break;
    }
    std::vector<Scalar> args;
    args.reserve(e->args.size());
    for (const Expr& a : e->args) args.push_back(eval_rec(a, vars, load));
    const auto v = apply_op(*e, args);
    if (!v) fail("ir::evaluate: {} is undefined for these operands in {}", op_name(e->op), to_string(e));
    return *v;
}

}  // namespace

Scalar evaluate(const Expr& e, const VarValues& vars, const LoadFn& load) {
    if (!e) fail("ir::evaluate: null expression");
    VarValues scope = vars;
    return eval_rec(e, scope, load);
}

std::int64_t eval_int(const Expr& e, const VarValues& vars, const LoadFn& load) {
    if (!e || is_float(e->type)) fail("ir::eval_int: not an integer expression");
    return evaluate(e, vars, load).i;
}

double eval_float(const Expr& e, const VarValues& vars, const LoadFn& load) {
    if (!e) fail("ir::eval_float: null expression");
    const Scalar v = evaluate(e, vars, load);
    return is_float(e->type) ? v.f : static_cast<double>(v.i);
}

namespace {

std::int64_t eval_params_rec(const Expr& e, std::span<const std::int64_t> values, const std::vector<bool>* known) {
    const Node& n = *e;
    auto arg = [&](std::size_t i) { return eval_params_rec(n.args[i], values, known); };
    auto wrap = [&](std::int64_t v) { return normalize_value(n.type, Scalar::of_int(v)).i; };
    switch (n.op) {
        case Op::Const: return n.ival;
        case Op::Var: {
            const std::size_t i = is_param_var(n.var) ? static_cast<std::size_t>(n.var - kFirstParamVar) : values.size();
            if (i >= values.size() || (known && !(*known)[i])) fail("ir::evaluate: unbound variable {}", to_string(e));
            return values[i];
        }
        case Op::Add: return wrap(wrap_add(arg(0), arg(1)));
        case Op::Sub: return wrap(wrap_sub(arg(0), arg(1)));
        case Op::Mul: return wrap(wrap_mul(arg(0), arg(1)));
        case Op::FloorDiv:
        case Op::Mod: {
            const std::int64_t a = arg(0), b = arg(1);
            if (b == 0) fail("ir::evaluate: {} is undefined for these operands in {}", op_name(n.op), to_string(e));
            return wrap(n.op == Op::FloorDiv ? floor_div(a, b) : floor_mod(a, b));
        }
        case Op::Min: {
            const std::int64_t a = arg(0), b = arg(1);
            return b < a ? b : a;
        }
        case Op::Max: {
            const std::int64_t a = arg(0), b = arg(1);
            return a < b ? b : a;
        }
        case Op::Neg: return wrap(wrap_sub(0, arg(0)));
        case Op::Select: return arg(0) != 0 ? arg(1) : arg(2);
        default: break;
    }
    // Anything else (rare in index arithmetic): the general interpreter.
    VarValues vars;
    for (std::size_t i = 0; i < values.size(); ++i)
        if (!known || (*known)[i]) vars[kFirstParamVar + static_cast<int>(i)] = values[i];
    return eval_int(e, vars);
}

}  // namespace

std::int64_t eval_params(const Expr& e, std::span<const std::int64_t> values, const std::vector<bool>* known) {
    if (!e || is_float(e->type)) fail("ir::eval_int: not an integer expression");
    return eval_params_rec(e, values, known);
}

}  // namespace toroid::ir
