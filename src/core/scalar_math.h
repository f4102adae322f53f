// The scalar semantics every kernel shares: the helpers the printers emit by name (t_pow,
// t_floordiv, sat_u8, t_f32_to_f16, ...), written once. The CPU preamble and the CUDA
// preamble paste this text (CMake embeds it as kScalarMath; codegen/cpp.cpp and
// codegen/cuda.cpp put it in place), and the host's interpreter and reference engine
// include it (ir/eval.cpp, reference/), so that constant folding, the reference and both
// targets' kernels compute one thing.
//
// It includes nothing and is meant to be included inside a namespace. The includer provides
// the fixed-width integer types (uint8_t, ...) unqualified, and may define, before it, the
// qualifiers and the math and bit-cast builtins of its compiler (the defaults are GCC's and
// Clang's host builtins; the CUDA preamble gives device functions):
//   TOROID_FN              the functions' qualifiers (default: inline)
//   TOROID_SQRTF, TOROID_POW (double), TOROID_FLOORF, TOROID_FLOOR, TOROID_RINTF, TOROID_RINT,
//   TOROID_FABSF, TOROID_FABS, TOROID_FMAF, TOROID_FMA
//   TOROID_AS_FLOAT(u), TOROID_AS_UINT(f)   uint32 <-> float bit casts
//   TOROID_ADD_RN(a, b)    a float sum rounded to nearest (no fused or contracted form)
// Every float operation is correctly rounded: no fast-math variants.

#ifndef TOROID_FN
#define TOROID_FN inline
#endif
#ifndef TOROID_SQRTF
#define TOROID_SQRTF __builtin_sqrtf
#define TOROID_POW __builtin_pow
#define TOROID_FLOORF __builtin_floorf
#define TOROID_FLOOR __builtin_floor
#define TOROID_RINTF __builtin_nearbyintf
#define TOROID_RINT __builtin_nearbyint
#define TOROID_FABSF __builtin_fabsf
#define TOROID_FABS __builtin_fabs
#define TOROID_FMAF __builtin_fmaf
#define TOROID_FMA __builtin_fma
#define TOROID_AS_FLOAT(u) __builtin_bit_cast(float, static_cast<uint32_t>(u))
#define TOROID_AS_UINT(f) __builtin_bit_cast(uint32_t, static_cast<float>(f))
#define TOROID_ADD_RN(a, b) ((a) + (b))
#endif

template <typename T> TOROID_FN T t_min(T a, T b) { return b < a ? b : a; }
template <typename T> TOROID_FN T t_max(T a, T b) { return a < b ? b : a; }
// The steps of a least / greatest reduction (ir::Reduce): a NaN term is taken and kept.
template <typename T> TOROID_FN T t_rmin(T acc, T v) { return (v < acc || v != v) ? v : acc; }
template <typename T> TOROID_FN T t_rmax(T acc, T v) { return (acc < v || v != v) ? v : acc; }

// PyTorch's CPU pow of a float tensor by a scalar exponent (pow_tensor_scalar): its special
// exponents, else pow in double rounded to float.
TOROID_FN float t_pow(float a, float b) {
    if (b == 0.0f) return 1.0f;
    if (b == 1.0f) return a;
    if (b == 0.5f) return TOROID_SQRTF(a);
    if (b == -0.5f) return 1.0f / TOROID_SQRTF(a);
    if (b == -1.0f) return 1.0f / a;
    if (b == 2.0f) return a * a;
    if (b == 3.0f) return a * a * a;
    if (b == -2.0f) return 1.0f / (a * a);
    return static_cast<float>(TOROID_POW(static_cast<double>(a), static_cast<double>(b)));
}
TOROID_FN double t_pow(double a, double b) { return TOROID_POW(a, b); }

// Integer division and remainder rounding toward -infinity (divisor > 0).
template <typename T> TOROID_FN T t_floordiv(T a, T b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
template <typename T> TOROID_FN T t_mod(T a, T b) {
    T r = a % b;
    return r < 0 ? r + b : r;
}

TOROID_FN float t_floor(float x) { return TOROID_FLOORF(x); }
TOROID_FN double t_floor(double x) { return TOROID_FLOOR(x); }
TOROID_FN float t_round_even(float x) { return TOROID_RINTF(x); }
TOROID_FN double t_round_even(double x) { return TOROID_RINT(x); }
TOROID_FN float t_fabs(float x) { return TOROID_FABSF(x); }
TOROID_FN double t_fabs(double x) { return TOROID_FABS(x); }
TOROID_FN float t_fma(float a, float b, float c) { return TOROID_FMAF(a, b, c); }
TOROID_FN double t_fma(double a, double b, double c) { return TOROID_FMA(a, b, c); }

// Saturating conversions: clamp to the target's range first; NaN becomes 0.
TOROID_FN uint8_t sat_u8(float v) { return v > 0.0f ? (v < 255.0f ? static_cast<uint8_t>(v) : 255) : 0; }
TOROID_FN uint8_t sat_u8(double v) { return v > 0.0 ? (v < 255.0 ? static_cast<uint8_t>(v) : 255) : 0; }
template <typename T> TOROID_FN uint8_t sat_u8(T v) { return v > 0 ? (v < 255 ? static_cast<uint8_t>(v) : 255) : 0; }
TOROID_FN int16_t sat_i16(float v) {
    return v > -32768.0f ? (v < 32767.0f ? static_cast<int16_t>(v) : 32767) : (v == v ? -32768 : 0);
}
template <typename T> TOROID_FN int16_t sat_i16(T v) {
    return v > -32768 ? (v < 32767 ? static_cast<int16_t>(v) : 32767) : -32768;
}
TOROID_FN int32_t sat_i32(float v) {
    return v > -2147483648.0f ? (v < 2147483520.0f ? static_cast<int32_t>(v) : 2147483647) : (v == v ? -2147483647 - 1 : 0);
}
template <typename T> TOROID_FN int32_t sat_i32(T v) {
    return static_cast<int32_t>(v < -2147483647 - 1 ? -2147483647 - 1 : (v > 2147483647 ? 2147483647 : v));
}
TOROID_FN uint16_t sat_u16(float v) { return v > 0.0f ? (v < 65535.0f ? static_cast<uint16_t>(v) : 65535) : 0; }
template <typename T> TOROID_FN uint16_t sat_u16(T v) { return v > 0 ? (v < 65535 ? static_cast<uint16_t>(v) : 65535) : 0; }

// float16 and bfloat16 (stored as their bits) to and from float, in integer steps that
// vectorize lane by lane: widening exact; narrowing to nearest, ties to even; NaN stays NaN
// (core/half.h's conversions, which the tests hold these to).
TOROID_FN float t_f16_to_f32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return TOROID_AS_FLOAT(sign | 0x7f800000u | (man << 13));
    if (exp != 0) return TOROID_AS_FLOAT(sign | ((exp + 112u) << 23) | (man << 13));
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
}
TOROID_FN uint16_t t_f32_to_f16(float f) {
    const uint32_t u = TOROID_AS_UINT(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (a >= 0x38800000u) {
        const uint32_t r = a - 0x38000000u;
        return static_cast<uint16_t>(sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13));
    }
    // below the least normal half: adding 0.5 lets the float adder round the subnormal's bits
    return static_cast<uint16_t>(sign | (TOROID_AS_UINT(TOROID_ADD_RN(TOROID_AS_FLOAT(a), 0.5f)) - 0x3f000000u));
}
TOROID_FN float t_bf16_to_f32(uint16_t b) { return TOROID_AS_FLOAT(static_cast<uint32_t>(b) << 16); }
TOROID_FN uint16_t t_f32_to_bf16(float f) {
    const uint32_t u = TOROID_AS_UINT(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
