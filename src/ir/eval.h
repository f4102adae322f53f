// A scalar interpreter of Expr: the reference semantics of every op (integers as int64
// wrapped to their type, floats as doubles rounded to their type). Constant folding in the
// builders calls apply_op, so folded constants and evaluated values can never disagree.
#pragma once

#include "ir/expr.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace toroid::ir {

// One scalar: `i` for Bool (0/1) and integer types, `f` for float types.
struct Scalar {
    std::int64_t i = 0;
    double f = 0;
    static Scalar of_int(std::int64_t v) { return {v, 0}; }
    static Scalar of_float(double v) { return {0, v}; }
};

// Element of buffer `buffer` at `index`; its result is normalized to the Load's type.
using LoadFn = std::function<Scalar(int buffer, const std::vector<std::int64_t>& index)>;
using VarValues = std::map<int, std::int64_t>;

// Wraps an integer to type t (Bool: != 0) or rounds a float to t.
Scalar normalize_value(Type t, Scalar v);
// The value of a Const node.
Scalar const_value(const Expr& e);

// PyTorch's CPU pow of a float32 tensor by a scalar exponent (pow_tensor_scalar: its
// special exponents, else std::pow in double rounded to float): Op::Pow of F32.
float torch_pow(float base, float exponent);

// Applies n's op (not Const, Var, Load or Sum) to operand values `args` (one per n.args,
// of those nodes' types). nullopt where the result is undefined: FloorDiv/Mod by zero, a
// float -> integer Cast of NaN or of a value outside the target type.
std::optional<Scalar> apply_op(const Node& n, const std::vector<Scalar>& args);

// Evaluates e with Vars bound by `vars` (reduction vars are bound by their Sum). Throws
// toroid::Error on an unbound Var, a Load without `load`, or an undefined op (see apply_op).
Scalar evaluate(const Expr& e, const VarValues& vars, const LoadFn& load = {});
// Convenience forms: eval_int for Bool/integer exprs, eval_float for any (ints converted).
std::int64_t eval_int(const Expr& e, const VarValues& vars, const LoadFn& load = {});
double eval_float(const Expr& e, const VarValues& vars, const LoadFn& load = {});

// eval_int for an expression of constants and run-time parameters (param(i) is values[i]),
// as evaluate computes it, without a VarValues map: binding a new image size evaluates
// hundreds of shape, loop and region expressions, and a map per evaluation was most of
// that. With `known`, a parameter whose flag is false is an error, as an unbound var is.
std::int64_t eval_params(const Expr& e, std::span<const std::int64_t> values, const std::vector<bool>* known = nullptr);

}  // namespace toroid::ir
