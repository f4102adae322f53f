// Element types: the type table. Each DType has its storage (size, name) and the type it
// computes in ("opmath", as PyTorch's CPU kernels widen): uint8 and uint16 compute as
// integers where an op is exact in them and in float32 otherwise; float16 and bfloat16 are
// stored narrow and computed in float32, rounded to their type where PyTorch rounds. A new
// dtype is an enum value (appended: the C API's codes are these values) and entries in
// the tables below; every `switch` that misses it warns.
#pragma once

#include "core/half.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace toroid {

enum class DType : std::uint8_t { UInt8, Float32, UInt16, Float16, BFloat16 };

inline constexpr DType kAllDTypes[] = {DType::UInt8, DType::Float32, DType::UInt16, DType::Float16, DType::BFloat16};

constexpr std::size_t dtype_size(DType t) {
    switch (t) {
        case DType::UInt8: return 1;
        case DType::UInt16:
        case DType::Float16:
        case DType::BFloat16: return 2;
        case DType::Float32: return 4;
    }
    return 0;
}

constexpr std::string_view dtype_name(DType t) {
    switch (t) {
        case DType::UInt8: return "uint8";
        case DType::Float32: return "float32";
        case DType::UInt16: return "uint16";
        case DType::Float16: return "float16";
        case DType::BFloat16: return "bfloat16";
    }
    return "?";
}

constexpr bool dtype_is_float(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

// float16 and bfloat16: floats stored in fewer bits than they compute in.
constexpr bool dtype_is_narrow_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// The largest value of an integer dtype (to_dtype's scale); 1 for floats.
constexpr double dtype_max_value(DType t) {
    switch (t) {
        case DType::UInt8: return 255.0;
        case DType::UInt16: return 65535.0;
        case DType::Float32:
        case DType::Float16:
        case DType::BFloat16: return 1.0;
    }
    return 1.0;
}

// Bits of value of an integer dtype (to_dtype's shifts between integer dtypes).
constexpr int dtype_value_bits(DType t) { return t == DType::UInt8 ? 8 : t == DType::UInt16 ? 16 : 0; }

// Parses "uint8" / "float32" / "uint16" / "float16" / "bfloat16"; throws toroid::Error on
// anything else.
DType parse_dtype(std::string_view name);

// "uint8, float32, uint16, float16 or bfloat16": for error messages.
std::string dtype_list();

// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<std::uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BFloat16; };

// Calls f(T{}) with T the C++ element type of `t`.
template <typename F> decltype(auto) dispatch_dtype(DType t, F&& f) {
    switch (t) {
        case DType::UInt8: return f(std::uint8_t{});
        case DType::Float32: return f(float{});
        case DType::UInt16: return f(std::uint16_t{});
        case DType::Float16: return f(Half{});
        case DType::BFloat16: return f(BFloat16{});
    }
    return f(std::uint8_t{});
}

// An element's value as a float (every dtype's values are exact in float, uint16 too) and
// back: rounded to nearest even for float16 and bfloat16, truncated for the integers (the
// caller rounds and clamps first where it means to).
template <typename T> constexpr float to_float(T v) { return static_cast<float>(v); }
template <typename T> constexpr T from_float(float v) { return static_cast<T>(v); }

// v rounded to a float dtype's precision (to nearest even for float16 and bfloat16; float32
// values and the integer dtypes' are returned as they are).
constexpr float round_to_dtype(DType t, float v) {
    if (t == DType::Float16) return static_cast<float>(Half(v));
    if (t == DType::BFloat16) return static_cast<float>(BFloat16(v));
    return v;
}

}  // namespace toroid
