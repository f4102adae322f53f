// The reference engine: plain, obviously correct implementations of every op, following
// torch.nn.functional / torchvision exactly. Every compiled result is checked against it.
// Each function reads any strided input and returns a new dense tensor in the layout
// the input suggests (channels-last in -> channels-last out, as PyTorch does).
// `threads` splits the work over independent output rows or planes (parallel_for);
// results never depend on it.
#pragma once

#include "core/tensor.h"
#include "ops/ops.h"
#include "ops/registry.h"

namespace toroid::reference {

Tensor resize(const ResizeOp& op, const Tensor& in, int threads = 1);
Tensor affine(const AffineOp& op, const Tensor& in, int threads = 1);
Tensor grid_sample(const GridSampleOp& op, const Tensor& in, int threads = 1);
Tensor flip(const FlipOp& op, const Tensor& in, int threads = 1);
Tensor crop(const CropOp& op, const Tensor& in, int threads = 1);
Tensor convert(const ConvertOp& op, const Tensor& in, int threads = 1);
Tensor normalize(const NormalizeOp& op, const Tensor& in, int threads = 1);
Tensor perspective(const PerspectiveOp& op, const Tensor& in, int threads = 1);
Tensor color(const ColorOp& op, const Tensor& in, int threads = 1);  // color.cpp
Tensor pad(const PadOp& op, const Tensor& in, int threads = 1);      // pad.cpp
Tensor erase(const EraseOp& op, const Tensor& in, int threads = 1);  // pad.cpp
Tensor blur(const BlurOp& op, const Tensor& in, int threads = 1);    // blur.cpp

Tensor apply(const Op& op, const Tensor& in, int threads = 1);
// Whether op kind `kind` has a reference (every kind has: a static_assert, and a test).
bool has_reference(OpKind kind);
Tensor run(const Pipeline& p, const Tensor& in, int threads = 1);

}  // namespace toroid::reference
