// Decomposition: a pipeline of ops becomes a primitive graph (ir::Graph) of index
// arithmetic, gathers, pointwise math and small sums. This layer is the only one below
// ops/ that knows what a resize or an affine warp is; the scheduler and the code
// generators see primitives only.
#pragma once

#include "core/tensor.h"
#include "ir/graph.h"
#include "ops/ops.h"
#include "ops/registry.h"

#include <span>

namespace toroid::decomp {

// The primitive graph of `p` applied to an input of spec `in`. Tensor 0 is the input
// (rank 4, the caller's strides); `graph.output` is the result, whose logical shape and
// dtype are infer_shape(p, in). Each op's tensors are named "op<i>.<what>" and carry
// origin "op <i> (<name>)". Throws toroid::Error for pipelines infer_shape rejects.
ir::Graph decompose(const Pipeline& p, const TensorSpec& in);
// The same with the shapes infer_shapes(p, in) gave (a prepare infers them once).
ir::Graph decompose(const Pipeline& p, const TensorSpec& in, std::span<const ShapeInfo> shapes);

// Whether op kind `kind` has a decomposition (every kind has: a static_assert, and a test).
bool has_decomposition(OpKind kind);

// Element type of the IR for a tensor dtype.
ir::Type ir_type(DType t);
// The dtype whose elements are stored as `t` (the inverse of ir_type).
DType dtype_of(ir::Type t);

}  // namespace toroid::decomp
