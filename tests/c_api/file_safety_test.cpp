// The C API's file safety knobs: grid paths stay in base_dir unless
// toroid_pipeline_from_json_flags(TOROID_ALLOW_PATHS), the decoders' pixel limit is set with
// toroid_set_max_image_pixels, and toroid_process_file refuses an output that is its input.
#include "toroid/toroid.h"

#include "core/tensor.h"
#include "io/npy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

class CApiFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_capi_files_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "base");
        std::ofstream(dir_ / "grid.npy", std::ios::binary)
            << toroid::io::encode_npy(toroid::Tensor::zeros(toroid::DType::Float32, {1, 4, 5, 2}));
        std::ofstream(dir_ / "in.npy", std::ios::binary)
            << toroid::io::encode_npy(toroid::Tensor::zeros(toroid::DType::UInt8, {1, 3, 20, 30}));
    }
    void TearDown() override {
        toroid_set_max_image_pixels(-1);
        fs::remove_all(dir_);
    }
    fs::path dir_;
};

TEST_F(CApiFiles, GridPathsNeedTheFlagToLeaveBaseDir) {
    const std::string base = (dir_ / "base").string();
    for (const std::string& grid : {std::string("../grid.npy"), (dir_ / "grid.npy").string()}) {
        SCOPED_TRACE(grid);
        const std::string json = R"([{"op": "grid_sample", "grid": ")" + grid + R"("}])";
        toroid_pipeline* p = nullptr;
        EXPECT_EQ(toroid_pipeline_from_json(json.c_str(), base.c_str(), &p), TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(p, nullptr);
        EXPECT_NE(std::string(toroid_last_error()).find("a pipeline may name files in its folder only"),
                  std::string::npos)
            << toroid_last_error();
        EXPECT_EQ(toroid_pipeline_from_json_flags(json.c_str(), base.c_str(), 0, &p), TOROID_ERROR_INVALID_ARGUMENT);
        ASSERT_EQ(toroid_pipeline_from_json_flags(json.c_str(), base.c_str(), TOROID_ALLOW_PATHS, &p), TOROID_OK)
            << toroid_last_error();
        toroid_pipeline_free(p);
    }
    toroid_pipeline* p = nullptr;
    EXPECT_EQ(toroid_pipeline_from_json_flags("[]", nullptr, 0x10, &p), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("unknown flags"), std::string::npos);
}

TEST_F(CApiFiles, PixelLimitAndOutputOnInput) {
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "flip", "dims": [3]}])", nullptr, &p), TOROID_OK);
    const std::string in = (dir_ / "in.npy").string(), out = (dir_ / "out.npy").string();
    ASSERT_EQ(toroid_set_max_image_pixels(599), TOROID_OK);
    EXPECT_EQ(toroid_process_file(p, in.c_str(), out.c_str(), nullptr), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("has 600 pixels, more than the limit of 599"), std::string::npos)
        << toroid_last_error();
    EXPECT_FALSE(fs::exists(out));
    ASSERT_EQ(toroid_set_max_image_pixels(600), TOROID_OK);
    EXPECT_EQ(toroid_process_file(p, in.c_str(), out.c_str(), nullptr), TOROID_OK) << toroid_last_error();
    // Onto itself: refused, the input unchanged.
    const auto size = fs::file_size(in);
    EXPECT_EQ(toroid_process_file(p, in.c_str(), in.c_str(), nullptr), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("is the input file"), std::string::npos) << toroid_last_error();
    EXPECT_EQ(fs::file_size(in), size);
    toroid_pipeline_free(p);
}

}  // namespace
