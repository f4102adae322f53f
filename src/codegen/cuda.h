// The CUDA backend: prints a program scheduled for a GPU target (schedule/gpu_axes.cpp) as
// one CUDA C++ translation unit with no #include (NVRTC compiles it at run time; clang's
// CUDA front end checks it in CI without an SDK). Each kernel is
//     extern "C" __global__ void kernel_<i>(const toroid_args args);
// where toroid_args holds every buffer's device pointer (Program::buffers order) and every
// parameter's value (Program::params order), passed by value. Launch dimensions come from
// the bound loop extents (cuda_launch_dims).
#pragma once

#include "ir/loop.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace toroid::codegen {

std::string generate_cuda(const ir::Program& program, int block_threads);

// The kernel's name in the generated source.
std::string cuda_kernel_name(const ir::Program& program, std::size_t kernel);
// The name of the kernel that runs fusion `fusion` (Program::gpu_fusions) as one:
//     extern "C" __global__ void toroid_fused_<consumer>(const toroid_args args, const toroid_tiles tiles);
// launched with GpuFusion::block_x x block_y threads, a block per tile (x: tiles along the
// consumer's x loop, y: along its y loop, z: its z loops) and the tile's dynamic shared
// memory (schedule::plan_fused_launch).
std::string cuda_fused_kernel_name(const ir::Program& program, std::size_t fusion);

// Grid dimensions (x, y, z) of kernel `k` for these parameter values (Binding::params):
// x in blocks of block_threads, y and z capped at 65535 (the kernels loop over the rest).
std::array<unsigned, 3> cuda_launch_dims(const ir::Program& program, const ir::Kernel& k,
                                         const std::vector<std::int64_t>& params, int block_threads);

}  // namespace toroid::codegen
