// JPEG files via libjpeg-turbo's TurboJPEG API, decoded to uint8 (1, C, H, W) in the
// channels `mode` asks for (io/decode.h): unchanged keeps gray (1), YCbCr / RGB (3) and
// CMYK / YCCK (4, CMYK) as stored; rgb and gray convert as torchvision's decode_jpeg does.
// Writing takes uint8 (1, C, H, W) with C = 1 (gray) or 3 (RGB, 4:2:0 chroma).
#pragma once

#include "core/tensor.h"
#include "io/decode.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace toroid::io {

// The quality written when none is asked for (the scale of libjpeg's cjpeg: 1..100).
inline constexpr int kDefaultJpegQuality = 90;

// Decodes JPEG bytes; `what` names the source in messages. Any libjpeg warning (truncated
// data, corrupt entropy-coded segments) is an error: a partly gray image is not accepted.
// The EXIF orientation is not applied here (io::decode_image applies it).
// `at_least` (height, width): decode at the smallest DCT scale (1/8, 1/4, 1/2 or 1) whose
// result is at least that large ({0, 0}: full size; io/decode.h, DecodeOptions::draft).
Tensor decode_jpeg(const std::string& bytes, const std::string& what, ImageMode mode = ImageMode::Unchanged,
                   std::array<std::int64_t, 2> at_least = {0, 0});
// The region (top, left, height, width) of a JPEG, decoded as decode_jpeg decodes the whole
// file (the same pixels), reading only the rows down to its bottom and, through libjpeg's
// cropping, the iMCU columns around it. The region must lie inside the image.
Tensor decode_jpeg_region(const std::string& bytes, const std::string& what, ImageMode mode,
                          const std::array<std::int64_t, 4>& region);
// The same region (nullopt: the whole image) decoded into `out`: uint8 (1, C, h, w) in
// `mode`'s channels, dense channels-last, whose pixel (0, 0) is the image's pixel `origin`
// (row, column) and which holds the whole region. Pixels of `out` around the region may be
// written too (with the image's own pixels: libjpeg decodes whole iMCUs); the others are left
// as they were.
void decode_jpeg_region_into(const std::string& bytes, const std::string& what, ImageMode mode,
                             const std::optional<std::array<std::int64_t, 4>>& region, const Tensor& out,
                             std::array<std::int64_t, 2> origin);
// The (channels in `mode`, height, width) a JPEG's header declares, checked as decode_jpeg
// checks it (a one-line toroid::Error for a bad header or mode).
std::array<std::int64_t, 3> jpeg_info(const std::string& bytes, const std::string& what, ImageMode mode);
// Whether a JPEG's marker walk reaches its end-of-image marker (false: truncated or broken
// between markers). Segments are skipped by their lengths (an EXIF thumbnail's markers are
// never seen), entropy-coded data up to the next marker that is not a stuffed 0xFF or a
// restart (memchr), and bytes after the end marker (camera trailers, a motion photo's video)
// are never read.
bool jpeg_reaches_end_marker(std::string_view bytes);
// The (height, width) a JPEG's header declares; nullopt where it cannot be read.
std::optional<std::array<std::int64_t, 2>> jpeg_size(const std::string& bytes);
Tensor read_jpeg(const std::filesystem::path& path, ImageMode mode = ImageMode::Unchanged);
std::string encode_jpeg(const Tensor& t, int quality = kDefaultJpegQuality);

}  // namespace toroid::io
