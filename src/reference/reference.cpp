// The reference engine's dispatcher: runs a pipeline op by op, each op producing a new
// dense tensor.
#include "reference/reference.h"

namespace toroid::reference {

Tensor apply(const Op& op, const Tensor& in, int threads) {
    return std::visit(
        [&](const auto& o) -> Tensor {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, ResizeOp>) return resize(o, in, threads);
            else if constexpr (std::is_same_v<T, AffineOp>) return affine(o, in, threads);
            else if constexpr (std::is_same_v<T, GridSampleOp>) return grid_sample(o, in, threads);
            else if constexpr (std::is_same_v<T, FlipOp>) return flip(o, in, threads);
            else if constexpr (std::is_same_v<T, CropOp>) return crop(o, in, threads);
            else if constexpr (std::is_same_v<T, ConvertOp>) return convert(o, in, threads);
            else return normalize(o, in, threads);
        },
        op);
}

Tensor run(const Pipeline& p, const Tensor& in, int threads) {
    infer_shape(p, ShapeInfo{in.dtype(), in.shape()});  // reject bad input before computing
    Tensor cur = in;
    for (const Op& op : p.ops) cur = apply(op, cur, threads);
    return cur;
}

}  // namespace toroid::reference
