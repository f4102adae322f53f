// What a decoder makes of an image file's pixels: the channels asked for (torchvision's
// ImageReadMode) and whether the EXIF orientation is applied.
#pragma once

#include "core/tensor.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace toroid::io {

// The channels a decoded image has, as torchvision.io.decode_image's `mode` converts them:
// - Unchanged: as the file stores them (gray 1, gray+alpha 2, RGB 3, RGBA 4; a CMYK JPEG 4,
//   CMYK). A palette PNG is expanded to RGB, or RGBA where it has transparency (torchvision
//   returns the palette's indices instead).
// - Gray, GrayAlpha, Rgb, RgbAlpha: converted as torchvision converts them (libpng's and
//   libjpeg's conversions; CMYK and YCCK JPEGs through torchvision's CMYK formula). JPEG has
//   no alpha: GrayAlpha and RgbAlpha are refused for it, as torchvision refuses them.
enum class ImageMode { Unchanged, Gray, GrayAlpha, Rgb, RgbAlpha };

// "unchanged", "gray", "gray_alpha", "rgb", "rgb_alpha" (any case; torchvision's enum names
// RGB_ALPHA etc. too); anything else is a toroid::Error naming the choices.
ImageMode parse_image_mode(std::string_view name);
std::string_view image_mode_name(ImageMode m);

struct DecodeOptions {
    ImageMode mode = ImageMode::Unchanged;
    // The EXIF orientation tag (a JPEG's first APP1 segment, a PNG's eXIf chunk before its
    // image data) is applied: the image is flipped and/or transposed as torchvision's
    // decode_image(apply_exif_orientation=True) does. Files without the tag are unchanged.
    bool apply_exif_orientation = true;
    // Draft decoding (opt-in; not exact): given a JPEG's size (height, width, after the EXIF
    // orientation), the least size its decoded image may have, or {0, 0} for the full size.
    // The JPEG is then decoded at 1/2, 1/4 or 1/8 of its size in the DCT domain (libjpeg-turbo's
    // scaling: it skips the finer frequencies), the smallest of those at least that large.
    // PNG files decode whole. Empty: no draft.
    std::function<std::array<std::int64_t, 2>(std::int64_t height, std::int64_t width)> draft;
    // Only this region (top, left, height, width) of the decoded image (after the EXIF
    // orientation): the same pixels as decoding the whole image and cropping it. A JPEG
    // without a rotation or flip to apply decodes only the rows down to the region's bottom
    // and the iMCU columns around it; other files decode whole. It must lie inside the image.
    std::optional<std::array<std::int64_t, 4>> region;
};

}  // namespace toroid::io
