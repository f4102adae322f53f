// GPU fusion of a producer with its one consumer through shared memory (a GPU-target pass
// after choose_gpu_axes, gpu_fuse.cpp), and its run-time half (plan_fused_launch, at bind time: fused_launch.cpp).
//
// What it decides: a Temp buffer T written by kernel P and read only by kernel K (a
// separable resize's two passes: K reads T's rows or columns at start[v] + tap) is also
// computed inside K's blocks. Each block of the fused kernel owns a tile of K's output
// (tile_x along K's grid x variable, tile_y along its grid y variable, one value of its
// grid z variables): it evaluates P's value over the part of T that the tile reads into
// shared memory, synchronizes, and computes its outputs reading T there. T never goes
// through global memory. Each dim of T is classified by how K indexes it (GpuFusion::DimKind):
// only through K's x variable (and tap indices), only through its y variable, through its
// z variables alone (one index per block), or through its unrolled variable alone (the
// whole, constant extent: a pixel's channels). Anything else (an index mixing two loop
// variables, a second consumer, P's loops not matching) leaves the pair unfused. The pair
// stays in the program: a launch whose tile needs more shared memory than the device has
// runs the two kernels (plan_fused_launch says which).
//
// The tile's region of T depends on table values (start[v] of every v in the tile), so it
// is worked out on the host when values are bound: per tile of x (and of y), the lowest and
// highest index each T dim is read at. The tile sizes are chosen there too, per instance:
// the least T computed per output (the halo the taps add at each tile edge) within a shared
// memory budget, with enough blocks to fill the device.
//
// Exactness: P's and K's values are printed as in their own kernels (the same expressions,
// the same order of tap sums); only where T lives changes.
// Tests: tests/schedule/gpu_fuse_test.cpp (no GPU), tests/engine/cuda_fusion_test.cpp (GPU).
#pragma once

#include "ir/loop.h"
#include "schedule/bind.h"
#include "target/target.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace toroid::schedule {

// The pass: appends a GpuFusion to prog.gpu_fusions for each pair it fuses (a kernel is in
// one pair at most) and records why in both kernels' decisions.
void fuse_gpu_pairs(ir::Program& prog, const Target& target);

// What a device offers a fused launch.
struct FusedLimits {
    std::int64_t shared_limit = 48 * 1024;   // the most dynamic shared memory a block may have
    std::int64_t shared_budget = 32 * 1024;  // what a block should use, so that several fit an SM
    int multiprocessors = 132;
    bool fuse = true;  // false: every pair runs as its two kernels (the engine's $TOROID_CUDA_FUSE=0)
};

// The kernel parameter after toroid_args of a fused kernel (codegen/cuda.cpp prints the same
// struct): per-tile ranges of T and the tile sizes.
inline constexpr int kFusedMaxDims = 8;
struct FusedTilesArg {
    std::uint64_t ranges = 0;  // device pointer to `FusedLaunch::ranges`
    std::int32_t tile_x = 0, tile_y = 0;
    std::int32_t offset[kFusedMaxDims] = {};  // per T dim: index of tile 0's (lo, n) pair, or -1
};
static_assert(sizeof(FusedTilesArg) == 48);

// One instance's launch of a fused pair.
struct FusedLaunch {
    bool fused = false;
    std::string why;  // why the pair runs as two kernels (when !fused), or the tiles chosen
    int tile_x = 1, tile_y = 1;
    std::int64_t tiles_x = 0, tiles_y = 0, blocks_z = 0;  // blocks along x, y (tiles) and z
    std::vector<std::int32_t> ranges;  // (lo, n) pairs: per tiled dim of T, per tile
    std::array<std::int32_t, kFusedMaxDims> offset{};  // per T dim: index of its first pair, or -1
    std::int64_t shared_bytes = 0;      // dynamic shared memory of a block
};

// The launch of fusion `f` for the bound values `b`: tile sizes, per-tile ranges of T, the
// shared memory a block needs; not fused where even the smallest tile needs more than
// limits.shared_limit (or $TOROID_CUDA_FUSE=0).
FusedLaunch plan_fused_launch(const ir::Program& p, const ir::GpuFusion& f, const Binding& b, const FusedLimits& limits);

}  // namespace toroid::schedule
