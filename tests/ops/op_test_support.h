// Helpers the op-layer tests share: one-op pipelines from JSON, a grid file for grid_sample
// in a folder of its own, and the message of the error a call throws.
#pragma once

#include "core/error.h"
#include "core/tensor.h"
#include "io/file.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace toroid::test {

// A folder holding grid.npy: a (batch, h, w, 2) float32 grid of distinct values in [-1, 1].
class GridFolder {
public:
    GridFolder(std::int64_t batch, std::int64_t h, std::int64_t w) {
        static int count = 0;
        dir_ = std::filesystem::temp_directory_path() /
               ("toroid_op_tests_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
        std::filesystem::create_directories(dir_);
        Tensor g = Tensor::empty(DType::Float32, {batch, h, w, 2});
        for (std::int64_t n = 0; n < batch; ++n)
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t x = 0; x < w; ++x)
                    for (std::int64_t k = 0; k < 2; ++k)
                        g.at<float>(n, y, x, k) = static_cast<float>(((n * h + y) * w + x) * 2 + k) /
                                                      static_cast<float>(batch * h * w * 2) * 2.0f - 1.0f;
        io::write_file_atomic(dir_ / "grid.npy", io::encode_npy(g));
    }
    ~GridFolder() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    GridFolder(const GridFolder&) = delete;
    GridFolder& operator=(const GridFolder&) = delete;
    const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

// The one op of a one-op pipeline's JSON (grid paths relative to `dir`).
inline Op parse_one(const std::string& op_json, const std::filesystem::path& dir = std::filesystem::temp_directory_path()) {
    Pipeline p = parse_pipeline("[" + op_json + "]", dir);
    if (p.ops.size() != 1) fail("test: expected one op in {}", op_json);
    return p.ops[0];
}

// The message of the toroid::Error `f` throws; "" (and a test failure) when it throws none.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a toroid::Error";
    return "";
}

}  // namespace toroid::test
