// The C++ backend: prints a scheduled loop program as one translation unit of plain
// C++20 (one function per kernel, OpenMP for the parallel loops, the vector loop
// written for the compiler's vectorizer) with one exported entry point:
//     extern "C" void toroid_entry(void* const* buffers, int threads);
// buffers[i] is the base pointer of Program::buffers[i]; element 0 of a buffer is its
// origin (Buffer::origin). threads (>= 1) is the number of OpenMP threads to use.
#pragma once

#include "ir/loop.h"

#include <string>

namespace toroid::codegen {

inline constexpr const char* kEntryPoint = "toroid_entry";

// `lanes`: outputs per iteration of each kernel's vector loop (16 suits AVX-512, 8 AVX2).
std::string generate_cpp(const ir::Program& program, int lanes = 8);

// The lane count that suits the CPU this process runs on.
int native_lanes();

}  // namespace toroid::codegen
