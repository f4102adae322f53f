// The scheduler: turns a primitive graph into a loop program. Its passes, in order
// (Scheduler::run in schedule.cpp lists them in one place):
//   1. choose_realized    which computed tensors get a buffer (the rest are inlined)
//   2. inline_tensors     substitute inlined bodies into their consumers (vertical fusion)
//   3. lower              one kernel per realized tensor, buffers for input, tables, results
//   4. simplify           fold index arithmetic with the parameters' and loops' ranges;
//                         kernels whose results are no longer read are dropped
//      split_reductions   GPU only: reductions over rows of columns to a few outputs are
//                         split, rows first (schedule/block_reduce.h)
//      histogram          counts of keys per bin become one scatter pass (schedule/histogram.h)
//      tabulate           CPU only: an expensive function of one byte read becomes a
//                         256-entry table and a read of it (schedule/tabulate.h)
//      rfactor            CPU only: whole-row reductions in vector lanes (schedule/rfactor.h)
//   5. infer_bounds       realized intermediates cover only the region their consumers
//                         read: region parameters, computed when values are bound
//   6. choose_layouts     strides of every realized buffer (the input's layout, so a
//                         channels-last pipeline keeps channels-last intermediates)
//   7. order_loops        loop order follows the stored buffer's memory order
//   8. choose_axes        target-specific: CPU vector, unrolled and parallel loops
//                         (schedule/cpu_axes.cpp); GPU: whole-image reductions get a block
//                         of threads per output (schedule/block_reduce.h), then the grid
//                         mapping (schedule/gpu_axes.cpp)
//   9. fuse_gpu_pairs     GPU only: a producer and its one consumer also as one kernel
//                         through shared memory (schedule/gpu_fuse.h)
// Each pass records what it decided in Kernel::decisions and in the log. The program is
// the same for every graph of one structure: no pass reads parameter values or table data.
#pragma once

#include "ir/graph.h"
#include "ir/loop.h"
#include "target/target.h"

#include <string>
#include <vector>

namespace toroid::schedule {

struct Options {
    Target target = Target::host_cpu();
    ir::IndexWidth index_width = ir::IndexWidth::I64;
};

// One snapshot per pass, for debug dumps: the pass name and the program after it.
struct PassDump {
    std::string pass;
    std::string text;
};

// Schedules `g`. The program's input buffer is graph tensor 0, its output the graph's
// output. `dumps` (optional) receives the program after each pass.
ir::Program schedule(const ir::Graph& g, const Options& options = {}, std::vector<PassDump>* dumps = nullptr);

// The target-specific passes: each kernel's vector, unrolled and parallel loops (CPU,
// schedule/cpu_axes.cpp), or its grid mapping (GPU, schedule/gpu_axes.cpp).
void choose_cpu_axes(ir::Program& prog, const Target& target);
void choose_gpu_axes(ir::Program& prog, const Target& target);

}  // namespace toroid::schedule
