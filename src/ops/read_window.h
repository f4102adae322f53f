// The window of an image that a pipeline's result reads, worked out from its first ops: what
// a decoder needs to decode of a file (io/ decodes a region; engine/files.cpp and the Python
// transforms ask for the window before they decode).
#pragma once

#include "core/tensor.h"
#include "ops/ops.h"

#include <array>
#include <cstdint>
#include <optional>

namespace toroid {

// (top, left, height, width) of an input of spec `in` (its strides choose the resize
// kernel, as at run time) holding every pixel the pipeline's result depends on, where the
// pipeline starts with a crop inside the image, or with a resize and then a crop inside the
// resized image: the crop's region, or the rows and columns the resize's tables read for
// the crop's outputs (every tap, zero weights included). nullopt where the pipeline starts
// otherwise or the crop leaves the image: the whole image is read.
std::optional<std::array<std::int64_t, 4>> read_window(const Pipeline& pipeline, const TensorSpec& in);

}  // namespace toroid
