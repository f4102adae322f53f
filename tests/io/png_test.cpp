// The PNG reader (libpng) against Pillow's pixels for every 8-bit color type (gray 1..8
// bits, gray+alpha, RGB, RGBA, palettes with and without tRNS, interlaced), a round trip
// through the libpng writer, and one-line errors for 16-bit, truncated and corrupt files.
#include "io/png.h"

#include "core/error.h"
#include "io/file.h"
#include "io/npy.h"

#include <gtest/gtest.h>

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

TEST(Png, ErrorsAreOneLineAndNameTheFile) {
    const std::string rgb = read_file(corpus("rgb.png"));
    std::string msg = error_of(read_file(corpus("gray_16bit.png")));
    EXPECT_NE(msg.find("t.png: 16-bit PNG is not supported"), std::string::npos) << msg;
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
