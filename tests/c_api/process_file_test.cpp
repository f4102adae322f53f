// toroid_process_file through the C API only: a JPEG in, the pipeline's result out (equal
// to toroid_compile + toroid_run on the decoded pixels), formats by name or extension,
// folders created, concurrent callers, and a status + message with nothing written for
// every failure.
#include "toroid/toroid.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

const char* kResize = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [8, 10]}])";

std::string jpeg_data(const std::string& name) { return std::string(TOROID_TEST_DATA) + "/jpeg/" + name; }

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The data bytes of a version-1 .npy file (after its header).
std::string npy_payload(const std::string& bytes) {
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return {};
    std::size_t header = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    return bytes.substr(10 + header);
}

class ProcessFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_c_file_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        ASSERT_EQ(toroid_pipeline_from_json(kResize, nullptr, &pipeline_), TOROID_OK) << toroid_last_error();
        toroid_file_options_init(&options_);
        options_.engine = "reference";
        options_.threads = 1;
    }
    void TearDown() override {
        toroid_pipeline_free(pipeline_);
        fs::remove_all(dir_);
    }
    fs::path dir_;
    toroid_pipeline* pipeline_ = nullptr;
    toroid_file_options options_{};
};

TEST_F(ProcessFile, Defaults) {
    toroid_file_options o;
    std::memset(&o, 0x7f, sizeof o);
    toroid_file_options_init(&o);
    EXPECT_EQ(o.struct_size, sizeof(toroid_file_options));
    EXPECT_EQ(o.threads, 0);
    EXPECT_EQ(o.jpeg_quality, 90);
    EXPECT_EQ(o.format, nullptr);
    EXPECT_EQ(o.engine, nullptr);
}

TEST_F(ProcessFile, ResultEqualsCompileAndRunOnTheDecodedPixels) {
    const fs::path out = dir_ / "new" / "deeper" / "out.npy";  // folders created
    ASSERT_EQ(toroid_process_file(pipeline_, jpeg_data("rgb_pillow.jpg").c_str(), out.c_str(), &options_), TOROID_OK)
        << toroid_last_error();
    const std::string written = slurp(out);
    EXPECT_NE(written.find("(1, 3, 8, 10)"), std::string::npos);

    // The decoded pixels (Pillow's, equal to toroid's decoder) through compile + run.
    std::string pixels = npy_payload(slurp(jpeg_data("rgb_pillow.npy")));
    ASSERT_EQ(pixels.size(), 3u * 20 * 28);
    toroid_tensor in{};
    in.data = pixels.data();
    in.desc.dtype = TOROID_UINT8;
    in.desc.ndim = 4;
    const std::int64_t shape[4] = {1, 3, 20, 28}, strides[4] = {3 * 20 * 28, 20 * 28, 28, 1};
    std::memcpy(in.desc.shape, shape, sizeof shape);
    std::memcpy(in.desc.strides, strides, sizeof strides);
    toroid_options co;
    toroid_options_init(&co);
    co.engine = "reference";
    toroid_function* fn = nullptr;
    ASSERT_EQ(toroid_compile(pipeline_, &in.desc, &co, &fn), TOROID_OK) << toroid_last_error();
    std::vector<std::uint8_t> result(3 * 8 * 10);
    toroid_tensor out_t{};
    out_t.data = result.data();
    out_t.desc.dtype = TOROID_UINT8;
    out_t.desc.ndim = 4;
    const std::int64_t oshape[4] = {1, 3, 8, 10}, ostrides[4] = {240, 80, 10, 1};
    std::memcpy(out_t.desc.shape, oshape, sizeof oshape);
    std::memcpy(out_t.desc.strides, ostrides, sizeof ostrides);
    ASSERT_EQ(toroid_run(fn, &in, &out_t), TOROID_OK) << toroid_last_error();
    toroid_function_free(fn);
    EXPECT_EQ(npy_payload(written), std::string(result.begin(), result.end()));
}

TEST_F(ProcessFile, FormatByNameUsesThePathAsIs) {
    const fs::path out = dir_ / "out.bin";
    options_.format = "png";
    ASSERT_EQ(toroid_process_file(pipeline_, jpeg_data("gray_pillow.jpg").c_str(), out.c_str(), &options_), TOROID_OK)
        << toroid_last_error();
    EXPECT_EQ(slurp(out).substr(0, 8), "\x89PNG\r\n\x1a\n");
    options_.format = "jpg";
    options_.jpeg_quality = 40;
    ASSERT_EQ(toroid_process_file(pipeline_, jpeg_data("rgb_pillow.jpg").c_str(), out.c_str(), &options_), TOROID_OK);
    EXPECT_EQ(slurp(out).substr(0, 2), "\xff\xd8");
    // NULL options: defaults (compiled engine, format from the extension).
    const fs::path jpg = dir_ / "x.JPG";
    ASSERT_EQ(toroid_process_file(pipeline_, jpeg_data("rgb_pillow.jpg").c_str(), jpg.c_str(), nullptr), TOROID_OK)
        << toroid_last_error();
    EXPECT_EQ(slurp(jpg).substr(0, 2), "\xff\xd8");
}

TEST_F(ProcessFile, FailuresWriteNothingAndSayWhy) {
    const fs::path out = dir_ / "sub" / "out.jpg";
    auto expect_fail = [&](const std::string& input, const toroid_file_options* o, const char* needle) {
        SCOPED_TRACE(needle);
        EXPECT_EQ(toroid_process_file(pipeline_, input.c_str(), out.c_str(), o), TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(toroid_last_error()).find(needle), std::string::npos) << toroid_last_error();
        EXPECT_FALSE(fs::exists(out));
    };
    // Unchanged (the default) keeps a CMYK JPEG's 4 channels, which a JPEG cannot hold.
    expect_fail(jpeg_data("cmyk_pillow.jpg"), &options_, "JPEG holds 1 (gray) or 3 (RGB) channels, got 4");
    {
        toroid_file_options m = options_;
        m.mode = "rgba";
        expect_fail(jpeg_data("rgb_pillow.jpg"), &m, "unknown image mode 'rgba'");
        m.mode = "rgb";
        ASSERT_EQ(toroid_process_file(pipeline_, jpeg_data("cmyk_pillow.jpg").c_str(), out.c_str(), &m), TOROID_OK)
            << toroid_last_error();
        fs::remove(out);
    }
    const fs::path cut = dir_ / "cut.jpg";
    {
        std::string bytes = slurp(jpeg_data("rgb_pillow.jpg"));
        std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 60);
    }
    expect_fail(cut.string(), &options_, "cut.jpg: invalid JPEG");
    expect_fail((dir_ / "missing.png").string(), &options_, "does not exist");
    toroid_file_options o = options_;
    o.format = "gif";
    expect_fail(jpeg_data("rgb_pillow.jpg"), &o, "unknown image format 'gif'");
    o = options_;
    o.jpeg_quality = 0;
    expect_fail(jpeg_data("rgb_pillow.jpg"), &o, "quality must be 1..100");
    o = options_;
    o.engine = "magic";
    expect_fail(jpeg_data("rgb_pillow.jpg"), &o, "unknown engine");
    toroid_pipeline* to_float = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "convert", "dtype": "float32"}])", nullptr, &to_float), TOROID_OK);
    EXPECT_EQ(toroid_process_file(to_float, jpeg_data("rgb_pillow.jpg").c_str(), out.c_str(), &options_),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("JPEG holds uint8 pixels"), std::string::npos);
    EXPECT_FALSE(fs::exists(out));
    toroid_pipeline_free(to_float);
    EXPECT_EQ(toroid_process_file(nullptr, "a.jpg", "b.jpg", nullptr), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_process_file(pipeline_, nullptr, "b.jpg", nullptr), TOROID_ERROR_INVALID_ARGUMENT);
}

TEST_F(ProcessFile, ConcurrentCallers) {
    options_.engine = "compiled";
    std::vector<std::thread> pool;
    std::vector<toroid_status> status(8, TOROID_ERROR_INTERNAL);
    for (int t = 0; t < 8; ++t)
        pool.emplace_back([&, t] {
            const fs::path out = dir_ / ("t" + std::to_string(t)) / "out.npy";
            status[static_cast<std::size_t>(t)] =
                toroid_process_file(pipeline_, jpeg_data("rgb_pillow.jpg").c_str(), out.c_str(), &options_);
        });
    for (auto& th : pool) th.join();
    const std::string first = slurp(dir_ / "t0" / "out.npy");
    EXPECT_FALSE(first.empty());
    for (int t = 0; t < 8; ++t) {
        EXPECT_EQ(status[static_cast<std::size_t>(t)], TOROID_OK) << t;
        EXPECT_EQ(slurp(dir_ / ("t" + std::to_string(t)) / "out.npy"), first) << t;
    }
}

}  // namespace
