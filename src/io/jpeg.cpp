// JPEG decoding and encoding through TurboJPEG (libjpeg-turbo 2.1). TurboJPEG turns
// libjpeg's longjmp errors into return codes, so the calls here only check a status and
// turn a failure into toroid::Error with the library's own message.
#include "io/jpeg.h"

#include "core/error.h"
#include "io/file.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cstdint>
#include <memory>

namespace toroid::io {
namespace {

struct HandleCloser {
    void operator()(void* h) const { tjDestroy(h); }
};
using Handle = std::unique_ptr<void, HandleCloser>;

struct TjFree {
    void operator()(unsigned char* p) const { tjFree(p); }
};

std::string tj_message(tjhandle h) {
    std::string msg = tjGetErrorStr2(h);
    return msg.empty() ? "unknown error" : printable(msg, 200);
}

// The most decoded bytes toroid accepts per byte of file (plus a fixed allowance). Real
// photographs compress 10:1 to 100:1 and flat synthetic images a few hundred to one; a
// header claiming far more than this is corrupt or a decompression bomb, and is refused
// before the output is allocated.
constexpr double kMaxExpansion = 10000.0;
constexpr double kExpansionAllowance = 64.0 * 1024 * 1024;

// torchvision's CMYK conversion (Pillow's): a channel's ink `cmy` = 255 - c under black k.
std::uint8_t cmyk_channel(int k, int cmy) {
    int v = k * cmy + 128;
    v = ((v >> 8) + v) >> 8;
    return static_cast<std::uint8_t>(std::clamp(k - v, 0, 255));
}

std::uint8_t luma(int r, int g, int b) { return static_cast<std::uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16); }

}  // namespace

std::optional<std::array<std::int64_t, 2>> jpeg_size(const std::string& bytes) {
    Handle h(tjInitDecompress());
    if (!h) return std::nullopt;
    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(h.get(), reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<unsigned long>(bytes.size()), &width, &height, &subsamp, &colorspace) != 0)
        return std::nullopt;
    return std::array<std::int64_t, 2>{height, width};
}

Tensor decode_jpeg(const std::string& bytes, const std::string& what, ImageMode mode,
                   std::array<std::int64_t, 2> at_least) {
    if (bytes.empty()) fail("{}: file is empty (expected a JPEG file)", what);
    if (bytes.size() < 3 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
        static_cast<unsigned char>(bytes[1]) != 0xD8)
        fail("{}: not a JPEG file (no start-of-image marker)", what);
    if (mode == ImageMode::GrayAlpha || mode == ImageMode::RgbAlpha)
        fail("{}: a JPEG has no alpha channel: mode '{}' is not supported for JPEG files (use rgb, gray or unchanged)",
             what, image_mode_name(mode));
    Handle h(tjInitDecompress());
    if (!h) fail("{}: cannot initialize libjpeg-turbo", what);
    const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto size = static_cast<unsigned long>(bytes.size());

    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(h.get(), src, size, &width, &height, &subsamp, &colorspace) != 0)
        fail("{}: invalid JPEG: {}", what, tj_message(h.get()));
    if (width < 1 || height < 1) fail("{}: invalid JPEG: empty image ({}x{})", what, width, height);
    check_image_pixels(std::int64_t{width} * height, what, fmt::format("JPEG of {}x{}", width, height));
    const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
    const bool file_gray = colorspace == TJCS_GRAY;
    // The channels of the result, and what libjpeg decodes to (CMYK is converted here).
    std::int64_t c = 3;
    if (mode == ImageMode::Gray || (mode == ImageMode::Unchanged && file_gray)) c = 1;
    if (mode == ImageMode::Unchanged && cmyk) c = 4;
    const int pixel_format = cmyk ? TJPF_CMYK : c == 1 ? TJPF_GRAY : TJPF_RGB;
    const std::int64_t decoded_c = cmyk ? 4 : c;
    // Draft: the smallest DCT scale whose image is still at least `at_least` (TurboJPEG picks
    // the scaling factor from the size asked for).
    if (at_least[0] > 0 || at_least[1] > 0) {
        int n = 0;
        const tjscalingfactor* factors = tjGetScalingFactors(&n);
        int best_w = width, best_h = height;
        for (int i = 0; factors != nullptr && i < n; ++i) {
            const tjscalingfactor f = factors[i];
            if (f.num != 1) continue;  // 1/2, 1/4, 1/8: the scales that skip work
            const int sw = TJSCALED(width, f), sh = TJSCALED(height, f);
            if (sw >= at_least[1] && sh >= at_least[0] && std::int64_t{sw} * sh < std::int64_t{best_w} * best_h) {
                best_w = sw;
                best_h = sh;
            }
        }
        width = best_w;
        height = best_h;
    }
    const std::int64_t w = width, hgt = height;
    if (static_cast<double>(w * hgt * decoded_c) > kMaxExpansion * static_cast<double>(bytes.size()) + kExpansionAllowance)
        fail("{}: invalid JPEG: a {}x{} image cannot fit in {} bytes (truncated or corrupt)", what, w, hgt,
             bytes.size());

    // TurboJPEG writes interleaved rows: exactly a dense channels-last (1, C, H, W) tensor.
    Tensor decoded = Tensor::empty(DType::UInt8, {1, decoded_c, hgt, w}, Layout::ChannelsLast);
    // STOPONWARNING: libjpeg reports truncated data and corrupt segments as warnings and
    // fills the rest with gray; toroid treats them as failures. LIMITSCANS bounds the
    // number of progressive scans (a many-scan file takes unbounded time otherwise).
    const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_ACCURATEDCT;
    if (tjDecompress2(h.get(), src, size, decoded.data_as<unsigned char>(), width, static_cast<int>(w * decoded_c),
                      height, pixel_format, flags) != 0)
        fail("{}: invalid JPEG: {}", what, tj_message(h.get()));
    if (decoded_c == c) return decoded;

    Tensor t = Tensor::empty(DType::UInt8, {1, c, hgt, w}, Layout::ChannelsLast);
    const auto* in = decoded.data_as<const std::uint8_t>();
    auto* out = t.data_as<std::uint8_t>();
    for (std::int64_t i = 0; i < w * hgt; ++i, in += 4) {
        const int k = in[3];
        const std::uint8_t r = cmyk_channel(k, 255 - in[0]), g = cmyk_channel(k, 255 - in[1]),
                           b = cmyk_channel(k, 255 - in[2]);
        if (c == 3) {
            *out++ = r;
            *out++ = g;
            *out++ = b;
        } else {
            *out++ = luma(r, g, b);
        }
    }
    return t;
}

Tensor read_jpeg(const std::filesystem::path& path, ImageMode mode) {
    return decode_jpeg(read_file(path, max_image_file_bytes()), printable(path.string()), mode);
}

std::string encode_jpeg(const Tensor& t, int quality) {
    const Dims& d = t.shape();
    if (quality < 1 || quality > 100) fail("JPEG quality must be 1..100 (got {})", quality);
    if (t.dtype() != DType::UInt8)
        fail("JPEG holds uint8 pixels, got a {} tensor (write .npy for float32 data)", dtype_name(t.dtype()));
    if (d[0] != 1) fail("JPEG holds one image, got a batch of {} (write .npy for batches)", d[0]);
    if (d[1] != 1 && d[1] != 3) fail("JPEG holds 1 (gray) or 3 (RGB) channels, got {} (write .png or .npy)", d[1]);
    if (d[2] < 1 || d[3] < 1) fail("JPEG cannot hold an empty image ({}x{})", d[3], d[2]);
    if (d[2] > 65535 || d[3] > 65535) fail("image of {}x{} is too large for JPEG (at most 65535x65535)", d[3], d[2]);

    Tensor hwc = t.is_dense(Layout::ChannelsLast) ? t : t.to_layout(Layout::ChannelsLast);
    Handle h(tjInitCompress());
    if (!h) fail("cannot initialize libjpeg-turbo for writing");
    const bool gray = d[1] == 1;
    unsigned char* out = nullptr;
    unsigned long out_size = 0;
    const int rc = tjCompress2(h.get(), hwc.data_as<unsigned char>(), static_cast<int>(d[3]),
                               static_cast<int>(d[3] * d[1]), static_cast<int>(d[2]), gray ? TJPF_GRAY : TJPF_RGB,
                               &out, &out_size, gray ? TJSAMP_GRAY : TJSAMP_420, quality, TJFLAG_ACCURATEDCT);
    std::unique_ptr<unsigned char, TjFree> owned(out);
    if (rc != 0) fail("cannot encode JPEG: {}", tj_message(h.get()));
    return std::string(reinterpret_cast<const char*>(out), out_size);
}

}  // namespace toroid::io
