// PNG files via libpng: 8-bit gray, gray+alpha, RGB, RGBA (palette expanded to RGB/RGBA)
// are read as uint8 (1, C, H, W); 16-bit PNGs are rejected with a clear error. Writing
// takes uint8 (1, C, H, W) with C in {1, 2, 3, 4}.
#pragma once

#include "core/tensor.h"

#include <filesystem>
#include <string>

namespace toroid::io {

Tensor decode_png(const std::string& bytes, const std::string& what);
Tensor read_png(const std::filesystem::path& path);
std::string encode_png(const Tensor& t);

}  // namespace toroid::io
