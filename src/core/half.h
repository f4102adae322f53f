// The 16-bit float formats toroid stores (IEEE binary16 "float16" and bfloat16) and their
// exact conversions to and from float32: widening is exact, narrowing rounds to nearest,
// ties to even, as PyTorch's c10::Half / c10::BFloat16 and the hardware conversions do
// (NaN stays NaN; a float16 overflow becomes inf). Integer code only, so the compiler, the
// reference engine and the interpreter agree everywhere; the generated kernels carry the
// same functions in their preambles, checked against these over every 16-bit pattern.
#pragma once

#include <bit>
#include <cstdint>

namespace toroid {

constexpr float half_bits_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));  // inf, NaN
    if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
    // zero or subnormal: man * 2^-24, exact in float
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
}

constexpr std::uint16_t float_to_half_bits(float f) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (u >> 16) & 0x8000u;
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
    if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
    if (a >= 0x38800000u) {  // normal half
        const std::uint32_t r = a - 0x38000000u;  // rebias the exponent (127 - 15 = 112)
        const std::uint32_t bits = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
        return static_cast<std::uint16_t>(sign | bits);
    }
    if (a < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the least subnormal: 0
    // subnormal half: the significand with its implicit bit, shifted right, rounded to even
    const std::uint32_t e = a >> 23;  // 102..112
    const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14..24
    const std::uint32_t q = m >> shift, rest = m & ((1u << shift) - 1u), half_way = 1u << (shift - 1u);
    const std::uint32_t bits = q + ((rest > half_way || (rest == half_way && (q & 1u))) ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | bits);
}

constexpr float bfloat16_bits_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

constexpr std::uint16_t float_to_bfloat16_bits(float f) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;  // NaN, as c10::BFloat16 makes it
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Element types of float16 and bfloat16 tensors: the bits, converted explicitly through the
// format's two conversions.
template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
struct NarrowFloat {
    std::uint16_t bits = 0;
    constexpr NarrowFloat() = default;
    constexpr explicit NarrowFloat(float f) : bits(Narrow(f)) {}
    constexpr explicit operator float() const { return Widen(bits); }
    static constexpr NarrowFloat from_bits(std::uint16_t b) {
        NarrowFloat h;
        h.bits = b;
        return h;
    }
    friend constexpr bool operator==(NarrowFloat a, NarrowFloat b) { return a.bits == b.bits; }
};
using Half = NarrowFloat<half_bits_to_float, float_to_half_bits>;
using BFloat16 = NarrowFloat<bfloat16_bits_to_float, float_to_bfloat16_bits>;

}  // namespace toroid
