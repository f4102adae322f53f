// EXIF orientation: the tag read from TIFF blocks of either byte order, from a JPEG's first
// APP1 segment and from a PNG's eXIf chunk (with its CRC), broken blocks giving none, and
// the eight orientations applied as flips and transposes.
#include "io/exif.h"

#include "io/file.h"
#include "io/jpeg.h"
#include "io/png.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace toroid::io {
namespace {

// A TIFF block with one directory of `tags` (tag, SHORT value) in the given byte order.
std::string tiff(bool little, const std::vector<std::pair<int, int>>& tags) {
    std::string b = little ? "II" : "MM";
    auto u16 = [&](int v) {
        const char lo = static_cast<char>(v & 0xFF), hi = static_cast<char>((v >> 8) & 0xFF);
        b += little ? std::string{lo, hi} : std::string{hi, lo};
    };
    auto u32 = [&](std::uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            const int shift = little ? 8 * i : 8 * (3 - i);
            b += static_cast<char>((v >> shift) & 0xFF);
        }
    };
    u16(0x2A);
    u32(8);
    u16(static_cast<int>(tags.size()));
    for (auto [tag, value] : tags) {
        u16(tag);
        u16(3);  // SHORT
        u32(1);
        u16(value);
        u16(0);
    }
    u32(0);
    return b;
}

int orientation_of(const std::string& block) {
    return exif_orientation(reinterpret_cast<const unsigned char*>(block.data()), block.size());
}

TEST(Exif, OrientationTagInEitherByteOrder) {
    for (bool little : {true, false}) {
        for (int o = 1; o <= 8; ++o) EXPECT_EQ(orientation_of(tiff(little, {{0x010F, 7}, {0x0112, o}})), o);
        EXPECT_EQ(orientation_of(tiff(little, {{0x010F, 7}})), 0);  // no tag
        EXPECT_EQ(orientation_of(tiff(little, {{0x0112, 9}})), 0);  // out of range
        EXPECT_EQ(orientation_of(tiff(little, {{0x0112, 0}})), 0);
    }
}

TEST(Exif, BrokenBlocksHaveNoOrientation) {
    const std::string good = tiff(true, {{0x0112, 6}});
    for (std::size_t n = 0; n < good.size(); ++n) {
        SCOPED_TRACE(n);
        const int o = orientation_of(good.substr(0, n));
        EXPECT_TRUE(o == 0 || (o == 6 && n >= 20)) << o;  // the value sits at bytes 18-19
    }
    std::string bad_mark = good;
    bad_mark[2] = 0x2B;
    EXPECT_EQ(orientation_of(bad_mark), 0);
    std::string far = good;
    far[4] = static_cast<char>(0xF0);  // directory offset past the end
    EXPECT_EQ(orientation_of(far), 0);
    EXPECT_EQ(orientation_of("IM*\0\x08\0\0\0"), 0);
    // A directory claiming 65535 entries ends at the block's end.
    std::string many = good;
    many[8] = many[9] = static_cast<char>(0xFF);
    many[10] = 0x01;
    many[11] = 0x01;
    EXPECT_EQ(orientation_of(many), 0);
}

Tensor pattern(std::int64_t c, std::int64_t h, std::int64_t w) {
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w}, Layout::ChannelsLast);
    for (std::int64_t k = 0; k < c; ++k)
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) t.at<std::uint8_t>(0, k, y, x) = static_cast<std::uint8_t>(k * 100 + y * 10 + x);
    return t;
}

TEST(Exif, EightOrientationsAsFlipsAndTransposes) {
    const Tensor t = pattern(2, 3, 5);  // H 3, W 5
    auto at = [](const Tensor& r, int k, int y, int x) { return r.at<std::uint8_t>(0, k, y, x); };
    for (int o = 0; o <= 8; ++o) {
        SCOPED_TRACE(o);
        const Tensor r = apply_orientation(t, o);
        const bool tr = o >= 5;
        ASSERT_EQ(r.shape(), (Dims{1, 2, tr ? 5 : 3, tr ? 3 : 5}));
        for (int k = 0; k < 2; ++k)
            for (int y = 0; y < r.shape()[2]; ++y)
                for (int x = 0; x < r.shape()[3]; ++x) {
                    // torchvision: 2 flip(-1), 3 flip(-2,-1), 4 flip(-2), 5 transpose,
                    // 6 transpose+flip(-1), 7 transpose+flip(-2,-1), 8 transpose+flip(-2).
                    int sy = y, sx = x;
                    const int H = 3, W = 5;
                    switch (o) {
                        case 2: sx = W - 1 - x; break;
                        case 3: sy = H - 1 - y; sx = W - 1 - x; break;
                        case 4: sy = H - 1 - y; break;
                        case 5: sy = x; sx = y; break;
                        case 6: sy = H - 1 - x; sx = y; break;
                        case 7: sy = H - 1 - x; sx = W - 1 - y; break;
                        case 8: sy = x; sx = W - 1 - y; break;
                        default: break;
                    }
                    ASSERT_EQ(at(r, k, y, x), at(t, k, sy, sx)) << k << " " << y << " " << x;
                }
    }
}

std::string with_app1(const std::string& jpeg, const std::string& payload) {
    const std::size_t len = payload.size() + 2;
    std::string seg = "\xFF\xE1";
    seg += static_cast<char>(len >> 8);
    seg += static_cast<char>(len & 0xFF);
    return jpeg.substr(0, 2) + seg + payload + jpeg.substr(2);
}

TEST(Exif, JpegFirstApp1DecidesAndDecodeImageAppliesIt) {
    const Tensor img = pattern(3, 16, 24);
    const std::string plain = encode_jpeg(img, 95);
    EXPECT_EQ(jpeg_exif_orientation(plain), 0);
    const std::string rotated = with_app1(plain, std::string("Exif\0\0", 6) + tiff(false, {{0x0112, 6}}));
    EXPECT_EQ(jpeg_exif_orientation(rotated), 6);
    // An XMP APP1 first hides a later EXIF one (the first APP1 is the one read).
    const std::string xmp_first = with_app1(rotated, "http://ns.adobe.com/xap/1.0/\0<x/>");
    EXPECT_EQ(jpeg_exif_orientation(xmp_first), 0);
    const Tensor upright = decode_image(plain, "p.jpg", ImageFormat::Jpeg);
    const Tensor turned = decode_image(rotated, "r.jpg", ImageFormat::Jpeg);
    ASSERT_EQ(turned.shape(), (Dims{1, 3, 24, 16}));
    const Tensor want = apply_orientation(upright, 6);
    for (int k = 0; k < 3; ++k)
        for (int y = 0; y < 24; ++y)
            for (int x = 0; x < 16; ++x) ASSERT_EQ(turned.at<std::uint8_t>(0, k, y, x), want.at<std::uint8_t>(0, k, y, x));
    DecodeOptions off;
    off.apply_exif_orientation = false;
    EXPECT_EQ(decode_image(rotated, "r.jpg", ImageFormat::Jpeg, off).shape(), (Dims{1, 3, 16, 24}));
    // Segments cut short: no orientation, and the walk stays inside the bytes.
    const std::size_t segment_end = 2 + 4 + 6 + tiff(false, {{0x0112, 6}}).size();
    for (std::size_t n = 0; n < segment_end; ++n) EXPECT_EQ(jpeg_exif_orientation(rotated.substr(0, n)), 0) << n;
    EXPECT_EQ(jpeg_exif_orientation(rotated.substr(0, segment_end)), 6);
}

std::string png_chunk(const std::string& type, const std::string& data) {
    std::uint32_t c = 0xFFFFFFFFu;
    const std::string body = type + data;
    for (unsigned char ch : body) {
        c ^= ch;
        for (int b = 0; b < 8; ++b) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    c ^= 0xFFFFFFFFu;
    std::string out;
    for (std::uint32_t v : {static_cast<std::uint32_t>(data.size()), c}) {
        if (v == c) out += body;
        for (int i = 3; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
    }
    return out;
}

TEST(Exif, PngExifChunkBeforeTheImageDataWithAGoodCrc) {
    const Tensor img = pattern(3, 6, 9);
    const std::string plain = encode_png(img);
    const std::size_t after_ihdr = 8 + 25;
    const std::string chunk = png_chunk("eXIf", tiff(true, {{0x0112, 3}}));
    const std::string oriented = plain.substr(0, after_ihdr) + chunk + plain.substr(after_ihdr);
    EXPECT_EQ(png_exif_orientation(plain), 0);
    EXPECT_EQ(png_exif_orientation(oriented), 3);
    const Tensor turned = decode_image(oriented, "o.png", ImageFormat::Png);
    ASSERT_EQ(turned.shape(), img.shape());
    EXPECT_EQ(turned.at<std::uint8_t>(0, 1, 0, 0), img.at<std::uint8_t>(0, 1, 5, 8));
    std::string bad_crc = oriented;
    bad_crc[after_ihdr + chunk.size() - 1] ^= 1;
    EXPECT_EQ(png_exif_orientation(bad_crc), 0);
    // After the image data it is not read.
    const std::size_t iend = plain.size() - 12;
    EXPECT_EQ(png_exif_orientation(plain.substr(0, iend) + chunk + plain.substr(iend)), 0);
}

}  // namespace
}  // namespace toroid::io
