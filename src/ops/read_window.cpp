// The window a pipeline's first ops read (ops/read_window.h).
#include "ops/read_window.h"

#include "ops/resize_math.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <variant>

namespace toroid {
namespace {

// The crop op's region in an input of h x w, if it lies inside it.
std::optional<std::array<std::int64_t, 4>> crop_inside(const CropOp& crop, std::int64_t h, std::int64_t w) {
    const auto [top, left] = crop_origin(crop, h, w);
    if (top < 0 || left < 0 || crop.height < 1 || crop.width < 1 || top + crop.height > h || left + crop.width > w)
        return std::nullopt;
    return std::array<std::int64_t, 4>{top, left, crop.height, crop.width};
}

// [lo, hi) of the source that outputs [a, b) of one resize axis read.
std::pair<std::int64_t, std::int64_t> source_span(const ResizeAxisWeights& t, std::int64_t a, std::int64_t b) {
    if (t.skip) return {a, b};  // this axis's pass does not run: output o is source o
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    for (std::int64_t o = a; o < b; ++o) {
        const auto k = static_cast<std::size_t>(o);
        if (!t.index.empty()) {
            for (int j = 0; j < t.taps; ++j) {
                const std::int64_t i = t.index[k * static_cast<std::size_t>(t.taps) + static_cast<std::size_t>(j)];
                lo = std::min(lo, i);
                hi = std::max(hi, i + 1);
            }
        } else {
            // Contiguous taps: first[o] + j for j < taps (those past count[o] weigh 0, but
            // a kernel may still read them), inside the source.
            lo = std::min(lo, t.first[k]);
            hi = std::max(hi, std::min(t.first[k] + std::max<std::int64_t>(t.taps, t.count[k]), t.in_size));
        }
    }
    return {std::max<std::int64_t>(lo, 0), std::min(hi, t.in_size)};
}

}  // namespace

std::optional<std::array<std::int64_t, 4>> read_window(const Pipeline& pipeline, const TensorSpec& in) {
    const std::int64_t h = in.shape[2], w = in.shape[3];
    if (pipeline.ops.empty() || h < 1 || w < 1) return std::nullopt;
    if (const auto* crop = std::get_if<CropOp>(&pipeline.ops[0])) return crop_inside(*crop, h, w);
    const auto* resize = std::get_if<ResizeOp>(&pipeline.ops[0]);
    const CropOp* crop = pipeline.ops.size() > 1 ? std::get_if<CropOp>(&pipeline.ops[1]) : nullptr;
    if (resize == nullptr || crop == nullptr) return std::nullopt;
    const ResizePlan plan = plan_resize(*resize, in);
    const auto region = crop_inside(*crop, plan.out_h, plan.out_w);
    if (!region) return std::nullopt;
    const auto [top, left, height, width] = *region;
    if (plan.kernel == ResizeKernel::Copy) return region;
    const auto [y0, y1] = source_span(plan.h, top, top + height);
    const auto [x0, x1] = source_span(plan.w, left, left + width);
    if (y1 <= y0 || x1 <= x0) return std::nullopt;
    return std::array<std::int64_t, 4>{y0, x0, y1 - y0, x1 - x0};
}

}  // namespace toroid
