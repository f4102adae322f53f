// Element types. New types (float16, bfloat16, float64) are added by extending the
// enum and the two tables below; code that switches on DType gets a compiler warning
// for every switch that misses the new type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace toroid {

enum class DType : std::uint8_t { UInt8, Float32 };

constexpr std::size_t dtype_size(DType t) {
    switch (t) {
        case DType::UInt8: return 1;
        case DType::Float32: return 4;
    }
    return 0;
}

constexpr std::string_view dtype_name(DType t) {
    switch (t) {
        case DType::UInt8: return "uint8";
        case DType::Float32: return "float32";
    }
    return "?";
}

constexpr bool dtype_is_float(DType t) { return t == DType::Float32; }

// Parses "uint8" / "float32"; throws toroid::Error on anything else.
DType parse_dtype(std::string_view name);

// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };

// Calls f(T{}) with T the C++ element type of `t`.
template <typename F> decltype(auto) dispatch_dtype(DType t, F&& f) {
    switch (t) {
        case DType::UInt8: return f(std::uint8_t{});
        case DType::Float32: return f(float{});
    }
    return f(std::uint8_t{});
}

}  // namespace toroid
