// Helpers the engine tests share: seeded random images, the largest difference between
// two results, bit-for-bit equality, and why no CUDA device is usable here.
#pragma once

#include "core/error.h"
#include "core/tensor.h"
#include "runtime/cuda/cuda.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace toroid::test {

// The grid tests' sampling stride (TOROID_TEST_STRIDE, default 1: every case). The
// sanitized run (scripts/sanitize.sh) sets it to check every k-th case of the largest
// grids, whose instrumented kernels would otherwise take most of CI's time; the main run
// checks every case.
inline int sample_stride() {
    const char* v = std::getenv("TOROID_TEST_STRIDE");
    const int k = v ? std::atoi(v) : 1;
    return k > 1 ? k : 1;
}

// Whether the `index`-th case of a grid runs at sample_stride().
inline bool sampled(std::size_t index) { return index % static_cast<std::size_t>(sample_stride()) == 0; }

// An image of `shape` in `layout` from a seeded generator: uint8 over 0..255, float32 over
// [-1, 3).
inline Tensor random_image(DType dt, const Dims& shape, Layout layout, std::uint32_t seed) {
    Tensor t = Tensor::empty(dt, shape, layout);
    std::mt19937 rng(seed);
    for (std::int64_t n = 0; n < shape[0]; ++n)
        for (std::int64_t c = 0; c < shape[1]; ++c)
            for (std::int64_t h = 0; h < shape[2]; ++h)
                for (std::int64_t w = 0; w < shape[3]; ++w) {
                    if (dt == DType::UInt8) t.at<std::uint8_t>(n, c, h, w) = static_cast<std::uint8_t>(rng() >> 24);
                    else t.at<float>(n, c, h, w) = static_cast<float>(rng() >> 8) / 16777216.0f * 4.0f - 1.0f;
                }
    return t;
}

// The largest difference between a and b (uint8 or float32); -1 (and a test failure) when
// their shapes or types differ.
inline double max_difference(const Tensor& a, const Tensor& b) {
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_EQ(a.dtype(), b.dtype());
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) return -1;
    double worst = 0;
    const Dims& s = a.shape();
    auto at = [](const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) -> double {
        return t.dtype() == DType::UInt8 ? t.at<std::uint8_t>(n, c, h, w) : t.at<float>(n, c, h, w);
    };
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) worst = std::max(worst, std::fabs(at(a, n, c, h, w) - at(b, n, c, h, w)));
    return worst;
}

// Whether a and b hold the same bits (uint8 or float32; a float NaN equals the same NaN).
inline bool identical(const Tensor& a, const Tensor& b) {
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
    const Dims& s = a.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    if (a.dtype() == DType::UInt8) {
                        if (a.at<std::uint8_t>(n, c, h, w) != b.at<std::uint8_t>(n, c, h, w)) return false;
                    } else {
                        const float x = a.at<float>(n, c, h, w), y = b.at<float>(n, c, h, w);
                        if (std::memcmp(&x, &y, sizeof x) != 0) return false;
                    }
                }
    return true;
}

// Why the cuda engine cannot run here ("" where device 0 opens); asked once per process.
inline const std::string& cuda_unavailable() {
    static const std::string why = [] {
        try {
            cuda::Device::get(0);
            return std::string();
        } catch (const Error& e) {
            return std::string(e.what());
        }
    }();
    return why;
}

// scripts/check-cuda-source.sh (clang's CUDA front end, no SDK) on `sources`, each written
// to a file of its own: the script's exit status (0: every source compiles; 77: clang cannot
// compile CUDA here; -1: it did not exit) and what it printed.
struct CudaSourceCheck {
    int status = -1;
    std::string log;
};
inline CudaSourceCheck check_cuda_sources(const std::vector<std::string>& sources, const std::string& arch = "sm_70") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("toroid-cuda-sources-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string files;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        const fs::path f = dir / ("kernel_" + std::to_string(i) + ".cu");
        std::ofstream(f) << sources[i];
        files += " '" + f.string() + "'";
    }
    const std::string script = std::string(TOROID_SOURCE_DIR) + "/scripts/check-cuda-source.sh";
    const std::string log = (dir / "log.txt").string();
    const int status = std::system((script + " --arch " + arch + files + " > '" + log + "' 2>&1").c_str());
    CudaSourceCheck r;
    std::ifstream in(log);
    r.log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!std::getenv("TOROID_KEEP_CUDA_SOURCES")) fs::remove_all(dir);
    if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
    return r;
}

}  // namespace toroid::test
