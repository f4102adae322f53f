// Reductions along a row in vector lanes (Halide's rfactor). A kernel that reduces a whole
// image to a few values (autocontrast's per-channel minimum and maximum, equalize's counts
// per bin) has no output axis to vectorize: its reduction runs one element at a time. When
// its innermost reduction variable r reads along a row (r the last index, step 1: unit
// stride in planes, a pixel apart in channels-last images) and the reduction can
// be regrouped exactly (least or greatest value, an integer sum, or a double sum of integer
// values: contrast's uint8 grey rows), it becomes two kernels:
//
//   P[.., l] = reduce over the outer reduction variables and k < n / L of term(r = L k + l)
//   out      = reduce(reduce over l < L of P[.., l], reduce of the term over the last n % L)
//
// P's lanes l are its vector loop (L consecutive elements of a row a step, one vector
// accumulator each); the second kernel combines them with the row ends. L is the target's
// lane count of 4-byte elements. CPU targets; the quick tier's program gets the same buffers.
//
// Tests: tests/schedule/rfactor_test.cpp.
#pragma once

#include "ir/loop.h"
#include "target/target.h"

#include <functional>
#include <optional>
#include <vector>

namespace toroid::schedule {

void rfactor_row_reductions(ir::Program& prog, const Target& target);

// A reduction whose terms may be regrouped without changing its value: the least or
// greatest term (NaN-propagating in any grouping), or a sum of integers (exact in any order).
bool regroupable(const ir::Expr& sum);

// A nest of reductions: one kind and type throughout, each the body of the one before
// (outermost first), down to a term with no reduction left.
struct ReductionChain {
    std::vector<ir::Expr> sums;
    ir::Expr term;
};
// `value` as such a nest whose every reduction `exact` accepts, or nullopt.
std::optional<ReductionChain> reduction_chain(const ir::Expr& value, const std::function<bool(const ir::Expr&)>& exact);

}  // namespace toroid::schedule
