// Histograms (Halide calls the form a scatter of an update definition). A kernel whose
// value counts, per bin b of one output dim d, the terms of a reduction whose key equals b,
//
//     out[.., b, ..] = sum over r1 (, r2) of (key(r1, r2) == b ? 1 : 0),
//
// computes each output with a pass over the whole reduction domain: bins x terms steps
// (256 passes over the image for equalize's counts). Marked here, it is printed as one pass
// that adds one to the key's bin (codegen/cpp.cpp: local bins per plane; codegen/cuda.cpp:
// a block per plane with its bins in shared memory), then stores the bins of the region
// the buffer holds. The counts are integers: the same in any order, so the result is the
// value's, bit for bit, on every target.
//
// The form: an integer Add over one or two reduction variables (outermost first) of a
// Select of 1 and 0 (or a cast of a comparison) on Eq(key, b), where b is the loop
// variable d (perhaps cast to the key's type), d's logical extent is a constant of at most
// kMaxHistogramBins and neither the key nor anything else in the term depends on d. Only
// the key's bins inside [0, bins) are counted (an equality with b could hold nowhere else).
// Tests: tests/schedule/histogram_test.cpp.
#pragma once

#include "ir/loop.h"
#include "target/target.h"

#include <optional>
#include <vector>

namespace toroid::schedule {

inline constexpr std::int64_t kMaxHistogramBins = 4096;

struct HistogramForm {
    int dim = -1;               // the output dim of the bins
    std::int64_t bins = 0;      // its logical extent
    ir::Expr key;               // I64: a term's bin (of the other loop variables and the reduction's)
    std::vector<ir::Expr> sums;  // the reduction's Sum nodes, outermost first
};

// The kernel's value in the form above, or nullopt. Read by the pass and by the printers,
// which lower what it returns (one matcher, so the two never disagree).
std::optional<HistogramForm> histogram_form(const ir::Program& prog, const ir::Kernel& k);

// The kernel's loop over the bins and its other loops (the planes), outer first.
struct HistogramLoops {
    const ir::Loop* bins = nullptr;
    std::vector<const ir::Loop*> planes;
};
HistogramLoops histogram_loops(const ir::Kernel& k, const HistogramForm& f);

// Marks every kernel in the form (Kernel::histogram); the other CPU and GPU passes leave
// those kernels' loops to the printers' histogram form.
void choose_histograms(ir::Program& prog, const Target& target);

}  // namespace toroid::schedule
