// EngineOptions::cold_prepare: a prepare that skips the process's in-memory caches and so
// costs what a new process's first prepare costs (benchmarks report it as compile latency),
// while computing the same result as a warm prepare.
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace toroid {
namespace {

TEST(ColdPrepare, SkipsTheMemoryCachesAndAgrees) {
    const Pipeline p = parse_pipeline(R"([
      {"op": "resize", "mode": "bilinear", "antialias": true, "size": [21, 17]},
      {"op": "crop", "top": 2, "left": 1, "height": 15, "width": 14},
      {"op": "flip", "dims": [-1]},
      {"op": "convert", "dtype": "float32", "scale": true},
      {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])", ".");
    Tensor in = Tensor::empty(DType::UInt8, {1, 3, 37, 29}, Layout::ChannelsLast);
    auto* px = static_cast<std::uint8_t*>(in.data());
    for (std::int64_t i = 0; i < in.numel(); ++i) px[i] = static_cast<std::uint8_t>(i * 37 % 251);

    auto warm = make_engine("compiled", EngineOptions{});
    const Tensor want = warm->prepare(p, in.spec())->run(in);  // now in memory and on disk
    EXPECT_EQ(warm->prepare(p, in.spec())->stats().memory_hits, 1);

    EngineOptions cold_options;
    cold_options.cold_prepare = true;
    auto cold = make_engine("compiled", cold_options);
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round);
        auto prepared = cold->prepare(p, in.spec());
        const PrepareStats st = prepared->stats();
        EXPECT_EQ(st.memory_hits, 0);
        EXPECT_EQ(st.compiled, 0);
        EXPECT_EQ(st.disk_hits, 1);  // the warm engine's module, loaded again from disk
        EXPECT_EQ(st.compile_seconds, 0.0);
        const Tensor got = prepared->run(in);
        ASSERT_EQ(got.shape(), want.shape());
        ASSERT_EQ(got.dtype(), want.dtype());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
    }
}

// The CUDA engine takes the same option: no memory hit, the module from the disk cache.
TEST(CudaEngineOptions, ColdPrepareSkipsTheMemoryCachesAndAgrees) {
    if (!test::cuda_unavailable().empty()) GTEST_SKIP() << "no CUDA device: " << test::cuda_unavailable();
    const Pipeline p = parse_pipeline(R"([
      {"op": "resize", "mode": "bicubic", "antialias": true, "size": [23, 19]},
      {"op": "flip", "dims": [-2]}])", ".");
    Tensor in = Tensor::empty(DType::UInt8, {1, 3, 41, 30}, Layout::Contiguous);
    auto* px = static_cast<std::uint8_t*>(in.data());
    for (std::int64_t i = 0; i < in.numel(); ++i) px[i] = static_cast<std::uint8_t>(i * 29 % 253);
    auto warm = make_engine("cuda", EngineOptions{});
    const Tensor want = warm->prepare(p, in.spec())->run(in);
    EXPECT_EQ(warm->prepare(p, in.spec())->stats().memory_hits, 1);
    EngineOptions cold_options;
    cold_options.cold_prepare = true;
    auto cold = make_engine("cuda", cold_options);
    auto prepared = cold->prepare(p, in.spec());
    EXPECT_EQ(prepared->stats().memory_hits, 0);
    EXPECT_EQ(prepared->stats().compiled, 0);
    EXPECT_EQ(prepared->stats().disk_hits, 1);
    const Tensor got = prepared->run(in);
    ASSERT_EQ(got.nbytes(), want.nbytes());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
}

// --debug-dir on CUDA writes what the CPU engine writes: the loop IR after each pass, the
// decisions, explain.txt, and the generated source.
TEST(CudaEngineOptions, DebugDirWritesDecisionsAndExplain) {
    if (!test::cuda_unavailable().empty()) GTEST_SKIP() << "no CUDA device: " << test::cuda_unavailable();
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "toroid_cuda_debug_dir_test";
    std::filesystem::remove_all(dir);
    EngineOptions o;
    o.debug_dir = dir.string();
    const Pipeline p = parse_pipeline(R"([{"op": "resize", "mode": "bilinear", "size": [9, 11]}])", ".");
    Tensor in = Tensor::empty(DType::Float32, {1, 3, 20, 24}, Layout::Contiguous);
    make_engine("cuda", o)->prepare(p, in.spec());
    const auto read = [&](const char* name) {
        std::ifstream f(dir / name);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    };
    EXPECT_NE(read("decisions.txt").find("grid x"), std::string::npos) << read("decisions.txt");
    EXPECT_NE(read("explain.txt").find("kernel"), std::string::npos) << read("explain.txt");
    EXPECT_NE(read("kernel.cu").find("__global__"), std::string::npos);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace toroid
