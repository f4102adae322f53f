// Binding: the values one graph instance gives a scheduled program. The graph supplies its
// parameters and table data; the regions of realized intermediates are worked out from
// their consumers' index expressions under those values (the run-time half of
// infer_bounds), their dense strides from the regions; the output's strides come from the
// caller's memory at each run (bind_output_strides).
#pragma once

#include "ir/graph.h"
#include "ir/loop.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace toroid::schedule {

struct Binding {
    std::vector<std::int64_t> params;                // the value of every Program parameter
    std::vector<const void*> tables;                 // by buffer id: a table's data (else null)
    std::vector<std::int64_t> temp_bytes;            // by buffer id: bytes a Temp buffer needs (else 0)
    std::vector<std::vector<std::int64_t>> shapes;   // by buffer id: the stored region's extents
};

// Binds `instance` (a graph of the structure `p` was scheduled from). The tables point into
// the instance's data: keep the graph alive while the binding is used.
Binding bind(const ir::Program& p, const ir::Graph& instance);

// Sets the output strides (elements, N C H W) of a run that writes into caller memory.
// Throws toroid::Error when a stride the program fixed (the dense dim's) differs.
void bind_output_strides(const ir::Program& p, Binding& b, const std::array<std::int64_t, 4>& strides);
// Whether memory of these strides can take the output directly (else it is copied there).
bool output_strides_match(const ir::Program& p, const Binding& b, const std::array<std::int64_t, 4>& strides);

// Whether every value of `instance` fits the int32 index arithmetic of IndexWidth::I32
// (every tensor's extent times its strides, and every parameter in its declared range).
bool fits_index32(const ir::Graph& instance);

// The --explain text for a bound program: "N kernels", then per kernel its loop nest with
// this instance's ranges, vector and parallel axes, bytes read and written, FLOPs.
std::string explain(const ir::Program& p, const Binding& b);

}  // namespace toroid::schedule
