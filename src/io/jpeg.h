// JPEG files via libjpeg-turbo's TurboJPEG API: gray JPEGs decode to uint8 (1, 1, H, W),
// YCbCr / RGB JPEGs to (1, 3, H, W); CMYK / YCCK JPEGs are rejected with a clear error.
// Writing takes uint8 (1, C, H, W) with C = 1 (gray) or 3 (RGB, 4:2:0 chroma).
#pragma once

#include "core/tensor.h"

#include <filesystem>
#include <string>

namespace toroid::io {

// The quality written when none is asked for (the scale of libjpeg's cjpeg: 1..100).
inline constexpr int kDefaultJpegQuality = 90;

// Decodes JPEG bytes; `what` names the source in messages. Any libjpeg warning (truncated
// data, corrupt entropy-coded segments) is an error: a partly gray image is not accepted.
Tensor decode_jpeg(const std::string& bytes, const std::string& what);
Tensor read_jpeg(const std::filesystem::path& path);
std::string encode_jpeg(const Tensor& t, int quality = kDefaultJpegQuality);

}  // namespace toroid::io
