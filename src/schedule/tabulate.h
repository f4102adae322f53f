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
#include "target/target.h"

#include <optional>

namespace toroid::schedule {

// `value` as a function of one uint8 element it reads (the argument), per image (it names
// loop variable 0 elsewhere: an image's mean) and per channel (1: a channel's least and
// greatest values): every other load's indices name no loop variable past those two except
// through the argument (equalize reads its per-channel running counts at the pixel's value),
// and no reduction runs over it.
struct ByteFunction {
    ir::Expr argument;
    ir::Expr entry;  // the value where the argument reads the byte v3 (a table's entry)
    bool per_image = false, per_channel = false;
};
std::optional<ByteFunction> byte_function(const ir::Expr& value);
std::optional<ir::Expr> byte_function_argument(const ir::Expr& value);  // byte_function's argument

// The cost the value must reach to be tabulated (a pow counts 40, an integer division by a
// run-time value 8, a float division 4, other operations 1): the table's 256 evaluations then cost less than a small image's. On
// targets that permute bytes, a uint8 table's entries are looked up in registers (four
// permutes per 64 bytes, codegen's lut256_v), cheaper than any arithmetic in wider lanes: any
// uint8 function of a byte that computes anything is tabulated there.
inline constexpr int kTabulateMinCost = 16;
int pointwise_cost(const ir::Expr& value);

// The pass: for each kernel that qualifies, a table buffer and the kernel that fills it,
// inserted before it; its value becomes a read of the table.
void tabulate_byte_functions(ir::Program& prog, const Target& target);

// The byte a read of a uint8 table (Buffer::lookup_table of type U8) looks up, for the code generators
// and the lane count (schedule/cpu_axes.cpp): nullopt for any other load. The table read is
// entries 0..255 from its plane's (n, c) start, args 0 and 1 of the load.
std::optional<ir::Expr> byte_table_argument(const ir::Program& prog, const ir::Expr& load);

}  // namespace toroid::schedule
