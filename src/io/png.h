// PNG files via libpng: 8-bit gray, gray+alpha, RGB, RGBA and palettes are read as uint8
// (1, C, H, W) in the channels `mode` asks for (io/decode.h; unchanged expands a palette to
// RGB, or RGBA with its transparency); 16-bit PNGs are rejected with a clear error. Writing
// takes uint8 (1, C, H, W) with C in {1, 2, 3, 4}.
#pragma once

#include "core/tensor.h"
#include "io/decode.h"

#include <filesystem>
#include <string>

namespace toroid::io {

// The EXIF orientation is not applied here (io::decode_image applies it).
Tensor decode_png(const std::string& bytes, const std::string& what, ImageMode mode = ImageMode::Unchanged);
Tensor read_png(const std::filesystem::path& path, ImageMode mode = ImageMode::Unchanged);
std::string encode_png(const Tensor& t);

}  // namespace toroid::io
