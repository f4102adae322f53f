// The CUDA runtime layer: NVRTC compilation and its disk cache wherever NVRTC loads, and
// launches, memory, streams and events where a GPU is present. Elsewhere the tests skip,
// quoting the loader's error, which is itself checked to be one clear line.
#include "runtime/cuda/cuda.h"

#include "core/error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace toroid::cuda {
namespace {

namespace fs = std::filesystem;

const std::string kKernels = R"(
extern "C" __global__ void fill(float* out, float value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
// a * b + c rounded twice: --fmad=false must keep the multiply and the add apart.
extern "C" __global__ void mul_add(const float* a, const float* b, const float* c, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * b[i] + c[i];
}
)";

// The loader's error, or nullopt when NVRTC loads.
std::optional<std::string> nvrtc_missing() {
    try {
        nvrtc();
        return std::nullopt;
    } catch (const Error& e) {
        return std::string(e.what());
    }
}

std::optional<std::string> gpu_missing() {
    try {
        Device::get(0);
        return std::nullopt;
    } catch (const Error& e) {
        return std::string(e.what());
    }
}

// An architecture NVRTC supports, for compiling without a GPU: sm_75 when offered (the
// oldest CUDA 13 still compiles for), else the first offered.
std::string some_arch() {
    auto archs = nvrtc_supported_archs();
    if (archs.empty()) return "sm_75";
    if (std::find(archs.begin(), archs.end(), 75) != archs.end()) return "sm_75";
    return "sm_" + std::to_string(archs.front());
}

class CudaTest : public ::testing::Test {
protected:
    void SetUp() override {
        cache_ = fs::path(::testing::TempDir()) /
                 ("toroid_cuda_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
                  std::to_string(::getpid()));
        fs::remove_all(cache_);
    }
    void TearDown() override { fs::remove_all(cache_); }
    fs::path cache_;
};

#define REQUIRE_NVRTC()                                                         \
    do {                                                                        \
        if (auto why = nvrtc_missing()) GTEST_SKIP() << "NVRTC: " << *why;      \
    } while (0)

#define REQUIRE_GPU()                                                           \
    do {                                                                        \
        if (auto why = gpu_missing()) GTEST_SKIP() << "no GPU: " << *why;       \
    } while (0)

// ---- everywhere ----------------------------------------------------------------------

TEST(CudaLoader, MissingPiecesAreOneLineErrors) {
    for (const auto& why : {nvrtc_missing(), gpu_missing()}) {
        if (!why) continue;
        EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
        const bool known = why->rfind("CUDA is not available: ", 0) == 0 || *why == "no CUDA device found" ||
                           why->rfind("cannot load NVRTC", 0) == 0;
        EXPECT_TRUE(known) << *why;
    }
    // Failures are remembered: asking again gives the same answer without retrying.
    EXPECT_EQ(gpu_missing(), gpu_missing());
}

TEST(CudaLoader, CandidatesHonourTheVariable) {
    const char* old = std::getenv("TOROID_NVRTC");
    std::string saved = old ? old : "";
    ::setenv("TOROID_NVRTC", "/some/where/libnvrtc.so.13", 1);
    EXPECT_EQ(nvrtc_candidates(), std::vector<std::string>{"/some/where/libnvrtc.so.13"});
    ::unsetenv("TOROID_NVRTC");
    auto list = nvrtc_candidates();
    ASSERT_GE(list.size(), 3u);
    EXPECT_EQ(list[0], "libnvrtc.so.13");
    EXPECT_EQ(list[1], "libnvrtc.so.12");
    EXPECT_EQ(list[2], "libnvrtc.so");
    if (old) ::setenv("TOROID_NVRTC", saved.c_str(), 1);
}

// Runs this test binary again on CudaLoaderChild.* with TOROID_NVRTC naming a missing file:
// NVRTC is loaded once per process, so a fresh process is the only clean way to see it fail.
TEST(CudaLoader, ForcedMissingNvrtcIsAnError) {
    std::vector<std::string> args = {"/proc/self/exe", "--gtest_filter=CudaLoaderChild.*"};
    std::vector<std::string> env_strings = {"TOROID_NVRTC=/nonexistent/libnvrtc.so.13", "TOROID_TEST_CHILD=1"};
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry = *e;
        if (entry.rfind("TOROID_NVRTC=", 0) != 0 && entry.rfind("GTEST_", 0) != 0) env_strings.push_back(entry);
    }
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST(CudaLoaderChild, ReportsTheForcedPath) {
    if (std::getenv("TOROID_TEST_CHILD") == nullptr) GTEST_SKIP() << "runs only inside ForcedMissingNvrtcIsAnError";
    auto why = nvrtc_missing();
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("TOROID_NVRTC=/nonexistent/libnvrtc.so.13"), std::string::npos) << *why;
    EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
    // A compile reports the same error rather than crashing or writing anything.
    fs::path cache = fs::path(::testing::TempDir()) / ("toroid_cuda_child_" + std::to_string(::getpid()));
    Compiler compiler(cache);
    EXPECT_THROW(compiler.compile(kKernels, "sm_75"), Error);
    EXPECT_FALSE(fs::exists(cache));
}

// ---- where NVRTC loads ---------------------------------------------------------------------

TEST_F(CudaTest, CompilesToCubin) {
    REQUIRE_NVRTC();
    Compiler compiler(cache_);
    const std::string arch = some_arch();
    CompiledCubin out = compiler.compile(kKernels, arch);
    ASSERT_GE(out.cubin.size(), 4u);
    EXPECT_EQ(out.cubin.substr(0, 4), std::string("\x7f" "ELF"));
    EXPECT_EQ(out.key, compiler.key(kKernels, arch));
    EXPECT_EQ(out.directory, fs::absolute(cache_) / out.key);
    for (const char* name : {"kernel.cubin", "options.txt", "nvrtc_log.txt", "manifest.json"})
        EXPECT_TRUE(fs::exists(out.directory / name)) << name;
    // The source is not kept (TOROID_KEEP_SOURCES=1 keeps it); failed builds keep theirs.
    EXPECT_FALSE(fs::exists(out.directory / "kernel.cu"));
    EXPECT_EQ(read_file_bytes(out.directory / "kernel.cubin"), out.cubin);
    auto manifest = nlohmann::json::parse(read_file_bytes(out.directory / "manifest.json"));
    EXPECT_EQ(manifest["arch"], arch);
    EXPECT_EQ(manifest["options"].get<std::vector<std::string>>(), compiler.options(arch));
    EXPECT_EQ(manifest["nvrtc"], nvrtc_version());
    EXPECT_EQ(compiler.stats().compiled, 1);
    EXPECT_GT(compiler.stats().compile_seconds, 0.0);
}

TEST_F(CudaTest, OptionsAskForExactArithmetic) {
    Compiler compiler(cache_, {"-DTILE=16"});
    std::vector<std::string> expected = {"--gpu-architecture=sm_90", "-std=c++17", "--fmad=false", "-default-device",
                                         "-DTILE=16"};
    EXPECT_EQ(compiler.options("sm_90"), expected);
}

TEST_F(CudaTest, BadSourceKeepsSourceAndLog) {
    REQUIRE_NVRTC();
    Compiler compiler(cache_);
    const std::string bad = "extern \"C\" __global__ void broken(float* p) { p[0] = undefined_name; }\n";
    const std::string arch = some_arch();
    const fs::path failed = fs::absolute(cache_) / "failed" / compiler.key(bad, arch);
    try {
        compiler.compile(bad, arch);
        FAIL() << "no exception";
    } catch (const Error& e) {
        std::string message = e.what();
        EXPECT_NE(message.find("undefined_name"), std::string::npos) << message;
        EXPECT_NE(message.find(failed.string()), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    EXPECT_EQ(read_file_bytes(failed / "kernel.cu"), bad);
    EXPECT_NE(read_file_bytes(failed / "nvrtc_log.txt").find("undefined_name"), std::string::npos);
    EXPECT_TRUE(fs::exists(failed / "options.txt"));
    EXPECT_FALSE(fs::exists(cache_ / compiler.key(bad, arch)));
    EXPECT_EQ(compiler.stats().compiled, 0);
}

TEST_F(CudaTest, SecondCompileIsACacheHit) {
    REQUIRE_NVRTC();
    const std::string arch = some_arch();
    std::string first_cubin = Compiler(cache_).compile(kKernels, arch).cubin;
    Compiler second(cache_);
    CompiledCubin again = second.compile(kKernels, arch);
    EXPECT_EQ(again.cubin, first_cubin);
    EXPECT_EQ(second.stats().compiled, 0);
    EXPECT_EQ(second.stats().disk_hits, 1);

    // A damaged cubin is noticed and rebuilt.
    write_file_bytes(again.directory / "kernel.cubin", "not a cubin");
    Compiler third(cache_);
    EXPECT_EQ(third.compile(kKernels, arch).cubin, first_cubin);
    EXPECT_EQ(third.stats().corrupt_entries, 1);
    EXPECT_EQ(third.stats().compiled, 1);
}

TEST_F(CudaTest, KeyCoversSourceArchAndOptions) {
    REQUIRE_NVRTC();
    Compiler plain(cache_);
    Compiler extra(cache_, {"-DX=1"});
    const std::string k = plain.key(kKernels, "sm_80");
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(Compiler(cache_).key(kKernels, "sm_80"), k);
    EXPECT_NE(plain.key(kKernels, "sm_90"), k);
    EXPECT_NE(extra.key(kKernels, "sm_80"), k);
    EXPECT_NE(plain.key(kKernels + " ", "sm_80"), k);
}

TEST_F(CudaTest, CompilesForEverySupportedArchitecture) {
    REQUIRE_NVRTC();
    // Only the newest and oldest, to stay quick; both must give an ELF cubin.
    auto archs = nvrtc_supported_archs();
    ASSERT_FALSE(archs.empty());
    Compiler compiler(cache_);
    for (int arch : {archs.front(), archs.back()}) {
        auto out = compiler.compile(kKernels, "sm_" + std::to_string(arch));
        EXPECT_EQ(out.cubin.substr(0, 4), std::string("\x7f" "ELF")) << arch;
    }
}

TEST_F(CudaTest, UnsupportedArchitectureIsAClearError) {
    REQUIRE_NVRTC();
    Compiler compiler(cache_);
    try {
        compiler.compile(kKernels, "sm_10");
        FAIL() << "no exception";
    } catch (const Error& e) {
        std::string message = e.what();
        EXPECT_NE(message.find("cannot compile for sm_10"), std::string::npos) << message;
        EXPECT_NE(message.find("TOROID_NVRTC"), std::string::npos) << message;
    }
    EXPECT_FALSE(fs::exists(cache_));  // nothing written
}

TEST_F(CudaTest, SampleKernelCompiles) {
    REQUIRE_NVRTC();
    // The sample that scripts/check-cuda-source.sh compiles with clang: NVRTC must accept
    // the same text, so that the clang check speaks for NVRTC.
    // $TOROID_SOURCE_DIR names the checkout where the tests run away from their build.
    const char* source_dir = std::getenv("TOROID_SOURCE_DIR");
    const fs::path sample = source_dir != nullptr ? fs::path(source_dir) / "tests" / "runtime" / "data" / "sample_kernel.cu"
                                                  : fs::path(TOROID_TEST_DATA) / ".." / "runtime" / "data" / "sample_kernel.cu";
    if (!fs::exists(sample)) GTEST_SKIP() << "no source tree here: " << sample.string();
    auto out = Compiler(cache_).compile(read_file_bytes(sample), some_arch());
    EXPECT_EQ(out.cubin.substr(0, 4), std::string("\x7f" "ELF"));
}

// ---- where a GPU is present -------------------------------------------------------------------

TEST_F(CudaTest, DeviceProperties) {
    REQUIRE_GPU();
    const Device& d = Device::get(0);
    EXPECT_EQ(&d, &Device::get(0));
    EXPECT_FALSE(d.name().empty());
    EXPECT_GE(d.compute_major(), 3);
    EXPECT_EQ(d.arch(), "sm_" + std::to_string(d.compute_major()) + std::to_string(d.compute_minor()));
    EXPECT_GT(d.multiprocessors(), 0);
    EXPECT_GT(d.l2_bytes(), 0);
    EXPECT_GE(d.max_shared_per_block_optin(), 48 * 1024);
    EXPECT_EQ(d.warp_size(), 32);
    EXPECT_GT(d.total_memory(), 0u);
    EXPECT_THROW(Device::get(1000), Error);
    if (!nvrtc_missing()) {
        std::string line = describe(0);
        EXPECT_NE(line.find(d.name()), std::string::npos) << line;
        EXPECT_NE(line.find(d.arch()), std::string::npos) << line;
        EXPECT_EQ(line.find('\n'), std::string::npos) << line;
        std::cout << "device: " << line << "\nNVRTC: " << nvrtc_path() << "\n";
    }
}

TEST_F(CudaTest, FillAndVectorAddEveryElement) {
    REQUIRE_GPU();
    REQUIRE_NVRTC();
    const Device& d = Device::get(0);
    Compiler compiler(cache_);
    auto module = compiler.load(d, kKernels);
    EXPECT_EQ(compiler.load(d, kKernels).get(), module.get());
    EXPECT_EQ(compiler.stats().memory_hits, 1);

    unsigned n = (1u << 20) + 37;  // not a multiple of the block size
    const std::size_t bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (unsigned i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i) * 0.5f;
        b[i] = 1.0f / static_cast<float>(i + 1);
    }
    DeviceBuffer da(d, bytes), db(d, bytes), dc(d, bytes);
    da.copy_from_host(a.data(), bytes);
    db.copy_from_host(b.data(), bytes);
    const Dim3 block{256};
    const Dim3 grid{(n + 255) / 256};

    float value = 3.25f;
    void* fill_args[] = {dc.arg(), &value, &n};
    launch(module->function("fill"), grid, block, 0, nullptr, fill_args);
    dc.copy_to_host(c.data(), bytes);
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(c[i], 3.25f) << i;

    void* add_args[] = {da.arg(), db.arg(), dc.arg(), &n};
    launch(module->function("vector_add"), grid, block, 0, nullptr, add_args);
    dc.copy_to_host(c.data(), bytes);
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_F(CudaTest, NoFusedMultiplyAdd) {
    REQUIRE_GPU();
    REQUIRE_NVRTC();
    const Device& d = Device::get(0);
    auto module = Compiler(cache_).load(d, kKernels);
    // 1 + 2^-12 squared is 1 + 2^-11 + 2^-24: the last term is lost when the product is
    // rounded before subtracting (1 + 2^-11), kept by a fused multiply-add.
    unsigned n = 1;
    float x = 1.0f + 1.0f / 4096, minus = -(1.0f + 1.0f / 2048), out = -1;
    DeviceBuffer dx(d, 4), dm(d, 4), dout(d, 4);
    dx.copy_from_host(&x, 4);
    dm.copy_from_host(&minus, 4);
    void* args[] = {dx.arg(), dx.arg(), dm.arg(), dout.arg(), &n};
    launch(module->function("mul_add"), Dim3{1}, Dim3{1}, 0, nullptr, args);
    dout.copy_to_host(&out, 4);
    volatile float product = x * x;  // rounded on its own, as the CPU code does
    EXPECT_EQ(out, product + minus);
    EXPECT_EQ(out, 0.0f);
}

TEST_F(CudaTest, MissingKernelAndBadLaunchAreErrors) {
    REQUIRE_GPU();
    REQUIRE_NVRTC();
    const Device& d = Device::get(0);
    auto module = Compiler(cache_).load(d, kKernels);
    try {
        module->function("no_such_kernel");
        FAIL() << "no exception";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
    }
    DeviceBuffer out(d, 64);
    unsigned n = 16;
    float value = 1;
    void* args[] = {out.arg(), &value, &n};
    // More threads per block than any device allows.
    try {
        launch(module->function("fill"), Dim3{1}, Dim3{static_cast<unsigned>(d.max_threads_per_block()) * 2}, 0,
               nullptr, args);
        FAIL() << "no exception";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("fill"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_"), std::string::npos) << e.what();
    }
    std::vector<float> host(16, 0);
    EXPECT_THROW(out.copy_to_host(host.data(), 65), Error);  // larger than the buffer
}

TEST_F(CudaTest, StreamsEventsAndMemset) {
    REQUIRE_GPU();
    REQUIRE_NVRTC();
    const Device& d = Device::get(0);
    auto module = Compiler(cache_).load(d, kKernels);
    unsigned n = 1u << 22;
    const std::size_t bytes = n * sizeof(float);
    DeviceBuffer buffer(d, bytes);
    std::vector<unsigned char> raw(bytes, 0);
    buffer.memset(0xAB);
    buffer.copy_to_host(raw.data(), bytes);
    EXPECT_TRUE(std::all_of(raw.begin(), raw.end(), [](unsigned char c) { return c == 0xAB; }));

    Stream stream(d);
    Event start(d), end(d);
    std::vector<float> host(n, 0.0f), back(n, 0.0f);
    for (unsigned i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000);
    buffer.memset_async(0, stream);
    start.record(stream);
    buffer.copy_from_host_async(host.data(), bytes, stream);
    float value = 7;
    void* args[] = {buffer.arg(), &value, &n};
    launch(module->function("fill"), Dim3{(n + 255) / 256}, Dim3{256}, 0, stream.handle(), args);
    end.record(stream);
    buffer.copy_to_host_async(back.data(), bytes, stream);
    stream.synchronize();
    EXPECT_GT(elapsed_ms(start, end), 0.0f);
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](float v) { return v == 7.0f; }));
}

}  // namespace
}  // namespace toroid::cuda
