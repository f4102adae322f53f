// EXIF orientation: a bounded walk over the first image directory of a TIFF-structured block
// (the layout both JPEG's APP1 and PNG's eXIf hold), read the way torchvision's decoders read
// it, so that toroid orients a file exactly as torchvision.io.decode_image does.
#include "io/exif.h"

#include <cstdint>
#include <cstring>

namespace toroid::io {
namespace {

constexpr std::uint32_t kNoValue = 0xFFFF;  // what a read past the block gives
constexpr std::uint16_t kOrientationTag = 0x0112;

struct TiffReader {
    const unsigned char* data;
    std::size_t size;
    bool little;

    std::uint32_t u16(std::size_t at) const {
        if (at >= size || size - at < 2) return kNoValue;
        return little ? data[at] | (data[at + 1] << 8) : (data[at] << 8) | data[at + 1];
    }
    std::uint32_t u32(std::size_t at) const {
        if (at >= size || size - at < 4) return kNoValue;
        const std::uint32_t b0 = data[at], b1 = data[at + 1], b2 = data[at + 2], b3 = data[at + 3];
        return little ? b0 | (b1 << 8) | (b2 << 16) | (b3 << 24) : (b0 << 24) | (b1 << 16) | (b2 << 8) | b3;
    }
};

std::uint32_t be32(const unsigned char* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// The CRC-32 of PNG chunks (ISO 3309), over the type and data.
std::uint32_t png_crc(const unsigned char* p, std::size_t n) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int b = 0; b < 8; ++b) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

}  // namespace

int exif_orientation(const unsigned char* tiff, std::size_t size) {
    // Byte order "II" (little-endian) or "MM" (big-endian), then the mark 42, then the offset
    // of the first directory: a count of 12-byte entries (tag, type, count, value).
    if (size < 8 || tiff[0] != tiff[1] || (tiff[0] != 'I' && tiff[0] != 'M')) return 0;
    const TiffReader r{tiff, size, tiff[0] == 'I'};
    if (r.u16(2) != 0x2A) return 0;
    std::size_t at = r.u32(4);
    const std::uint32_t entries = r.u16(at);
    if (entries == kNoValue) return 0;
    at += 2;
    for (std::uint32_t e = 0; e < entries; ++e, at += 12) {
        const std::uint32_t tag = r.u16(at);
        if (tag == kNoValue) return 0;
        if (tag == kOrientationTag) {
            const std::uint32_t o = r.u16(at + 8);
            return o >= 1 && o <= 8 ? static_cast<int>(o) : 0;
        }
    }
    return 0;
}

int jpeg_exif_orientation(std::string_view jpeg) {
    // The segments before the scan data: 0xFF, a marker byte, then (except for the standalone
    // markers) a big-endian length that counts itself. The first APP1 decides.
    const auto* p = reinterpret_cast<const unsigned char*>(jpeg.data());
    const std::size_t n = jpeg.size();
    if (n < 4 || p[0] != 0xFF || p[1] != 0xD8) return 0;
    std::size_t at = 2;
    while (at + 1 < n) {
        if (p[at] != 0xFF) return 0;
        while (at + 1 < n && p[at + 1] == 0xFF) ++at;  // fill bytes
        if (at + 1 >= n) return 0;
        const unsigned char marker = p[at + 1];
        at += 2;
        if (marker == 0xD9 || marker == 0xDA) return 0;  // end of image, start of scan
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
        if (at + 2 > n) return 0;
        const std::size_t length = (std::size_t{p[at]} << 8) | p[at + 1];
        if (length < 2 || length > n - at) return 0;
        if (marker == 0xE1) {
            constexpr std::size_t kHeader = 6;  // "Exif\0\0"
            const std::size_t data = length - 2;
            return data > kHeader ? exif_orientation(p + at + 2 + kHeader, data - kHeader) : 0;
        }
        at += length;
    }
    return 0;
}

int png_exif_orientation(std::string_view png) {
    // Chunks after the 8-byte signature: length, type, data, CRC. libpng keeps an eXIf chunk
    // only when its CRC matches and it starts with a byte-order mark, and decoders read it
    // before the image data.
    const auto* p = reinterpret_cast<const unsigned char*>(png.data());
    const std::size_t n = png.size();
    std::size_t at = 8;
    while (at <= n && n - at >= 12) {
        const std::size_t length = be32(p + at);
        const unsigned char* type = p + at + 4;
        if (length > n - at - 12) return 0;
        if (std::memcmp(type, "IDAT", 4) == 0 || std::memcmp(type, "IEND", 4) == 0) return 0;
        if (std::memcmp(type, "eXIf", 4) == 0)
            return png_crc(type, length + 4) == be32(p + at + 8 + length) ? exif_orientation(p + at + 8, length) : 0;
        at += 12 + length;
    }
    return 0;
}

Tensor apply_orientation(const Tensor& image, int o) {
    if (o < 2 || o > 8) return image;
    const Dims& d = image.shape();
    const std::int64_t c = d[1], h = d[2], w = d[3];
    const bool transpose = o >= 5;
    const std::int64_t oh = transpose ? w : h, ow = transpose ? h : w;
    // Output (y, x) reads input (sy, sx): for 5-8 the transposed image T(y, x) = I(x, y) is
    // then flipped as for 1-4 (6 flips W, 7 both, 8 H).
    const bool flip_w = o == 2 || o == 3 || o == 6 || o == 7;
    const bool flip_h = o == 3 || o == 4 || o == 7 || o == 8;
    Tensor out = Tensor::empty(image.dtype(), {1, c, oh, ow}, Layout::ChannelsLast);
    const std::size_t item = dtype_size(image.dtype());
    const auto* src = static_cast<const unsigned char*>(image.data());
    auto* dst = static_cast<unsigned char*>(out.data());
    for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t x = 0; x < ow; ++x) {
            const std::int64_t ty = flip_h ? oh - 1 - y : y, tx = flip_w ? ow - 1 - x : x;
            const std::int64_t sy = transpose ? tx : ty, sx = transpose ? ty : tx;
            for (std::int64_t k = 0; k < c; ++k) {
                const std::int64_t from = k * image.stride(1) + sy * image.stride(2) + sx * image.stride(3);
                const std::int64_t to = k * out.stride(1) + y * out.stride(2) + x * out.stride(3);
                std::memcpy(dst + to * static_cast<std::int64_t>(item), src + from * static_cast<std::int64_t>(item),
                            item);
            }
        }
    }
    return out;
}

}  // namespace toroid::io
