// Reference pad and erase, written the way torch and torchvision compute them: constant
// padding fills the output and copies the image into it; edge and reflect take each output
// index through torch's ReplicationPad / ReflectionPad index rules (CPU padding kernel);
// symmetric crops the negative sides and builds torchvision's index lists; erase copies the
// image and assigns the value to the region Python's slices select.
#include "core/error.h"
#include "core/parallel.h"
#include "reference/reference.h"

#include <cstdint>
#include <vector>

namespace toroid::reference {

namespace {

// torch's index of output position j along an axis of input size `size` with leading
// padding `pad` (aten/src/ATen/native/cpu/PaddingKernel.cpp).
std::int64_t torch_pad_index(PadMode mode, std::int64_t j, std::int64_t size, std::int64_t pad) {
    const std::int64_t offset = std::max<std::int64_t>(0, -pad) - std::max<std::int64_t>(0, pad);
    std::int64_t i = 0;
    if (j < pad) i = mode == PadMode::Reflect ? pad * 2 - j : pad;
    else if (j < size + pad) i = j;
    else i = mode == PadMode::Reflect ? (size + pad - 1) * 2 - j : size + pad - 1;
    return i + offset;
}

// torchvision's _pad_symmetric along one axis: the indices into the input for every output
// position (crop of the negative sides, then [lead-1 .. 0] + [0 .. n-1] + [-1 .. -trail]).
std::vector<std::int64_t> symmetric_indices(std::int64_t size, std::int64_t lead, std::int64_t trail) {
    const std::int64_t crop_lead = std::max<std::int64_t>(-lead, 0), crop_trail = std::max<std::int64_t>(-trail, 0);
    const std::int64_t n = size - crop_lead - crop_trail;
    std::vector<std::int64_t> idx;
    for (std::int64_t i = std::max<std::int64_t>(lead, 0) - 1; i >= 0; --i) idx.push_back(i);
    for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
    for (std::int64_t i = 0; i < std::max<std::int64_t>(trail, 0); ++i) idx.push_back(n - (i + 1));
    for (std::int64_t& i : idx) {
        if (i < 0 || i >= n) fail("pad: symmetric index {} out of range for size {}", i, n);
        i += crop_lead;
    }
    return idx;
}

}  // namespace

Tensor pad(const PadOp& op, const Tensor& in, int threads) {
    const ShapeInfo info = infer_shape(Op{op}, ShapeInfo{in.dtype(), in.shape()});
    const Dims& s = in.shape();
    const Dims& o = info.shape;
    Tensor out = Tensor::empty(in.dtype(), o, in.suggested_layout());
    std::vector<std::int64_t> rows(static_cast<std::size_t>(o[2])), cols(static_cast<std::size_t>(o[3]));
    if (op.mode == PadMode::Symmetric) {
        rows = symmetric_indices(s[2], op.top, op.bottom);
        cols = symmetric_indices(s[3], op.left, op.right);
    } else {
        for (std::int64_t y = 0; y < o[2]; ++y)
            rows[static_cast<std::size_t>(y)] =
                op.mode == PadMode::Constant ? y - op.top : torch_pad_index(op.mode, y, s[2], op.top);
        for (std::int64_t x = 0; x < o[3]; ++x)
            cols[static_cast<std::size_t>(x)] =
                op.mode == PadMode::Constant ? x - op.left : torch_pad_index(op.mode, x, s[3], op.left);
    }
    const std::vector<double> fill = pad_fill_values(op, in.dtype(), s[1]);
    dispatch_dtype(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        parallel_for(0, o[0] * o[1] * o[2], threads, [&](std::int64_t r) {
            const std::int64_t n = r / (o[1] * o[2]), c = (r / o[2]) % o[1], y = r % o[2];
            const std::int64_t iy = rows[static_cast<std::size_t>(y)];
            for (std::int64_t x = 0; x < o[3]; ++x) {
                const std::int64_t ix = cols[static_cast<std::size_t>(x)];
                // Constant: the output starts as the fill; the image is copied where it lands.
                if (iy < 0 || iy >= s[2] || ix < 0 || ix >= s[3]) {
                    if (op.mode != PadMode::Constant) fail("internal: pad index ({}, {}) out of range", iy, ix);
                    out.at<T>(n, c, y, x) = static_cast<T>(fill[static_cast<std::size_t>(c)]);
                } else {
                    out.at<T>(n, c, y, x) = in.at<T>(n, c, iy, ix);
                }
            }
        });
    });
    return out;
}

Tensor erase(const EraseOp& op, const Tensor& in, int threads) {
    const Dims& s = in.shape();
    const std::vector<double> v = erase_values(op, in.dtype(), s[1]);
    const auto [r0, r1, c0, c1] = erase_region(op, s[2], s[3]);
    Tensor out = Tensor::empty(in.dtype(), s, in.suggested_layout());
    dispatch_dtype(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        parallel_for(0, s[0] * s[1] * s[2], threads, [&](std::int64_t r) {
            const std::int64_t n = r / (s[1] * s[2]), c = (r / s[2]) % s[1], y = r % s[2];
            for (std::int64_t x = 0; x < s[3]; ++x) out.at<T>(n, c, y, x) = in.at<T>(n, c, y, x);  // clone
            const T value = static_cast<T>(v[static_cast<std::size_t>(c)]);
            if (y >= r0 && y < r1)
                for (std::int64_t x = c0; x < c1; ++x) out.at<T>(n, c, y, x) = value;
        });
    });
    return out;
}

}  // namespace toroid::reference
