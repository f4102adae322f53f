// The scheduler: turns a primitive graph into a loop program. Its passes, in order:
//   1. choose_realized    which computed tensors get a buffer (the rest are inlined)
//   2. inline_tensors     substitute inlined bodies into their consumers (vertical fusion)
//   3. simplify           fold index arithmetic with the loops' ranges (drops idle clamps/masks)
//   4. infer_bounds       shrink realized buffers to the region their consumers read
//   5. choose_layouts     strides of every realized buffer (the input's layout, so a
//                         channels-last pipeline keeps channels-last intermediates)
//   6. order_loops        loop order follows the stored buffer's memory order
//   7. choose_axes        vector, unrolled and parallel loops
// Each pass records what it decided in Kernel::decisions and in the log.
#pragma once

#include "ir/graph.h"
#include "ir/loop.h"

#include <string>
#include <vector>

namespace toroid::schedule {

struct Options {
    int vector_bytes = 32;     // SIMD register width the vector loop is sized for
};

// One snapshot per pass, for debug dumps: the pass name and the program after it.
struct PassDump {
    std::string pass;
    std::string text;
};

// Schedules `g`. The program's input buffer is graph tensor 0, its output the graph's
// output. `dumps` (optional) receives the program after each pass.
ir::Program schedule(const ir::Graph& g, const Options& options = {}, std::vector<PassDump>* dumps = nullptr);

}  // namespace toroid::schedule
