// Tabulating functions of one byte. A kernel whose value depends on its loop variables only
// through one uint8 element it reads (a gamma curve: pow per pixel; any chain of pointwise
// ops on a uint8 image) takes at most 256 values: when the value is expensive, a kernel
// before it computes them into a 256-entry table (the same expression, on 0..255), and the
// kernel reads its element from the table. Exact by construction: the table holds what the
// kernel computed. CPU targets only (a GPU's pow runs in hardware beside the memory traffic;
// a table would add a launch).
//
// Tests: tests/schedule/tabulate_test.cpp.
#pragma once

#include "ir/loop.h"

#include <optional>

namespace toroid::schedule {

// The one uint8 load that `value` depends on its loop variables (0..63) through, when it
// has one: every other load's indices are free of them, and no reduction runs over it.
std::optional<ir::Expr> byte_function_argument(const ir::Expr& value);

// The cost the value must reach to be tabulated (a pow counts 40, a float division 4,
// other operations 1): the table's 256 evaluations then cost less than a small image's.
inline constexpr int kTabulateMinCost = 16;
int pointwise_cost(const ir::Expr& value);

// The pass: for each kernel that qualifies, a table buffer and the kernel that fills it,
// inserted before it; its value becomes a read of the table.
void tabulate_byte_functions(ir::Program& prog);

}  // namespace toroid::schedule
