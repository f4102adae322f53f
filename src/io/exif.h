// The EXIF orientation of JPEG and PNG files, and the flips and transposes that apply it.
// Only the orientation tag of the first image directory is read, with bounds checked at every
// step: a broken EXIF block means no orientation, never an error or a read past the data.
#pragma once

#include "core/tensor.h"

#include <cstddef>
#include <string_view>

namespace toroid::io {

// The orientation (1..8) in a TIFF-structured EXIF block (starting at its byte-order mark),
// or 0 where it has none or the value is not 1..8.
int exif_orientation(const unsigned char* tiff, std::size_t size);
// The orientation of a JPEG file (its first APP1 segment, after the 6-byte "Exif\0\0"
// header) and of a PNG file (its eXIf chunk, when it comes before the image data).
int jpeg_exif_orientation(std::string_view jpeg);
int png_exif_orientation(std::string_view png);

// `image` (1, C, H, W) as orientation `o` asks: 2 flips W, 3 turns it 180°, 4 flips H, 5-8
// transpose H and W first (then 6 flips W, 7 both, 8 H). Other values return it unchanged.
// The result is dense channels-last.
Tensor apply_orientation(const Tensor& image, int o);

}  // namespace toroid::io
