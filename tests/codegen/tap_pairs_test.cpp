// Tap pairs (schedule/tap_pairs.h, the preamble's madd_pairs and gather_window_pairs): the
// 16-bit multiply-add of two taps equals the tap-by-tap int32 sum on random and extreme
// factors, odd and even tap counts, and two taps of a byte window come out in pair order,
// under GCC and Clang at every vector width this machine runs; and a uint8 antialiased
// resize is printed that way (decisions and source) with the reference engine's bytes.
#include "ir/expr.h"
#include "runtime/jit.h"
#include "jit_test_support.h"
#include "schedule/tap_pairs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

using jit_test::kHeader;
using jit_test::on_path;
using jit_test::slurp;

const std::string kCheck = R"(
#include <type_traits>
// Tap pairs against the tap-by-tap int32 sum: random factors, extreme values, odd and even
// tap counts, vector and scalar (shared) weights, uint8 / int8 / int16 data.
extern "C" int check_tap_pairs() {
    std::uint32_t seed = 12345;
    auto rnd = [&]() { seed = seed * 1664525u + 1013904223u; return seed >> 8; };
    int bad = 0;
    for (int taps = 0; taps <= 9; ++taps) {
        for (int round = 0; round < 40; ++round) {
            std::uint8_t x[9][kLanes];
            std::int8_t xs[9][kLanes];
            std::int16_t xw[9][kLanes];
            std::int16_t w[9][kLanes];
            std::int16_t ws[9];
            for (int t = 0; t < taps; ++t) {
                ws[t] = static_cast<std::int16_t>(round < 3 ? (round == 0 ? 32767 : round == 1 ? -32767 : -32768) : static_cast<int>(rnd() % 65536) - 32768);
                for (int i = 0; i < kLanes; ++i) {
                    x[t][i] = static_cast<std::uint8_t>(round < 3 ? 255 : rnd() % 256);
                    xs[t][i] = static_cast<std::int8_t>(round < 3 ? -128 : static_cast<int>(rnd() % 256) - 128);
                    xw[t][i] = static_cast<std::int16_t>(round < 3 ? 32767 : static_cast<int>(rnd() % 65536) - 32768);
                    w[t][i] = static_cast<std::int16_t>(round < 3 ? ws[t] : static_cast<int>(rnd() % 65536) - 32768);
                }
            }
            vec<std::int32_t> acc[5] = {};
            for (int k = 0; k < 5; ++k) acc[k] = to_v<vec<std::int32_t>>(static_cast<std::int32_t>(rnd() % 1000) - 500);
            std::int32_t want[5][kLanes];
            for (int k = 0; k < 5; ++k)
                for (int i = 0; i < kLanes; ++i) {
                    std::uint32_t s = static_cast<std::uint32_t>(acc[k][i]);
                    for (int t = 0; t < taps; ++t) {
                        const std::int32_t f = k == 0 ? x[t][i] : k == 1 ? xs[t][i] : k == 2 ? xw[t][i] : x[t][i];
                        const std::int32_t g = k == 3 ? ws[t] : k == 4 ? ws[t] : w[t][i];
                        s += static_cast<std::uint32_t>(k == 4 ? g * static_cast<std::int32_t>(xw[t][i]) : f * g);
                    }
                    want[k][i] = static_cast<std::int32_t>(s);
                }
            auto ld = [](const auto* row) {
                vec<std::remove_cv_t<std::remove_reference_t<decltype(row[0])>>> v;
                __builtin_memcpy(&v, row, sizeof v);
                return v;
            };
            int t = 0;
            for (; t + 1 < taps; t += 2) {
                acc[0] = madd_pairs(acc[0], ld(w[t]), ld(w[t + 1]), ld(x[t]), ld(x[t + 1]));
                acc[1] = madd_pairs(acc[1], ld(xs[t]), ld(xs[t + 1]), ld(w[t]), ld(w[t + 1]));
                acc[2] = madd_pairs(acc[2], ld(w[t]), ld(w[t + 1]), ld(xw[t]), ld(xw[t + 1]));
                acc[3] = madd_pairs(acc[3], ws[t], ws[t + 1], ld(x[t]), ld(x[t + 1]));
                acc[4] = madd_pairs(acc[4], ld(xw[t]), ld(xw[t + 1]), ws[t], ws[t + 1]);
            }
            if (t < taps) {  // the odd last tap, the plain way
                acc[0] += to_v<vec<std::int32_t>>(ld(w[t])) * to_v<vec<std::int32_t>>(ld(x[t]));
                acc[1] += to_v<vec<std::int32_t>>(ld(xs[t])) * to_v<vec<std::int32_t>>(ld(w[t]));
                acc[2] += to_v<vec<std::int32_t>>(ld(w[t])) * to_v<vec<std::int32_t>>(ld(xw[t]));
                acc[3] += to_v<vec<std::int32_t>>(ws[t]) * to_v<vec<std::int32_t>>(ld(x[t]));
                acc[4] += to_v<vec<std::int32_t>>(ld(xw[t])) * to_v<vec<std::int32_t>>(ws[t]);
            }
            for (int k = 0; k < 5; ++k)
                for (int i = 0; i < kLanes; ++i) bad += acc[k][i] != want[k][i];
        }
    }
    return bad;
}
// Two taps of a byte window gather in pair order, against the bytes themselves: windows of
// every width (one 128-byte window, split into groups, or lane by lane), taps 1 to 9 bytes
// apart, the second tap's last byte the buffer's last.
extern "C" int check_window_pairs() {
    int bad = 0;
    for (int spread = 0; spread <= 20; ++spread) {
        for (int step = 1; step <= 9; ++step) {
            vec<std::int32_t> off;
            std::int32_t hi = 0;
            for (int i = 0; i < kLanes; ++i) {
                off[i] = (i * spread + (i * 7) % 5) % (kLanes * spread + 5);
                hi = off[i] > hi ? off[i] : hi;
            }
            const int n = hi + step + 1;
            std::uint8_t* buf = new std::uint8_t[n];
            for (int j = 0; j < n; ++j) buf[j] = static_cast<std::uint8_t>(j * 37 + spread + 11 * step);
            const lane_window<1> w = make_window<1>(off);
            const pair_window pw = make_pair_window(w, step);
            const pair_v<std::uint8_t> g = gather_window_pairs(buf + w.first, w, pw);
            for (int i = 0; i < kLanes; ++i) bad += g[2 * i] != buf[off[i]] || g[2 * i + 1] != buf[off[i] + step];
            if (w.groups == 1 || !kWindowPermute<1>) {
                const pair_v<std::uint8_t> g1 = gather_window_pairs1(buf + w.first, w, pw);
                for (int i = 0; i < kLanes; ++i) bad += g1[2 * i] != buf[off[i]] || g1[2 * i + 1] != buf[off[i] + step];
            }
            delete[] buf;
        }
    }
    return bad;
}
)";

using jit_test::Variant;

// The plain fallback (no SSE2 at 4 lanes: the loop), and each instruction this machine runs.
std::vector<Variant> runnable_variants() {
    using F = CpuFeature;
    std::vector<Variant> v = {{4, {}}};
#if defined(__x86_64__) || defined(__i386__)
    v.push_back({4, {}, {"-mno-sse2"}});
    v.push_back({4, {F::Sse2}});  // the SSE2 multiply-add at 4 lanes
    v.push_back({8, {F::Avx2}});
    v.push_back({16, {F::Avx512F}});
    v.push_back({16, {F::Avx512BW}});
    v.push_back({16, {F::Avx512BW, F::Avx512Vnni}, {"-DTOROID_MADD_VNNI"}});  // vpdpwssd, compiled on request
    v.push_back({16, {F::Avx512Vbmi}});                                        // the byte permutes
#endif
    return jit_test::runnable(std::move(v));
}

class TapPairs : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_tap_pairs_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
                std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    void check_with(const std::string& cxx) {
        for (const Variant& v : runnable_variants()) {
            SCOPED_TRACE(cxx + " " + v.name());
            CompilerConfig c;
            c.cxx = cxx;
            c.optimization_flags = {"-O2"};
            c.extra_flags = v.flags();
            c.cache_dir = dir_ / "cache";
            JitCompiler jit(c);
            std::string src = v.prefix() + "#include \"" + kHeader.string() + "\"\n" + kCheck;
            auto module = jit.load(src, "check_tap_pairs");
            EXPECT_EQ(module->lookup<int (*)()>("check_tap_pairs")(), 0);
            EXPECT_EQ(module->lookup<int (*)()>("check_window_pairs")(), 0);
        }
    }

    // The CLI with a private cache; the exit status.
    int run(const std::string& args) const {
        const std::string cmd = "TOROID_CACHE_DIR='" + (dir_ / "cache").string() + "' '" + TOROID_BINARY + "' " + args +
                                " >'" + (dir_ / "out.txt").string() + "' 2>&1";
        const int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    fs::path dir_;
};

TEST_F(TapPairs, MultiplyAddMatchesTheTapByTapSum) { check_with(TOROID_CXX_COMPILER); }

TEST_F(TapPairs, MultiplyAddMatchesTheTapByTapSumUnderClang) {
    if (!on_path("clang++")) GTEST_SKIP() << "clang++ is not installed";
    check_with("clang++");
}

// Which sums qualify: int32 tap loops of products of two uint8 / int16 factors, not wider
// factors, not float, not the small constant sums that are unrolled.
TEST(TapPairFactors, OnlyExactSixteenBitProducts) {
    using namespace ir;
    const int r = kFirstReductionVar;
    const Expr taps = var(kFirstParamVar);
    const Expr w = load(0, Type::I16, {var(r), var(3)});
    const Expr x = load(1, Type::U8, {add(var(3), var(r))});
    const Expr term = mul(cast(Type::I32, w), cast(Type::I32, x));
    const auto f = schedule::tap_pair_factors(sum(r, taps, term, Type::I32));
    ASSERT_TRUE(f.has_value());
    EXPECT_TRUE(structurally_equal(f->a, w));
    EXPECT_TRUE(structurally_equal(f->b, x));
    EXPECT_TRUE(schedule::tap_pair_factors(sum(r, 12, term, Type::I32)).has_value());
    EXPECT_FALSE(schedule::tap_pair_factors(sum(r, 4, term, Type::I32)).has_value());  // unrolled
    const Expr wide = load(2, Type::I32, {var(3)});
    EXPECT_FALSE(schedule::tap_pair_factors(sum(r, taps, mul(wide, cast(Type::I32, x)), Type::I32)).has_value());
    const Expr fx = mul(cast(Type::F32, x), load(3, Type::F32, {var(r)}));
    EXPECT_FALSE(schedule::tap_pair_factors(sum(r, taps, fx, Type::F32)).has_value());
    EXPECT_FALSE(schedule::tap_pair_factors(sum(r, taps, add(cast(Type::I32, w), cast(Type::I32, x)), Type::I32)).has_value());
}

// Both passes of a uint8 antialiased resize, planar and channels-last: a downscale and an
// upscale (odd tap counts: the last tap alone; the upscale's 3 taps run the plain loop,
// fewer than kTapPairsMin), and a crop of 18 rows resized to 1 (18
// vertical taps, all in pairs), each with the decision recorded, t_madd_pairs in the source,
// and the reference engine's bytes.
TEST_F(TapPairs, UInt8AntialiasedResizeIsPrintedInPairs) {
    const std::string in = std::string(TOROID_TEST_DATA) + "/conformance/case0036/input.npy";  // (1, 3, 19, 25) uint8
    const std::string resize = R"({"op": "resize", "mode": "bilinear", "antialias": true, "size": )";
    const std::string crop = R"({"op": "crop", "top": 1, "left": 0, "height": 18, "width": 24}, )";
    const std::vector<std::string> pipelines = {"[" + resize + "[7, 9]}]", "[" + resize + "[40, 50]}]",
                                                "[" + crop + resize + "[1, 20]}]"};
    // Opt-in: without TOROID_TAP_PAIRS=1 the tap sums are printed the plain way.
    {
        const fs::path dbg = dir_ / "debug";
        fs::remove_all(dbg);
        ::unsetenv("TOROID_TAP_PAIRS");
        ASSERT_EQ(run("apply '" + pipelines[0] + "' '" + in + "' '" + (dir_ / "p.npy").string() + "' --debug-dir '" +
                      dbg.string() + "'"),
                  0)
            << slurp(dir_ / "out.txt");
        EXPECT_EQ(slurp(dbg / "decisions.txt").find("tap pairs"), std::string::npos);
        const std::string source = slurp(dbg / "kernel.cpp");
        const std::size_t kernels = source.find("static void kernel_0(");  // past the preamble
        ASSERT_NE(kernels, std::string::npos);
        EXPECT_EQ(source.find("t_madd_pairs(", kernels), std::string::npos);
    }
    ::setenv("TOROID_TAP_PAIRS", "1", 1);
    struct Unset {
        ~Unset() { ::unsetenv("TOROID_TAP_PAIRS"); }
    } unset;
    for (const std::string& pipeline : pipelines) {
        for (const char* layout : {"contiguous", "channels_last"}) {
            SCOPED_TRACE(pipeline + " " + layout);
            const std::string p = "'" + pipeline + "'";
            const fs::path dbg = dir_ / "debug";
            fs::remove_all(dbg);
            ASSERT_EQ(run("apply " + p + " '" + in + "' '" + (dir_ / "c.npy").string() + "' --layout " + layout +
                          " --debug-dir '" + dbg.string() + "'"),
                      0)
                << slurp(dir_ / "out.txt");
            const std::string decisions = slurp(dbg / "decisions.txt");
            // Two kernels (horizontal, vertical), each with its tap sum in pairs.
            std::size_t notes = 0;
            for (std::size_t at = decisions.find("tap pairs: r"); at != std::string::npos;
                 at = decisions.find("tap pairs: r", at + 1))
                ++notes;
            EXPECT_EQ(notes, 2u) << decisions;
            EXPECT_NE(decisions.find("(int16_t x uint8_t)"), std::string::npos) << decisions;
            EXPECT_NE(slurp(dbg / "kernel.cpp").find(" = t_madd_pairs("), std::string::npos);
            ASSERT_EQ(run("apply " + p + " '" + in + "' '" + (dir_ / "r.npy").string() + "' --layout " + layout +
                          " --engine reference"),
                      0)
                << slurp(dir_ / "out.txt");
            EXPECT_EQ(slurp(dir_ / "c.npy"), slurp(dir_ / "r.npy"));
        }
    }
    // float32 passes keep their float multiply-adds.
    const fs::path dbg = dir_ / "debug";
    fs::remove_all(dbg);
    ASSERT_EQ(run(R"(apply '[{"op": "convert", "dtype": "float32"}, )" + resize + "[7, 9]}]' '" + in + "' '" +
                  (dir_ / "f.npy").string() + "' --debug-dir '" + dbg.string() + "'"),
              0)
        << slurp(dir_ / "out.txt");
    EXPECT_NE(slurp(dbg / "decisions.txt").find("vector axis"), std::string::npos);
    EXPECT_EQ(slurp(dbg / "decisions.txt").find("tap pairs"), std::string::npos);
}

}  // namespace
}  // namespace toroid
