// The CPU feature set's one serialization (target/cpu_features.h): its names, flags and
// defines agree, implications close the set, the levels are sets of it, a target's source
// defines what its compiler flags enable, and this CPU's set is what the compiler itself
// sees under -march=native.
#include "target/cpu_features.h"
#include "target/isa_level.h"
#include "target/target.h"

#include "runtime/jit.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace toroid {
namespace {

namespace fs = std::filesystem;
using F = CpuFeature;

TEST(CpuFeatures, OneSpellingEachInFlagsNamesAndDefines) {
    const CpuFeatures f{F::Avx2, F::Fma};  // AVX2 brings SSE2
    EXPECT_EQ(f.names(), "sse2 avx2 fma");
    EXPECT_EQ(f.compiler_flags(), (std::vector<std::string>{"-msse2", "-mavx2", "-mfma"}));
    EXPECT_EQ(f.defines(), "#define TOROID_SSE2 1\n#define TOROID_AVX2 1\n#define TOROID_FMA 1\n");
    EXPECT_EQ(CpuFeatures{F::Sse2}.names(), "sse2");
    EXPECT_TRUE(CpuFeatures{}.empty());
    EXPECT_EQ(CpuFeatures{}.defines(), "");
}

TEST(CpuFeatures, ImpliedFeaturesAreInTheSet) {
    const CpuFeatures vbmi{F::Avx512Vbmi};  // VBMI -> BW -> F -> AVX2, FMA
    for (F f : {F::Avx512Vbmi, F::Avx512BW, F::Avx512F, F::Avx2, F::Fma}) EXPECT_TRUE(vbmi.has(f));
    EXPECT_FALSE(vbmi.has(F::Avx512VL));
    EXPECT_TRUE(CpuFeatures::x86_64_v4().contains(CpuFeatures::x86_64_v3()));
    EXPECT_FALSE(CpuFeatures::x86_64_v3().contains(CpuFeatures::x86_64_v4()));
    EXPECT_EQ((CpuFeatures::x86_64_v4() | vbmi).minus(CpuFeatures::x86_64_v4()).names(), "avx512vbmi");
}

TEST(CpuFeatures, LevelsAreFeatureSetsAndTheirFlags) {
    const IsaLevel& top = isa_level("x86-64-v4-vbmi-vnni");
    EXPECT_EQ(top.flags, (std::vector<std::string>{"-march=x86-64-v4", "-mavx512vbmi", "-mavx512vnni", "-mtune=generic"}));
    EXPECT_EQ(isa_level("x86-64-v3").flags, (std::vector<std::string>{"-march=x86-64-v3", "-mtune=generic"}));
    EXPECT_EQ(isa_level_of(CpuFeatures::x86_64_v4()).name, "x86-64-v4");
    EXPECT_EQ(isa_level_of(top.features).name, "x86-64-v4-vbmi-vnni");
    EXPECT_EQ(isa_level_of(CpuFeatures{F::Avx512Vbmi} | CpuFeatures::x86_64_v4()).name, "x86-64-v4");  // no VNNI
    EXPECT_EQ(isa_level_of(CpuFeatures{}).name, "x86-64-v3");
}

// The named targets: their forms come from their features alone, and the level they are
// prebuilt at is the level of those features.
TEST(CpuFeatures, NamedTargetsChooseTheirFormsFromTheirFeatures) {
    struct Case {
        const char* name;
        int vector_bytes;
        bool byte_permute;
        const char* level;
    };
    for (const Case& c : {Case{"avx2", 32, false, "x86-64-v3"}, Case{"avx512", 64, false, "x86-64-v4"},
                          Case{"avx512vbmi", 64, true, "x86-64-v4-vbmi-vnni"}, Case{"zen4", 64, true, "x86-64-v4-vbmi-vnni"}}) {
        SCOPED_TRACE(c.name);
        ::setenv("TOROID_CPU_TARGET", c.name, 1);
        const Target t = Target::host_cpu();
        ::unsetenv("TOROID_CPU_TARGET");
        EXPECT_EQ(t.vector_bytes, c.vector_bytes);
        EXPECT_EQ(t.byte_permute, c.byte_permute);
        EXPECT_EQ(t.isa_level(), c.level);
        EXPECT_TRUE(isa_level(c.level).features.contains(t.features));
        EXPECT_EQ(t.cannot_run.empty(), CpuFeatures::host().contains(t.features));
    }
}

// What the compiler defines under -march=native is this CPU's set: the host target's
// defines (and so its preamble forms) are the ones a native build's own macros would pick.
TEST(CpuFeatures, TheHostSetIsWhatANativeBuildSees) {
#if !defined(__x86_64__)
    GTEST_SKIP() << "x86-64 only";
#else
    const fs::path cache = fs::path(::testing::TempDir()) / ("toroid_cpu_features_" + std::to_string(::getpid()));
    fs::remove_all(cache);
    CompilerConfig c;
    c.cxx = TOROID_CXX_COMPILER;
    c.optimization_flags = {"-O1", "-march=native"};
    c.cache_dir = cache;
    JitCompiler jit(c);
    const std::string src = R"(
extern "C" const char* native_features() {
    return ""
#if defined(__SSE2__)
    " sse2"
#endif
#if defined(__AVX2__)
    " avx2"
#endif
#if defined(__FMA__)
    " fma"
#endif
#if defined(__AVX512F__)
    " avx512f"
#endif
#if defined(__AVX512BW__)
    " avx512bw"
#endif
#if defined(__AVX512DQ__)
    " avx512dq"
#endif
#if defined(__AVX512VL__)
    " avx512vl"
#endif
#if defined(__AVX512VBMI__)
    " avx512vbmi"
#endif
#if defined(__AVX512VNNI__)
    " avx512vnni"
#endif
    ;
}
)";
    auto module = jit.load(src, "native_features");
    const std::string seen = module->lookup<const char* (*)()>("native_features")();
    EXPECT_EQ(seen.empty() ? seen : seen.substr(1), CpuFeatures::host().names());
    EXPECT_EQ(Target::host_cpu().features, CpuFeatures::host());
    fs::remove_all(cache);
#endif
}

}  // namespace
}  // namespace toroid
