// The C++ preamble of every generated CPU kernel: scalar helpers under the names the
// printer emits (t_floor, sat_u8, ...) and kLanes-wide vectors (GCC/Clang vector
// extensions) with their loads, stores, gathers and conversions.
//
// Not compiled into toroid: CMake embeds this file's text into the library
// (cmake/EmbedText.cmake), and codegen/cpp.cpp pastes it at the top of each generated
// source after defining TOROID_LANES (the vector width) and TOROID_REVERSE (the lane
// indices kLanes-1, ..., 0), so that every kernel.cpp stands alone. It can also be
// included from a file that defines both (tests compile it that way).
//
// It is parsed once per compile, which is most of a small pipeline's compile time, so it
// includes only small headers and calls compiler builtins (__builtin_floorf, the gather
// builtins) rather than <cmath> or <immintrin.h>, each of which costs more to parse than
// the kernels themselves. Changing it changes every cache key.
#ifndef TOROID_CPU_PREAMBLE_H
#define TOROID_CPU_PREAMBLE_H

#if !defined(TOROID_LANES) || !defined(TOROID_REVERSE)
#error "define TOROID_LANES and TOROID_REVERSE before including the CPU preamble"
#endif

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

// The printer spells float infinities and NaNs with <cmath>'s macros (spelled as glibc's
// <math.h> does, so that a source including both sees no redefinition).
#ifndef NAN
#define NAN (__builtin_nanf (""))
#endif
#ifndef INFINITY
#define INFINITY (__builtin_inff ())
#endif

namespace {


constexpr int kLanes = TOROID_LANES;

template <typename T> inline T t_min(T a, T b) { return b < a ? b : a; }
// Float functions under names every target's preamble defines.
inline float t_floor(float x) { return __builtin_floorf(x); }
inline double t_floor(double x) { return __builtin_floor(x); }
inline float t_round_even(float x) { return __builtin_nearbyintf(x); }
inline double t_round_even(double x) { return __builtin_nearbyint(x); }
inline float t_fabs(float x) { return __builtin_fabsf(x); }
inline double t_fabs(double x) { return __builtin_fabs(x); }
inline float t_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double t_fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
template <typename V> inline V abs_v(V x);
template <typename T> inline T t_max(T a, T b) { return a < b ? b : a; }
// Integer division and remainder rounding toward -infinity (divisor > 0).
template <typename T> inline T t_floordiv(T a, T b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
template <typename T> inline T t_mod(T a, T b) { T r = a % b; return r < 0 ? r + b : r; }
// Saturating conversions: clamp to the target's range first; NaN becomes 0.
inline std::uint8_t sat_u8(float v) { return v > 0.0f ? (v < 255.0f ? static_cast<std::uint8_t>(v) : 255) : 0; }
inline std::uint8_t sat_u8(double v) { return v > 0.0 ? (v < 255.0 ? static_cast<std::uint8_t>(v) : 255) : 0; }
template <typename T> inline std::uint8_t sat_u8(T v) { return v > 0 ? (v < 255 ? static_cast<std::uint8_t>(v) : 255) : 0; }
inline std::int16_t sat_i16(float v) { return v > -32768.0f ? (v < 32767.0f ? static_cast<std::int16_t>(v) : 32767) : (v == v ? -32768 : 0); }
template <typename T> inline std::int16_t sat_i16(T v) { return v > -32768 ? (v < 32767 ? static_cast<std::int16_t>(v) : 32767) : -32768; }
inline std::int32_t sat_i32(float v) { return v > -2147483648.0f ? (v < 2147483520.0f ? static_cast<std::int32_t>(v) : 2147483647) : (v == v ? -2147483647 - 1 : 0); }
template <typename T> inline std::int32_t sat_i32(T v) { return static_cast<std::int32_t>(v < -2147483647 - 1 ? -2147483647 - 1 : (v > 2147483647 ? 2147483647 : v)); }

// Vectors of kLanes elements (GCC/Clang vector extensions). The vector loop computes
// kLanes consecutive outputs at once; masks are signed integer vectors (-1 / 0).
template <typename T> using vec __attribute__((vector_size(kLanes * sizeof(T)))) = T;
// std::declval without <utility>.
template <typename T> T&& t_declval() noexcept;
template <typename V> using elem_t = std::remove_cv_t<std::remove_reference_t<decltype(t_declval<V>()[0])>>;
template <typename X> concept is_vec = !std::is_arithmetic_v<X> && requires(X x) { x[0]; };
template <std::size_t N> struct mask_of;
template <> struct mask_of<1> { using type = std::int8_t; };
template <> struct mask_of<2> { using type = std::int16_t; };
template <> struct mask_of<4> { using type = std::int32_t; };
template <> struct mask_of<8> { using type = std::int64_t; };
template <typename T> using mask_t = vec<typename mask_of<sizeof(T)>::type>;

// A scalar broadcast to a vector, or a vector converted lane by lane.
template <typename V, typename X> inline V to_v(X x) {
    if constexpr (is_vec<X>) {
        if constexpr (std::is_same_v<X, V>) return x;
        else return __builtin_convertvector(x, V);
    } else {
        return V{} + static_cast<elem_t<V>>(x);
    }
}
template <typename V> inline V iota_v(elem_t<V> first) {
    V r;
    for (int i = 0; i < kLanes; ++i) r[i] = first + static_cast<elem_t<V>>(i);
    return r;
}
template <typename T> inline vec<T> load_v(const T* p) {
    vec<T> r;
    __builtin_memcpy(&r, p, sizeof r);
    return r;
}
template <typename T, typename V> inline void store_v(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
template <typename V> inline V reverse_v(V v) { return __builtin_shufflevector(v, v, TOROID_REVERSE); }
template <typename T, typename I> inline vec<T> gather_v(const T* p, I off) {
    // 4-byte elements through 32-bit lane offsets: the hardware gather, through the
    // compilers' builtins (the intrinsics' header, <immintrin.h>, would cost more to parse
    // than the kernels). All lanes enabled, scale 4.
    if constexpr (sizeof(T) == 4 && std::is_same_v<elem_t<I>, std::int32_t>) {
#if defined(__AVX512F__)
        if constexpr (kLanes == 16) {
            if constexpr (std::is_same_v<T, float>)
                return reinterpret_cast<vec<T>>(__builtin_ia32_gathersiv16sf(vec<float>{}, p, off, static_cast<unsigned short>(0xffff), 4));
            else
                return reinterpret_cast<vec<T>>(__builtin_ia32_gathersiv16si(vec<std::int32_t>{}, p, off, static_cast<unsigned short>(0xffff), 4));
        }
#endif
#if defined(__AVX2__)
        if constexpr (kLanes == 8) {
#if defined(__clang__)
            if constexpr (std::is_same_v<T, float>)
                return reinterpret_cast<vec<T>>(__builtin_ia32_gatherd_ps256(vec<float>{}, reinterpret_cast<const float*>(p), off, reinterpret_cast<vec<float>>(vec<std::int32_t>{} - 1), 4));
            else
                return reinterpret_cast<vec<T>>(__builtin_ia32_gatherd_d256(vec<std::int32_t>{}, reinterpret_cast<const int*>(p), off, vec<std::int32_t>{} - 1, 4));
#else
            if constexpr (std::is_same_v<T, float>)
                return reinterpret_cast<vec<T>>(__builtin_ia32_gathersiv8sf(vec<float>{}, reinterpret_cast<const float*>(p), off, reinterpret_cast<vec<float>>(vec<std::int32_t>{} - 1), 4));
            else
                return reinterpret_cast<vec<T>>(__builtin_ia32_gathersiv8si(vec<std::int32_t>{}, reinterpret_cast<const int*>(p), off, vec<std::int32_t>{} - 1, 4));
#endif
        }
#endif
    }
    vec<T> r;
    for (int i = 0; i < kLanes; ++i) r[i] = p[off[i]];
    return r;
}
template <typename T> inline vec<T> gather_stride_v(const T* p, std::int64_t stride) {
    vec<T> r;
    for (int i = 0; i < kLanes; ++i) r[i] = p[i * stride];
    return r;
}
template <typename T, typename I, typename V> inline void scatter_v(T* p, I off, V v) {
    for (int i = 0; i < kLanes; ++i) p[off[i]] = v[i];
}
template <typename T, typename V> inline void scatter_stride_v(T* p, std::int64_t stride, V v) {
    for (int i = 0; i < kLanes; ++i) p[i * stride] = v[i];
}
template <> inline vec<float> abs_v(vec<float> x) {
    return reinterpret_cast<vec<float>>(reinterpret_cast<vec<std::uint32_t>>(x) & 0x7fffffffu);
}
template <typename V> inline V abs_v(V x) { return x < 0 ? -x : x; }
// floor / round-half-even of floats: exact for every input (|x| >= 2^23 is integral, NaN stays NaN).
inline vec<float> floor_v(vec<float> x) {
    const vec<float> t = __builtin_convertvector(__builtin_convertvector(x, vec<std::int32_t>), vec<float>);
    const vec<float> f = t > x ? t - 1.0f : t;
    const vec<float> a = abs_v(x);
    return a < 0x1p23f ? f : x;
}
inline vec<float> round_even_v(vec<float> x) {
    const vec<float> a = abs_v(x);
    const vec<float> r = (a + 0x1p23f) - 0x1p23f;
    const vec<float> s = x < 0.0f ? -r : r;
    return a < 0x1p23f ? s : x;
}
template <typename V> inline V min_v(V a, V b) { return b < a ? b : a; }
template <typename V> inline V max_v(V a, V b) { return a < b ? b : a; }
template <typename V> inline V lanewise_floordiv(V a, V b) {
    V r;
    for (int i = 0; i < kLanes; ++i) r[i] = t_floordiv(a[i], b[i]);
    return r;
}
template <typename V> inline V lanewise_mod(V a, V b) {
    V r;
    for (int i = 0; i < kLanes; ++i) r[i] = t_mod(a[i], b[i]);
    return r;
}
template <typename V> inline V fma_v(V a, V b, V c) {
    V r;
    for (int i = 0; i < kLanes; ++i) r[i] = t_fma(a[i], b[i], c[i]);
    return r;
}
// Saturating conversions: clamp first (NaN becomes 0), then convert.
template <typename T, typename V> inline vec<T> sat_v(V x) {
    using E = elem_t<V>;
    const V lo = to_v<V>(static_cast<E>(std::numeric_limits<T>::min()));
    const V hi = to_v<V>(static_cast<E>(std::numeric_limits<T>::max()));
    V r = x > lo ? x : lo;
    r = r < hi ? r : hi;
    if constexpr (std::is_floating_point_v<E>) return __builtin_convertvector(__builtin_convertvector(r, vec<std::int32_t>), vec<T>);
    else return __builtin_convertvector(r, vec<T>);
}

}  // namespace

#endif  // TOROID_CPU_PREAMBLE_H
