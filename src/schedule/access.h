// The access analysis of a CPU kernel's vector body: the form of each load along the vector
// loop (ir::LoadForm: contiguous, reversed, strided, uniform, byte table, window, word
// gather, bounded word gather, lane gather). The scheduler computes it once, for the loop it
// makes the vector loop, records it in the kernel (CpuPlan::loads) and its decisions, and
// decides from it whether vectors pay (a lane-by-lane gather of bytes loses to scalar code).
// The C++ printer lowers each load by the same rules (split_gather, tap_window) and fails
// where it would print a gather the plan does not list.
#pragma once

#include "ir/loop.h"
#include "target/target.h"

#include <optional>
#include <string>
#include <vector>

namespace toroid::schedule {

// A load's offset in the vector body along loop var v, split into the part that differs
// across lanes (`lanes`) and the part that does not (`uniform`), for a read through a window
// of memory: in a tap loop over `tap` (>= 0), the lanes' part must not move with the tap (a
// window per vector serves every tap); outside tap loops (tap < 0) there is no such
// condition. Terms split through additions; where that leaves another loop's variable in
// the lanes' part (`x - floordiv(f, 3) * 3`: a row's base minus a pixel's), through
// subtractions too. nullopt where the offset does not vary, moves at a constant stride, or
// has no such split.
struct GatherSplit {
    ir::Expr lanes, uniform;
};
std::optional<GatherSplit> split_gather(const ir::Expr& off, int v, int tap);

// Element types a gather may read through windows: bytes (no gather instruction) and 4-byte
// words (whose gathers load lane by lane).
inline bool read_through_windows(ir::Type t) { return ir::type_bytes(t) == 1 || ir::type_bytes(t) == 4; }

// Whether a lanes' part names no variable but v and parameters: its window depends on the
// position along the vector loop alone (a resize's index table), so the printer works it
// out once per kernel call for each block of lanes.
bool lanes_column_only(const ir::Expr& lanes, int v);

// A tap loop over a 2-D window: a sum with a constant extent whose term reads its tap r only
// as r / K and r % K (and r itself), for one constant K that divides the extent, as a
// convolution's flattened taps do. Printed as a loop over the rows around a loop over the K
// columns, the term rewritten with a row and a column variable.
struct TapWindow {
    ir::Expr term;
    int row = 0, col = 0;
    std::int64_t rows = 0, cols = 0;
};
inline constexpr int kTapWindowVars = ir::kFirstParamVar / 2;  // below the parameters' ids
std::optional<TapWindow> tap_window(const ir::Expr& sum, const ir::Expr& term);

// The form of `load` (offset `off`) in the vector body along v; `tap`: the variable of the
// tap loop whose windows the printer works out before the loop (a one-variable tap loop
// around the load, not through an unrolled sum), else -1.
ir::LoadForm load_form(const ir::Program& prog, const ir::Expr& load, const ir::Expr& off, int v, int tap);

// The forms of every load of `k` (as printed: fused_channel_kernel where it fuses) along v.
std::vector<ir::LoadAccess> analyze_loads(const ir::Program& prog, const ir::Kernel& k, int v);

// Whether vector code along the analysed loop would gather 1- or 2-byte elements lane by
// lane on `target` (no gather instruction for those: such code loses to the scalar loop):
// byte windows count only where the target reads them through permutes (byte_windows), word
// gathers only where it gathers words (word_gather).
bool gathers_narrow(const ir::Program& prog, const std::vector<ir::LoadAccess>& loads, const Target& target);

// "b0 contiguous x2, b3 window": for the kernel's decisions.
std::string describe_loads(const std::vector<ir::LoadAccess>& loads);

}  // namespace toroid::schedule
