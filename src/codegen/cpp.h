// The C++ backend: prints a scheduled loop program as one translation unit of plain
// C++20 (one function per kernel, OpenMP for the parallel loops, the vector loop
// written for the compiler's vectorizer) with one exported entry point:
//     extern "C" void toroid_entry(void* const* buffers, const std::int64_t* params, int threads);
// buffers[i] is the base pointer of Program::buffers[i]; element 0 of a buffer is its
// origin (Buffer::origin). params[i] is the value of Program::params[i] (schedule/bind.h).
// threads (>= 1) is the number of OpenMP threads to use.
#pragma once

#include "ir/loop.h"

#include <string>

namespace toroid::codegen {

inline constexpr const char* kEntryPoint = "toroid_entry";

// Each kernel's vector loop computes CpuPlan::vector_width outputs per iteration, as the
// scheduler chose them for its target (a kernel that only moves bytes: a register of bytes;
// else 4-byte lanes). `lanes`: the lane count of kernels without a vector loop (their
// helpers are still declared for it; Target::kernel_lanes()).
std::string generate_cpp(const ir::Program& program, int lanes = 8);

// The namespace a source's kernels of `lanes` lanes and their copy of the preamble's
// vector part are printed in.
std::string lane_namespace(int lanes);

// The line of codegen/cpu_preamble.h where its per-lane-count part begins.
inline constexpr const char* kLaneSplit = "// ---- vectors of kLanes lanes: pasted once per lane count ----";

}  // namespace toroid::codegen
