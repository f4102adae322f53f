// Tap pairs: integer tap sums whose terms multiply two factors of 16-bit range (a uint8
// pixel by an int16 fixed-point weight) are printed two taps at a time, as one 16-bit
// multiply-add per pair (x86 pmaddwd). The scheduler records it, the C++ printer prints it.
#pragma once

#include "ir/loop.h"
#include "schedule/target.h"

#include <optional>

namespace toroid::schedule {

// The factors of a Sum printed in pairs: the operands of its term's two casts to int32.
struct TapPairFactors {
    ir::Expr a, b;
};

// A Sum over a tap loop (a run-time or long extent) of int32 terms
// cast<i32>(a) * cast<i32>(b), with a and b each uint8 or int16: every product and
// every pair of products is exact in the 16-bit multiply-add's int32, and its wrapping sum
// equals the tap-by-tap one. Anything else: nullopt.
std::optional<TapPairFactors> tap_pair_factors(const ir::Expr& sum);

// Records in k's decisions which of its vector loop's tap sums are printed in pairs.
void note_tap_pairs(const ir::Program& prog, ir::Kernel& k, const Target& target);

}  // namespace toroid::schedule
