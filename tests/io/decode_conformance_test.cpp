// toroid's decoders against torchvision.io.decode_image: every file of tests/data/decode in
// every mode (made by scripts/make_decode_cases.py with torchvision 0.26 and Pillow), EXIF
// orientation applied. uint8, so equal in every element; a mode torchvision refuses is a
// toroid::Error too; the documented differences are listed in cases.json and skipped.
#include "core/error.h"
#include "io/decode.h"
#include "io/file.h"
#include "io/npy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace toroid::io {
namespace {

namespace fs = std::filesystem;

fs::path decode_dir() {
    const char* env = std::getenv("TOROID_TEST_DATA");
    return fs::path(env && *env ? env : TOROID_TEST_DATA) / "decode";
}

TEST(DecodeConformance, EveryFileAndModeAsTorchvision) {
    const fs::path dir = decode_dir();
    ASSERT_TRUE(fs::exists(dir / "cases.json")) << "no decode cases in " << dir;
    std::ifstream f(dir / "cases.json");
    const auto doc = nlohmann::json::parse(f);
    int compared = 0, refused = 0;
    for (const auto& c : doc["cases"]) {
        const std::string file = c["file"], mode = c["mode"];
        SCOPED_TRACE(file + " " + mode);
        if (c.contains("skipped")) continue;
        DecodeOptions o;
        o.mode = parse_image_mode(mode);
        const std::string bytes = read_file(dir / file);
        const ImageFormat format = *image_format_of(file);
        if (c.contains("error")) {
            EXPECT_THROW(decode_image(bytes, file, format, o), Error);
            ++refused;
            continue;
        }
        const Tensor got = decode_image(bytes, file, format, o);
        const Tensor want = read_npy_image(dir / c["expected"].get<std::string>());
        ASSERT_EQ(got.shape(), want.shape());
        ASSERT_EQ(got.dtype(), want.dtype());  // uint16 for 16-bit PNGs
        std::int64_t bad = 0;
        const Dims& d = got.shape();
        for (std::int64_t k = 0; k < d[1]; ++k)
            for (std::int64_t y = 0; y < d[2]; ++y)
                for (std::int64_t x = 0; x < d[3]; ++x)
                    bad += got.dtype() == DType::UInt16
                               ? got.at<std::uint16_t>(0, k, y, x) != want.at<std::uint16_t>(0, k, y, x)
                               : got.at<std::uint8_t>(0, k, y, x) != want.at<std::uint8_t>(0, k, y, x);
        EXPECT_EQ(bad, 0);
        ++compared;
    }
    EXPECT_GT(compared, 60);
    EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace toroid::io
