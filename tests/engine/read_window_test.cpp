// ops/read_window: the window of an image a pipeline's result reads holds every pixel it
// depends on (pixels outside it replaced by noise leave the result unchanged), in every
// resize mode and option; and a JPEG file through process_file, decoded only in that window,
// gives the whole decode's result.
#include "ops/read_window.h"

#include "engine/engine.h"
#include "engine/files.h"
#include "engine_test_support.h"
#include "io/jpeg.h"
#include "ops/pipeline_json.h"
#include "reference/reference.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace toroid {
namespace {

using test::identical;
using test::random_image;

Pipeline parse(const std::string& json) { return parse_pipeline(json, std::filesystem::temp_directory_path()); }

// `image` with every pixel outside `window` replaced by noise.
Tensor noisy_outside(const Tensor& image, const std::array<std::int64_t, 4>& window, std::uint32_t seed) {
    Tensor noisy = random_image(image.dtype(), image.shape(), image.is_dense(Layout::ChannelsLast) ? Layout::ChannelsLast
                                                                                                      : Layout::Contiguous,
                                seed);
    Tensor inside = noisy.slice(2, window[0], window[2]).slice(3, window[1], window[3]);
    inside.copy_from(image.slice(2, window[0], window[2]).slice(3, window[1], window[3]));
    return noisy;
}

TEST(ReadWindow, HoldsEveryPixelTheResultReads) {
    const std::vector<std::string> resizes = {
        R"({"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 40})",
        R"({"op": "resize", "mode": "bicubic", "antialias": true, "size": [37, 61]})",
        R"({"op": "resize", "mode": "bilinear", "size": [90, 33]})",
        R"({"op": "resize", "mode": "bicubic", "size": [29, 150]})",
        R"({"op": "resize", "mode": "bilinear", "align_corners": true, "size": [50, 47]})",
        R"({"op": "resize", "mode": "nearest", "size": [31, 77]})",
        R"({"op": "resize", "mode": "nearest-exact", "size": [64, 20]})",
        R"({"op": "resize", "mode": "bilinear", "antialias": true, "scale_factor": [0.3, 0.45]})",
        R"({"op": "resize", "mode": "nearest", "scale_factor": [0.37, 1.7]})",
    };
    const std::vector<std::string> crops = {R"({"op": "center_crop", "size": [20, 18]})",
                                            R"({"op": "crop", "top": 3, "left": 5, "height": 9, "width": 14})",
                                            R"({"op": "center_crop", "size": 1})"};
    const std::vector<std::string> tails = {"", R"(, {"op": "convert", "dtype": "float32", "scale": true})"};
    std::uint32_t seed = 1;
    int smaller = 0;
    for (const auto& resize : resizes)
        for (const auto& crop : crops)
            for (const auto& tail : tails)
                for (DType dt : {DType::UInt8, DType::Float32})
                    for (Layout layout : {Layout::ChannelsLast, Layout::Contiguous}) {
                        const Pipeline p = parse("[" + resize + ", " + crop + tail + "]");
                        const Tensor image = random_image(dt, {1, 3, 83, 121}, layout, ++seed);
                        SCOPED_TRACE(resize + " " + crop + tail + " " + std::string(dtype_name(dt)));
                        const auto window = read_window(p, image.spec());
                        ASSERT_TRUE(window.has_value());
                        smaller += (*window)[2] * (*window)[3] < 83 * 121;
                        EXPECT_TRUE(identical(reference::run(p, noisy_outside(image, *window, ++seed)),
                                              reference::run(p, image)));
                    }
    EXPECT_GT(smaller, 200);  // most windows are smaller than the image
}

// The compiled programs read no more than the reference does: a uint8 channels-last image
// (a decoded JPEG) with noise outside the window gives the same result, every resize mode.
TEST(ReadWindow, CompiledProgramsReadOnlyTheWindow) {
    auto engine = make_engine("compiled", EngineOptions{});
    std::uint32_t seed = 100;
    for (const char* resize : {R"({"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 40})",
                               R"({"op": "resize", "mode": "bicubic", "antialias": true, "size": [37, 61]})",
                               R"({"op": "resize", "mode": "bilinear", "size": [90, 33]})",
                               R"({"op": "resize", "mode": "nearest", "size": [31, 77]})",
                               R"({"op": "resize", "mode": "nearest-exact", "size": [64, 20]})"}) {
        const Pipeline p = parse(std::string("[") + resize + R"(, {"op": "center_crop", "size": [20, 18]}])");
        SCOPED_TRACE(resize);
        for (const Dims& shape : {Dims{1, 3, 83, 121}, Dims{1, 3, 200, 97}}) {
            const Tensor image = random_image(DType::UInt8, shape, Layout::ChannelsLast, ++seed);
            const auto window = read_window(p, image.spec());
            ASSERT_TRUE(window.has_value());
            auto prepared = engine->prepare(p, image.spec());
            EXPECT_TRUE(identical(prepared->run(noisy_outside(image, *window, ++seed)), prepared->run(image)));
        }
    }
}

TEST(ReadWindow, AFirstCropIsItsRegionAndOtherStartsReadTheWholeImage) {
    const TensorSpec in = Tensor::empty(DType::UInt8, {1, 3, 50, 60}, Layout::ChannelsLast).spec();
    EXPECT_EQ(read_window(parse(R"([{"op": "crop", "top": 4, "left": 6, "height": 10, "width": 20}])"), in),
              (std::array<std::int64_t, 4>{4, 6, 10, 20}));
    EXPECT_EQ(read_window(parse(R"([{"op": "center_crop", "size": [10, 20]}])"), in),
              (std::array<std::int64_t, 4>{20, 20, 10, 20}));
    for (const char* p : {R"([{"op": "crop", "top": -2, "left": 0, "height": 10, "width": 10}])",
                          R"([{"op": "center_crop", "size": 70}])", R"([{"op": "flip", "dims": [-1]}])",
                          R"([{"op": "resize", "mode": "bilinear", "size": [20, 20]}])",
                          R"([{"op": "resize", "mode": "bilinear", "size": [20, 20]}, {"op": "center_crop", "size": 30}])",
                          "[]"})
        EXPECT_FALSE(read_window(parse(p), in).has_value()) << p;
}

TEST(ReadWindow, AJpegFileDecodedInItsWindowGivesTheWholeDecodesResult) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("toroid_read_window_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    Tensor pixels = Tensor::empty(DType::UInt8, {1, 3, 181, 263}, Layout::ChannelsLast);
    for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t y = 0; y < 181; ++y)
            for (std::int64_t x = 0; x < 263; ++x)
                pixels.at<std::uint8_t>(0, c, y, x) = static_cast<std::uint8_t>((x * 3 + y * 5 + c * 70 + (x * y) % 13) % 256);
    io::write_file_atomic(dir / "in.jpg", io::encode_jpeg(pixels, 85));
    auto engine = make_engine("compiled", EngineOptions{});
    for (const char* json : {R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 64},
                                 {"op": "center_crop", "size": 56}])",
                             R"([{"op": "resize", "mode": "bicubic", "size": [100, 90]}, {"op": "center_crop", "size": 40},
                                 {"op": "convert", "dtype": "float32", "scale": true}])",
                             R"([{"op": "crop", "top": 40, "left": 100, "height": 60, "width": 70},
                                 {"op": "resize", "mode": "bilinear", "antialias": true, "size": [32, 32]}])"}) {
        SCOPED_TRACE(json);
        const Pipeline p = parse(json);
        io::DecodeOptions rgb;
        rgb.mode = io::ImageMode::Rgb;
        const Tensor whole = io::read_image(dir / "in.jpg", rgb);
        ASSERT_TRUE(read_window(p, whole.spec()).has_value());
        FileOptions options;
        options.decode.mode = io::ImageMode::Rgb;
        process_file(*engine, p, dir / "in.jpg", dir / "out.npy", options);
        EXPECT_TRUE(identical(io::read_image(dir / "out.npy"), reference::run(p, whole)));
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace toroid
