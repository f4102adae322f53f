// The reference engine's dispatcher: runs a pipeline op by op, each op producing a new
// dense tensor, through the table of each op kind's reference.
#include "reference/reference.h"

namespace toroid::reference {

namespace {

// The reference of each op kind, in OpKind order: every kind has one (a kind without one
// does not compile).
using ReferenceHook = Tensor(const Op&, const Tensor&, int);

template <typename T, Tensor (*F)(const T&, const Tensor&, int)>
Tensor hook(const Op& op, const Tensor& in, int threads) {
    return F(std::get<T>(op), in, threads);
}

constexpr OpTable<ReferenceHook> kReferences = [] {
    OpTable<ReferenceHook> t{};
    t[op_slot<ResizeOp>] = hook<ResizeOp, resize>;
    t[op_slot<AffineOp>] = hook<AffineOp, affine>;
    t[op_slot<GridSampleOp>] = hook<GridSampleOp, grid_sample>;
    t[op_slot<FlipOp>] = hook<FlipOp, flip>;
    t[op_slot<CropOp>] = hook<CropOp, crop>;
    t[op_slot<ConvertOp>] = hook<ConvertOp, convert>;
    t[op_slot<NormalizeOp>] = hook<NormalizeOp, normalize>;
    t[op_slot<PerspectiveOp>] = hook<PerspectiveOp, perspective>;
    t[op_slot<ColorOp>] = hook<ColorOp, color>;
    t[op_slot<PadOp>] = hook<PadOp, pad>;
    t[op_slot<EraseOp>] = hook<EraseOp, erase>;
    t[op_slot<BlurOp>] = hook<BlurOp, blur>;
    return t;
}();
// The sanitizers' build (GCC with -fsanitize=undefined) cannot compare function pointers in
// a constant expression; the registry tests check the table there.
#ifndef __SANITIZE_ADDRESS__
static_assert(op_table_complete(kReferences), "every op kind needs a reference");
#endif

}  // namespace

bool has_reference(OpKind kind) {
    const auto k = static_cast<std::size_t>(kind);
    return k < kOpKinds && kReferences[k] != nullptr;
}

Tensor apply(const Op& op, const Tensor& in, int threads) {
    return kReferences[static_cast<std::size_t>(op_kind(op))](op, in, threads);
}

Tensor run(const Pipeline& p, const Tensor& in, int threads) {
    infer_shape(p, ShapeInfo{in.dtype(), in.shape()});  // reject bad input before computing
    Tensor cur = in;
    for (const Op& op : p.ops) cur = apply(op, cur, threads);
    return cur;
}

}  // namespace toroid::reference
