// The generated kernels' C++ preamble (src/codegen/cpu_preamble.h): the library embeds the
// file's current text, and its helpers written with compiler builtins (the hardware gathers,
// floor / round-half-even / fma, the byte permutes) answer like the scalar code they replace, under GCC and,
// where installed, Clang, at every vector width this machine can run.
#include "codegen/cpp.h"
#include "runtime/jit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

const fs::path kHeader = fs::path(TOROID_SOURCE_DIR) / "src" / "codegen" / "cpu_preamble.h";

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');)
        if (!d.empty() && ::access((fs::path(d) / program).c_str(), X_OK) == 0) return true;
    return false;
}

TEST(CpuPreamble, GeneratedSourceEmbedsTheHeader) {
    const std::string header = slurp(kHeader);
    ASSERT_FALSE(header.empty()) << kHeader;
    for (int lanes : {4, 8, 16}) {
        const std::string src = codegen::generate_cpp(ir::Program{}, lanes);
        EXPECT_NE(src.find(header), std::string::npos) << "the library's preamble is not " << kHeader;
        EXPECT_NE(src.find("#define TOROID_LANES " + std::to_string(lanes) + "\n"), std::string::npos);
        std::string reverse = "#define TOROID_REVERSE ";
        for (int i = lanes - 1; i >= 0; --i) reverse += std::to_string(i) + (i > 0 ? ", " : "\n");
        EXPECT_NE(src.find(reverse), std::string::npos) << reverse;
        EXPECT_LT(src.find(reverse), src.find(header)) << "the macros must come before the header";
    }
}

// Checks the preamble's builtin-based helpers against plain scalar code inside the compiled
// module: returns the number of lanes or values that differ.
const std::string kCheck = R"(
#include <cmath>
extern "C" int check_gathers() {
    float f[97];
    std::int32_t d[97];
    for (int i = 0; i < 97; ++i) {
        f[i] = static_cast<float>(i) * 1.25f - 40.0f;
        d[i] = i * 7919 - 300000;
    }
    int bad = 0;
    for (int start = 0; start < 5; ++start) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = (start * 13 + i * 37) % 97;
        const vec<float> gf = gather_v(f, off);
        const vec<std::int32_t> gd = gather_v(d, off);
        for (int i = 0; i < kLanes; ++i) bad += gf[i] != f[off[i]] || gd[i] != d[off[i]];
    }
    return bad;
}
extern "C" int check_math() {
    const float xs[] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, -0.0f, 3.7f, -3.7f, 8388609.0f, -1e30f};
    int bad = 0;
    for (float x : xs) {
        bad += t_floor(x) != std::floor(x) || t_round_even(x) != std::nearbyint(x) || t_fabs(x) != std::fabs(x);
        bad += t_floor(static_cast<double>(x)) != std::floor(static_cast<double>(x));
        bad += t_round_even(static_cast<double>(x)) != std::nearbyint(static_cast<double>(x));
        const float a = x * 1.1f, b = 0.3f;
        bad += t_fma(a, b, x) != std::fma(a, b, x);
        bad += t_fma(static_cast<double>(a), 0.1, static_cast<double>(x)) != std::fma(static_cast<double>(a), 0.1, static_cast<double>(x));
    }
    // fma_v rounds once per lane in the lanes' own type, as std::fma(float, float, float).
    vec<float> a, b, c;
    for (int i = 0; i < kLanes; ++i) {
        a[i] = 1.0f + 0x1p-23f * static_cast<float>(i + 1);
        b[i] = 1.0f - 0x1p-23f * static_cast<float>(i + 1);
        c[i] = -1.0f;
    }
    const vec<float> r = fma_v(a, b, c);
    for (int i = 0; i < kLanes; ++i) bad += r[i] != std::fma(a[i], b[i], c[i]);
    bad += !(NAN != NAN) || !(INFINITY > 3.4e38f) || !std::isinf(INFINITY);
    return bad;
}
)";

// The byte helpers (window gathers, strided byte gathers, interleaved stores, widening
// conversions) against plain loops: spans within one window, two and four groups and
// lane by lane, windows that end at the last byte of an exactly sized buffer.
const std::string kCheckBytes = R"(
#include <initializer_list>
extern "C" int check_bytes() {
    const int n = 4096;
    std::uint8_t* buf = new std::uint8_t[n];
    for (int i = 0; i < n; ++i) buf[i] = static_cast<std::uint8_t>(i * 37 + 11);
    int bad = 0;
    for (int scale : {0, 1, 3, 7, 9, 15, 40, 300}) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = (i * scale + (i % 3)) % 2000;
        for (int base : {0, 7, n - 2000}) {
            const byte_window w = window_u8(off);
            const std::uint8_t* p = buf + base + w.first;
            const vec<std::uint8_t> g = gather_window(p, w);
            for (int i = 0; i < kLanes; ++i) bad += g[i] != buf[base + off[i]];
            if (w.groups == 1) {
                const vec<std::uint8_t> g1 = gather_window1(p, w);
                for (int i = 0; i < kLanes; ++i) bad += g1[i] != buf[base + off[i]];
            }
            const window_table t(3);
            t[2] = w;
            const vec<std::uint8_t> gt = gather_window(p, t[2]);
            for (int i = 0; i < kLanes; ++i) bad += gt[i] != buf[base + off[i]];
        }
    }
    // The last window of the buffer: its lanes' highest byte is the buffer's last.
    {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = n - 1 - 5 * (kLanes - 1 - i);
        const byte_window w = window_u8(off);
        const vec<std::uint8_t> g = gather_window(buf + w.first, w);
        for (int i = 0; i < kLanes; ++i) bad += g[i] != buf[off[i]];
    }
    for (int stride = -9; stride <= 9; ++stride) {
        const std::uint8_t* p = stride < 0 ? buf + n - 1 : buf;
        const vec<std::uint8_t> g = gather_stride_v(p, stride);
        for (int i = 0; i < kLanes; ++i) bad += g[i] != p[i * stride];
    }
    for (int c = 3; c <= 4; ++c) {
        std::uint8_t out[4 * 64 + 8];
        for (auto& x : out) x = 0xA5;
        vec<std::uint8_t> a, b, d, e;
        for (int i = 0; i < kLanes; ++i) {
            a[i] = static_cast<std::uint8_t>(i);
            b[i] = static_cast<std::uint8_t>(100 + i);
            d[i] = static_cast<std::uint8_t>(200 + i);
            e[i] = static_cast<std::uint8_t>(50 + i);
        }
        if (c == 3) store_interleaved(out + 1, a, b, d);
        else store_interleaved(out + 1, a, b, d, e);
        bad += out[0] != 0xA5 || out[1 + kLanes * c] != 0xA5;
        for (int i = 0; i < kLanes; ++i) {
            bad += out[1 + i * c] != a[i] || out[2 + i * c] != b[i] || out[3 + i * c] != d[i];
            if (c == 4) bad += out[4 + i * c] != e[i];
        }
    }
    vec<std::uint8_t> u;
    vec<std::int16_t> h;
    vec<std::int32_t> big;
    for (int i = 0; i < kLanes; ++i) {
        u[i] = static_cast<std::uint8_t>(255 - i * 7);
        h[i] = static_cast<std::int16_t>(-30000 + i * 4001);
        big[i] = -300 + i * 97;
    }
    const vec<std::int32_t> ui = to_v<vec<std::int32_t>>(u), hi = to_v<vec<std::int32_t>>(h);
    const vec<float> uf = to_v<vec<float>>(u), hf = to_v<vec<float>>(h);
    const vec<std::uint8_t> sat = sat_v<std::uint8_t>(big);
    for (int i = 0; i < kLanes; ++i) {
        bad += ui[i] != u[i] || hi[i] != h[i] || uf[i] != static_cast<float>(u[i]) || hf[i] != static_cast<float>(h[i]);
        bad += sat[i] != (big[i] < 0 ? 0 : big[i] > 255 ? 255 : big[i]);
    }
    delete[] buf;
    return bad;
}
)";

struct Variant {
    int lanes;
    std::vector<std::string> flags;
};

// The widths whose hardware gathers this machine can run, plus a width without them.
std::vector<Variant> runnable_variants() {
    std::vector<Variant> v = {{4, {}}};
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2")) v.push_back({8, {"-mavx2"}});
    if (__builtin_cpu_supports("avx512f")) {
        v.push_back({16, {"-mavx512f"}});
        v.push_back({8, {"-mavx512f"}});  // AVX-512 compiler, 8 lanes: the AVX2 gather
        if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi"))
            v.push_back({16, {"-mavx512f", "-mavx512bw", "-mavx512vbmi"}});  // the byte permutes
    }
#endif
    return v;
}

void check_with(const std::string& cxx, const fs::path& cache) {
    for (const Variant& v : runnable_variants()) {
        SCOPED_TRACE(cxx + " lanes " + std::to_string(v.lanes));
        CompilerConfig c;
        c.cxx = cxx;
        c.optimization_flags = {"-O2"};
        c.extra_flags = v.flags;
        c.cache_dir = cache;
        JitCompiler jit(c);
        std::string src = "#define TOROID_LANES " + std::to_string(v.lanes) + "\n#define TOROID_REVERSE ";
        for (int i = v.lanes - 1; i >= 0; --i) src += std::to_string(i) + (i > 0 ? ", " : "\n");
        src += "#include \"" + kHeader.string() + "\"\n" + kCheck + kCheckBytes;
        auto module = jit.load(src, "check_gathers");
        EXPECT_EQ(module->lookup<int (*)()>("check_gathers")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_math")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_bytes")(), 0);
    }
}

class CpuPreambleCompile : public ::testing::Test {
protected:
    void SetUp() override {
        cache_ = fs::path(::testing::TempDir()) /
                 ("toroid_preamble_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                  "_" + std::to_string(::getpid()));
        fs::remove_all(cache_);
    }
    void TearDown() override { fs::remove_all(cache_); }
    fs::path cache_;
};

TEST_F(CpuPreambleCompile, BuiltinsMatchScalarCode) { check_with(TOROID_CXX_COMPILER, cache_); }

TEST_F(CpuPreambleCompile, BuiltinsMatchScalarCodeUnderClang) {
    if (!on_path("clang++")) GTEST_SKIP() << "clang++ is not installed";
    check_with("clang++", cache_);
}

}  // namespace
}  // namespace toroid
