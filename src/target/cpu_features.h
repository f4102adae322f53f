// The CPU instruction-set features generated code may use, as one set with one spelling
// each: the scheduler picks its forms from the set (target.h), the C++ compiler gets it as
// -m flags, the CPU preamble as TOROID_<FEATURE> defines (it tests no compiler macro of its
// own), the prebuilt catalogue's levels are sets of it, and this CPU's set is read here. The
// defines are part of the generated source and the flags of the compiler's command, so the
// JIT's cache key (a hash of both) covers the set. Leaf layer: no other toroid header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace toroid {

enum class CpuFeature : std::uint8_t { Sse2, Avx2, Fma, Avx512F, Avx512BW, Avx512DQ, Avx512VL, Avx512Vbmi, Avx512Vnni };
inline constexpr std::size_t kCpuFeatures = 9;

class CpuFeatures {
public:
    CpuFeatures() = default;
    // The features and every feature they imply (as the compilers' -m flags imply them:
    // AVX-512 F brings AVX2 and FMA, BW/DQ/VL/VNNI bring F, VBMI brings BW, AVX2 brings SSE2).
    CpuFeatures(std::initializer_list<CpuFeature> features);

    bool has(CpuFeature f) const { return (bits_ >> static_cast<unsigned>(f)) & 1u; }
    bool empty() const { return bits_ == 0; }
    // Every feature of `other` is in this set.
    bool contains(const CpuFeatures& other) const { return (other.bits_ & ~bits_) == 0; }
    CpuFeatures operator|(const CpuFeatures& o) const { return from_bits(bits_ | o.bits_); }
    CpuFeatures operator&(const CpuFeatures& o) const { return from_bits(bits_ & o.bits_); }
    // The features of this set that `other` lacks (not closed under implication).
    CpuFeatures minus(const CpuFeatures& other) const { return from_bits(bits_ & ~other.bits_); }
    bool operator==(const CpuFeatures&) const = default;

    // The spellings, in CpuFeature order: "sse2 avx2 fma" (names, as /proc/cpuinfo and GCC's
    // __builtin_cpu_supports spell them), {"-msse2", "-mavx2", ...} (GCC's and Clang's flags)
    // and "#define TOROID_SSE2 1\n..." (the CPU preamble's).
    std::string names() const;
    std::vector<std::string> compiler_flags() const;
    std::string defines() const;

    // This CPU's features (none off x86).
    static CpuFeatures host();
    // The x86-64 micro-architecture levels' features that generated code uses: v3 (SSE2,
    // AVX2, FMA) and v4 (v3 and AVX-512 F, BW, DQ, VL).
    static CpuFeatures x86_64_v3();
    static CpuFeatures x86_64_v4();

private:
    static CpuFeatures from_bits(std::uint32_t bits) {
        CpuFeatures f;
        f.bits_ = bits;
        return f;
    }
    std::uint32_t bits_ = 0;
};

}  // namespace toroid
