// Block-wide reductions on GPU targets (a pass before choose_gpu_axes). A kernel that
// reduces a whole image to a few values (contrast's grey mean, autocontrast's minimum and
// maximum, equalize's counts) has few outputs and a long reduction each: one thread per
// output sums millions of terms alone while the GPU idles. Such a kernel is printed with a
// block of threads per output element instead: the block's threads take the reduction's
// terms in turn (consecutive threads on consecutive terms, so a warp's loads coalesce along
// rows), each accumulates its share, and the block combines the shares (warp shuffles, then
// one value per warp through shared memory); thread 0 finishes the value and stores it.
//
// Only where regrouping the terms cannot change the result, so every engine keeps one
// answer: the least or greatest term (NaN-propagating as ir::Reduce says, the same in any
// grouping), integer sums (wrapping arithmetic is associative), and double sums of
// integer-valued terms (exact while the sum stays below 2^53: 2^31 terms of magnitude below
// 2^22). Float sums of other terms keep their order (one thread each). And only for
// reductions as long as an image: the outermost reduction's extent names an image size
// (ParamKind::Size), which a filter's taps (a constant, or a Count parameter) never do.
// A reduction whose body is another of the same kind and type (rows inside an image) runs
// as one reduction over both variables.
//
// Decided here (GpuPlan::block_sum), printed by codegen/cuda.cpp; a kernel so marked is
// not fused (schedule/gpu_fuse.h), not unrolled and computes one output per block.
// Tests: tests/schedule/block_reduce_test.cpp (no GPU), tests/engine/ (GPU).
#pragma once

#include "ir/loop.h"
#include "target/target.h"

namespace toroid::schedule {

void choose_block_reductions(ir::Program& prog, const Target& target);

// Before it (and before the histogram pass, bounds and layouts): a kernel that reduces over
// two image-sized variables (rows of columns) to an output with a dim of extent 1 — an
// image's or a channel's minimum, a histogram per channel — has as many outputs as planes,
// too few blocks for a GPU. It is split (as the CPU's rfactor splits rows into lanes): a new
// kernel computes the inner reduction for each value of the outer variable, stored along the
// free dim (a row's minimum, a row's histogram: many blocks), and the kernel reduces those
// (one block per output, over as many terms as rows). Regrouping as choose_block_reductions
// requires it, so the value is the same.
void split_image_reductions(ir::Program& prog, const Target& target);

// Whether every value `e` takes is an integer (held in a float type or not), following
// loads of Temp buffers to the kernels that write them.
bool integer_valued(const ir::Program& prog, const ir::Expr& e);

}  // namespace toroid::schedule
