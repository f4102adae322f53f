// JPEG decoding and encoding through TurboJPEG (libjpeg-turbo 2.1). TurboJPEG turns
// libjpeg's longjmp errors into return codes, so the calls here only check a status and
// turn a failure into toroid::Error with the library's own message.
#include "io/jpeg.h"

#include "core/error.h"
#include "io/file.h"

#include <turbojpeg.h>

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

}  // namespace

Tensor decode_jpeg(const std::string& bytes, const std::string& what) {
    if (bytes.empty()) fail("{}: file is empty (expected a JPEG file)", what);
    if (bytes.size() < 3 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
        static_cast<unsigned char>(bytes[1]) != 0xD8)
        fail("{}: not a JPEG file (no start-of-image marker)", what);
    Handle h(tjInitDecompress());
    if (!h) fail("{}: cannot initialize libjpeg-turbo", what);
    const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto size = static_cast<unsigned long>(bytes.size());

    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(h.get(), src, size, &width, &height, &subsamp, &colorspace) != 0)
        fail("{}: invalid JPEG: {}", what, tj_message(h.get()));
    if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
        fail("{}: CMYK JPEG is not supported (toroid reads gray and RGB JPEGs; convert it to RGB first)", what);
    if (width < 1 || height < 1) fail("{}: invalid JPEG: empty image ({}x{})", what, width, height);
    check_image_pixels(std::int64_t{width} * height, what, fmt::format("JPEG of {}x{}", width, height));
    const bool gray = colorspace == TJCS_GRAY;
    const std::int64_t c = gray ? 1 : 3;
    const std::int64_t w = width, hgt = height;
    if (static_cast<double>(w * hgt * c) > kMaxExpansion * static_cast<double>(bytes.size()) + kExpansionAllowance)
        fail("{}: invalid JPEG: a {}x{} image cannot fit in {} bytes (truncated or corrupt)", what, w, hgt,
             bytes.size());

    // TurboJPEG writes interleaved rows: exactly a dense channels-last (1, C, H, W) tensor.
    Tensor t = Tensor::empty(DType::UInt8, {1, c, hgt, w}, Layout::ChannelsLast);
    // STOPONWARNING: libjpeg reports truncated data and corrupt segments as warnings and
    // fills the rest with gray; toroid treats them as failures. LIMITSCANS bounds the
    // number of progressive scans (a many-scan file takes unbounded time otherwise).
    const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_ACCURATEDCT;
    if (tjDecompress2(h.get(), src, size, t.data_as<unsigned char>(), width, static_cast<int>(w * c), height,
                      gray ? TJPF_GRAY : TJPF_RGB, flags) != 0)
        fail("{}: invalid JPEG: {}", what, tj_message(h.get()));
    return t;
}

Tensor read_jpeg(const std::filesystem::path& path) {
    return decode_jpeg(read_file(path, max_image_file_bytes()), printable(path.string()));
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
