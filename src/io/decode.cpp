// Image modes by name, and decoding with a mode and the EXIF orientation (io/decode.h).
#include "io/decode.h"

#include "core/error.h"
#include "io/exif.h"
#include "io/file.h"
#include "io/jpeg.h"
#include "io/npy.h"
#include "io/png.h"
#include "io/webp.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace toroid::io {
namespace {

constexpr std::array<std::pair<std::string_view, ImageMode>, 5> kModes{{
    {"unchanged", ImageMode::Unchanged},
    {"gray", ImageMode::Gray},
    {"gray_alpha", ImageMode::GrayAlpha},
    {"rgb", ImageMode::Rgb},
    {"rgb_alpha", ImageMode::RgbAlpha},
}};

}  // namespace

ImageMode parse_image_mode(std::string_view name) {
    std::string lower(name.substr(0, 40));
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "grey") lower = "gray";
    for (const auto& [n, m] : kModes)
        if (name.size() == n.size() && lower == n) return m;
    fail("unknown image mode '{}' (use rgb, gray, rgb_alpha, gray_alpha or unchanged)", printable(name, 40));
}

std::string_view image_mode_name(ImageMode m) {
    for (const auto& [n, mode] : kModes)
        if (mode == m) return n;
    return "unchanged";
}

namespace {

// Whether a JPEG's region is decoded alone (libjpeg's cropping): not where an EXIF turn is to
// be applied or a draft scale asked for (those decode whole, then crop or copy).
bool decodes_jpeg_region(const std::string& bytes, ImageFormat format, const DecodeOptions& options) {
    return format == ImageFormat::Jpeg && !options.draft &&
           (!options.apply_exif_orientation || jpeg_exif_orientation(bytes) <= 1);
}

// The region of a whole decoded image (the same pixels a region decode gives).
Tensor crop_region(const Tensor& t, const std::array<std::int64_t, 4>& r, const std::string& what) {
    const auto [top, left, height, width] = r;
    if (top < 0 || left < 0 || height < 1 || width < 1 || top + height > t.dim(2) || left + width > t.dim(3))
        fail("{}: the region {}x{} at ({}, {}) is not inside the {}x{} image", what, width, height, left, top, t.dim(3),
             t.dim(2));
    return t.slice(2, top, height).slice(3, left, width).to_layout(Layout::ChannelsLast);
}

}  // namespace

Tensor decode_image(const std::string& bytes, const std::string& what, ImageFormat format,
                    const DecodeOptions& options) {
    if (options.region) {
        if (decodes_jpeg_region(bytes, format, options))
            return decode_jpeg_region(bytes, what, options.mode, *options.region);
        DecodeOptions whole = options;
        whole.region.reset();
        return crop_region(decode_image(bytes, what, format, whole), *options.region, what);
    }
    if (format == ImageFormat::Npy) return parse_npy_image(bytes, what);
    if (format == ImageFormat::Webp) return decode_webp(bytes, what, options.mode);  // no EXIF, as torchvision
    const bool png = format == ImageFormat::Png;
    const int orientation = !options.apply_exif_orientation ? 1
                            : png                           ? png_exif_orientation(bytes)
                                                            : jpeg_exif_orientation(bytes);
    std::array<std::int64_t, 2> at_least{0, 0};
    if (!png && options.draft) {
        if (const auto size = jpeg_size(bytes)) {
            // Orientations 5-8 transpose: the caller's height is the stored width.
            const bool transposed = orientation >= 5 && orientation <= 8;
            const auto [h, w] = *size;
            const auto least = transposed ? options.draft(w, h) : options.draft(h, w);
            at_least = transposed ? std::array<std::int64_t, 2>{least[1], least[0]} : least;
        }
    }
    Tensor t = png ? decode_png(bytes, what, options.mode) : decode_jpeg(bytes, what, options.mode, at_least);
    if (!options.apply_exif_orientation) return t;
    return apply_orientation(t, orientation);
}

void decode_image_into(const std::string& bytes, const std::string& what, ImageFormat format,
                       const DecodeOptions& options, const Tensor& out) {
    if (decodes_jpeg_region(bytes, format, options)) {
        decode_jpeg_region_into(bytes, what, options.mode, options.region, out, {0, 0});
        return;
    }
    DecodeOptions whole = options;
    whole.region.reset();
    const Tensor t = decode_image(bytes, what, format, whole);
    if (t.dtype() != out.dtype() || t.shape() != out.shape())
        fail("{}: the decode's output is {} {}x{}x{}, the image {} {}x{}x{}", what, dtype_name(out.dtype()), out.dim(1),
             out.dim(2), out.dim(3), dtype_name(t.dtype()), t.dim(1), t.dim(2), t.dim(3));
    Tensor dst = out;  // a view of the same memory
    dst.copy_from(t);
}

std::array<std::int64_t, 3> image_info(const std::string& bytes, const std::string& what, ImageFormat format,
                                       const DecodeOptions& options) {
    if (format == ImageFormat::Jpeg && !options.draft) {
        const auto [c, h, w] = jpeg_info(bytes, what, options.mode);
        const int orientation = options.apply_exif_orientation ? jpeg_exif_orientation(bytes) : 1;
        const bool transposed = orientation >= 5 && orientation <= 8;
        return {c, transposed ? w : h, transposed ? h : w};
    }
    DecodeOptions whole = options;
    whole.region.reset();
    const Tensor t = decode_image(bytes, what, format, whole);
    return {t.dim(1), t.dim(2), t.dim(3)};
}

std::optional<ImageFormat> sniff_image_format(std::string_view bytes) {
    if (bytes.size() >= 8 && bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return ImageFormat::Png;
    if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0xFF && static_cast<unsigned char>(bytes[1]) == 0xD8)
        return ImageFormat::Jpeg;
    if (bytes.size() >= 6 && bytes.substr(0, 6) == std::string_view("\x93NUMPY", 6)) return ImageFormat::Npy;
    if (is_webp(bytes)) return ImageFormat::Webp;
    return std::nullopt;
}

}  // namespace toroid::io
