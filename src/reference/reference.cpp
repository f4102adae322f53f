// The reference engine's dispatcher: runs a pipeline op by op, each op producing a new
// dense tensor, through the table of each op kind's reference.
#include "reference/reference.h"

#include "core/parallel.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

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
    const auto reference = kReferences[static_cast<std::size_t>(op_kind(op))];
    if (narrow_types(op, in.dtype()) != NarrowTypes::ViaFloat32) return reference(op, in, threads);
    // The op on float32, rounded back: half to even and clamped for uint16, to nearest even
    // for the narrow floats (docs/reference.md).
    const DType d = in.dtype();
    const Tensor r = reference(op, convert(ConvertOp{DType::Float32, false}, in, threads), threads);
    Tensor out = Tensor::empty(d, r.shape(), r.suggested_layout());
    const Dims& s = r.shape();
    dispatch_dtype(d, [&](auto tag) {
        using T = decltype(tag);
        parallel_for(0, s[0] * s[1] * s[2], threads, [&](std::int64_t row) {
            const std::int64_t n = row / (s[1] * s[2]), c = (row / s[2]) % s[1], h = row % s[2];
            for (std::int64_t w = 0; w < s[3]; ++w) {
                float v = r.at<float>(n, c, h, w);
                if constexpr (std::is_same_v<T, std::uint16_t>) v = std::clamp(std::nearbyint(v), 0.0f, 65535.0f);
                out.at<T>(n, c, h, w) = from_float<T>(v);
            }
        });
    });
    return out;
}

Tensor run(const Pipeline& p, const Tensor& in, int threads) {
    infer_shape(p, ShapeInfo{in.dtype(), in.shape()});  // reject bad input before computing
    Tensor cur = in;
    for (const Op& op : p.ops) cur = apply(op, cur, threads);
    return cur;
}

}  // namespace toroid::reference
