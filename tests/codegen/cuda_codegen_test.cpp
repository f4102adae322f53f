// The CUDA code generator on every conformance pipeline, in both layouts: the sources
// compile with NVRTC for a Hopper target where NVRTC loads (no GPU needed), and with
// clang's CUDA front end and no SDK (scripts/check-cuda-source.sh) where clang can, so the
// generator cannot rot unseen on machines without CUDA. Running them is the GPU machine's
// job (the conformance suite's "cuda" engine).
#include "core/error.h"
#include "engine/cuda_engine.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"
#include "runtime/cuda/cuda.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace toroid {
namespace {

namespace fs = std::filesystem;

// Every distinct generated source of the conformance pipelines.
std::vector<std::string> conformance_sources(const std::string& arch) {
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
        for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
            const Dims st = dense_strides(in.shape(), l);
            std::string src = cuda_source(p, TensorSpec{in.dtype(), in.shape(), st}, arch);
            if (seen.insert(src).second) out.push_back(std::move(src));
        }
    }
    return out;
}

TEST(CudaCodegen, ConformancePipelinesShareFewSources) {
    const auto sources = conformance_sources("sm_90");
    // 260 cases in two layouts: programs are per structure, not per size.
    EXPECT_GT(sources.size(), 10u);
    EXPECT_LT(sources.size(), 400u);
    for (const std::string& s : sources) {
        EXPECT_EQ(s.find("#include"), std::string::npos);
        EXPECT_NE(s.find("extern \"C\" __global__"), std::string::npos);
    }
}

TEST(CudaCodegen, NvrtcCompilesEveryConformanceSource) {
    try {
        cuda::nvrtc_version();
    } catch (const Error& e) {
        GTEST_SKIP() << "NVRTC not available: " << e.what();
    }
    const fs::path cache = fs::temp_directory_path() / ("toroid-cuda-codegen-" + std::to_string(::getpid()));
    cuda::Compiler compiler(cache);
    for (const std::string& s : conformance_sources("sm_90")) {
        const cuda::CompiledCubin c = compiler.compile(s, "sm_90");
        EXPECT_GT(c.cubin.size(), 100u);
    }
    fs::remove_all(cache);
}

TEST(CudaCodegen, ClangCompilesEveryConformanceSourceWithoutAnSdk) {
    const fs::path dir = fs::temp_directory_path() / ("toroid-cuda-sources-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string files;
    int i = 0;
    for (const std::string& s : conformance_sources("sm_70")) {
        const fs::path f = dir / ("kernel_" + std::to_string(i++) + ".cu");
        std::ofstream(f) << s;
        files += " '" + f.string() + "'";
    }
    const std::string script = std::string(TOROID_SOURCE_DIR) + "/scripts/check-cuda-source.sh";
    const std::string log = (dir / "log.txt").string();
    const int status = std::system((script + " --arch sm_70" + files + " > '" + log + "' 2>&1").c_str());
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::remove_all(dir);
    ASSERT_TRUE(WIFEXITED(status)) << text;
    if (WEXITSTATUS(status) == 77) GTEST_SKIP() << text;
    EXPECT_EQ(WEXITSTATUS(status), 0) << text;
}

}  // namespace
}  // namespace toroid
