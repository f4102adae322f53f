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

// `lanes`: outputs per iteration of each kernel's vector loop, as the scheduler's target
// chose them (Kernel::vector_width; Target::kernel_lanes).
std::string generate_cpp(const ir::Program& program, int lanes = 8);

}  // namespace toroid::codegen
