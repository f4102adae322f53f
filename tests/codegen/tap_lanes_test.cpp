// Taps in lanes (schedule/tap_pairs.h, TapLanes; the preamble's t_tap_lanes_*): the
// horizontal pass of a channels-last uint8 resize is printed with a pixel's channels and 8
// of its taps in one register where the target has 64-byte byte permutes (4 taps in a
// 32-byte register on AVX2: this host's code, and TOROID_CPU_TARGET=avx2), and nowhere else
// (planar images, float32); forced on for every call (TOROID_TAP_LANES_SPAN=0), its bytes
// equal the reference engine's for 3 and 4 channels, tap counts from 2 to past 24 (one,
// two and several groups of 8, full and not), rows of fewer outputs than a step and than
// a vector, a flip after the resize (the pixels' tables read backwards) and a crop before
// it (a strided input); 4 rows a step and the rows left over (5 rows an image), and threads
// whose ranges of rows start and end inside an image's.
#include "core/tensor.h"
#include "../engine/engine_test_support.h"
#include "io/npy.h"
#include "jit_test_support.h"
#include "target/target.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

using jit_test::slurp;

// Whether this CPU's own code has the form.
bool host_has_tap_lanes() {
    const Target t = Target::host_cpu();
    return (t.byte_permute && t.vector_bytes == 64) || (t.byte_windows && t.vector_bytes == 32);
}

bool cpu_runs_avx2() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

class TapLanes : public ::testing::Test {
protected:
    void SetUp() override {
        if (!host_has_tap_lanes())
            GTEST_SKIP() << "this CPU has neither a 64-byte byte permute (AVX-512 VBMI) nor AVX2 alone: its code has no "
                            "taps in lanes";
        make_dir();
    }
    // A fresh folder of the test's own (its name, a parameterized name's '/' made '_', and the
    // process).
    void make_dir() {
        std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::replace(name.begin(), name.end(), '/', '_');
        dir_ = fs::path(::testing::TempDir()) / ("toroid_tap_lanes_" + name + "_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    // The CLI with a private cache and `env` (and target_) before it; the exit status.
    int run(const std::string& env, const std::string& args) const {
        const std::string cmd = target_ + " " + env + " TOROID_CACHE_DIR='" + (dir_ / "cache").string() + "' '" + TOROID_BINARY + "' " +
                                args + " >'" + (dir_ / "out.txt").string() + "' 2>&1";
        const int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    // Runs `pipeline` on `input` (channels-last) with the compiled engine (form forced on)
    // and the reference engine; the decisions of the compiled run.
    std::string compare(const std::string& pipeline, const fs::path& input, int threads = 1) {
        const std::string p = "'" + pipeline + "' '" + input.string() + "' ";
        const fs::path dbg = dir_ / "debug";
        fs::remove_all(dbg);
        EXPECT_EQ(run("TOROID_TAP_LANES_SPAN=0 " + env_, "apply " + p + "'" + (dir_ / "c.npy").string() +
                                                     "' --layout channels_last --threads " + std::to_string(threads) +
                                                     " --debug-dir '" + dbg.string() + "'"),
                  0)
            << slurp(dir_ / "out.txt");
        EXPECT_EQ(run("", "apply " + p + "'" + (dir_ / "r.npy").string() + "' --layout channels_last --engine reference"), 0)
            << slurp(dir_ / "out.txt");
        EXPECT_TRUE(slurp(dir_ / "c.npy") == slurp(dir_ / "r.npy")) << "the compiled and the reference bytes differ";
        return slurp(dbg / "decisions.txt") + slurp(dbg / "kernel.cpp");
    }

    fs::path write_image(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::uint32_t seed) {
        const fs::path path = dir_ / ("in_" + std::to_string(seed) + ".npy");
        std::ofstream(path, std::ios::binary) << io::encode_npy(test::random_image(DType::UInt8, {n, c, h, w}, Layout::Contiguous, seed));
        return path;
    }

    fs::path dir_;
    std::string target_;  // "TOROID_CPU_TARGET=..." or empty: this CPU's own code
    std::string env_;     // more of the compiled run's environment
};

std::string resize(std::int64_t h, std::int64_t w, const std::string& mode) {
    return R"({"op": "resize", "mode": ")" + mode + R"(", "antialias": true, "size": [)" + std::to_string(h) + ", " +
           std::to_string(w) + "]}";
}

// One test per target (this CPU's code; the AVX2 code) and channel count (3, 4), each well
// inside the test timeout under the sanitizers.
class TapLanesChannels : public TapLanes, public ::testing::WithParamInterface<std::tuple<std::string, std::int64_t>> {
protected:
    void SetUp() override {
        if (std::get<0>(GetParam()) == "avx2") {
            if (!cpu_runs_avx2()) GTEST_SKIP() << "this CPU cannot run AVX2 code";
            target_ = "TOROID_CPU_TARGET=avx2";
            make_dir();  // not the fixture's check, which is for this CPU's code
            return;
        }
        TapLanes::SetUp();
    }
};

TEST_P(TapLanesChannels, EqualsTheReferenceAtEveryTapCountAndRowLength) {
    const std::int64_t c = std::get<1>(GetParam());
    std::uint32_t seed = c == 3 ? 1 : 4;  // the images of one loop over both counts
    bool printed = c != 3;                // the form is checked on the first 3-channel case
    std::size_t index = 0;                // the cases, sampled at test::sample_stride()
    for (std::int64_t w : {7, 40, 301}) {
        const fs::path in = write_image(2, c, 5, w, seed++);
        // Upscale (2-3 taps), mild and strong downscales, outputs of 1-3 pixels (a step's
        // tail) and of 15 and 17 (a vector's).
        for (std::int64_t ow : {w + 9, w * 2 / 3, w / 3, w / 7, std::int64_t{1}, std::int64_t{3}, std::int64_t{15},
                                std::int64_t{17}}) {
            if (ow < 1) continue;
            for (const std::string mode : {"bilinear", "bicubic"}) {
                if (!test::sampled(index++)) continue;
                SCOPED_TRACE("C=" + std::to_string(c) + " W=" + std::to_string(w) + " -> " + std::to_string(ow) + " " +
                             mode);
                const std::string r = resize(5, ow, mode);
                const std::string out = compare("[" + r + "]", in);
                if (ow == w / 3) compare("[" + r + "]", in, 3);
                compare("[" + r + R"(, {"op": "flip", "dims": [-1]}])", in);
                if (w > 8)
                    compare(R"([{"op": "crop", "top": 1, "left": 2, "height": 4, "width": )" + std::to_string(w - 3) +
                                "}, " + resize(4, ow, mode) + "]",
                            in);
                if (!printed) {
                    EXPECT_NE(out.find("taps in lanes:"), std::string::npos);
                    EXPECT_NE(out.find("tla0 = t_tap_lanes_madd"), std::string::npos);
                    EXPECT_NE(out.find("rows of v2 a step"), std::string::npos);
                    EXPECT_NE(out.find("tla3_0 = t_tap_lanes_madd_w"), std::string::npos);
                    printed = true;
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(TapLanes, TapLanesChannels,
                         ::testing::Combine(::testing::Values(std::string("host"), std::string("avx2")),
                                            ::testing::Values(std::int64_t{3}, std::int64_t{4})),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, std::int64_t>>& info) {
                             return std::get<0>(info.param) + "_C" + std::to_string(std::get<1>(info.param));
                         });

// Each register's pixel bytes read whole inside the page (opt-in) or through a masked load
// (the default): forced on and off, the same bytes as the reference engine.
TEST_F(TapLanes, WholeLoadsAndMaskedLoadsGiveTheSameBytes) {
    if (!(Target::host_cpu().byte_permute && Target::host_cpu().vector_bytes == 64))
        GTEST_SKIP() << "the choice is AVX-512's (a 64-byte byte permute)";
    for (const std::int64_t c : {std::int64_t{3}, std::int64_t{4}}) {
        const fs::path in = write_image(2, c, 5, 301, static_cast<std::uint32_t>(10 + c));
        for (const std::string whole : {"1", "0"}) {
            env_ = "TOROID_TAP_LANES_WHOLE=" + whole;
            for (const std::int64_t ow : {std::int64_t{100}, std::int64_t{43}, std::int64_t{17}}) {
                SCOPED_TRACE("C=" + std::to_string(c) + " -> " + std::to_string(ow) + " whole " + whole);
                const std::string out = compare("[" + resize(5, ow, "bicubic") + "]", in);
                EXPECT_EQ(out.find("t_tap_lanes_madd_w<true>") != std::string::npos, whole == "1");
            }
        }
    }
    env_.clear();
}

// A kernel scheduled for this CPU but compiled without its -march ($TOROID_CXXFLAGS set
// to plain -O1) takes the preamble's plain loops for the form: the same bytes.
TEST_F(TapLanes, RunsWhereTheCompilerFlagsLackTheCpusFeatures) {
    target_ = "TOROID_CXXFLAGS=-O1";
    for (std::int64_t c : {3, 4})
        for (std::int64_t w : {5, 11, 37}) {
            SCOPED_TRACE("C=" + std::to_string(c) + " W=" + std::to_string(w));
            const fs::path in = write_image(1, c, 7, 150, static_cast<std::uint32_t>(c * 100 + w));
            EXPECT_NE(compare("[" + resize(5, w, "bilinear") + "]", in).find("taps in lanes:"), std::string::npos);
        }
}

TEST_F(TapLanes, OnlyChannelsLastBytes) {
    const fs::path in = write_image(1, 3, 9, 50, 99);
    const std::string r = "[" + resize(9, 11, "bilinear") + "]";
    const fs::path dbg = dir_ / "debug";
    auto decisions = [&](const std::string& args) {
        fs::remove_all(dbg);
        EXPECT_EQ(run("", "apply " + args + " --debug-dir '" + dbg.string() + "'"), 0) << slurp(dir_ / "out.txt");
        return slurp(dbg / "decisions.txt");
    };
    const std::string out = "'" + (dir_ / "o.npy").string() + "'";
    EXPECT_NE(decisions("'" + r + "' '" + in.string() + "' " + out + " --layout channels_last").find("taps in lanes:"),
              std::string::npos);
    EXPECT_EQ(decisions("'" + r + "' '" + in.string() + "' " + out + " --layout contiguous").find("taps in lanes"),
              std::string::npos);
    const std::string f = R"([{"op": "convert", "dtype": "float32"}, )" + resize(9, 11, "bilinear") + "]";
    EXPECT_EQ(decisions("'" + f + "' '" + in.string() + "' " + out + " --layout channels_last").find("taps in lanes"),
              std::string::npos);
    // A negative span turns the form off.
    fs::remove_all(dbg);
    EXPECT_EQ(run("TOROID_TAP_LANES_SPAN=-1", "apply '" + r + "' '" + in.string() + "' " + out +
                                                  " --layout channels_last --debug-dir '" + dbg.string() + "'"),
              0);
    EXPECT_EQ(slurp(dbg / "decisions.txt").find("taps in lanes"), std::string::npos);
}

}  // namespace
}  // namespace toroid
