// A 4-D tensor view: logical shape (N, C, H, W), element strides (any non-negative
// values: contiguous NCHW, channels-last NHWC, crops and other strided views), an
// element offset, and storage that is either owned (64-byte aligned) or borrowed
// from the caller (zero-copy; the caller keeps it alive).
#pragma once

#include "core/dtype.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace toroid {

using Dims = std::array<std::int64_t, 4>;

enum class Layout : std::uint8_t { Contiguous, ChannelsLast };

std::string_view layout_name(Layout l);
Layout parse_layout(std::string_view name);  // "contiguous" | "channels_last"

// Strides (in elements) of a dense tensor of `shape` in layout `l`.
Dims dense_strides(const Dims& shape, Layout l);

// Elements from a tensor's first element to one past its last (strides non-negative; 0 when
// the tensor is empty): what a copy of it as it is laid out moves.
std::int64_t span_elements(const Dims& shape, const Dims& strides);

// The largest number of elements toroid allocates for one tensor (2^40); larger
// results are rejected up front with a clear error instead of failing in malloc.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

// dtype + shape + strides: what the compiler specializes on.
struct TensorSpec {
    DType dtype = DType::UInt8;
    Dims shape{0, 0, 0, 0};
    Dims strides{0, 0, 0, 0};
    std::int64_t numel() const { return shape[0] * shape[1] * shape[2] * shape[3]; }
    bool operator==(const TensorSpec&) const = default;
};

// The layout whose loop order walks memory best (channels-last when C is innermost);
// every engine writes an op's result in the suggested layout of the op's input.
Layout suggested_layout(const TensorSpec& t);
// Strides equal dense_strides(shape, l), ignoring the strides of size-1 dims.
bool is_dense(const TensorSpec& t, Layout l);

class Tensor {
public:
    Tensor() = default;

    // A new owned, dense tensor (uninitialized). Throws if the size is not allocatable.
    static Tensor empty(DType dtype, const Dims& shape, Layout layout = Layout::Contiguous);
    static Tensor zeros(DType dtype, const Dims& shape, Layout layout = Layout::Contiguous);
    // A view of caller memory; nothing is copied and nothing is freed.
    static Tensor borrow(void* data, DType dtype, const Dims& shape, const Dims& strides);

    DType dtype() const { return dtype_; }
    const Dims& shape() const { return shape_; }
    const Dims& strides() const { return strides_; }
    std::int64_t dim(int i) const { return shape_[static_cast<std::size_t>(i)]; }
    std::int64_t stride(int i) const { return strides_[static_cast<std::size_t>(i)]; }
    std::int64_t numel() const { return shape_[0] * shape_[1] * shape_[2] * shape_[3]; }
    std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
    TensorSpec spec() const { return {dtype_, shape_, strides_}; }
    bool defined() const { return base_ != nullptr || numel() == 0; }

    bool is_dense(Layout l) const;  // strides equal dense_strides(shape, l)
    // The layout whose loop order walks memory best (channels-last when C is innermost).
    Layout suggested_layout() const;

    // Pointer to element (0,0,0,0).
    void* data() const { return static_cast<char*>(base_) + offset_ * static_cast<std::int64_t>(dtype_size(dtype_)); }
    template <typename T> T* data_as() const { return static_cast<T*>(data()); }
    std::int64_t offset_of(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) const {
        return n * strides_[0] + c * strides_[1] + h * strides_[2] + w * strides_[3];
    }
    template <typename T> T& at(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) const {
        return data_as<T>()[offset_of(n, c, h, w)];
    }

    // A view of [start, start + length) along `dim` (shares storage).
    Tensor slice(int dim, std::int64_t start, std::int64_t length) const;
    // A dense copy in layout `l` (always a new owned tensor).
    Tensor to_layout(Layout l) const;
    // Copies values element by element from `src` (same dtype and shape, any strides).
    void copy_from(const Tensor& src);

private:
    DType dtype_ = DType::UInt8;
    Dims shape_{0, 0, 0, 0};
    Dims strides_{0, 0, 0, 0};
    std::int64_t offset_ = 0;  // in elements
    std::shared_ptr<void> owner_;  // null for borrowed memory
    void* base_ = nullptr;
};

}  // namespace toroid
