// The CUDA code generator on every conformance pipeline, in both layouts, single-image and
// batched entries: the sources
// compile with NVRTC for a Hopper target where NVRTC loads (no GPU needed), and with
// clang's CUDA front end and no SDK (scripts/check-cuda-source.sh) where clang can, so the
// generator cannot rot unseen on machines without CUDA. Running them is the GPU machine's
// job (the conformance suite's "cuda" engine).
#include "../engine/engine_test_support.h"
#include "core/error.h"
#include "engine/cuda_engine.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"
#include "runtime/cuda/cuda.h"
#include "schedule/gpu_fuse.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace toroid {
namespace {

namespace fs = std::filesystem;

// Every distinct generated source of the conformance pipelines: the single-image entries,
// then the batched ones (codegen::generate_cuda_batch).
std::vector<std::string> conformance_sources(const std::string& arch, bool batched = true) {
    const char* env = std::getenv("TOROID_TEST_DATA");
    const fs::path dir = fs::path(env && *env ? env : TOROID_TEST_DATA) / "conformance";
    std::ifstream f(dir / "cases.json");
    const auto doc = nlohmann::json::parse(f);
    std::set<std::string> seen;
    std::vector<std::string> out;
    for (const auto& c : doc["cases"]) {
        const fs::path cd = dir / c["name"].get<std::string>();
        const Pipeline p = load_pipeline((cd / "pipeline.json").string());
        const Tensor in = io::read_npy_image(cd / "input.npy");
        // bfloat16 inputs are stored as float32 (.npy has no bfloat16)
        const DType dtype = c.value("dtype", "") == "bfloat16" ? DType::BFloat16 : in.dtype();
        for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
            const Dims st = dense_strides(in.shape(), l);
            const TensorSpec spec{dtype, in.shape(), st};
            std::string src = cuda_source(p, spec, arch);
            if (seen.insert(src).second) out.push_back(std::move(src));
            if (!batched) continue;
            std::string b = cuda_batch_source(p, spec, arch);
            if (seen.insert(b).second) out.push_back(std::move(b));
        }
    }
    return out;
}

std::size_t conformance_case_count() {
    const char* env = std::getenv("TOROID_TEST_DATA");
    const fs::path dir = fs::path(env && *env ? env : TOROID_TEST_DATA) / "conformance";
    std::ifstream f(dir / "cases.json");
    return nlohmann::json::parse(f)["cases"].size();
}

TEST(CudaCodegen, ConformancePipelinesShareFewSources) {
    const auto sources = conformance_sources("sm_90", false);
    // Every case in two layouts: programs are per structure, not per size or value, so far
    // fewer sources than (case, layout) pairs (about a quarter; the blur's kernel size and
    // the structure-changing fields are per structure).
    EXPECT_GT(sources.size(), 10u);
    EXPECT_LT(sources.size(), conformance_case_count() * 2 / 3);
    for (const std::string& s : sources) {
        EXPECT_EQ(s.find("#include"), std::string::npos);
        EXPECT_NE(s.find("extern \"C\" __global__"), std::string::npos);
    }
}

// The batched entries (codegen/cuda.h): each block finds its image from blockIdx.z and reads
// that image's arguments (and tiles) from the batch's arrays; its z loops step by the
// image's z blocks; a fused block past its image's last tile leaves before any barrier.
TEST(CudaCodegen, BatchedEntriesReadTheirImagesArguments) {
    const Pipeline eval = parse_pipeline(
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 256},
            {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": true},
            {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])",
        ".");
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
        SCOPED_TRACE(std::string(layout_name(l)));
        const Dims shape{1, 3, 375, 500};
        const TensorSpec spec{DType::UInt8, shape, dense_strides(shape, l)};
        const std::string single = cuda_source(eval, spec, "sm_90");
        const std::string batch = cuda_batch_source(eval, spec, "sm_90");
        EXPECT_EQ(single.find("batch"), std::string::npos);
        // The batched entries of both kernels, and of the fused pair where there is one
        // (channels-last: the producer's channel loop matches the consumer's).
        EXPECT_NE(batch.find("toroid_batch_kernel_0(const toroid_args* __restrict__ batch, const int32_t z_blocks)"),
                  std::string::npos)
            << batch;
        EXPECT_NE(batch.find("toroid_batch_kernel_1("), std::string::npos);
        EXPECT_EQ(batch.find("toroid_kernel_"), std::string::npos);
        EXPECT_NE(batch.find("const int32_t image = static_cast<int32_t>(blockIdx.z) / z_blocks;"), std::string::npos);
        EXPECT_NE(batch.find("const toroid_args& args = batch[image];"), std::string::npos);
        // Grid z: an image's z loop starts at its own z block and steps over its z blocks.
        ASSERT_NE(single.find("gz += gridDim.z"), std::string::npos);
        EXPECT_NE(batch.find("for (int64_t gz = zb; gz < gz_end; gz += z_blocks)"), std::string::npos);
        EXPECT_EQ(batch.find("gridDim.z"), std::string::npos);
        EXPECT_EQ(batch.find("blockIdx.z;"), std::string::npos);  // blockIdx.z only through image and zb
        const bool fused = single.find("toroid_fused_1(") != std::string::npos;
        EXPECT_EQ(fused, l == Layout::ChannelsLast);
        if (!fused) {
            EXPECT_EQ(batch.find("toroid_batch_fused_"), std::string::npos);
            continue;
        }
        const auto fused_at = batch.find("toroid_batch_fused_1(const toroid_args* __restrict__ batch, const "
                                          "toroid_tiles* __restrict__ batch_tiles, const int32_t z_blocks)");
        ASSERT_NE(fused_at, std::string::npos) << batch;
        EXPECT_NE(batch.find("const toroid_tiles& tiles = batch_tiles[image];", fused_at), std::string::npos);
        // The tiles' struct comes before the kernels that read it.
        EXPECT_LT(batch.find("struct toroid_tiles"), batch.find("toroid_batch_kernel_0("));
        // The widest image sets the grid: a block past its image's tiles leaves at once.
        const auto leave = batch.find("if (x0 >= ", fused_at);
        ASSERT_NE(leave, std::string::npos);
        EXPECT_LT(leave, batch.find("__syncthreads", fused_at));
    }
    // The argument layout the engine fills (8-byte words: buffers, then parameters; 48-byte tiles).
    EXPECT_EQ(sizeof(schedule::FusedTilesArg), 48u);
}

TEST(CudaCodegen, NvrtcCompilesEveryConformanceSource) {
    try {
        cuda::nvrtc_version();
    } catch (const Error& e) {
        GTEST_SKIP() << "NVRTC not available: " << e.what();
    }
    const fs::path cache = fs::temp_directory_path() / ("toroid-cuda-codegen-" + std::to_string(::getpid()));
    cuda::Compiler compiler(cache);
    // The single-image sources (the batched ones are the same kernels' bodies; clang checks
    // them below), compiled on every core: NVRTC compiles distinct programs concurrently.
    const std::vector<std::string> sources = conformance_sources("sm_90", false);
    std::atomic<std::size_t> next{0}, bad{0};
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
        workers.emplace_back([&] {
            for (std::size_t i = next++; i < sources.size(); i = next++)
                if (compiler.compile(sources[i], "sm_90").cubin.size() <= 100u) ++bad;
        });
    for (std::thread& w : workers) w.join();
    EXPECT_EQ(bad.load(), 0u);
    fs::remove_all(cache);
}

// Clang's CUDA front end takes seconds a source: the sources are checked in kClangShards
// tests (source i in shard i mod kClangShards), so that each stays well inside the test
// timeout on a 2-core machine running other tests beside it.
constexpr int kClangShards = 4;
class ClangCudaSources : public ::testing::TestWithParam<int> {};

TEST_P(ClangCudaSources, CompileWithoutAnSdk) {
    const std::vector<std::string> all = conformance_sources("sm_70");
    std::vector<std::string> mine;
    for (std::size_t i = static_cast<std::size_t>(GetParam()); i < all.size(); i += kClangShards) mine.push_back(all[i]);
    ASSERT_FALSE(mine.empty());
    const test::CudaSourceCheck r = test::check_cuda_sources(mine);
    ASSERT_NE(r.status, -1) << r.log;
    if (r.status == 77) GTEST_SKIP() << r.log;
    EXPECT_EQ(r.status, 0) << r.log;
}

INSTANTIATE_TEST_SUITE_P(CudaCodegen, ClangCudaSources, ::testing::Range(0, kClangShards));

}  // namespace
}  // namespace toroid
