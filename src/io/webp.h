// WebP files via libwebp (lossy VP8 and lossless VP8L; still images): read as uint8
// (1, C, H, W) in the channels `mode` asks for, as torchvision.io.decode_webp decodes them
// (WebPDecodeRGB / WebPDecodeRGBA): unchanged gives RGBA where the file has alpha, else RGB;
// rgb drops the alpha, rgb_alpha adds an opaque one. gray and gray_alpha are refused
// (torchvision ignores them for WebP and returns RGB). Animated files are refused, as torchvision refuses them; the size the header
// declares is checked against the pixel limit before anything is decoded.
#pragma once

#include "core/tensor.h"
#include "io/decode.h"

#include <string>

namespace toroid::io {

Tensor decode_webp(const std::string& bytes, const std::string& what, ImageMode mode = ImageMode::Unchanged);
// Whether `bytes` start as a WebP file does ("RIFF", a size, "WEBP").
bool is_webp(std::string_view bytes);

}  // namespace toroid::io
