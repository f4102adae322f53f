// The PNG reader (libpng) against Pillow's pixels for every 8-bit color type (gray 1..8
// bits, gray+alpha, RGB, RGBA, palettes with and without tRNS, interlaced), a round trip
// through the libpng writer, and one-line errors for 16-bit, truncated and corrupt files.
#include "io/png.h"

#include "core/error.h"
#include "io/file.h"
#include "io/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace toroid::io {
namespace {

std::string corpus(const std::string& name) { return std::string(TOROID_TEST_DATA) + "/../../fuzz/corpus/fuzz_png/" + name; }
std::string expected(const std::string& name) { return std::string(TOROID_TEST_DATA) + "/png/" + name; }

bool same_pixels(const Tensor& a, const Tensor& b) {
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
    const Dims& d = a.shape();
    for (std::int64_t c = 0; c < d[1]; ++c)
        for (std::int64_t y = 0; y < d[2]; ++y)
            for (std::int64_t x = 0; x < d[3]; ++x)
                if (a.at<std::uint8_t>(0, c, y, x) != b.at<std::uint8_t>(0, c, y, x)) return false;
    return true;
}

std::string error_of(const std::string& bytes) {
    try {
        decode_png(bytes, "t.png");
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(Png, DecodesEveryColorTypeAsPillow) {
    for (const char* name : {"gray", "gray_1bit", "gray_alpha", "palette_4bit", "palette_trns", "rgb", "rgb_interlaced",
                             "rgba"}) {
        SCOPED_TRACE(name);
        Tensor got = read_png(corpus(std::string(name) + ".png"));
        Tensor want = read_npy_image(expected(std::string(name) + ".npy"));
        EXPECT_TRUE(same_pixels(got, want));
        // And the writer keeps every value.
        EXPECT_TRUE(same_pixels(decode_png(encode_png(got), "rt.png"), got));
    }
}

std::uint8_t px(const Tensor& t, std::int64_t c, std::int64_t y, std::int64_t x) { return t.at<std::uint8_t>(0, c, y, x); }

// Each mode against the unchanged decode (Pillow's pixels above): channels replicated,
// dropped, added (opaque) or mixed to grey with libpng's weights for (0.2989, 0.587).
TEST(Png, ModesConvertFromTheStoredChannels) {
    for (const char* name : {"gray", "gray_1bit", "gray_alpha", "palette_4bit", "palette_trns", "rgb", "rgba"}) {
        SCOPED_TRACE(name);
        const std::string bytes = read_file(corpus(std::string(name) + ".png"));
        const Tensor u = decode_png(bytes, "t.png");
        const std::int64_t c = u.shape()[1], h = u.shape()[2], w = u.shape()[3];
        const bool color = c >= 3, alpha = c == 2 || c == 4;
        const Tensor rgb = decode_png(bytes, "t.png", ImageMode::Rgb);
        const Tensor rgba = decode_png(bytes, "t.png", ImageMode::RgbAlpha);
        const Tensor gray = decode_png(bytes, "t.png", ImageMode::Gray);
        const Tensor gray_alpha = decode_png(bytes, "t.png", ImageMode::GrayAlpha);
        ASSERT_EQ(rgb.shape(), (Dims{1, 3, h, w}));
        ASSERT_EQ(rgba.shape(), (Dims{1, 4, h, w}));
        ASSERT_EQ(gray.shape(), (Dims{1, 1, h, w}));
        ASSERT_EQ(gray_alpha.shape(), (Dims{1, 2, h, w}));
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                const int a = alpha ? px(u, c - 1, y, x) : 255;
                for (int k = 0; k < 3; ++k) {
                    const int want = px(u, color ? k : 0, y, x);
                    ASSERT_EQ(px(rgb, k, y, x), want);
                    ASSERT_EQ(px(rgba, k, y, x), want);
                }
                ASSERT_EQ(px(rgba, 3, y, x), a);
                ASSERT_EQ(px(gray_alpha, 1, y, x), a);
                const double luma = color ? 0.2989 * px(u, 0, y, x) + 0.587 * px(u, 1, y, x) + 0.1141 * px(u, 2, y, x)
                                          : px(u, 0, y, x);
                ASSERT_NEAR(px(gray, 0, y, x), luma, 1.0);
                ASSERT_EQ(px(gray_alpha, 0, y, x), px(gray, 0, y, x));
            }
    }
}

// 16-bit PNGs: uint16 samples (torchvision's decode_png), written back at 16 bits; the modes
// convert at 16 bits, added alpha is 65535.
TEST(Png, SixteenBitImagesAreUint16BothWays) {
    const Tensor g = decode_png(read_file(corpus("gray_16bit.png")), "t.png");
    ASSERT_EQ(g.dtype(), DType::UInt16);
    ASSERT_EQ(g.shape()[1], 1);
    for (std::int64_t c : {1, 2, 3, 4}) {
        SCOPED_TRACE(c);
        Tensor t = Tensor::empty(DType::UInt16, {1, c, 7, 9}, Layout::ChannelsLast);
        for (std::int64_t i = 0; i < t.numel(); ++i)
            t.data_as<std::uint16_t>()[i] = static_cast<std::uint16_t>(i * 9973 + 255);  // both bytes vary
        const std::string bytes = encode_png(t);
        const Tensor back = decode_png(bytes, "t.png");
        ASSERT_EQ(back.dtype(), DType::UInt16);
        ASSERT_EQ(back.shape(), t.shape());
        EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0);
        const Tensor rgba = decode_png(bytes, "t.png", ImageMode::RgbAlpha);
        ASSERT_EQ(rgba.dtype(), DType::UInt16);
        for (std::int64_t y = 0; y < 7; ++y)
            for (std::int64_t x = 0; x < 9; ++x) {
                EXPECT_EQ(rgba.at<std::uint16_t>(0, 0, y, x), t.at<std::uint16_t>(0, 0, y, x));
                EXPECT_EQ(rgba.at<std::uint16_t>(0, 3, y, x), c == 2 || c == 4 ? t.at<std::uint16_t>(0, c - 1, y, x) : 65535);
            }
    }
    EXPECT_THROW(encode_png(Tensor::empty(DType::Float16, {1, 1, 2, 2})), Error);
}

TEST(Png, ErrorsAreOneLineAndNameTheFile) {
    const std::string rgb = read_file(corpus("rgb.png"));
    std::string msg;
    for (std::size_t n = 8; n + 12 < rgb.size(); n += 3) {  // every cut before IEND
        SCOPED_TRACE(n);
        msg = error_of(rgb.substr(0, n));
        EXPECT_EQ(msg.rfind("t.png: invalid PNG", 0), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
    std::string flipped = rgb;
    flipped[flipped.size() - 20] = static_cast<char>(flipped[flipped.size() - 20] ^ 0x40);  // inside IDAT
    msg = error_of(flipped);
    EXPECT_EQ(msg.rfind("t.png: invalid PNG", 0), 0u) << msg;
    EXPECT_NE(error_of("GIF89a......").find("not a PNG file"), std::string::npos);
}

}  // namespace
}  // namespace toroid::io
