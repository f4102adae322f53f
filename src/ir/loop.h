// The loop-level IR: a Program is a list of kernels run in order over a set of buffers.
// Each kernel is a loop nest over its output's index space (vars 0..rank-1, listed
// outer to inner in `loops`) whose body computes one value that is stored at
// output[v0, ..., v{rank-1}]. Loads in the body name buffers by id. Backends (C++ now,
// CUDA later) print kernels; they never see the ops that made them.
#pragma once

#include "ir/expr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace toroid::ir {

enum class BufferRole : std::uint8_t { Input, Constant, Temp, Output };
std::string_view buffer_role_name(BufferRole r);

struct Buffer {
    int id = -1;  // the graph tensor id (Loads use it)
    std::string name;
    BufferRole role = BufferRole::Temp;
    Type type = Type::F32;
    std::vector<std::int64_t> shape;    // the region stored (after bounds inference)
    std::vector<std::int64_t> strides;  // elements; chosen by the layout pass (inputs: the caller's)
    std::vector<std::int64_t> origin;   // logical index of element 0 (bounds inference); Loads subtract it
    std::vector<std::uint8_t> data;     // Constant only: dense C-order values, passed to the kernels at run time
    std::int64_t numel() const;
    std::int64_t span() const;  // elements between the lowest and highest address + 1
};

// Serial: a plain loop. Parallel: iterations split over threads (adjacent Parallel
// loops are collapsed into one iteration space). Vector: the SIMD loop. Unrolled: a
// small static loop (e.g. 3 channels) written out, so that the loop around it
// vectorizes over interleaved elements.
enum class LoopKind : std::uint8_t { Serial, Parallel, Vector, Unrolled };
std::string_view loop_kind_name(LoopKind k);

struct Loop {
    int var = 0;  // output dim index (0..rank-1)
    std::int64_t begin = 0;  // the loop runs over [begin, begin + extent): the stored region
    std::int64_t extent = 0;
    LoopKind kind = LoopKind::Serial;
};

struct Kernel {
    std::string name;
    int output = -1;          // buffer id
    std::vector<Loop> loops;  // outer to inner; a permutation of the output's dims
    Expr value;               // in terms of Vars 0..rank-1: logical indices of the output element
    int vector_width = 1;     // lanes of the Vector loop (1: none)
    std::vector<std::string> decisions;  // why each choice was made (for --explain and debug dumps)
    // Static cost estimates for --explain and the bandwidth report.
    std::int64_t bytes_read = 0, bytes_written = 0, flops = 0;
};

struct Program {
    std::vector<Buffer> buffers;  // indexed by buffer id
    std::vector<Kernel> kernels;
    int input = -1, output = -1;
    const Buffer& buffer(int id) const { return buffers.at(static_cast<std::size_t>(id)); }
    std::string to_string() const;  // readable dump of buffers and loop nests
};

}  // namespace toroid::ir
