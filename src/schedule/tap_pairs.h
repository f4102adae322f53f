// Tap pairs: integer tap sums whose terms multiply two factors of 16-bit range (a uint8
// pixel by an int16 fixed-point weight) are printed two taps at a time, as one 16-bit
// multiply-add per pair (x86 pmaddwd). The scheduler records it, the C++ printer prints it.
#pragma once

#include "ir/loop.h"
#include "target/target.h"

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

// Taps in lanes: a kernel whose vector loop runs over channels-last pixels of C = 3 or 4
// uint8 channels (the innermost loop, unrolled), each output byte F(sum over taps r of
// weight(r, x) * pixel(base(x) + C * r + c)), can also be printed with a pixel's channels
// and 8 of its taps in the lanes of one register instead of 16 pixels: the taps of a pixel
// are consecutive bytes, so each step is one masked load, one byte permute into 16-bit
// pairs and one 16-bit multiply-add, whatever the distance between the pixels' taps (which
// the vector loop's windows pay for as the downscale factor grows). The weights are laid out
// per pixel once per kernel call; rows share them.
struct TapLanes {
    ir::Expr sum;     // the tap Sum (over var sum->var), in the kernel's loop vars
    ir::Expr pixel;   // its uint8 factor: a load whose offset is base + C * r + c
    ir::Expr weight;  // its other factor: uint8 or int16, depends on r, x and parameters only
    // The pixel load's offset at r = 0, c = 0, as pixel_x (its terms in x, worked out per
    // pixel once per call) + pixel_row (the other terms, per row).
    ir::Expr pixel_x, pixel_row;
    int channels = 0;  // C
    int x_var = -1, c_var = -1;
};

// The form for k (as the scheduler left it, before this pass's flag), or nullopt when k's
// value is not one tap sum of that shape under a function of parameters alone.
std::optional<TapLanes> tap_lanes_form(const ir::Program& prog, const ir::Kernel& k);

// Rows a step: how far a pixel's bytes move from row `row_var` to the next (pixel_row's
// step, an expression of parameters), or nullopt where that depends on the row.
std::optional<ir::Expr> tap_lanes_row_step(const TapLanes& t, int row_var);

// The loop whose rows the kernel runs several a step with taps in lanes: the loop around
// the vector loop (the innermost parallel one). -1 where there is none.
int tap_lanes_row_var(const ir::Kernel& k, const TapLanes& t);

// Sets k.cpu().tap_lanes (and records why) where the target has a byte permute of 64-byte
// registers and k has the form.
void note_tap_lanes(const ir::Program& prog, ir::Kernel& k, const Target& target);

}  // namespace toroid::schedule
