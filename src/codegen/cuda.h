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

// The batched entries of the same kernels, in a source of their own (compiled only when a
// batch of images runs): a launch covers every image of a batch whose images share the
// program. Each image's toroid_args (its buffers, intermediates and parameters) and, for a
// fused kernel, its toroid_tiles sit in arrays in device memory:
//     extern "C" __global__ void toroid_batch_kernel_<i>(const toroid_args* batch, int32_t z_blocks);
//     extern "C" __global__ void toroid_batch_fused_<consumer>(const toroid_args* batch,
//                                                            const toroid_tiles* batch_tiles, int32_t z_blocks);
// blockIdx.z = image * z_blocks + z block: each image has z_blocks blocks along z (its z
// loops step by z_blocks); x and y are the largest image's, and the bounds checks and y
// loops read each image's own extents, so smaller images' extra blocks do nothing.
std::string generate_cuda_batch(const ir::Program& program, int block_threads);
std::string cuda_batch_kernel_name(const ir::Program& program, std::size_t kernel);
std::string cuda_batch_fused_kernel_name(const ir::Program& program, std::size_t fusion);

// Grid dimensions (x, y, z) of kernel `k` for these parameter values (Binding::params):
// x in blocks of block_threads, y and z capped at 65535 (the kernels loop over the rest).
std::array<unsigned, 3> cuda_launch_dims(const ir::Program& program, const ir::Kernel& k,
                                         const std::vector<std::int64_t>& params, int block_threads);

}  // namespace toroid::codegen
