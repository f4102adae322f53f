// The C++ preamble of every generated CPU kernel: scalar helpers under the names the
// printer emits (t_floor, sat_u8, ...) and kLanes-wide vectors (GCC/Clang vector
// extensions) with their loads, stores, gathers and conversions.
//
// Not compiled into toroid: CMake embeds this file's text into the library
// (cmake/EmbedText.cmake), and codegen/cpp.cpp pastes it at the top of each generated
// source, so that every kernel.cpp stands alone. It has two parts, split at the line
// kLaneSplit names (codegen/cpp.cpp): the first (scalar helpers, the byte and word
// permute builtins) is pasted once; the second (vectors of kLanes lanes) once per lane
// count the source's kernels use, each copy inside a namespace of its own (t_lanes16,
// t_lanes64) after TOROID_LANES (the vector width) and TOROID_REVERSE (the lane indices
// kLanes-1, ..., 0) are defined: a kernel that only moves bytes runs 64 lanes beside one
// that computes in 16 lanes of int32. It can also be included from a file that defines
// both macros (tests compile it that way): then both parts are at the top level.
//
// It is parsed once per compile, which is most of a small pipeline's compile time, so it
// includes only small headers and calls compiler builtins (__builtin_floorf, the gather
// builtins) rather than <cmath> or <immintrin.h>, each of which costs more to parse than
// the kernels themselves. Changing it changes every cache key.
//
// Its instruction-set forms follow the TOROID_<FEATURE> macros (TOROID_AVX2, TOROID_AVX512F,
// ...) that the generated source defines before it from the program's target
// (target/cpu_features.h), never the compiler's own feature macros: the code is the form the
// scheduler chose for that feature set whatever -march the compiler was given, and the
// compiler gets the same set as flags (engine/compiled.cpp).
#ifndef TOROID_CPU_PREAMBLE_H
#define TOROID_CPU_PREAMBLE_H

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

// OpenMP's thread queries (libgomp, linked by -fopenmp), without <omp.h>.
extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_num_threads(void);

namespace {
// The scalar helpers (t_min, t_pow, t_floordiv, sat_u8, t_f32_to_f16, ...): one text shared
// with the CUDA preamble and the host's interpreter. Pasted here in generated sources
// (codegen/cpp.cpp replaces this line with it).
#include "../core/scalar_math.h"

// Byte permutes across 64-byte registers and masked byte loads and stores (AVX-512 VBMI
// and BW), through the compilers' builtins, which GCC and Clang spell differently. A
// masked load touches only the bytes its mask selects: reading a window never faults past
// a buffer's end.
#if defined(TOROID_AVX512VBMI) && defined(TOROID_AVX512BW)
#define TOROID_BYTE_PERMUTE 1
typedef char t_bytes64 __attribute__((vector_size(64)));
typedef unsigned long long t_mask64;
inline t_mask64 t_span_mask(std::int64_t n) { return n >= 64 ? ~t_mask64{0} : n <= 0 ? t_mask64{0} : (t_mask64{1} << n) - 1; }
inline t_bytes64 t_load_bytes(t_mask64 m, const void* p) {
#if defined(__clang__)
    return __builtin_ia32_loaddquqi512_mask(static_cast<const t_bytes64*>(p), t_bytes64{}, m);
#else
    return __builtin_ia32_loaddquqi512_mask(static_cast<const char*>(p), t_bytes64{}, m);
#endif
}
// Bytes 0..31 at p under mask m in bytes 0..31 of the result; bytes 32..63 undefined (a
// 32-byte masked load where AVX512-VL has one: a 64-byte one crosses a cache line at nearly
// every address), zero without VL.
inline t_bytes64 t_load_bytes_low32(unsigned m, const void* p) {
#if defined(TOROID_AVX512VL)
    typedef char t_b32 __attribute__((vector_size(32)));
#if defined(__clang__)
    const t_b32 b = __builtin_ia32_loaddquqi256_mask(static_cast<const t_b32*>(p), t_b32{}, m);
    return __builtin_shufflevector(b, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                   23, 24, 25, 26, 27, 28, 29, 30, 31, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                   -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
#else
    typedef int t_i8 __attribute__((vector_size(32)));
    const t_b32 b = __builtin_ia32_loaddquqi256_mask(static_cast<const char*>(p), t_b32{}, m);
    return reinterpret_cast<t_bytes64>(__builtin_ia32_si512_256si(reinterpret_cast<t_i8>(b)));
#endif
#else
    return t_load_bytes(m, p);
#endif
}
// The 16 bytes at p in each 16-byte part (one broadcast load).
inline t_bytes64 t_broadcast_bytes16(const void* p) {
    typedef int t_i4 __attribute__((vector_size(16)));
    t_i4 v;
    __builtin_memcpy(&v, p, sizeof v);
#if defined(__clang__)
    return reinterpret_cast<t_bytes64>(__builtin_shufflevector(v, v, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3));
#else
    typedef int t_i16 __attribute__((vector_size(64)));
    return reinterpret_cast<t_bytes64>(__builtin_ia32_broadcasti32x4_512(v, t_i16{}, static_cast<unsigned short>(0xffff)));
#endif
}
inline void t_store_bytes(void* p, t_mask64 m, t_bytes64 v) {
#if defined(__clang__)
    __builtin_ia32_storedquqi512_mask(static_cast<t_bytes64*>(p), v, m);
#else
    __builtin_ia32_storedquqi512_mask(static_cast<char*>(p), v, m);
#endif
}
// Byte i of the result is byte idx[i] (0..127) of the 128 bytes a, b.
inline t_bytes64 t_permute2_bytes(t_bytes64 a, t_bytes64 idx, t_bytes64 b) {
#if defined(__clang__)
    return __builtin_ia32_vpermi2varqi512(a, idx, b);
#else
    return __builtin_ia32_vpermt2varqi512_mask(idx, a, b, ~t_mask64{0});
#endif
}
// The same with the bytes whose bit of m is clear set to 0.
inline t_bytes64 t_permute2_bytes_z(t_mask64 m, t_bytes64 a, t_bytes64 idx, t_bytes64 b) {
#if defined(__clang__)
    return reinterpret_cast<t_bytes64>(__builtin_ia32_selectb_512(m, __builtin_ia32_vpermi2varqi512(a, idx, b), t_bytes64{}));
#else
    return __builtin_ia32_vpermt2varqi512_maskz(idx, a, b, m);
#endif
}
// Byte i of the result is byte idx[i] (0..63) of a.
inline t_bytes64 t_permute_bytes(t_bytes64 a, t_bytes64 idx) {
#if defined(__clang__)
    return __builtin_ia32_permvarqi512(a, idx);
#else
    return __builtin_ia32_permvarqi512_mask(a, idx, t_bytes64{}, ~t_mask64{0});
#endif
}
// The same with the bytes whose bit of m is clear set to 0.
inline t_bytes64 t_permute_bytes_z(t_mask64 m, t_bytes64 a, t_bytes64 idx) {
#if defined(__clang__)
    return reinterpret_cast<t_bytes64>(__builtin_ia32_selectb_512(m, __builtin_ia32_permvarqi512(a, idx), t_bytes64{}));
#else
    return __builtin_ia32_permvarqi512_mask(a, idx, t_bytes64{}, m);
#endif
}
#endif

// AVX2 without AVX-512's byte permute: a byte permute within one 32-byte window, made of two
// in-lane byte shuffles (one of each 16-byte half of the window, copied to both halves of
// a register) and a blend. x86 has no byte-masked load before AVX-512: a window whose span
// is shorter than 32 bytes is read whole where its 32 bytes stay inside the page of its
// first (the bytes past the span are never used, and the page is mapped: no fault), else
// through a copy of the span alone.
#if defined(__SANITIZE_ADDRESS__)
#define TOROID_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOROID_ASAN 1
#endif
#endif
typedef char t_bytes32 __attribute__((vector_size(32)));
typedef char t_bytes16 __attribute__((vector_size(16)));
#if defined(TOROID_AVX2)
template <typename V> __attribute__((noinline, cold)) V t_load_span_copy(const void* p, int n) {
    char tmp[sizeof(V)] = {};
    __builtin_memcpy(tmp, p, static_cast<std::size_t>(n < static_cast<int>(sizeof(V)) ? n : static_cast<int>(sizeof(V))));
    V r;
    __builtin_memcpy(&r, tmp, sizeof r);
    return r;
}
// The n bytes at p in a register of sizeof(V) bytes whose other bytes may be anything (the
// callers never use them): the whole register is read unless that would cross into the next
// page, or under AddressSanitizer (scripts/sanitize.sh instruments the kernels), which
// would report the bytes past the n.
template <typename V> inline V t_load_span(const void* p, int n) {
#if defined(TOROID_ASAN)
    return t_load_span_copy<V>(p, n);
#endif
    if (__builtin_expect((reinterpret_cast<std::uintptr_t>(p) & 4095) > 4096 - sizeof(V), 0)) return t_load_span_copy<V>(p, n);
    V r;
    __builtin_memcpy(&r, p, sizeof r);
    return r;
}
#endif
#if defined(TOROID_AVX2) && !defined(TOROID_BYTE_PERMUTE)
#define TOROID_BYTE_SHUFFLE 1
inline t_bytes32 t_load_window32(const void* p, int span) { return t_load_span<t_bytes32>(p, span); }
// Byte i of the result is byte idx[i] (0..31) of a; sel is idx shifted left by 3 (bit 4,
// which half the byte comes from, moved to the bit the blend reads).
inline t_bytes32 t_permute_bytes32(t_bytes32 a, t_bytes32 idx, t_bytes32 sel) {
    const t_bytes32 lo = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4,
                                                 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const t_bytes32 hi = __builtin_shufflevector(a, a, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 16,
                                                 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    return __builtin_ia32_pblendvb256(__builtin_ia32_pshufb256(lo, idx), __builtin_ia32_pshufb256(hi, idx), sel);
}
#endif

// AVX2 without AVX-512: windows of 16 4-byte words, read by two masked loads of 8 (a masked
// load touches only the words its mask selects) and permuted by two 8-word permutes and a
// blend.
#if defined(TOROID_AVX2) && !defined(TOROID_AVX512F)
#define TOROID_WORD_SHUFFLE 1
typedef float t_floats8 __attribute__((vector_size(32)));
typedef int t_ints8 __attribute__((vector_size(32)));
// The words of the first n (clamped to 0..8) lanes set.
inline t_ints8 t_span_mask8(std::int64_t n) {
    const t_ints8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    const int k = n < 0 ? 0 : n > 8 ? 8 : static_cast<int>(n);
    return lane < k;
}
inline t_floats8 t_load_words8(t_ints8 m, const void* p) {
    return __builtin_ia32_maskloadps256(static_cast<const t_floats8*>(p), m);
}
// Lane i of the result is word idx[i] (0..15) of the 16 words a, b.
inline t_floats8 t_permute2_words8(t_floats8 a, t_ints8 idx, t_floats8 b) {
    return __builtin_ia32_blendvps256(__builtin_ia32_permvarsf256(a, idx), __builtin_ia32_permvarsf256(b, idx),
                                      reinterpret_cast<t_floats8>(idx << 28));
}
#endif

#if defined(TOROID_AVX512F)
#define TOROID_WORD_PERMUTE 1
typedef float t_floats16 __attribute__((vector_size(64)));
typedef int t_ints16 __attribute__((vector_size(64)));
inline unsigned short t_span_mask16(std::int64_t n) { return n >= 16 ? 0xffff : n <= 0 ? 0 : static_cast<unsigned short>((1u << n) - 1); }
inline t_floats16 t_load_words(unsigned short m, const void* p) {
    return __builtin_ia32_loadups512_mask(static_cast<const float*>(p), t_floats16{}, m);
}
// Lane i of the result is element idx[i] (0..31) of the 32 elements a, b.
inline t_floats16 t_permute2_words(t_floats16 a, t_ints16 idx, t_floats16 b) {
#if defined(__clang__)
    return __builtin_ia32_vpermi2varps512(a, idx, b);
#else
    return __builtin_ia32_vpermt2varps512_mask(idx, a, b, 0xffff);
#endif
}
#endif

}  // namespace

#endif  // TOROID_CPU_PREAMBLE_H

// ---- vectors of kLanes lanes: pasted once per lane count ----
#if !defined(TOROID_LANES) || !defined(TOROID_REVERSE)
#error "define TOROID_LANES and TOROID_REVERSE before the CPU preamble's vectors"
#endif

namespace {

constexpr int kLanes = TOROID_LANES;
template <typename V> inline V abs_v(V x);

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

// t_lane_seq<N>: the indices 0, ..., N-1 as a parameter pack (std::make_index_sequence without
// <utility>).
template <int... I> struct t_seq {};
#if defined(__clang__)
template <typename T, T... I> using t_seq_of = t_seq<I...>;
template <int N> using t_lane_seq = __make_integer_seq<t_seq_of, int, N>;
#else
template <int N> using t_lane_seq = t_seq<__integer_pack(N)...>;
#endif
// The low To bytes of each From-byte lane of b (little-endian), lanes in order.
template <int From, int To, typename B, int... I> inline auto t_low_bytes(B b, t_seq<I...>) {
    return __builtin_shufflevector(b, b, (I / To * From + I % To)...);
}
#if defined(TOROID_BYTE_PERMUTE)
// The lanes of a, then those of b, in one vector of twice the lanes.
template <typename V, int... I> inline auto t_cat_lanes(V a, V b, t_seq<I...>) { return __builtin_shufflevector(a, b, I...); }
// The 16-byte vectors a, b, c, d in order in one 64-byte register, built in registers: a
// copy through an array on the stack made the register's load wait for the three or four
// smaller stores before it (a failed store forward at every step).
inline t_bytes64 t_bytes64_of(t_bytes16 a, t_bytes16 b, t_bytes16 c, t_bytes16 d) {
    return t_cat_lanes(t_cat_lanes(a, b, t_lane_seq<32>{}), t_cat_lanes(c, d, t_lane_seq<32>{}), t_lane_seq<64>{});
}
// A vector of 16, 32 or 64 bytes as the first lanes of a 64-byte register (the rest 0), and
// back (its first lanes).
template <typename V> inline t_bytes64 t_widen_bytes64(V x) {
    static_assert(sizeof(V) == 16 || sizeof(V) == 32 || sizeof(V) == 64, "16, 32 or 64 bytes");
    if constexpr (sizeof(V) == 16) return t_bytes64_of(reinterpret_cast<t_bytes16>(x), t_bytes16{}, t_bytes16{}, t_bytes16{});
    else if constexpr (sizeof(V) == 32) return t_cat_lanes(reinterpret_cast<t_bytes32>(x), t_bytes32{}, t_lane_seq<64>{});
    else return reinterpret_cast<t_bytes64>(x);
}
template <typename V> inline V t_narrow_bytes64(t_bytes64 r) {
    static_assert(sizeof(V) == 16 || sizeof(V) == 32 || sizeof(V) == 64, "16, 32 or 64 bytes");
    if constexpr (sizeof(V) == 16) return reinterpret_cast<V>(__builtin_shufflevector(r, r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    else if constexpr (sizeof(V) == 32) return reinterpret_cast<V>(t_cat_lanes(r, r, t_lane_seq<32>{}));
    else return reinterpret_cast<V>(r);
}
#endif

// Lane-by-lane conversions. Bytes widen to 4-byte lanes in two steps (bytes to 16-bit
// lanes to 32-bit lanes): GCC lowers a direct __builtin_convertvector of 16 bytes to 16
// ints inside loops into per-byte scalar code, and each single step into extend
// instructions.
template <typename V, typename X> inline V convert_v(X x);
template <typename V, typename X> inline V t_convert_lanes(X x) {
    using S = elem_t<X>;
    using D = elem_t<V>;
#if defined(TOROID_AVX512F) && !defined(__clang__)
    // GCC: one extend instruction (its generic lowering splits them by its preferred width).
    if constexpr (kLanes == 16 && std::is_integral_v<D> && sizeof(D) == 4 && std::is_same_v<S, std::uint8_t>) {
        typedef char v16qi __attribute__((vector_size(16)));
        typedef int v16si __attribute__((vector_size(64)));
        return reinterpret_cast<V>(__builtin_ia32_pmovzxbd512_mask(reinterpret_cast<v16qi>(x), v16si{}, 0xffff));
    } else if constexpr (kLanes == 16 && std::is_integral_v<D> && sizeof(D) == 4 && std::is_same_v<S, std::int16_t>) {
        typedef short v16hi __attribute__((vector_size(32)));
        typedef int v16si __attribute__((vector_size(64)));
        return reinterpret_cast<V>(__builtin_ia32_pmovsxwd512_mask(reinterpret_cast<v16hi>(x), v16si{}, 0xffff));
    } else if constexpr (kLanes == 16 && std::is_same_v<D, float> && (std::is_same_v<S, std::uint8_t> || std::is_same_v<S, std::int16_t>)) {
        return __builtin_convertvector(convert_v<vec<std::int32_t>>(x), V);
    }
#endif
#if defined(TOROID_AVX2) && !defined(TOROID_AVX512F) && !defined(__clang__)
    // GCC, AVX2: one extend instruction for 8 bytes or 16-bit lanes to 32-bit ones (its
    // generic lowering extends to 16 bits, splits, and extends each half).
    if constexpr (kLanes == 8 && std::is_integral_v<D> && sizeof(D) == 4 && sizeof(S) <= 2 && std::is_integral_v<S>) {
        typedef char v16qi __attribute__((vector_size(16)));
        typedef short v8hi __attribute__((vector_size(16)));
        if constexpr (sizeof(S) == 1) {
            typedef char v8qi __attribute__((vector_size(8)));
            const v8qi a = reinterpret_cast<v8qi>(x);
            const v16qi b = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
            if constexpr (std::is_signed_v<S>) return reinterpret_cast<V>(__builtin_ia32_pmovsxbd256(b));
            else return reinterpret_cast<V>(__builtin_ia32_pmovzxbd256(b));
        } else {
            if constexpr (std::is_signed_v<S>) return reinterpret_cast<V>(__builtin_ia32_pmovsxwd256(reinterpret_cast<v8hi>(x)));
            else return reinterpret_cast<V>(__builtin_ia32_pmovzxwd256(reinterpret_cast<v8hi>(x)));
        }
    } else if constexpr (kLanes == 8 && std::is_same_v<D, float> && std::is_integral_v<S> && sizeof(S) <= 2) {
        return __builtin_convertvector(convert_v<vec<std::int32_t>>(x), V);
    }
#endif
#if !defined(TOROID_AVX512F)
    // Integers narrowed without AVX-512's truncating moves: GCC lowers
    // __builtin_convertvector(int32 lanes, bytes) into one extract and one scalar store per
    // lane. The low bytes of each lane picked by one byte shuffle are the same truncation, and
    // compile to two in-lane byte shuffles, a cross-lane move and an or.
    if constexpr (std::is_integral_v<S> && std::is_integral_v<D> && sizeof(D) < sizeof(S)) {
        typedef std::uint8_t from_bytes __attribute__((vector_size(kLanes * sizeof(S))));
        return reinterpret_cast<V>(t_low_bytes<sizeof(S), sizeof(D)>(reinterpret_cast<from_bytes>(x), t_lane_seq<kLanes * sizeof(D)>{}));
    } else
#endif
    if constexpr (sizeof(S) == 1 && sizeof(D) >= 4) {
        using W = std::conditional_t<std::is_signed_v<S>, std::int16_t, std::uint16_t>;
        return convert_v<V>(__builtin_convertvector(x, vec<W>));
    } else if constexpr (sizeof(S) == 2 && std::is_floating_point_v<D>) {
        return __builtin_convertvector(__builtin_convertvector(x, vec<std::int32_t>), V);
    } else {
        return __builtin_convertvector(x, V);
    }
}

// Floats to integers narrower than 32 bits go through 32-bit lanes: GCC lowers a direct
// __builtin_convertvector into one scalar conversion and one insert per lane, and this is one
// truncating conversion and the integer narrowing above, with the same lanes (a scalar cast
// converts to 32 bits and keeps the low bytes too).
template <typename V, typename X> inline V convert_v(X x) {
    if constexpr (std::is_floating_point_v<elem_t<X>> && std::is_integral_v<elem_t<V>> && sizeof(elem_t<V>) < 4)
        return t_convert_lanes<V>(__builtin_convertvector(x, vec<std::int32_t>));
    else return t_convert_lanes<V>(x);
}

// A scalar broadcast to a vector, or a vector converted lane by lane.
template <typename V, typename X> inline V to_v(X x) {
    if constexpr (is_vec<X>) {
        if constexpr (std::is_same_v<X, V>) return x;
        else return convert_v<V>(x);
    } else {
        return V{} + static_cast<elem_t<V>>(x);
    }
}
// first, first + 1, ...: the constant 0, 1, ... plus first in every lane. (Written as a lane
// loop, GCC built it one lane at a time: an add and a masked broadcast per lane, most of an
// erase's time.)
template <typename V, int... I> inline V t_iota_of(t_seq<I...>) { return V{static_cast<elem_t<V>>(I)...}; }
template <typename V> inline V iota_v(elem_t<V> first) { return t_iota_of<V>(t_lane_seq<kLanes>{}) + first; }
template <typename T> inline vec<T> load_v(const T* p) {
    vec<T> r;
    __builtin_memcpy(&r, p, sizeof r);
    return r;
}
template <typename T, typename V> inline void store_v(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
// Stores lanes [from, to) of v (lane i at p + i): one masked store where the target has
// them and v fills a 64-byte register, else a copy of those lanes' bytes.
template <typename T, typename V> inline void store_lanes_v(T* p, V v, std::int64_t from, std::int64_t to) {
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (sizeof(V) == 64) {
        const std::int64_t b = static_cast<std::int64_t>(sizeof(T));
        t_store_bytes(p, t_span_mask(to * b) & ~t_span_mask(from * b), reinterpret_cast<t_bytes64>(v));
        return;
    }
#endif
    if (to > from) __builtin_memcpy(p + from, reinterpret_cast<const char*>(&v) + from * sizeof(T), (to - from) * sizeof(T));
}
template <typename V> inline V reverse_v(V v) { return __builtin_shufflevector(v, v, TOROID_REVERSE); }
template <typename T, typename I> inline vec<T> gather_v(const T* p, I off) {
    // 4-byte elements through 32-bit lane offsets: the hardware gather, through the
    // compilers' builtins (the intrinsics' header, <immintrin.h>, would cost more to parse
    // than the kernels). All lanes enabled, scale 4.
    if constexpr (sizeof(T) == 4 && std::is_same_v<elem_t<I>, std::int32_t>) {
#if defined(TOROID_AVX512F)
        if constexpr (kLanes == 16) {
            if constexpr (std::is_same_v<T, float>)
                return reinterpret_cast<vec<T>>(__builtin_ia32_gathersiv16sf(vec<float>{}, p, off, static_cast<unsigned short>(0xffff), 4));
            else
                return reinterpret_cast<vec<T>>(__builtin_ia32_gathersiv16si(vec<std::int32_t>{}, p, off, static_cast<unsigned short>(0xffff), 4));
        }
#endif
#if defined(TOROID_AVX2)
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
// Bytes at p[off[i]] where the 3 bytes after each lane's byte may be read too (a Temp
// buffer: the engine allocates kTempTailBytes after it): the hardware gather of 4-byte
// words at byte offsets (scale 1), each word's low byte kept.
// The 4-byte words at byte offsets at[i] from p: the hardware gather (scale 1) at 16 lanes
// with AVX-512F and 8 with AVX2, else word by word.
template <typename I> inline vec<std::int32_t> gather_words_at(const std::uint8_t* p, I at) {
#if defined(TOROID_AVX512F)
    if constexpr (kLanes == 16)
        return reinterpret_cast<vec<std::int32_t>>(
            __builtin_ia32_gathersiv16si(vec<std::int32_t>{}, p, at, static_cast<unsigned short>(0xffff), 1));
#endif
#if defined(TOROID_AVX2)
    if constexpr (kLanes == 8) {
#if defined(__clang__)
        return __builtin_ia32_gatherd_d256(vec<std::int32_t>{}, reinterpret_cast<const int*>(p), at, vec<std::int32_t>{} - 1, 1);
#else
        return __builtin_ia32_gathersiv8si(vec<std::int32_t>{}, reinterpret_cast<const int*>(p), at, vec<std::int32_t>{} - 1, 1);
#endif
    }
#endif
    vec<std::int32_t> r{};
    for (int i = 0; i < kLanes; ++i) {
        std::int32_t w;
        __builtin_memcpy(&w, p + at[i], 4);
        r[i] = w;
    }
    return r;
}
// Bytes at p[off[i]] where the 3 bytes after each lane's byte may be read too (a Temp
// buffer: the engine allocates kTempTailBytes after it): 4-byte words gathered at byte
// offsets, each word's low byte kept.
template <typename I> inline vec<std::uint8_t> gather_bytes_v(const std::uint8_t* p, I off) {
    if constexpr (std::is_same_v<elem_t<I>, std::int32_t> && (kLanes == 16 || kLanes == 8))
        return __builtin_convertvector(gather_words_at(p, off), vec<std::uint8_t>);
    else
        return gather_v(p, off);
}
// Entry x[i] of a 256-entry byte table (a byte function's values, schedule/tabulate.h) for
// each lane: at 64 lanes with byte permutes, two 128-entry permutes of the table's halves,
// picked by each byte's top bit; else its bytes gathered as words (a Temp buffer, with bytes
// to spare after it).
inline vec<std::uint8_t> lut256_v(const std::uint8_t* table, vec<std::uint8_t> x) {
#if defined(TOROID_BYTE_PERMUTE) && (TOROID_LANES == 16 || TOROID_LANES == 32 || TOROID_LANES == 64)
    // Four loads into registers, not a copy into an array: GCC kept such an array on the
    // stack and stored all 256 bytes into it at every call (3x the time of the lookups).
    // Fewer bytes than a register (16 pixels of one channel, stored interleaved) are looked
    // up in a register whose first lanes they are (the rest look up byte 0, unused), not
    // gathered.
    t_bytes64 q0, q1, q2, q3;
    __builtin_memcpy(&q0, table, 64);
    __builtin_memcpy(&q1, table + 64, 64);
    __builtin_memcpy(&q2, table + 128, 64);
    __builtin_memcpy(&q3, table + 192, 64);
    const t_bytes64 i = t_widen_bytes64(x);
    const t_bytes64 lo = t_permute2_bytes(q0, i, q1), hi = t_permute2_bytes(q2, i, q3);
    return t_narrow_bytes64<vec<std::uint8_t>>(i < 0 ? hi : lo);
#else
    return gather_bytes_v(table, __builtin_convertvector(x, vec<std::int32_t>));
#endif
}
// Bytes at p[off[i]] of a buffer of n >= 4 bytes with nothing to spare after it (the
// caller's input): each lane gathers the 4-byte word starting at its byte, or, where that
// word would end past the buffer (the last 3 bytes), the word ending at its byte, shifted
// down; no lane reads outside [p, p + n).
template <typename I> inline vec<std::uint8_t> gather_bytes_bounded_v(const std::uint8_t* p, I off, std::int64_t n) {
    if constexpr (std::is_same_v<elem_t<I>, std::int32_t> && (kLanes == 16 || kLanes == 8)) {
        if (n >= 4 && n <= 2147483647) {
            const vec<std::int32_t> top = off > static_cast<std::int32_t>(n - 4);
            const vec<std::int32_t> at = off - (top & 3);
            const vec<std::uint32_t> shift = reinterpret_cast<vec<std::uint32_t>>(top & 24);
            const vec<std::uint32_t> words = reinterpret_cast<vec<std::uint32_t>>(gather_words_at(p, at));
            return __builtin_convertvector(words >> shift, vec<std::uint8_t>);
        }
    }
    return gather_v(p, off);
}
// A gather of E-byte elements (E = 1 or 4) whose offsets lie close together (the taps of
// a resize's consecutive outputs): prepared once per vector of outputs (make_window: each
// lane's place relative to the lowest offset), then each tap reads the window with masked
// loads (never beyond the lanes' span, so never past a buffer's end) and picks the lanes
// with a permute: of bytes across 128 bytes (AVX-512 VBMI), of 4-byte words across 32
// words (AVX-512F), where x86 has no byte gather and its word gathers load lane by lane.
// Lanes whose span is too wide for one window are split into 2 or 4 groups of
// consecutive lanes, each with its own window; wider still, or without the permute, lanes
// are read one by one.
// Whether windows of E-byte elements are read by a permute on this target: bytes in 16
// lanes (the low quarter of the permute's result) or 64 (all of it), words in 16.
template <int E>
constexpr bool kWindowPermute =
#if defined(TOROID_BYTE_PERMUTE)
    (E == 1 && (kLanes == 16 || kLanes == 64)) ||
#endif
#if defined(TOROID_BYTE_SHUFFLE)
    (E == 1 && (kLanes == 8 || kLanes == 16 || kLanes == 32)) ||
#endif
#if defined(TOROID_WORD_PERMUTE)
    (E == 4 && kLanes == 16) ||
#endif
#if defined(TOROID_WORD_SHUFFLE)
    (E == 4 && kLanes == 8) ||
#endif
    false;
template <int E> struct lane_window;
template <> struct lane_window<1> {
#if defined(TOROID_BYTE_SHUFFLE)
    static constexpr int kSpan = 32;  // elements one window holds
#else
    static constexpr int kSpan = 128;
#endif
    std::int64_t first = 0;
    int groups = 0;
    std::int32_t rel[kLanes];
#if defined(TOROID_BYTE_PERMUTE)
    std::int32_t start[4];
    t_bytes64 idx[4];
    t_mask64 m0[4], m1[4];
    t_mask64 s0[4], s1[4];  // the masks of a read `slack` bytes longer (read_window1/2)
    bool shared = false;    // every group's window holds its slack too
    t_bytes64 idx4[4];      // 16 lanes: idx with lane i's byte at 4 * i (the *_u32 gathers)
#endif
#if defined(TOROID_BYTE_SHUFFLE)
    std::int32_t start[4];
    std::int32_t span[4];
    t_bytes32 idx[4], sel[4];
#endif
};
template <> struct lane_window<4> {
#if defined(TOROID_WORD_SHUFFLE)
    static constexpr int kSpan = 16;
#else
    static constexpr int kSpan = 32;
#endif
    std::int64_t first = 0;
    int groups = 0;
    std::int32_t rel[kLanes];
#if defined(TOROID_WORD_PERMUTE)
    std::int32_t start[4];
    t_ints16 idx[4];
    unsigned short m0[4], m1[4];
#endif
#if defined(TOROID_WORD_SHUFFLE)
    std::int32_t start[4];
    t_ints8 idx[4];
    t_ints8 m0[4], m1[4];
#endif
};
// With `slack` (bytes only): where each group's window also holds the `slack` bytes after
// its lanes' span (`shared`), loads at those distances share one read of it (read_window1/2
// and pick_window1/2); the groups are chosen by the lanes' span alone.
template <int E, typename I> inline lane_window<E> make_window(I off, int slack = 0) {
    // Plain arrays, not vector lanes, so that the compiler vectorizes the loops (it reads
    // a vector's lanes one by one).
    lane_window<E> w;
    elem_t<I> o[kLanes];
    __builtin_memcpy(o, &off, sizeof o);
    auto lo = o[0];
    for (int i = 1; i < kLanes; ++i) lo = o[i] < lo ? o[i] : lo;
    w.first = lo;
    for (int i = 0; i < kLanes; ++i) w.rel[i] = static_cast<std::int32_t>(o[i] - lo);
    if constexpr (kWindowPermute<E>) {
        // Words split into groups lose to the hardware gather (gather_window falls back to
        // it): one window or none.
        // 32-byte windows (AVX2) keep at least 8 lanes a group: fewer lose to loading lanes
        // one by one.
        constexpr int kMaxGroups = E != 1 ? 1 : lane_window<1>::kSpan == 32 ? (kLanes / 8 < 4 ? kLanes / 8 : 4) : 4;
        for (int groups = 1; groups <= kMaxGroups; groups *= 2) {
            const int n = kLanes / groups;
            bool fits = true;
            bool shared = true;  // (bytes) each group's window also holds its slack
            (void)shared;
            for (int g = 0; g < groups && fits; ++g) {
                std::int32_t a = w.rel[g * n], b = a;
                for (int i = g * n; i < (g + 1) * n; ++i) {
                    a = w.rel[i] < a ? w.rel[i] : a;
                    b = w.rel[i] > b ? w.rel[i] : b;
                }
                const std::int64_t span = static_cast<std::int64_t>(b) - a + 1;
                if (span > lane_window<E>::kSpan) {
                    fits = false;
                    break;
                }
                using Idx = std::conditional_t<E == 1, char, int>;
                Idx idx[sizeof(w.idx[0]) / sizeof(Idx)] = {};
                for (int i = g * n; i < (g + 1) * n; ++i) idx[i] = static_cast<Idx>(w.rel[i] - a);
                w.start[g] = a;
                __builtin_memcpy(&w.idx[g], idx, sizeof idx);
                if constexpr (E == 1) {
#if defined(TOROID_BYTE_PERMUTE)
                    if constexpr (kLanes == 16) {
                        char idx4[64] = {};
                        for (int i = g * n; i < (g + 1) * n; ++i) idx4[4 * i] = static_cast<char>(w.rel[i] - a);
                        __builtin_memcpy(&w.idx4[g], idx4, sizeof idx4);
                    }
#endif
                }
                if constexpr (E == 1) {
#if defined(TOROID_BYTE_SHUFFLE)
                    char sel[32] = {};
                    for (int i = g * n; i < (g + 1) * n; ++i) sel[i] = static_cast<char>((w.rel[i] - a) << 3);
                    __builtin_memcpy(&w.sel[g], sel, sizeof sel);
                    w.span[g] = static_cast<std::int32_t>(span);
#endif
#if defined(TOROID_BYTE_PERMUTE)
                    w.m0[g] = t_span_mask(span);
                    w.m1[g] = t_span_mask(span - 64);
                    w.s0[g] = t_span_mask(span + slack);
                    w.s1[g] = t_span_mask(span + slack - 64);
                    shared = shared && span + slack <= lane_window<E>::kSpan;
#endif
                } else {
#if defined(TOROID_WORD_PERMUTE)
                    w.m0[g] = t_span_mask16(span);
                    w.m1[g] = t_span_mask16(span - 16);
#endif
#if defined(TOROID_WORD_SHUFFLE)
                    w.m0[g] = t_span_mask8(span);
                    w.m1[g] = t_span_mask8(span - 8);
#endif
                }
            }
            if (fits) {
                w.groups = groups;
                if constexpr (E == 1) {
#if defined(TOROID_BYTE_PERMUTE)
                    w.shared = slack > 0 && shared;
#endif
                }
                break;
            }
        }
    }
    return w;
}
template <typename I> inline lane_window<1> window_u8(I off) { return make_window<1>(off); }
// The windows of every block of kLanes outputs of a kernel's vector loop, computed before
// its loop nest (a heap array: the nest's threads share it).
template <int E> struct window_table {
    lane_window<E>* w;
    explicit window_table(std::int64_t blocks) : w(new lane_window<E>[blocks > 0 ? blocks : 1]) {}
    ~window_table() { delete[] w; }
    window_table(const window_table&) = delete;
    window_table& operator=(const window_table&) = delete;
    lane_window<E>& operator[](std::int64_t i) const { return w[i]; }
};
// One group's lanes (the others 0) from the window at q.
template <typename T> inline vec<T> window_group(const T* q, const lane_window<sizeof(T)>& w, int g) {
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (sizeof(T) == 1 && (kLanes == 16 || kLanes == 64)) {
        const t_bytes64 r = t_permute2_bytes(t_load_bytes(w.m0[g], q), w.idx[g], t_load_bytes(w.m1[g], q + 64));
        return t_narrow_bytes64<vec<T>>(r);
    }
#endif
#if defined(TOROID_BYTE_SHUFFLE)
    if constexpr (sizeof(T) == 1 && kWindowPermute<1>) {
        const t_bytes32 r = t_permute_bytes32(t_load_window32(q, w.span[g]), w.idx[g], w.sel[g]);
        vec<T> out;
        __builtin_memcpy(&out, &r, sizeof out);
        return out;
    }
#endif
#if defined(TOROID_WORD_PERMUTE)
    if constexpr (sizeof(T) == 4 && kLanes == 16)
        return reinterpret_cast<vec<T>>(t_permute2_words(t_load_words(w.m0[g], q), w.idx[g], t_load_words(w.m1[g], q + 16)));
#endif
#if defined(TOROID_WORD_SHUFFLE)
    if constexpr (sizeof(T) == 4 && kLanes == 8)
        return reinterpret_cast<vec<T>>(t_permute2_words8(t_load_words8(w.m0[g], q), w.idx[g], t_load_words8(w.m1[g], q + 8)));
#endif
    (void)g;
    vec<T> r;
    for (int i = 0; i < kLanes; ++i) r[i] = q[w.rel[i]];
    return r;
}
// The elements at p + w.rel[i] (p: the buffer plus the window's lowest offset and the
// tap's), when every lane lies in the first group's window (w.groups == 1).
template <typename T> inline vec<T> gather_window1(const T* p, const lane_window<sizeof(T)>& w) {
    if constexpr (kWindowPermute<sizeof(T)>)
        return window_group(p, w, 0);
    vec<T> r;
    for (int i = 0; i < kLanes; ++i) r[i] = p[w.rel[i]];
    return r;
}
// The elements at p + w.rel[i], any window, the usual one first (a gather outside a tap
// loop, where no loop is printed once per case).
template <typename T> inline vec<T> gather_window(const T* p, const lane_window<sizeof(T)>& w);
template <typename T> __attribute__((noinline, cold)) vec<T> gather_window_cold(const T* p, const lane_window<sizeof(T)>& w) {
    return gather_window(p, w);
}
template <typename T> inline vec<T> gather_window2(const T* p, const lane_window<sizeof(T)>& w);
template <typename T> inline vec<T> gather_window_any(const T* p, const lane_window<sizeof(T)>& w) {
    // At 64 lanes the groups' blend is long code (lane masks of 64 bytes) that would crowd
    // the usual case's registers: out of line.
    if constexpr (kLanes == 64) return w.groups == 1 ? gather_window1(p, w) : gather_window_cold(p, w);
    // 32-byte windows (AVX2): lanes in two groups are common (a downscale by 1 to 2 at 32
    // lanes), and blended by a fixed mask.
    else if constexpr (lane_window<sizeof(T)>::kSpan == 32 && sizeof(T) == 1)
        return w.groups == 1 ? gather_window1(p, w) : w.groups == 2 ? gather_window2(p, w) : gather_window(p, w);
    else return w.groups == 1 ? gather_window1(p, w) : gather_window(p, w);
}
// The elements at p + w.rel[i], any window.
template <typename T> inline vec<T> gather_window(const T* p, const lane_window<sizeof(T)>& w) {
    if constexpr (kWindowPermute<sizeof(T)>) {
        if (w.groups > 0) {
            // Each group's lanes are blended in by a lane mask.
            using M = typename mask_of<sizeof(T)>::type;
            if constexpr (sizeof(T) == 1 && kLanes >= 8) {
                // Bytes in four groups (a downscale by 2 to 4 at 32-byte windows): fixed masks.
                if (w.groups == 4) {
                    vec<M> q[4] = {};
                    for (int i = 0; i < kLanes; ++i) q[i / (kLanes / 4)][i] = -1;
                    vec<M> r = {};
                    for (int g = 0; g < 4; ++g) r |= reinterpret_cast<vec<M>>(window_group(p + w.start[g], w, g)) & q[g];
                    return reinterpret_cast<vec<T>>(r);
                }
            }
            vec<T> r = {};
            vec<std::int32_t> lane32;
            for (int i = 0; i < kLanes; ++i) lane32[i] = i;
            const int n = kLanes / w.groups;
            for (int g = 0; g < w.groups; ++g) {
                const vec<T> b = window_group(p + w.start[g], w, g);
                const vec<M> mine = __builtin_convertvector((lane32 >= g * n) & (lane32 < (g + 1) * n), vec<M>);
                r = reinterpret_cast<vec<T>>((reinterpret_cast<vec<M>>(b) & mine) | (reinterpret_cast<vec<M>>(r) & ~mine));
            }
            return r;
        }
    }
    if constexpr (sizeof(T) == 4) {
        vec<std::int32_t> rel;
        __builtin_memcpy(&rel, w.rel, sizeof rel);
        return gather_v(p, rel);
    }
    vec<T> r;
    for (int i = 0; i < kLanes; ++i) r[i] = p[w.rel[i]];
    return r;
}
// The elements at p + w.rel[i] when the lanes split into two groups (w.groups == 2): the
// low half of the lanes from the first group's window, the high half from the second's,
// blended by a fixed mask.
// The low half of a's lanes and the high half of b's.
template <typename T> inline vec<T> t_halves(vec<T> a, vec<T> b) {
    using M = typename mask_of<sizeof(T)>::type;
    vec<M> low = {};
    for (int i = 0; i < kLanes / 2; ++i) low[i] = -1;
    return reinterpret_cast<vec<T>>((reinterpret_cast<vec<M>>(a) & low) | (reinterpret_cast<vec<M>>(b) & ~low));
}
template <typename T> inline vec<T> gather_window2(const T* p, const lane_window<sizeof(T)>& w) {
    if constexpr (kWindowPermute<sizeof(T)>)
        return t_halves<T>(window_group(p + w.start[0], w, 0), window_group(p + w.start[1], w, 1));
    return gather_window(p, w);
}
// One read of a byte window (two masked loads per group, reaching the window's slack)
// that serves several gathers at distances 0..slack from p (channels of the same taps):
// pick_window1 / pick_window2 permute each one's lanes out of it. Where a group's window
// cannot also hold the slack (w.shared false: the lanes' span nearly fills it), each gather
// reads its own window (gather_window1/2 from p + k), and where windows are not read by a
// permute, memory lane by lane.
struct t_window_reads {
    const std::uint8_t* p;
#if defined(TOROID_BYTE_PERMUTE)
    t_bytes64 lo[2], hi[2];
#endif
};
// The windows of the first `groups` groups at p: their lanes' spans (exact) or with the
// slack too.
inline t_window_reads t_read_groups(const std::uint8_t* p, const lane_window<1>& w, int groups, bool slack) {
    t_window_reads r;
    r.p = p;
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (kWindowPermute<1>)
        for (int g = 0; g < groups; ++g) {
            r.lo[g] = t_load_bytes(slack ? w.s0[g] : w.m0[g], p + w.start[g]);
            r.hi[g] = t_load_bytes(slack ? w.s1[g] : w.m1[g], p + w.start[g] + 64);
        }
#endif
    (void)w;
    (void)groups;
    (void)slack;
    return r;
}
inline t_window_reads read_window1(const std::uint8_t* p, const lane_window<1>& w) {
#if defined(TOROID_BYTE_PERMUTE)
    if (w.shared) return t_read_groups(p, w, 1, true);
#endif
    return t_read_groups(p, w, 0, false);
}
inline t_window_reads read_window2(const std::uint8_t* p, const lane_window<1>& w) {
#if defined(TOROID_BYTE_PERMUTE)
    if (w.shared) return t_read_groups(p, w, 2, true);
#endif
    return t_read_groups(p, w, 0, false);
}
#if defined(TOROID_BYTE_PERMUTE)
// Group g's lanes (the others arbitrary) of the gather `k` bytes after the read's base.
// (A template, so that the branch for the other lane count is discarded.)
template <typename T = std::uint8_t> inline vec<T> t_pick_group(const t_window_reads& r, const lane_window<1>& w, int g, int k) {
    const t_bytes64 b = t_permute2_bytes(r.lo[g], w.idx[g] + static_cast<char>(k), r.hi[g]);
    if constexpr (kLanes == 16 || kLanes == 64) return t_narrow_bytes64<vec<T>>(b);
    else return vec<T>{};  // never called: kWindowPermute<1> holds for 16 and 64 lanes only
}
#endif
// The bytes at r.p + k + w.rel[i], every lane in the first group's window (w.groups == 1).
inline vec<std::uint8_t> pick_window1(const t_window_reads& r, const lane_window<1>& w, int k) {
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (kWindowPermute<1>)
        if (w.shared) return t_pick_group(r, w, 0, k);
#endif
    return gather_window1(r.p + k, w);
}
// The same with the lanes in two groups (w.groups == 2).
inline vec<std::uint8_t> pick_window2(const t_window_reads& r, const lane_window<1>& w, int k) {
#if defined(TOROID_BYTE_PERMUTE)
    if (kWindowPermute<1> && w.shared) return t_halves<std::uint8_t>(t_pick_group(r, w, 0, k), t_pick_group(r, w, 1, k));
#endif
    return gather_window2(r.p + k, w);
}
// The window gathers above widened to int32 lanes (T = std::int32_t, lane i the byte
// zero-extended): at 16 lanes with a byte permute, one zero-masking permute puts each
// lane's byte at its lane's low byte (w.idx4) instead of a permute and an extension.
// (Templates, so that the branch for the other lane count is discarded.)
#if defined(TOROID_BYTE_PERMUTE)
constexpr t_mask64 kLowBytes32 = 0x1111111111111111ull;  // byte 4i of each int32 lane
constexpr t_mask64 kLowBytes32Lo = 0x0000000011111111ull, kLowBytes32Hi = 0x1111111100000000ull;
#endif
#if defined(TOROID_BYTE_PERMUTE)
// The gather `k` bytes after a read's base, in `groups` (1 or 2) groups, widened (16 lanes).
template <typename T> inline vec<T> t_widen_groups(const t_window_reads& r, const lane_window<1>& w, int groups, int k) {
    if (groups == 1)
        return reinterpret_cast<vec<T>>(t_permute2_bytes_z(kLowBytes32, r.lo[0], w.idx4[0] + static_cast<char>(k), r.hi[0]));
    return reinterpret_cast<vec<T>>(t_permute2_bytes_z(kLowBytes32Lo, r.lo[0], w.idx4[0] + static_cast<char>(k), r.hi[0]) |
                                    t_permute2_bytes_z(kLowBytes32Hi, r.lo[1], w.idx4[1] + static_cast<char>(k), r.hi[1]));
}
#endif
// gather_window1/2 and pick_window1/2 (G: the groups of the copy printed) widened to int32
// at once: at 16 lanes the window's permute puts each byte straight into its lane.
template <int G, typename T = std::int32_t> inline vec<T> gather_window_u32(const std::uint8_t* p, const lane_window<1>& w) {
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (kLanes == 16) return t_widen_groups<T>(t_read_groups(p, w, G, false), w, G, 0);
#endif
    if constexpr (G == 1) return to_v<vec<T>>(gather_window1(p, w));
    else return to_v<vec<T>>(gather_window2(p, w));
}
template <int G, typename T = std::int32_t> inline vec<T> pick_window_u32(const t_window_reads& r, const lane_window<1>& w, int k) {
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (kLanes == 16)
        if (w.shared) return t_widen_groups<T>(r, w, G, k);
#endif
    if constexpr (G == 1) return to_v<vec<T>>(pick_window1(r, w, k));
    else return to_v<vec<T>>(pick_window2(r, w, k));
}
// Elements at a constant stride. Bytes at a small stride (a channel of channels-last
// pixels, read forwards or backwards) whose lanes span at most 128 bytes (16 lanes: a
// stride up to 8; 64 lanes: up to 2): two masked loads and one byte permute.
template <typename T> inline vec<T> gather_stride_v(const T* p, std::int64_t stride) {
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (kLanes >= 16 && kLanes <= 64 && sizeof(T) == 1) {
        if (stride != 0 && (kLanes - 1) * (stride > 0 ? stride : -stride) + 1 <= 128) {
            const std::int64_t lo = stride > 0 ? 0 : (kLanes - 1) * stride;
            const std::int64_t span = (kLanes - 1) * (stride > 0 ? stride : -stride) + 1;
            t_bytes64 idx = {};
            for (int i = 0; i < kLanes; ++i) idx[i] = static_cast<char>(i * stride - lo);
            const T* q = p + lo;
            const t_bytes64 r = t_permute2_bytes(t_load_bytes(t_span_mask(span), q), idx, t_load_bytes(t_span_mask(span - 64), q + 64));
            vec<T> out;
            __builtin_memcpy(&out, &r, sizeof out);
            return out;
        }
    }
#endif
#if defined(TOROID_BYTE_SHUFFLE)
    // AVX2: lanes spanning at most 32 bytes (8 lanes: a stride up to 4; 16: up to 2; 32: 1),
    // one window and its two shuffles.
    if constexpr (kLanes >= 8 && kLanes <= 32 && sizeof(T) == 1) {
        const std::int64_t a = stride > 0 ? stride : -stride;
        if (stride != 0 && (kLanes - 1) * a + 1 <= 32) {
            const std::int64_t lo = stride > 0 ? 0 : (kLanes - 1) * stride;
            t_bytes32 idx = {}, sel = {};
            for (int i = 0; i < kLanes; ++i) {
                idx[i] = static_cast<char>(i * stride - lo);
                sel[i] = static_cast<char>((i * stride - lo) << 3);
            }
            const t_bytes32 r = t_permute_bytes32(t_load_window32(p + lo, static_cast<int>((kLanes - 1) * a + 1)), idx, sel);
            vec<T> out;
            __builtin_memcpy(&out, &r, sizeof out);
            return out;
        }
    }
#endif
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
// The channels of kLanes pixels stored interleaved (channels-last): p[i * C + c] = v_c[i].
// Bytes of 3 or 4 channels in 16 lanes: one byte permute puts them in place, one (masked)
// store (the scheduler keeps kernels that store so at 16 lanes). Wider
// elements: the plain loop, which GCC turns into shuffles and full stores (measured faster
// than word permutes built from index vectors).
#if defined(TOROID_WORD_PERMUTE)
// Register K of 16 pixels of C (3 or 4) 4-byte channels stored interleaved: element j is
// channel (16K + j) mod C of pixel (16K + j) / C. Channels 0 and 1 come from one permute of
// src[0], src[1]; with 3 channels a second permute puts src[2]'s in, with 4 one of src[2],
// src[3] and a blend. The indices are constants (K is one).
template <int C, int K> inline void t_store_pixels4(void* p, const t_floats16* src) {
    t_ints16 lo = {}, hi = {}, upper = {};
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
        const int g = 16 * K + j, i = g / C, c = g % C;
        lo[j] = c == 1 ? 16 + i : i;
        hi[j] = C == 3 ? (c == 2 ? 16 + i : j) : (c == 3 ? 16 + i : i);
        upper[j] = c >= 2 ? -1 : 0;
    }
    const t_floats16 first = t_permute2_words(src[0], lo, src[1]);
    t_floats16 out;
    if constexpr (C == 3) {
        out = t_permute2_words(first, hi, src[2]);
    } else {
        const t_ints16 second = reinterpret_cast<t_ints16>(t_permute2_words(src[2], hi, src[3]));
        out = reinterpret_cast<t_floats16>((second & upper) | (reinterpret_cast<t_ints16>(first) & ~upper));
    }
    __builtin_memcpy(static_cast<char*>(p) + 64 * K, &out, sizeof out);
}
#endif
template <typename T, typename... V> inline void store_interleaved(T* p, V... v) {
    constexpr int C = sizeof...(V);
    const vec<T> ch[C] = {v...};
#if defined(TOROID_BYTE_PERMUTE)
    if constexpr (kLanes == 16 && sizeof(T) == 1 && (C == 3 || C == 4)) {
        // (With 3 channels the last 16 bytes are never read: the permute picks bytes 0-47.)
        const t_bytes64 src = t_bytes64_of(reinterpret_cast<t_bytes16>(ch[0]), reinterpret_cast<t_bytes16>(ch[1]),
                                           reinterpret_cast<t_bytes16>(ch[2]),
                                           reinterpret_cast<t_bytes16>(ch[C == 4 ? 3 : 0]));
        t_bytes64 idx = {};
        for (int j = 0; j < 16 * C; ++j) idx[j] = static_cast<char>((j % C) * 16 + j / C);
        t_store_bytes(p, t_span_mask(16 * C), t_permute_bytes(src, idx));
        return;
    }
#endif
#if defined(TOROID_WORD_PERMUTE)
    // 4-byte elements (float, int32) of 3 or 4 channels: C registers, each from two-register
    // permutes of the channels' lanes (t_store_pixels4).
    if constexpr (kLanes == 16 && sizeof(T) == 4 && (C == 3 || C == 4)) {
        t_floats16 src[C];
        __builtin_memcpy(src, ch, sizeof ch);
        t_store_pixels4<C, 0>(p, src);
        t_store_pixels4<C, 1>(p, src);
        t_store_pixels4<C, 2>(p, src);
        if constexpr (C == 4) t_store_pixels4<C, 3>(p, src);
        return;
    }
#endif
    for (int i = 0; i < kLanes; ++i)
        for (int c = 0; c < C; ++c) p[i * C + c] = ch[c][i];
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
template <typename V> inline V rmin_v(V acc, V v) { return (v < acc) | (v != v) ? v : acc; }
template <typename V> inline V rmax_v(V acc, V v) { return (acc < v) | (v != v) ? v : acc; }
inline vec<float> pow_v(vec<float> a, vec<float> b) {
    vec<float> r;
    for (int i = 0; i < kLanes; ++i) r[i] = t_pow(a[i], b[i]);
    return r;
}
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
    // Float lanes: the fused multiply-add instruction itself. GCC turns the lane loop below
    // into vector code only where its tuning allows: for Intel server cores (-march=native on
    // Sapphire Rapids prefers 256-bit vectors) it kept one scalar multiply-add per lane.
#if !defined(__clang__)
#if defined(TOROID_AVX512F)
    if constexpr (kLanes == 16 && std::is_same_v<V, vec<float>>)
        return __builtin_ia32_vfmaddps512_mask(a, b, c, static_cast<unsigned short>(0xffff), 4);
#elif defined(TOROID_AVX2) && defined(__FMA__)
    if constexpr (kLanes == 8 && std::is_same_v<V, vec<float>>) return __builtin_ia32_vfmaddps256(a, b, c);
#endif
#endif
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
    return convert_v<vec<T>>(r);  // floats to narrow lanes go through 32-bit lanes there
}

// float16 / bfloat16 lanes (their bits) to and from float lanes: t_f16_to_f32 and the
// others lane by lane, with selects instead of branches.
inline vec<float> t_f16_to_f32_v(vec<std::uint16_t> h) {
    using U = vec<std::uint32_t>;
    const U x = convert_v<U>(h);
    const U sign = (x & 0x8000u) << 16, exp = (x >> 10) & 0x1fu, man = x & 0x3ffu;
    const U normal = sign | ((exp + 112u) << 23) | (man << 13);
    const U special = sign | 0x7f800000u | (man << 13);
    const vec<float> sub = convert_v<vec<float>>(reinterpret_cast<vec<std::int32_t>>(man)) * 5.9604644775390625e-8f;
    const U subnormal = sign | reinterpret_cast<U>(sub);
    const U r = exp == 0x1fu ? special : (exp == 0u ? subnormal : normal);
    return reinterpret_cast<vec<float>>(r);
}
inline vec<std::uint16_t> t_f32_to_f16_v(vec<float> f) {
    using U = vec<std::uint32_t>;
    const U u = reinterpret_cast<U>(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    const U r = a - 0x38000000u;
    const U normal = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
    const U sub = reinterpret_cast<U>(reinterpret_cast<vec<float>>(a) + 0.5f) - 0x3f000000u;
    const U nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    U bits = a >= 0x38800000u ? normal : sub;
    bits = a >= 0x477ff000u ? U{} + 0x7c00u : bits;
    bits = a > 0x7f800000u ? nan : bits;
    return __builtin_convertvector(sign | bits, vec<std::uint16_t>);
}
inline vec<float> t_bf16_to_f32_v(vec<std::uint16_t> b) {
    return reinterpret_cast<vec<float>>(convert_v<vec<std::uint32_t>>(b) << 16);
}
inline vec<std::uint16_t> t_f32_to_bf16_v(vec<float> f) {
    using U = vec<std::uint32_t>;
    const U u = reinterpret_cast<U>(f);
    const U r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return __builtin_convertvector((u & 0x7fffffffu) > 0x7f800000u ? U{} + 0x7fc0u : r, vec<std::uint16_t>);
}

// Tap pairs: acc + a0 * b0 + a1 * b1 lane by lane in int32, where every factor fits in
// int16 (uint8, int8 or int16 lanes, or one scalar for all lanes: a weight shared by the
// lanes). The two products of a lane are one pair of a 16-bit multiply-add (pmaddwd, one
// instruction for two taps instead of a widening and a 32-bit multiply per tap). Exact:
// each product fits in int32 and the sums wrap as the plain int32 sum does, so the result
// is the tap-by-tap sum. AVX512-VNNI's vpdpwssd (multiply-add and accumulate in one) gives
// the same result but puts its 4-5 cycle latency on the accumulator's chain, which a pass
// with one accumulator (a channels-last vertical pass) waits on every pair; pmaddwd + add
// keeps that chain at one cycle. It is compiled only with TOROID_MADD_VNNI defined.
template <typename T> using pair_v __attribute__((vector_size(2 * kLanes * sizeof(T)))) = T;
// Tap loops with fewer taps run the plain loop: a pair gather's setup (once per tap loop)
// and the odd last tap cost about what pairs save over 3 or 5 taps (measured on AMD Zen 4,
// where vpmulld is cheap: 3-tap passes 0.6-0.8x in pairs, 9- and 13-tap ones 1.0-1.15x).
constexpr int kTapPairsMin = 7;
// [x0[i], x1[i]] for every lane i, in one vector of twice the lanes.
template <typename T> inline pair_v<T> t_interleave(vec<T> x0, vec<T> x1) {
    if constexpr (kLanes == 16) {
        return __builtin_shufflevector(x0, x1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25,
                                       10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    } else if constexpr (kLanes == 8) {
        return __builtin_shufflevector(x0, x1, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    } else if constexpr (kLanes == 4) {
        return __builtin_shufflevector(x0, x1, 0, 4, 1, 5, 2, 6, 3, 7);
    } else {
        pair_v<T> both;
        for (int i = 0; i < kLanes; ++i) {
            both[2 * i] = x0[i];
            both[2 * i + 1] = x1[i];
        }
        return both;
    }
}
// Pairs of 8- or 16-bit elements as 16-bit pairs (bytes extended).
template <typename T> inline pair_v<std::int16_t> t_widen_pairs(pair_v<T> both) {
    static_assert(sizeof(T) <= 2, "tap pairs take 8- or 16-bit factors");
    if constexpr (sizeof(T) == 2) {
        return reinterpret_cast<pair_v<std::int16_t>>(both);
    } else {
#if defined(TOROID_AVX512BW) && !defined(__clang__)
        // GCC: one extend instruction (its generic lowering splits it by its preferred width).
        if constexpr (kLanes == 16) {
            typedef char v32qi __attribute__((vector_size(32)));
            typedef short v32hi __attribute__((vector_size(64)));
            if constexpr (std::is_signed_v<T>)
                return reinterpret_cast<pair_v<std::int16_t>>(__builtin_ia32_pmovsxbw512_mask(reinterpret_cast<v32qi>(both), v32hi{}, ~0u));
            else
                return reinterpret_cast<pair_v<std::int16_t>>(__builtin_ia32_pmovzxbw512_mask(reinterpret_cast<v32qi>(both), v32hi{}, ~0u));
        }
#endif
        return __builtin_convertvector(both, pair_v<std::int16_t>);
    }
}
// [x0[i], x1[i]] as the 16-bit pair of lane i (a scalar: the same pair in every lane).
template <typename X> inline pair_v<std::int16_t> t_pairs16(X x0, X x1) {
    if constexpr (!is_vec<X>) {
        const std::uint32_t w = static_cast<std::uint16_t>(static_cast<std::int16_t>(x0)) |
                                (static_cast<std::uint32_t>(static_cast<std::uint16_t>(static_cast<std::int16_t>(x1))) << 16);
        return reinterpret_cast<pair_v<std::int16_t>>(vec<std::uint32_t>{} + w);
    } else {
        return t_widen_pairs<elem_t<X>>(t_interleave<elem_t<X>>(x0, x1));
    }
}
// Two taps of a byte window gather (gather_window1 / gather_window), `step` bytes apart,
// as the pairs [p[rel[i]], p[rel[i] + step]] of each lane: where both taps' bytes lie in one
// 128-byte window, two masked loads (of exactly the bytes the two taps read) and one
// permute pick them in pair order, instead of a permute per tap and one to interleave.
// make_pair_window works out the loads' masks and the permute's index once per window.
struct pair_window {
    std::int64_t step = 0;
    bool one = false;  // both taps in one window: the masks and index below
#if defined(TOROID_BYTE_PERMUTE)
    t_mask64 m0 = 0, m1 = 0;
    t_bytes64 idx = {};
#endif
};
inline pair_window make_pair_window(const lane_window<1>& w, std::int64_t step) {
    pair_window pw;
    pw.step = step;
#if defined(TOROID_BYTE_PERMUTE) && TOROID_LANES == 16  // (not a template: if constexpr would not discard)
    {
        const std::int64_t span = __builtin_popcountll(w.m0[0]) + __builtin_popcountll(w.m1[0]);
        if (w.groups == 1 && step > 0 && step < 64 && span + step <= 128) {
            pw.one = true;
            pw.m0 = w.m0[0] | (w.m0[0] << step);
            pw.m1 = w.m1[0] | (w.m1[0] << step) | (w.m0[0] >> (64 - step));
            // [idx[i], idx[i] + step] for the 16 lanes (the upper 32 bytes are not used).
            typedef char b16 __attribute__((vector_size(16)));
            typedef char b32 __attribute__((vector_size(32)));
            const b16 lo = __builtin_shufflevector(w.idx[0], w.idx[0], 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            const b16 hi = lo + static_cast<char>(step);
            const b32 both = __builtin_shufflevector(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24,
                                                     9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
            __builtin_memcpy(&pw.idx, &both, sizeof both);
        }
    }
#endif
    (void)w;
    return pw;
}
// When every lane lies in the window's first group (w.groups == 1).
inline pair_v<std::uint8_t> gather_window_pairs1(const std::uint8_t* p, const lane_window<1>& w, const pair_window& pw) {
#if defined(TOROID_BYTE_PERMUTE) && TOROID_LANES == 16  // (not a template: if constexpr would not discard)
    {
        if (pw.one) {
            const t_bytes64 r = t_permute2_bytes(t_load_bytes(pw.m0, p), pw.idx, t_load_bytes(pw.m1, p + 64));
            return reinterpret_cast<pair_v<std::uint8_t>>(__builtin_shufflevector(r, r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                                                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31));
        }
    }
#endif
    return t_interleave<std::uint8_t>(gather_window1(p, w), gather_window1(p + pw.step, w));
}
// Any window.
inline pair_v<std::uint8_t> gather_window_pairs(const std::uint8_t* p, const lane_window<1>& w, const pair_window& pw) {
    if (pw.one) return gather_window_pairs1(p, w, pw);
    return t_interleave<std::uint8_t>(gather_window(p, w), gather_window(p + pw.step, w));
}
// Lane i: a[2i] * b[2i] + a[2i+1] * b[2i+1] + acc[i]. The instruction of the vector width
// (TOROID_MADD: 512-bit with AVX-512BW, 256 with AVX2, 128 with SSE2), else plain code.
#undef TOROID_MADD  // this part is pasted once per lane count; the macro is per paste
#if defined(TOROID_AVX512BW) && TOROID_LANES == 16
#define TOROID_MADD 512
#elif defined(TOROID_AVX2) && TOROID_LANES == 8
#define TOROID_MADD 256
#elif defined(TOROID_SSE2) && TOROID_LANES == 4
#define TOROID_MADD 128
#endif
#if defined(TOROID_AVX512VNNI) && TOROID_LANES == 16
// acc + the pair sums of a * b in one instruction (vpdpwssd, AVX512-VNNI).
inline vec<std::int32_t> t_dpwssd(vec<std::int32_t> acc, pair_v<std::int16_t> a, pair_v<std::int16_t> b) {
    typedef int v16si __attribute__((vector_size(64)));
    const v16si c = reinterpret_cast<v16si>(acc), x = reinterpret_cast<v16si>(a), y = reinterpret_cast<v16si>(b);
#if defined(__clang__)
    return reinterpret_cast<vec<std::int32_t>>(__builtin_ia32_vpdpwssd512(c, x, y));
#else
    return reinterpret_cast<vec<std::int32_t>>(__builtin_ia32_vpdpwssd_v16si(c, x, y));
#endif
}
#endif
inline vec<std::int32_t> t_madd_pairs(vec<std::int32_t> acc, pair_v<std::int16_t> a, pair_v<std::int16_t> b) {
#if TOROID_MADD == 512
    typedef short v32hi __attribute__((vector_size(64)));
    typedef int v16si __attribute__((vector_size(64)));
    const v32hi x = reinterpret_cast<v32hi>(a), y = reinterpret_cast<v32hi>(b);
    (void)static_cast<v16si*>(nullptr);
#if defined(TOROID_MADD_VNNI) && defined(TOROID_AVX512VNNI)
    return t_dpwssd(acc, a, b);
#elif defined(__clang__)
    return acc + reinterpret_cast<vec<std::int32_t>>(__builtin_ia32_pmaddwd512(x, y));
#else
    return acc + reinterpret_cast<vec<std::int32_t>>(__builtin_ia32_pmaddwd512_mask(x, y, v16si{}, static_cast<unsigned short>(0xffff)));
#endif
#elif TOROID_MADD == 256
    typedef short v16hi __attribute__((vector_size(32)));
    return acc + reinterpret_cast<vec<std::int32_t>>(__builtin_ia32_pmaddwd256(reinterpret_cast<v16hi>(a), reinterpret_cast<v16hi>(b)));
#elif TOROID_MADD == 128
    typedef short v8hi __attribute__((vector_size(16)));
    return acc + reinterpret_cast<vec<std::int32_t>>(__builtin_ia32_pmaddwd128(reinterpret_cast<v8hi>(a), reinterpret_cast<v8hi>(b)));
#else
    // The plain widening multiply-add (int32 vectors wrap like the instruction).
    vec<std::int32_t> p = {};
    for (int i = 0; i < kLanes; ++i)
        p[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(a[2 * i] * b[2 * i]) +
                                         static_cast<std::uint32_t>(a[2 * i + 1] * b[2 * i + 1]));
    return acc + p;
#endif
}
// a * b lane by lane where a lies in [0, 32767] and b in [-32768, 32767]: as 16-bit pairs
// each lane of a is [a, 0] and of b [b, sign], so the pair's multiply-add is a * b + 0
// (pmaddwd: one instruction and half the latency of the 32-bit multiply).
inline vec<std::int32_t> mul16_v(vec<std::int32_t> a, vec<std::int32_t> b) {
#if defined(TOROID_MADD)
    return t_madd_pairs(vec<std::int32_t>{}, reinterpret_cast<pair_v<std::int16_t>>(a), reinterpret_cast<pair_v<std::int16_t>>(b));
#else
    return a * b;
#endif
}
// acc + a * b lane by lane under mul16_v's conditions, the add the multiply-add's own: one
// vpdpwssd with AVX512-VNNI (a tap loop's accumulators: on the Intel host 1.11x over the
// uint8 antialiased rows against pmaddwd and an add, docs/results/history.md section 17).
inline vec<std::int32_t> dp16_v(vec<std::int32_t> acc, vec<std::int32_t> a, vec<std::int32_t> b) {
#if defined(TOROID_AVX512VNNI) && TOROID_LANES == 16
    return t_dpwssd(acc, reinterpret_cast<pair_v<std::int16_t>>(a), reinterpret_cast<pair_v<std::int16_t>>(b));
#elif defined(TOROID_MADD)
    return t_madd_pairs(acc, reinterpret_cast<pair_v<std::int16_t>>(a), reinterpret_cast<pair_v<std::int16_t>>(b));
#else
    return acc + a * b;
#endif
}
template <typename A, typename B> inline vec<std::int32_t> madd_pairs(vec<std::int32_t> acc, A a0, A a1, B b0, B b1) {
    return t_madd_pairs(acc, t_pairs16(a0, a1), t_pairs16(b0, b1));
}

// Taps in lanes (schedule/tap_pairs.h, TapLanes): one output pixel of C (3 or 4) uint8
// channels over 8 consecutive taps in one register of 32 int16 lanes, lane 8s + 2i + t
// holding channel s of tap 2i + t (slots s >= C zero): the 128-bit part s is channel s's 8
// taps, so the pixel's 8 weights, stored once (kTapLanesWeights int16 a register: 16 bytes
// where each weight repeated per channel took 64, and a row's weights stay in L1), are one
// 16-byte broadcast load. The multiply-add leaves int32 lane 4s + i = the sum over taps
// 2i, 2i + 1 of channel s; summing each part's four lanes for 4 pixels at once gives lanes
// 4s + j: pixel j, channel s (the kernel's value is lane by lane, and the store's byte
// shuffle puts each pixel's channels together).
#if defined(TOROID_BYTE_PERMUTE) && TOROID_LANES == 16
#define TOROID_TAP_LANES 1
constexpr int kTapLanesPixels = 4;   // pixels a step; 2 * kTapLanesPixels taps a register
constexpr int kTapLanesWeights = 8;  // int16 weights stored per register of taps
struct t_tap_lanes {
    t_bytes64 idx;  // byte 2L of the register <- pixel byte idx[2L] (lane L = 8s + 2i + t)
    t_mask64 keep;  // the low bytes of lanes whose slot is a channel
};
inline t_tap_lanes t_make_tap_lanes(int channels) {
    t_tap_lanes t{};
    for (int s = 0; s < 4; ++s)
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < 2; ++k) {
                const int lane = 8 * s + 2 * i + k;
                t.idx[2 * lane] = static_cast<char>((2 * i + k) * channels + (s < channels ? s : 0));
                if (s < channels) t.keep |= t_mask64{1} << (2 * lane);
            }
    return t;
}
// Stores weight w of tap r (0..7) into a register's kTapLanesWeights weights at d.
inline void t_tap_lanes_weight(std::int16_t* d, int r, std::int16_t w) { d[r] = w; }
// The bytes of n taps' pixels that exist (a load mask; 8 taps of at most 4 bytes: 32 bytes).
inline unsigned t_tap_lanes_span(std::int64_t n) { return n >= 32 ? ~0u : n <= 0 ? 0u : (1u << n) - 1; }
// A register's 8 weights at w, as the multiply-add takes them (one load for the rows that
// share them).
typedef pair_v<std::int16_t> t_tap_lanes_w;
inline t_tap_lanes_w t_tap_lanes_weights(const std::int16_t* w) {
    return reinterpret_cast<pair_v<std::int16_t>>(t_broadcast_bytes16(w));
}
// A register's pixel bytes at p in bytes 0..31 (tl.idx picks no others): those m selects,
// the others zero, or (Whole) anything: their taps' weights are zero, and the permute keeps
// channel slots only. Whole (CpuPlan::tap_lanes_whole_loads): where the 32 bytes stay
// inside p's page, one 32-byte broadcast load (GCC spells the masked load's widening to 64
// bytes with two more register moves); else, and under AddressSanitizer (which would report
// the bytes past the taps), the masked load.
template <bool Whole> inline t_bytes64 t_tap_lanes_load(unsigned m, const std::uint8_t* p) {
#if !defined(TOROID_ASAN) && !defined(__clang__)
    if (Whole && __builtin_expect((reinterpret_cast<std::uintptr_t>(p) & 4095) <= 4096 - 32, 1)) {
        typedef long long t_q4 __attribute__((vector_size(32)));
        typedef long long t_q8 __attribute__((vector_size(64)));
        t_q4 b;
        __builtin_memcpy(&b, p, sizeof b);
        return reinterpret_cast<t_bytes64>(__builtin_ia32_broadcasti64x4_512(b, t_q8{}, static_cast<unsigned char>(0xff)));
    }
#endif
    return t_load_bytes_low32(m, p);
}
// acc + the products of 8 taps of one pixel at p (m: the bytes of the taps that exist) with
// its 8 weights wv.
template <bool Whole = false>
inline vec<std::int32_t> t_tap_lanes_madd_w(vec<std::int32_t> acc, const std::uint8_t* p, unsigned m,
                                            const t_tap_lanes& tl, t_tap_lanes_w wv) {
    const t_bytes64 px = t_permute_bytes_z(tl.keep, t_tap_lanes_load<Whole>(m, p), tl.idx);
#if defined(TOROID_AVX512VNNI)
    return t_dpwssd(acc, reinterpret_cast<pair_v<std::int16_t>>(px), wv);  // the add in the same instruction
#else
    return t_madd_pairs(acc, reinterpret_cast<pair_v<std::int16_t>>(px), wv);
#endif
}
// The same with the weights at w.
template <bool Whole = false>
inline vec<std::int32_t> t_tap_lanes_madd(vec<std::int32_t> acc, const std::uint8_t* p, unsigned m,
                                          const t_tap_lanes& tl, const std::int16_t* w) {
    return t_tap_lanes_madd_w<Whole>(acc, p, m, tl, t_tap_lanes_weights(w));
}
// [a0+a1, a2+a3, b0+b1, b2+b3] in each 128-bit part of a and b.
inline vec<std::int32_t> t_part_pair_sums(vec<std::int32_t> a, vec<std::int32_t> b) {
    return __builtin_shufflevector(a, b, 0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30) +
           __builtin_shufflevector(a, b, 1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31);
}
// The lane of a step's sum that holds pixel j's channel s (the store puts it in place).
constexpr int t_tap_lanes_lane(int j, int s) { return 4 * s + j; }
// Lane 4s + j: the sum of part s of the j-th argument.
inline vec<std::int32_t> t_tap_lanes_sum4(vec<std::int32_t> a, vec<std::int32_t> b, vec<std::int32_t> c,
                                          vec<std::int32_t> d) {
    return t_part_pair_sums(t_part_pair_sums(a, b), t_part_pair_sums(c, d));
}
// Stores the first n (1..4) pixels of v (pixel j's channel s in lane t_tap_lanes_lane(j, s))
// as n * C bytes.
template <int C> inline void t_tap_lanes_store(std::uint8_t* p, vec<std::uint8_t> v, std::int64_t n) {
#if defined(TOROID_AVX512VL)
    // One in-lane byte shuffle and a 16-byte masked store.
    typedef char t_bytes16 __attribute__((vector_size(16)));
    t_bytes16 idx = {};
    for (int j = 0; j < 4; ++j)
        for (int s = 0; s < C; ++s) idx[j * C + s] = static_cast<char>(t_tap_lanes_lane(j, s));
    const t_bytes16 b = __builtin_ia32_pshufb128(reinterpret_cast<t_bytes16>(v), idx);
#if defined(__clang__)
    __builtin_ia32_storedquqi128_mask(reinterpret_cast<t_bytes16*>(p), b, t_span_mask16(n * C));
#else
    __builtin_ia32_storedquqi128_mask(reinterpret_cast<char*>(p), b, t_span_mask16(n * C));
#endif
#else
    // Widened in registers (a copy through memory would stall the wide load).
    typedef char t_bytes16 __attribute__((vector_size(16)));
    const t_bytes16 b = reinterpret_cast<t_bytes16>(v);
    const t_bytes16 z = {};
    typedef char t_bytes32 __attribute__((vector_size(32)));
    const t_bytes32 b2 = __builtin_shufflevector(b, z, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                                 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    const t_bytes32 z2 = {};
    const t_bytes64 src = __builtin_shufflevector(b2, z2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                                  19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36,
                                                  37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54,
                                                  55, 56, 57, 58, 59, 60, 61, 62, 63);
    t_bytes64 idx = {};
    for (int j = 0; j < 4 * C; ++j) idx[j] = static_cast<char>(t_tap_lanes_lane(j / C, j % C));
    t_store_bytes(p, t_span_mask(n * C), t_permute_bytes(src, idx));
#endif
}
#elif defined(TOROID_AVX2) && TOROID_LANES == 8
// The same form in 32-byte registers (AVX2; also AVX2 code built with -march of a larger
// CPU): one output pixel over 4 consecutive taps in 16 int16 lanes, lane 8i + 2s + t holding
// channel s of tap 2i + t (the pixel bytes of taps 0-3 in both 128-bit halves, each half's
// in-lane byte shuffle picking its two taps), so that the multiply-add leaves int32 lane
// 4i + s = the sum over taps 2i, 2i + 1 of channel s; summing the two halves of 2 pixels'
// accumulators at once gives lanes 4j + s: pixel j, channel s. The weights are stored in the
// register's order (each one per channel slot): a broadcast of the 4 distinct ones and the
// shuffle to this order measured 5-15% slower on AMD Zen 4 than the 32-byte load.
#define TOROID_TAP_LANES 1
constexpr int kTapLanesPixels = 2;
constexpr int kTapLanesWeights = 16;  // int16 weights stored per register of taps
struct t_tap_lanes {
    t_bytes32 idx;  // byte b of the register <- byte idx[b] of its half (bit 7: zero)
};
inline t_tap_lanes t_make_tap_lanes(int channels) {
    t_tap_lanes t{};
    for (int i = 0; i < 2; ++i)
        for (int s = 0; s < 4; ++s)
            for (int k = 0; k < 2; ++k) {
                const int lane = 8 * i + 2 * s + k;
                t.idx[2 * lane] = s < channels ? static_cast<char>((2 * i + k) * channels + s) : static_cast<char>(0x80);
                t.idx[2 * lane + 1] = static_cast<char>(0x80);
            }
    return t;
}
// Stores weight w of tap r (0..3) into a register's kTapLanesWeights weights at d.
inline void t_tap_lanes_weight(std::int16_t* d, int r, std::int16_t w) {
    std::int16_t* const l = d + r / 2 * 8 + r % 2;
    l[0] = l[2] = l[4] = l[6] = w;
}
// The bytes of n taps' pixels that exist.
inline int t_tap_lanes_span(std::int64_t n) { return static_cast<int>(n < 16 ? n : 16); }
// A register's 16 weights at w, as the multiply-add takes them.
typedef pair_v<std::int16_t> t_tap_lanes_w;
inline t_tap_lanes_w t_tap_lanes_weights(const std::int16_t* w) {
    t_tap_lanes_w wv;
    __builtin_memcpy(&wv, w, sizeof wv);
    return wv;
}
// acc + the products of 4 taps of one pixel at p (n: the bytes of the taps that exist) with
// its 16 weights wv (Whole: AVX-512's choice; this form reads whole registers inside the
// page anyway).
template <bool Whole = false>
inline vec<std::int32_t> t_tap_lanes_madd_w(vec<std::int32_t> acc, const std::uint8_t* p, int n, const t_tap_lanes& tl,
                                            t_tap_lanes_w wv) {
    const t_bytes16 b = t_load_span<t_bytes16>(p, n);  // the bytes past n meet zero weights
    const t_bytes32 both = __builtin_shufflevector(b, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3,
                                                   4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const t_bytes32 px = __builtin_ia32_pshufb256(both, tl.idx);
    return t_madd_pairs(acc, reinterpret_cast<pair_v<std::int16_t>>(px), wv);
}
// The same with the weights at w.
template <bool Whole = false>
inline vec<std::int32_t> t_tap_lanes_madd(vec<std::int32_t> acc, const std::uint8_t* p, int n, const t_tap_lanes& tl,
                                          const std::int16_t* w) {
    return t_tap_lanes_madd_w(acc, p, n, tl, t_tap_lanes_weights(w));
}
// The lane of a step's sum that holds pixel j's channel s.
constexpr int t_tap_lanes_lane(int j, int s) { return 4 * j + s; }
// [a0 + a1, b0 + b1] of the 128-bit halves of a and b.
inline vec<std::int32_t> t_tap_lanes_sum2(vec<std::int32_t> a, vec<std::int32_t> b) {
    return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) + __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
}
// Stores the first n (1..2) pixels of v (lane 4j + s: pixel j, channel s) as n * C bytes.
template <int C> inline void t_tap_lanes_store(std::uint8_t* p, vec<std::uint8_t> v, std::int64_t n) {
    std::uint8_t b[8];
    __builtin_memcpy(b, &v, sizeof b);
    if constexpr (C == 4) {
        if (n == 2) __builtin_memcpy(p, b, 8);
        else __builtin_memcpy(p, b, 4);
    } else {
        __builtin_memcpy(p, b, C);
        if (n == 2) __builtin_memcpy(p + C, b + 4, C);
    }
}
#elif TOROID_LANES == 16 || TOROID_LANES == 8
// Plain loops with the same meaning, for a kernel scheduled with taps in lanes but compiled
// without the CPU's byte permute or AVX2 ($TOROID_CXXFLAGS without its -march): channel s
// of a pixel's sum in lane s, the weights in tap order.
#define TOROID_TAP_LANES 1
constexpr int kTapLanesPixels = TOROID_LANES / 4;
constexpr int kTapLanesWeights = 2 * kTapLanesPixels;  // one per tap of a register
struct t_tap_lanes {
    int channels;
};
inline t_tap_lanes t_make_tap_lanes(int channels) { return {channels}; }
inline void t_tap_lanes_weight(std::int16_t* d, int r, std::int16_t w) { d[r] = w; }
inline std::int64_t t_tap_lanes_span(std::int64_t n) { return n; }
typedef const std::int16_t* t_tap_lanes_w;  // the weights where they are
inline t_tap_lanes_w t_tap_lanes_weights(const std::int16_t* w) { return w; }
// acc + the products of a register's taps of one pixel at p (n: the bytes that exist).
template <bool Whole = false>
inline vec<std::int32_t> t_tap_lanes_madd(vec<std::int32_t> acc, const std::uint8_t* p, std::int64_t n,
                                          const t_tap_lanes& tl, const std::int16_t* w) {
    for (int s = 0; s < tl.channels; ++s)
        for (int r = 0; r < kTapLanesWeights && r * tl.channels + s < n; ++r) acc[s] += w[r] * p[r * tl.channels + s];
    return acc;
}
template <bool Whole = false>
inline vec<std::int32_t> t_tap_lanes_madd_w(vec<std::int32_t> acc, const std::uint8_t* p, std::int64_t n,
                                            const t_tap_lanes& tl, t_tap_lanes_w w) {
    return t_tap_lanes_madd(acc, p, n, tl, w);
}
// The lane of a step's sum that holds pixel j's channel s.
constexpr int t_tap_lanes_lane(int j, int s) { return 4 * j + s; }
// Lane 4j + s: lane s of the j-th argument.
inline vec<std::int32_t> t_tap_lanes_sum4(vec<std::int32_t> a, vec<std::int32_t> b, vec<std::int32_t> c,
                                          vec<std::int32_t> d) {
    const vec<std::int32_t> in[4] = {a, b, c, d};
    vec<std::int32_t> out = {};
    for (int j = 0; j < 4 && 4 * j < TOROID_LANES; ++j)
        for (int s = 0; s < 4; ++s) out[4 * j + s] = in[j][s];
    return out;
}
inline vec<std::int32_t> t_tap_lanes_sum2(vec<std::int32_t> a, vec<std::int32_t> b) {
    return t_tap_lanes_sum4(a, b, vec<std::int32_t>{}, vec<std::int32_t>{});
}
// Stores the first n pixels of v (lane 4j + s: pixel j, channel s) as n * C bytes.
template <int C> inline void t_tap_lanes_store(std::uint8_t* p, vec<std::uint8_t> v, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j)
        for (int s = 0; s < C; ++s) p[j * C + s] = v[4 * j + s];
}
#endif

}  // namespace
