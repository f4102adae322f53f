// Tensor storage, views and layout conversion.
#include "core/tensor.h"

#include "core/error.h"

#include <cstdlib>
#include <algorithm>
#include <array>
#include <cstring>
#include <new>

namespace toroid {

DType parse_dtype(std::string_view name) {
    for (const DType t : kAllDTypes)
        if (name == dtype_name(t)) return t;
    fail("unknown dtype '{}' (expected {})", name, dtype_list());
}

std::string dtype_list() {
    std::string s;
    const std::size_t n = std::size(kAllDTypes);
    for (std::size_t i = 0; i < n; ++i) {
        if (i) s += i + 1 == n ? " or " : ", ";
        s += dtype_name(kAllDTypes[i]);
    }
    return s;
}

std::string_view layout_name(Layout l) {
    return l == Layout::Contiguous ? "contiguous" : "channels_last";
}

Layout parse_layout(std::string_view name) {
    if (name == "contiguous") return Layout::Contiguous;
    if (name == "channels_last") return Layout::ChannelsLast;
    fail("unknown layout '{}' (expected contiguous or channels_last)", name);
}

Dims dense_strides(const Dims& s, Layout l) {
    if (l == Layout::Contiguous) return {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
    return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
}

namespace {
void check_allocatable(DType dtype, const Dims& shape) {
    std::int64_t n = 1;
    for (auto d : shape) {
        if (d < 0) fail("negative dimension {} in tensor shape", d);
        if (d != 0 && n > kMaxElements / d) n = kMaxElements + 1;
        else n *= d;
    }
    if (n > kMaxElements)
        fail("tensor of shape ({}, {}, {}, {}) {} is too large to allocate", shape[0], shape[1],
             shape[2], shape[3], dtype_name(dtype));
}
}  // namespace

Tensor Tensor::empty(DType dtype, const Dims& shape, Layout layout) {
    check_allocatable(dtype, shape);
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = shape;
    t.strides_ = dense_strides(shape, layout);
    std::size_t bytes = t.nbytes();
    std::size_t rounded = ((bytes + 63) / 64) * 64;
    if (rounded == 0) rounded = 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr)
        fail("out of memory allocating {} bytes for a ({}, {}, {}, {}) tensor", bytes, shape[0],
             shape[1], shape[2], shape[3]);
    t.owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    t.base_ = p;
    return t;
}

Tensor Tensor::zeros(DType dtype, const Dims& shape, Layout layout) {
    Tensor t = empty(dtype, shape, layout);
    std::memset(t.base_, 0, t.nbytes());
    return t;
}

Tensor Tensor::borrow(void* data, DType dtype, const Dims& shape, const Dims& strides) {
    for (int i = 0; i < 4; ++i)
        if (shape[static_cast<std::size_t>(i)] < 0 || strides[static_cast<std::size_t>(i)] < 0)
            fail("borrowed tensor has a negative size or stride in dim {}", i);
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = shape;
    t.strides_ = strides;
    t.base_ = data;
    return t;
}

std::int64_t span_elements(const Dims& shape, const Dims& strides) {
    std::int64_t span = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0) return 0;
        span += (shape[d] - 1) * strides[d];
    }
    return span;
}

bool is_dense(const TensorSpec& t, Layout l) {
    Dims d = dense_strides(t.shape, l);
    for (std::size_t i = 0; i < 4; ++i)
        if (t.shape[i] != 1 && d[i] != t.strides[i]) return false;
    return true;
}

bool Tensor::is_dense(Layout l) const { return toroid::is_dense(spec(), l); }

Layout suggested_layout(const TensorSpec& t) {
    const Dims& s = t.shape;
    const Dims& st = t.strides;
    if (s[1] > 1 && st[1] == 1 && is_dense(t, Layout::ChannelsLast)) return Layout::ChannelsLast;
    if (s[1] > 1 && st[1] < st[3] && st[1] < st[2]) return Layout::ChannelsLast;
    return Layout::Contiguous;
}

Layout Tensor::suggested_layout() const { return toroid::suggested_layout(spec()); }

Tensor Tensor::slice(int dim, std::int64_t start, std::int64_t length) const {
    auto d = static_cast<std::size_t>(dim);
    if (dim < 0 || dim > 3 || start < 0 || length < 0 || start + length > shape_[d])
        fail("slice [{}, {}) out of range for dim {} of size {}", start, start + length, dim,
             dim >= 0 && dim <= 3 ? shape_[d] : 0);
    Tensor t = *this;
    t.offset_ += start * strides_[d];
    t.shape_[d] = length;
    return t;
}

Tensor Tensor::to_layout(Layout l) const {
    Tensor out = empty(dtype_, shape_, l);
    out.copy_from(*this);
    return out;
}

void Tensor::copy_from(const Tensor& src) {
    if (src.dtype_ != dtype_ || src.shape_ != shape_) fail("copy_from: dtype or shape mismatch");
    // Walks this tensor's memory in order (smallest stride innermost); one memcpy when
    // both are dense with the same strides, a memcpy per row when rows are contiguous.
    const std::size_t elem = dtype_size(src.dtype());
    const Dims& shape = src.shape();
    TensorSpec ds = spec(), ss = src.spec();
    bool same = true;
    for (std::size_t i = 0; i < 4; ++i)
        if (shape[i] > 1 && ds.strides[i] != ss.strides[i]) same = false;
    if (same && (toroid::is_dense(ss, Layout::Contiguous) || toroid::is_dense(ss, Layout::ChannelsLast))) {
        std::memcpy(data(), src.data(), static_cast<std::size_t>(src.numel()) * elem);
        return;
    }
    std::array<std::size_t, 4> order{0, 1, 2, 3};  // outermost first
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ds.strides[a] > ds.strides[b]; });
    Dims n{}, sd{}, dd{};
    for (std::size_t k = 0; k < 4; ++k) {
        n[k] = shape[order[k]];
        sd[k] = ss.strides[order[k]] * static_cast<std::int64_t>(elem);
        dd[k] = ds.strides[order[k]] * static_cast<std::int64_t>(elem);
    }
    auto* s0 = static_cast<const char*>(src.data());
    auto* d0 = static_cast<char*>(data());
    const auto esz = static_cast<std::int64_t>(elem);
    auto inner = [&](const char* s, char* d) {
        if (sd[3] == esz && dd[3] == esz) {
            std::memcpy(d, s, static_cast<std::size_t>(n[3] * esz));
        } else if (elem == 1) {
            for (std::int64_t i = 0; i < n[3]; ++i) d[i * dd[3]] = s[i * sd[3]];
        } else {
            for (std::int64_t i = 0; i < n[3]; ++i) std::memcpy(d + i * dd[3], s + i * sd[3], elem);
        }
    };
    for (std::int64_t a = 0; a < n[0]; ++a)
        for (std::int64_t b = 0; b < n[1]; ++b)
            for (std::int64_t c = 0; c < n[2]; ++c)
                inner(s0 + a * sd[0] + b * sd[1] + c * sd[2], d0 + a * dd[0] + b * dd[1] + c * dd[2]);
}

}  // namespace toroid
