// The CPU feature set's one table of spellings, and this CPU's set.
#include "target/cpu_features.h"

#include <array>

namespace toroid {

namespace {

struct Spelling {
    CpuFeature feature;
    std::string_view name;    // -m<name>, /proc/cpuinfo's and __builtin_cpu_supports' name
    std::string_view define;  // the CPU preamble's macro
};

constexpr std::array<Spelling, kCpuFeatures> kSpellings{{
    {CpuFeature::Sse2, "sse2", "TOROID_SSE2"},
    {CpuFeature::Avx2, "avx2", "TOROID_AVX2"},
    {CpuFeature::Fma, "fma", "TOROID_FMA"},
    {CpuFeature::Avx512F, "avx512f", "TOROID_AVX512F"},
    {CpuFeature::Avx512BW, "avx512bw", "TOROID_AVX512BW"},
    {CpuFeature::Avx512DQ, "avx512dq", "TOROID_AVX512DQ"},
    {CpuFeature::Avx512VL, "avx512vl", "TOROID_AVX512VL"},
    {CpuFeature::Avx512Vbmi, "avx512vbmi", "TOROID_AVX512VBMI"},
    {CpuFeature::Avx512Vnni, "avx512vnni", "TOROID_AVX512VNNI"},
}};

constexpr bool spellings_in_order() {
    for (std::size_t i = 0; i < kSpellings.size(); ++i)
        if (static_cast<std::size_t>(kSpellings[i].feature) != i) return false;
    return true;
}
static_assert(spellings_in_order(), "one spelling per CpuFeature, in its order");

constexpr std::uint32_t bit(CpuFeature f) { return 1u << static_cast<unsigned>(f); }

// What each feature implies, applied until nothing changes (VBMI -> BW -> F -> AVX2).
std::uint32_t close(std::uint32_t b) {
    for (;;) {
        std::uint32_t n = b;
        for (CpuFeature f : {CpuFeature::Avx512BW, CpuFeature::Avx512DQ, CpuFeature::Avx512VL, CpuFeature::Avx512Vnni})
            if (n & bit(f)) n |= bit(CpuFeature::Avx512F);
        if (n & bit(CpuFeature::Avx512Vbmi)) n |= bit(CpuFeature::Avx512BW) | bit(CpuFeature::Avx512F);
        if (n & bit(CpuFeature::Avx512F)) n |= bit(CpuFeature::Avx2) | bit(CpuFeature::Fma);
        if (n & bit(CpuFeature::Avx2)) n |= bit(CpuFeature::Sse2);
        if (n == b) return b;
        b = n;
    }
}

}  // namespace

CpuFeatures::CpuFeatures(std::initializer_list<CpuFeature> features) {
    for (CpuFeature f : features) bits_ |= bit(f);
    bits_ = close(bits_);
}

std::string CpuFeatures::names() const {
    std::string s;
    for (const Spelling& sp : kSpellings)
        if (has(sp.feature)) (s += s.empty() ? "" : " ") += sp.name;
    return s;
}

std::vector<std::string> CpuFeatures::compiler_flags() const {
    std::vector<std::string> flags;
    for (const Spelling& sp : kSpellings)
        if (has(sp.feature)) flags.push_back("-m" + std::string(sp.name));
    return flags;
}

std::string CpuFeatures::defines() const {
    std::string s;
    for (const Spelling& sp : kSpellings)
        if (has(sp.feature)) (s += "#define ") += std::string(sp.define) + " 1\n";
    return s;
}

CpuFeatures CpuFeatures::host() {
    std::uint32_t b = 0;
#if defined(__x86_64__) || defined(__i386__)
    // __builtin_cpu_supports takes its name as a literal: one call per feature.
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse2")) b |= bit(CpuFeature::Sse2);
    if (__builtin_cpu_supports("avx2")) b |= bit(CpuFeature::Avx2);
    if (__builtin_cpu_supports("fma")) b |= bit(CpuFeature::Fma);
    if (__builtin_cpu_supports("avx512f")) b |= bit(CpuFeature::Avx512F);
    if (__builtin_cpu_supports("avx512bw")) b |= bit(CpuFeature::Avx512BW);
    if (__builtin_cpu_supports("avx512dq")) b |= bit(CpuFeature::Avx512DQ);
    if (__builtin_cpu_supports("avx512vl")) b |= bit(CpuFeature::Avx512VL);
    if (__builtin_cpu_supports("avx512vbmi")) b |= bit(CpuFeature::Avx512Vbmi);
    if (__builtin_cpu_supports("avx512vnni")) b |= bit(CpuFeature::Avx512Vnni);
#endif
    return from_bits(b);  // as the CPU reports them (each implication holds on real CPUs)
}

CpuFeatures CpuFeatures::x86_64_v3() { return {CpuFeature::Avx2, CpuFeature::Fma}; }

CpuFeatures CpuFeatures::x86_64_v4() {
    return {CpuFeature::Avx512F, CpuFeature::Avx512BW, CpuFeature::Avx512DQ, CpuFeature::Avx512VL};
}

}  // namespace toroid
