// `toroid apply` with the compiled engine, as a user runs it: a second process finds
// the first one's kernels in the disk cache, --explain counts the kernels (the 5-op
// preprocessing pipeline fuses into at most 2), --debug-dir holds the IR and the code,
// and the result equals the reference engine's byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The CPU runs x86-64-v3 code (AVX2, FMA): the lowest level prebuilt modules are built for.
bool toroid_isa_v3() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("x86-64-v3");
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    out += "'";
    return out;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

class CompiledApply : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("toroid_compiled_apply_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Runs the CLI with a private cache folder; returns the exit status, fills out/err.
    // env: assignments put before the command (e.g. "TOROID_TIERED=1 ").
    int run(const std::string& args, std::string* out = nullptr, std::string* err = nullptr,
            const std::string& env = "") const {
        std::string cmd = env + "TOROID_CACHE_DIR=";
        cmd += quote((dir_ / "cache").string());
        cmd += ' ';
        cmd += quote(TOROID_BINARY);
        cmd += ' ';
        cmd += args;
        cmd += " >";
        cmd += quote((dir_ / "stdout.txt").string());
        cmd += " 2>";
        cmd += quote((dir_ / "stderr.txt").string());
        const int status = std::system(cmd.c_str());
        if (out) *out = slurp(dir_ / "stdout.txt");
        if (err) *err = slurp(dir_ / "stderr.txt");
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    fs::path dir_;
};

const std::string kInput = std::string(TOROID_TEST_DATA) + "/conformance/case0036/input.npy";  // (1, 3, 19, 25) uint8

const char* kFivePipeline = R"([
  {"op": "resize", "mode": "bilinear", "antialias": true, "size": [20, 18]},
  {"op": "crop", "top": 2, "left": 3, "height": 12, "width": 10},
  {"op": "flip", "dims": [-1]},
  {"op": "convert", "dtype": "float32", "scale": true},
  {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])";

TEST_F(CompiledApply, SecondProcessHitsTheDiskCache) {
    const std::string p = quote(kFivePipeline), in = quote(kInput);
    std::string err;
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "a.npy").string()) + " --stats", nullptr, &err), 0) << err;
    EXPECT_NE(err.find("cache: compiled 1, disk hits 0, memory hits 0"), std::string::npos) << err;
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "b.npy").string()) + " --stats", nullptr, &err), 0) << err;
    EXPECT_NE(err.find("cache: compiled 0, disk hits 1, memory hits 0"), std::string::npos) << err;
    EXPECT_EQ(slurp(dir_ / "a.npy"), slurp(dir_ / "b.npy"));
}

// The cache's installed entries by the tier their manifest names ("full", "quick").
std::vector<std::string> entry_tiers(const fs::path& cache) {
    std::vector<std::string> tiers;
    for (const auto& e : fs::directory_iterator(cache)) {
        const std::string manifest = slurp(e.path() / "manifest.json");
        if (manifest.empty()) continue;
        tiers.push_back(manifest.find("\"tier\": \"quick\"") != std::string::npos ? "quick"
                        : manifest.find("\"tier\": \"full\"") != std::string::npos ? "full"
                                                                                    : "?");
    }
    std::sort(tiers.begin(), tiers.end());
    return tiers;
}

// One file runs the pipeline once and the process waits for a background build at exit, so
// `apply` builds the full program alone; TOROID_TIERED=1 runs a quick build first, and the
// exit still leaves the full build installed.
TEST_F(CompiledApply, OneFileBuildsTheFullProgramOnly) {
    const std::string p = quote(kFivePipeline), in = quote(kInput);
    std::string err;
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "a.npy").string()) + " --stats", nullptr, &err), 0) << err;
    EXPECT_NE(err.find("cache: compiled 1, disk hits 0"), std::string::npos) << err;
    EXPECT_EQ(err.find("tiers:"), std::string::npos) << err;
    EXPECT_EQ(entry_tiers(dir_ / "cache"), (std::vector<std::string>{"full"}));

    fs::remove_all(dir_ / "cache");
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "b.npy").string()) + " --stats", nullptr, &err,
                  "TOROID_TIERED=1 "),
              0)
        << err;
    EXPECT_NE(err.find("tiers: the quick build ran; the full build was loaded"), std::string::npos) << err;
    EXPECT_EQ(entry_tiers(dir_ / "cache"), (std::vector<std::string>{"full", "quick"}));
    EXPECT_EQ(slurp(dir_ / "a.npy"), slurp(dir_ / "b.npy"));

    // --prepare-only compiles the full program and writes nothing.
    fs::remove_all(dir_ / "cache");
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "c.npy").string()) + " --prepare-only", nullptr, &err),
              0)
        << err;
    EXPECT_FALSE(fs::exists(dir_ / "c.npy"));
    EXPECT_EQ(entry_tiers(dir_ / "cache"), (std::vector<std::string>{"full"}));
}

// TOROID_CPU_TARGET names another CPU: its code compiles (--prepare-only) but is not run on a
// CPU that lacks its features (an illegal instruction before): one line, exit status 2.
TEST_F(CompiledApply, CodeForAnotherCpuCompilesButDoesNotRunHere) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw"))
        GTEST_SKIP() << "this CPU runs avx512vbmi code";
    const std::string env = "TOROID_CPU_TARGET=avx512vbmi TOROID_CXXFLAGS='-O3 -march=icelake-server' ";
    const std::string p = quote(kFivePipeline), in = quote(kInput), out = quote((dir_ / "a.npy").string());
    std::string err;
    ASSERT_EQ(run("apply " + p + " " + in + " " + out + " --prepare-only", nullptr, &err, env), 0) << err;
    EXPECT_EQ(run("apply " + p + " " + in + " " + out, nullptr, &err, env), 2) << err;
    EXPECT_EQ(err.rfind("toroid: error: TOROID_CPU_TARGET=avx512vbmi generates code for a CPU with", 0), 0u) << err;
    EXPECT_NE(err.find("avx512vbmi"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(fs::exists(dir_ / "a.npy"));
}

// A smaller CPU named by $TOROID_CPU_TARGET runs here: its code is compiled for its own
// level, not -march=native (a larger CPU's preamble forms for the smaller one's lanes did not
// compile, and the quick tier ran instead), and gives the reference's result; and with
// -march=native given explicitly ($TOROID_CXXFLAGS) it compiles too.
TEST_F(CompiledApply, CodeForASmallerCpuCompilesForItsLevelAndRuns) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU does not run avx2 code";
    for (const std::string env : {"TOROID_CPU_TARGET=avx2 ", "TOROID_CPU_TARGET=avx2 TOROID_CXXFLAGS='-O2 -march=native' "})
    for (const char* layout : {"contiguous", "channels_last"}) {
        const std::string p = quote(kFivePipeline), in = quote(kInput);
        std::string out, err;
        ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "c.npy").string()) + " --layout " +
                          layout,
                      &out, &err, env),
                  0)
            << err;
        ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "r.npy").string()) + " --engine reference", nullptr,
                      &err),
                  0)
            << err;
        EXPECT_EQ(slurp(dir_ / "c.npy"), slurp(dir_ / "r.npy")) << layout;
    }
}

TEST_F(CompiledApply, FiveOpPipelineIsAtMostTwoKernelsAndMatchesReference) {
    for (const char* layout : {"contiguous", "channels_last"}) {
        const std::string p = quote(kFivePipeline), in = quote(kInput);
        std::string out, err;
        ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "c.npy").string()) + " --explain --layout " + layout,
                      &out, &err),
                  0)
            << err;
        const std::string first = out.substr(0, out.find('\n'));
        EXPECT_TRUE(first == "1 kernel" || first == "2 kernels") << out;
        ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "r.npy").string()) + " --engine reference", nullptr,
                      &err),
                  0)
            << err;
        EXPECT_EQ(slurp(dir_ / "c.npy"), slurp(dir_ / "r.npy")) << layout;
    }
}

TEST_F(CompiledApply, DebugDirHoldsIrDecisionsAndCode) {
    const fs::path dbg = dir_ / "debug";
    std::string err;
    ASSERT_EQ(run("apply " + quote(kFivePipeline) + " " + quote(kInput) + " " + quote((dir_ / "o.npy").string()) +
                      " --debug-dir " + quote(dbg.string()),
                  nullptr, &err),
              0)
        << err;
    EXPECT_NE(slurp(dbg / "0_primitive_graph.txt").find("op0.horizontal"), std::string::npos);
    EXPECT_NE(slurp(dbg / "1_loop_ir_after_inline.txt").find("kernel_0"), std::string::npos);
    EXPECT_NE(slurp(dbg / "decisions.txt").find("vector axis"), std::string::npos);
    EXPECT_NE(slurp(dbg / "kernel.cpp").find("toroid_entry"), std::string::npos);
    EXPECT_TRUE(fs::exists(dbg / "command.txt"));
    EXPECT_TRUE(fs::exists(dbg / "compiler_output.txt"));
}

TEST_F(CompiledApply, CompilerFailureNamesWhereTheSourceWasSaved) {
    // A compiler that answers --version but fails every build stands in for a broken
    // toolchain: the run fails with one line that says where the generated source and
    // the compiler output were kept.
    const fs::path fake = dir_ / "broken-c++";
    std::ofstream(fake) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo broken-c++ 1.0; exit 0; fi\n"
                           "echo 'broken-c++: internal compiler error' >&2\nexit 1\n";
    fs::permissions(fake, fs::perms::owner_all);
    std::string cmd = "TOROID_CXX=" + quote(fake.string()) + " TOROID_CACHE_DIR=" + quote((dir_ / "cache").string()) + " " +
                      quote(TOROID_BINARY) + " apply '[{\"op\": \"flip\", \"dims\": [-1]}]' " + quote(kInput) +
                      " " + quote((dir_ / "x.npy").string()) + " 2>" + quote((dir_ / "e.txt").string());
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    const std::string e = slurp(dir_ / "e.txt");
    EXPECT_EQ(e.rfind("toroid: error:", 0), 0u) << e;
    EXPECT_NE(e.find((dir_ / "cache" / "failed").string()), std::string::npos) << e;
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    EXPECT_FALSE(fs::exists(dir_ / "x.npy"));
}

// `toroid prebuild` builds a pipeline's programs ahead of time; another process (a fresh
// cache) that finds the folder through TOROID_PREBUILT compiles nothing, on an input size the
// probes did not have, and its result is the one a JIT build gives.
TEST_F(CompiledApply, PrebuiltProgramsServeAnotherProcessWithoutCompiling) {
    if (!toroid_isa_v3()) GTEST_SKIP() << "this CPU has no x86-64-v3 level";
    const std::string p = quote(kFivePipeline), in = quote(kInput), pre = quote((dir_ / "pre").string());
    std::string out, err;
    // (1, 3, 19, 25) -> 20 x 18: up in H, down in W, as probes 16 x 40 are.
    ASSERT_EQ(run("prebuild " + p + " --into " + pre + " --input uint8:3:contiguous --sizes 16,40", &out, &err), 0)
        << err;
    EXPECT_NE(out.find("program"), std::string::npos) << out;
    EXPECT_EQ(out.find(" 0 programs compiled"), std::string::npos) << out;
    ASSERT_EQ(run("prebuild " + p + " --into " + pre + " --input uint8:3:contiguous --sizes 16,40", &out, &err), 0)
        << err;
    EXPECT_NE(out.find("toroid prebuild: 0 programs compiled"), std::string::npos) << out;

    // (Without TOROID_CXXFLAGS, which the sanitizer run sets: the user's own flags rule.)
    fs::remove_all(dir_ / "cache");
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "a.npy").string()) + " --stats", nullptr, &err,
                  "env -u TOROID_CXXFLAGS TOROID_PREBUILT=" + pre + " "),
              0)
        << err;
    EXPECT_NE(err.find("cache: compiled 0, disk hits 0, memory hits 0, prebuilt 1"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(dir_ / "cache") && !fs::is_empty(dir_ / "cache") &&
                 !entry_tiers(dir_ / "cache").empty());  // nothing compiled into the user's cache
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "b.npy").string()) + " --stats", nullptr, &err,
                  "TOROID_PREBUILT=none "),
              0)
        << err;
    EXPECT_NE(err.find("cache: compiled 1"), std::string::npos) << err;
    EXPECT_EQ(slurp(dir_ / "a.npy"), slurp(dir_ / "b.npy"));
    // Flags of the user's own choosing: their build, not the prebuilt one.
    fs::remove_all(dir_ / "cache");
    ASSERT_EQ(run("apply " + p + " " + in + " " + quote((dir_ / "c.npy").string()) + " --stats", nullptr, &err,
                  "TOROID_CXXFLAGS='-O1' TOROID_PREBUILT=" + pre + " "),
              0)
        << err;
    EXPECT_NE(err.find("cache: compiled 1, disk hits 0, memory hits 0, prebuilt 0"), std::string::npos) << err;
    EXPECT_EQ(slurp(dir_ / "a.npy"), slurp(dir_ / "c.npy"));

    // Bad arguments: one line, exit status 2.
    EXPECT_EQ(run("prebuild " + p + " --into " + pre + " --input uint8:three:contiguous", &out, &err), 2);
    EXPECT_NE(err.find("toroid: error: --input 'uint8:three:contiguous': channels 'three' is not a number"),
              std::string::npos)
        << err;
    EXPECT_EQ(run("prebuild " + p + " --into " + pre + " --sizes 0", &out, &err), 2);
    EXPECT_NE(err.find("toroid: error: --sizes: 0 is not 1..65536"), std::string::npos) << err;
}

// A set file ({"pipelines": [...]}, as presets/recipes.json): each entry built, an entry
// with its own size prepared on that size alone; bad entries are one-line usage errors.
TEST_F(CompiledApply, PrebuildTakesASetOfPipelines) {
    if (!toroid_isa_v3()) GTEST_SKIP() << "this CPU has no x86-64-v3 level";
    const fs::path set = dir_ / "set.json";
    std::ofstream(set) << R"({"pipelines": [[{"op": "invert"}], {"ops": )" << kFivePipeline
                       << R"(, "size": [19, 25]}]})";
    const std::string pre = quote((dir_ / "pre").string());
    std::string out, err;
    ASSERT_EQ(run("prebuild " + quote(set.string()) + " --into " + pre + " --input uint8:3:contiguous --sizes 16,40",
                  &out, &err),
              0)
        << err;
    EXPECT_NE(out.find("set.json#0 uint8:3:contiguous: 1 program (1 compiled"), std::string::npos) << out;
    EXPECT_NE(out.find("set.json#1 uint8:3:contiguous: 1 program (1 compiled, 0 already there), 0 of 1 probe inputs"),
              std::string::npos)
        << out;
    ASSERT_EQ(run("apply " + quote(kFivePipeline) + " " + quote(kInput) + " " + quote((dir_ / "a.npy").string()) +
                      " --stats",
                  nullptr, &err, "env -u TOROID_CXXFLAGS TOROID_PREBUILT=" + pre + " "),
              0)
        << err;
    EXPECT_NE(err.find("cache: compiled 0, disk hits 0, memory hits 0, prebuilt 1"), std::string::npos) << err;

    const auto usage = [&](const std::string& text, const std::string& message) {
        std::ofstream(set) << text;
        EXPECT_EQ(run("prebuild " + quote(set.string()) + " --into " + pre, &out, &err), 2) << text;
        EXPECT_NE(err.find("toroid: error: "), std::string::npos) << err;
        EXPECT_NE(err.find(message), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    };
    usage(R"({"pipelines": []})", "\"pipelines\" must be a non-empty list of pipelines");
    usage(R"({"pipelines": [{"ops": [{"op": "invert"}], "size": [0, 4]}]})",
          "set.json#0: \"size\" must be [height, width], each 1..65536");
    usage(R"({"pipelines": [{"size": [4, 4]}]})", "set.json#0: an entry that is an object needs \"ops\"");
    usage(R"({"pipelines": [[{"op": "invert"}], [{"op": "nope"}]]})", "set.json#1: op 0: unknown op 'nope'");
}

#ifdef TOROID_CATALOGUE
// The build's catalogue (presets/) is found beside the CLI of the build tree without any
// setting: the classification preset's first call compiles nothing, with other sizes and
// constants than the preset file's.
TEST_F(CompiledApply, TheBuildsCatalogueServesThePresetFamily) {
    if (!toroid_isa_v3()) GTEST_SKIP() << "this CPU has no x86-64-v3 level";
    const std::string pipeline = quote(R"([
      {"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 160},
      {"op": "center_crop", "size": 128},
      {"op": "convert", "dtype": "float32", "scale": true},
      {"op": "normalize", "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}])");
    const std::string jpeg = quote(std::string(TOROID_TEST_DATA) + "/jpeg/rgb_pillow.jpg");
    for (const char* layout : {"channels_last", "contiguous"}) {
        std::string err;
        fs::remove_all(dir_ / "cache");
        ASSERT_EQ(run("apply " + pipeline + " " + jpeg + " " + quote((dir_ / "a.npy").string()) + " --stats --layout " +
                          layout,
                      nullptr, &err, "env -u TOROID_PREBUILT -u TOROID_CXXFLAGS "),
                  0)
            << err;
        EXPECT_NE(err.find("cache: compiled 0, disk hits 0, memory hits 0, prebuilt 1"), std::string::npos)
            << layout << ": " << err;
    }
    // The uint8 resize family and a training sample's transform (a crop past the image's
    // edge, its flip outcome): other sizes, modes and offsets than the preset files'.
    for (const char* other : {R"([{"op": "resize", "mode": "bicubic", "antialias": true, "size": [100, 333]}])",
                              R"([{"op": "crop", "top": -8, "left": 30, "height": 200, "width": 250},
                                  {"op": "resize", "mode": "bilinear", "antialias": true, "size": [160, 160]},
                                  {"op": "flip", "dims": [-1]},
                                  {"op": "convert", "dtype": "float32", "scale": true},
                                  {"op": "normalize", "mean": [0.5], "std": [0.5]}])"}) {
        std::string err;
        fs::remove_all(dir_ / "cache");
        ASSERT_EQ(run("apply " + quote(other) + " " + jpeg + " " + quote((dir_ / "c.npy").string()) +
                          " --stats --layout channels_last",
                      nullptr, &err, "env -u TOROID_PREBUILT -u TOROID_CXXFLAGS "),
                  0)
            << err;
        EXPECT_NE(err.find("cache: compiled 0, disk hits 0, memory hits 0, prebuilt 1"), std::string::npos)
            << other << ": " << err;
    }
    // Run through PATH by its bare name (the folder is found from the executable's file,
    // not from argv[0]), from another working directory.
    fs::remove_all(dir_ / "cache");
    const std::string cmd = "cd " + quote(dir_.string()) + " && env -u TOROID_PREBUILT -u TOROID_CXXFLAGS PATH=" +
                            quote(fs::path(TOROID_BINARY).parent_path().string()) + ":\"$PATH\" TOROID_CACHE_DIR=" +
                            quote((dir_ / "cache").string()) + " toroid apply " + pipeline + " " + jpeg +
                            " b.npy --stats 2>" + quote((dir_ / "err.txt").string());
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const std::string err = slurp(dir_ / "err.txt");
    EXPECT_NE(err.find("prebuilt 1"), std::string::npos) << err;
}
#endif

}  // namespace
