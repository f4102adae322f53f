#include "io/webp.h"

#include "core/error.h"
#include "io/file.h"

#include <webp/decode.h>

#include <cstring>

namespace toroid::io {
namespace {

std::string_view status_text(VP8StatusCode s) {
    switch (s) {
        case VP8_STATUS_OK: return "ok";
        case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
        case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
        case VP8_STATUS_BITSTREAM_ERROR: return "corrupt bitstream";
        case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
        case VP8_STATUS_SUSPENDED: return "suspended";
        case VP8_STATUS_USER_ABORT: return "aborted";
        case VP8_STATUS_NOT_ENOUGH_DATA: return "file is truncated";
    }
    return "unknown error";
}

}  // namespace

bool is_webp(std::string_view bytes) {
    return bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP";
}

Tensor decode_webp(const std::string& bytes, const std::string& what, ImageMode mode) {
    if (bytes.empty()) fail("{}: file is empty (expected a WebP file)", what);
    if (!is_webp(bytes)) fail("{}: not a WebP file (no RIFF/WEBP header)", what);
    if (mode == ImageMode::Gray || mode == ImageMode::GrayAlpha)
        fail("{}: mode '{}' is not supported for WebP files (torchvision's decode_webp returns RGB for it): decode "
             "with rgb, then convert with rgb_to_grayscale",
             what, image_mode_name(mode));
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    WebPBitstreamFeatures f{};
    if (const VP8StatusCode s = WebPGetFeatures(data, bytes.size(), &f); s != VP8_STATUS_OK)
        fail("{}: invalid WebP: {}", what, status_text(s));
    if (f.has_animation) fail("{}: animated WebP files are not supported", what);
    if (f.width < 1 || f.height < 1) fail("{}: invalid WebP: empty image ({}x{})", what, f.width, f.height);
    check_image_pixels(std::int64_t{f.width} * f.height, what, fmt::format("WebP of {}x{}", f.width, f.height));
    const std::int64_t h = f.height, w = f.width, plane = h * w;
    const bool alpha = f.has_alpha != 0;
    // Decoded straight into a channels-last tensor (interleaved pixels, as libwebp writes them).
    const bool four = mode == ImageMode::RgbAlpha || (mode == ImageMode::Unchanged && alpha);
    const std::int64_t c = four ? 4 : 3;
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w}, Layout::ChannelsLast);
    auto* out = static_cast<std::uint8_t*>(t.data());
    const auto bytes_out = static_cast<std::size_t>(plane * c);
    const int stride = static_cast<int>(w * c);
    const std::uint8_t* done = four ? WebPDecodeRGBAInto(data, bytes.size(), out, bytes_out, stride)
                                    : WebPDecodeRGBInto(data, bytes.size(), out, bytes_out, stride);
    if (done == nullptr) fail("{}: invalid WebP: the image data does not decode (corrupt or truncated)", what);
    return t;
}

}  // namespace toroid::io
