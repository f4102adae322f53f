// The WebP reader (libwebp): lossless files decode to exactly the pixels encoded, in every
// mode torchvision's decode_webp takes; lossy files to libwebp's own RGB(A) decode, planar;
// files found by extension and by signature; one-line errors for the refused modes and
// truncated, corrupt, empty and oversized files.
#include "io/webp.h"

#include "core/error.h"
#include "io/file.h"

#include <gtest/gtest.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include <filesystem>
#include <string>
#include <vector>

namespace toroid::io {
namespace {

// A w x h image of `c` interleaved channels with varied values (alpha too).
std::vector<std::uint8_t> pattern(int w, int h, int c) {
    std::vector<std::uint8_t> px(static_cast<std::size_t>(w * h * c));
    for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<std::uint8_t>((i * 37 + i / 7) % 251);
    // (alpha 0 lets the lossless encoder change a pixel's colour, which no one sees)
    if (c == 4)
        for (std::size_t i = 3; i < px.size(); i += 4) px[i] = static_cast<std::uint8_t>(1 + px[i] % 255);
    return px;
}

std::string encoded(const std::vector<std::uint8_t>& px, int w, int h, int c, bool lossless) {
    std::uint8_t* out = nullptr;
    std::size_t n = 0;
    if (lossless) n = c == 4 ? WebPEncodeLosslessRGBA(px.data(), w, h, w * 4, &out) : WebPEncodeLosslessRGB(px.data(), w, h, w * 3, &out);
    else n = c == 4 ? WebPEncodeRGBA(px.data(), w, h, w * 4, 90.0f, &out) : WebPEncodeRGB(px.data(), w, h, w * 3, 90.0f, &out);
    std::string s(reinterpret_cast<const char*>(out), n);
    WebPFree(out);
    return s;
}

// Planar (1, C, H, W) `t` holds interleaved `px` (c channels) in its first `take` channels.
void expect_planar(const Tensor& t, const std::uint8_t* px, int w, int h, int c, int take) {
    ASSERT_EQ(t.dtype(), DType::UInt8);
    ASSERT_EQ(t.shape(), (Dims{1, take, h, w}));
    for (int ch = 0; ch < take; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                ASSERT_EQ(t.at<std::uint8_t>(0, ch, y, x), ch < c ? px[(y * w + x) * c + ch] : 255)
                    << "channel " << ch << " at " << y << "," << x;
}

std::string error_of(const std::string& bytes, ImageMode mode = ImageMode::Unchanged) {
    try {
        decode_webp(bytes, "t.webp", mode);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(Webp, LosslessFilesDecodeToTheirPixelsInEveryMode) {
    const int w = 37, h = 23;
    const auto rgba = pattern(w, h, 4), rgb = pattern(w, h, 3);
    const std::string with_alpha = encoded(rgba, w, h, 4, true), opaque = encoded(rgb, w, h, 3, true);
    expect_planar(decode_webp(with_alpha, "a", ImageMode::Unchanged), rgba.data(), w, h, 4, 4);
    expect_planar(decode_webp(with_alpha, "a", ImageMode::RgbAlpha), rgba.data(), w, h, 4, 4);
    // rgb: the alpha dropped (torchvision decodes with WebPDecodeRGB).
    std::vector<std::uint8_t> dropped;
    for (std::size_t i = 0; i < rgba.size(); i += 4) dropped.insert(dropped.end(), rgba.begin() + i, rgba.begin() + i + 3);
    expect_planar(decode_webp(with_alpha, "a", ImageMode::Rgb), dropped.data(), w, h, 3, 3);
    expect_planar(decode_webp(opaque, "b", ImageMode::Unchanged), rgb.data(), w, h, 3, 3);
    expect_planar(decode_webp(opaque, "b", ImageMode::Rgb), rgb.data(), w, h, 3, 3);
    // rgb_alpha of an opaque file: alpha 255 added.
    expect_planar(decode_webp(opaque, "b", ImageMode::RgbAlpha), rgb.data(), w, h, 3, 4);
}

TEST(Webp, LossyFilesDecodeAsLibwebpDecodesThem) {
    const int w = 64, h = 48;
    const auto rgb = pattern(w, h, 3);
    const std::string bytes = encoded(rgb, w, h, 3, false);
    int dw = 0, dh = 0;
    std::uint8_t* want = WebPDecodeRGB(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &dw, &dh);
    ASSERT_NE(want, nullptr);
    expect_planar(decode_image(bytes, "c", ImageFormat::Webp), want, w, h, 3, 3);
    WebPFree(want);
}

TEST(Webp, FoundByExtensionAndSignatureAndWrittenAsPng) {
    const auto rgb = pattern(9, 5, 3);
    const std::string bytes = encoded(rgb, 9, 5, 3, true);
    EXPECT_EQ(sniff_image_format(bytes), ImageFormat::Webp);
    EXPECT_EQ(image_format_of("x/Photo.WEBP"), ImageFormat::Webp);
    EXPECT_EQ(result_format(ImageFormat::Webp), ImageFormat::Png);
    EXPECT_EQ(result_format(ImageFormat::Jpeg), ImageFormat::Jpeg);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "toroid_webp_test";
    std::filesystem::create_directories(dir);
    write_file_atomic(dir / "a.webp", bytes);
    expect_planar(read_image(dir / "a.webp"), rgb.data(), 9, 5, 3, 3);
    std::filesystem::remove_all(dir);
    const Tensor t = decode_webp(bytes, "a");
    EXPECT_THROW(encode_image(t, ImageFormat::Webp), Error);
    EXPECT_THROW(parse_image_format("webp"), Error);
}

TEST(Webp, BadFilesAreOneLineErrors) {
    const auto rgb = pattern(40, 30, 3);
    const std::string bytes = encoded(rgb, 40, 30, 3, false);
    EXPECT_NE(error_of(bytes, ImageMode::Gray).find("mode 'gray' is not supported for WebP files"), std::string::npos);
    EXPECT_NE(error_of(bytes, ImageMode::GrayAlpha).find("not supported for WebP"), std::string::npos);
    EXPECT_NE(error_of("").find("file is empty"), std::string::npos);
    const char garbage[] = "RIFF\x10\0\0\0WEBPVP8 garbage";
    EXPECT_NE(error_of(std::string(garbage, sizeof garbage - 1)).find("invalid WebP"), std::string::npos);
    EXPECT_NE(error_of(std::string("\x89PNG\r\n\x1a\n", 8)).find("not a WebP file"), std::string::npos);
    for (std::size_t cut : {std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
        const std::string e = error_of(bytes.substr(0, cut));
        EXPECT_NE(e.find("invalid WebP"), std::string::npos) << cut << ": " << e;
        EXPECT_EQ(e.find('\n'), std::string::npos);
    }
    // The declared size is checked before decoding.
    set_max_image_pixels(100);
    const std::string e = error_of(bytes);
    set_max_image_pixels(-1);
    EXPECT_NE(e.find("WebP of 40x30 has 1200 pixels, more than the limit of 100"), std::string::npos) << e;
}

}  // namespace
}  // namespace toroid::io
