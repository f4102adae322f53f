// Range analysis and algebraic simplification of Exprs. Index expressions come out of
// decomposition full of clamps, offsets and div/mod pairs that the loop bounds make
// redundant; simplify() removes them so that codegen sees plain affine indices.
#pragma once

#include "ir/expr.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace toroid::ir {

// Inclusive range of an integer-typed expression.
struct Interval {
    std::int64_t lo, hi;
    bool operator==(const Interval&) const = default;
};
using VarRanges = std::map<int, Interval>;
// Value range of the elements of integer buffer `buffer` (constant index tables); nullopt
// where unknown.
using LoadBounds = std::function<std::optional<Interval>(int buffer)>;

// Interval arithmetic for Bool and integer exprs (Bool: within [0, 1]). A Sum binds its
// reduction variable to [0, extent). nullopt for floats, for unknown vars or I64 loads,
// and on int64 overflow; a narrower type whose arithmetic may wrap gets its whole range.
std::optional<Interval> bounds(const Expr& e, const VarRanges& ranges, const LoadBounds& load_bounds = {});

// Value range of the elements of integer buffer `buffer` that a load can reach at indices
// within `index` (one interval per dim; empty: anywhere); nullopt where unknown.
using IndexedLoadBounds = std::function<std::optional<Interval>(int buffer, std::span<const Interval> index)>;
// bounds() where a load is bounded by the elements its indices reach, not by every element
// (binding, where the tables' data is at hand: a table read over a few rows says where in
// the image those rows lie). Run-time parameter i, when not in `ranges`, is the single
// value params[i] where known[i] (known empty: every one), so that a caller holding the
// values need not copy them into a map.
std::optional<Interval> bounds_indexed(const Expr& e, const VarRanges& ranges, const IndexedLoadBounds& load_bounds,
                                       std::span<const std::int64_t> params = {},
                                       const std::vector<bool>* known = nullptr);

// Bottom-up rewrite that never changes the value of e for var values inside `ranges`
// (integer ops wrap to their type, as ir::evaluate computes them): constant folding;
// int64 Add/Sub/Mul-by-constant/Neg in canonical affine form (vars by id, then other
// terms, then the constant); floordiv/mod of an affine int64 expr by a positive constant
// split by the ranges; min/max and comparisons that the ranges decide; any integer
// subexpression whose bounds are a single value becomes that constant. Rewrites that rely
// on ranges are made only where the int64 values involved provably do not overflow.
Expr simplify(const Expr& e, const VarRanges& ranges = {}, const LoadBounds& load_bounds = {});

// The constant a such that e = a * Var(var) + (terms without var), through Add, Sub, Neg
// and Mul by a constant; 0 when e does not depend on var (whatever its type); nullopt
// when e depends on var in any other way (or is a float expr that depends on it).
std::optional<std::int64_t> linear_stride(const Expr& e, int var);

// The terms of a sum (nested Adds flattened, in order); any other expression is one term.
std::vector<Expr> sum_terms(const Expr& e);
// The same, through subtractions too: a - b gives a's terms and each of b's negated (the
// simplifier prints negative terms as subtractions: `x - floordiv(f, 3) * 3`).
std::vector<Expr> signed_sum_terms(const Expr& e);

// True when every integer subexpression of e (Bool excluded) has known bounds inside int32.
bool fits_int32(const Expr& e, const VarRanges& ranges, const LoadBounds& load_bounds = {});

// The smallest interval holding every element of dense integer data of type `t`
// (constant index tables); nullopt for float types and empty data.
std::optional<Interval> data_range(Type t, const std::vector<std::uint8_t>& data);
// The same over the elements of a box of indices of that data seen as a dense C-order
// array of `shape` (each dim of `box` clamped to the array; a box of another rank: the whole
// array). nullopt where the box holds no element, for float and Bool types, and where the
// data is not `shape`'s size (no bound is better than one read past the data).
std::optional<Interval> data_range(Type t, const std::vector<std::uint8_t>& data, std::span<const std::int64_t> shape,
                                   std::span<const Interval> box);

}  // namespace toroid::ir
