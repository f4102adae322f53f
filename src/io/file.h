// Whole-file reads and atomic writes (temporary file in the destination folder, then
// rename), so a failed command never leaves a partial output behind.
#pragma once

#include "core/tensor.h"

#include <filesystem>
#include <string>

namespace toroid::io {

std::string read_file(const std::filesystem::path& path);
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);

// Reads an image by extension (.npy: rank 2-4, uint8/float32; .png: 8-bit) as (N, C, H, W).
Tensor read_image(const std::filesystem::path& path);
// Writes `t` by extension (.npy: C-order NCHW; .png: uint8, N == 1, C in 1..4), atomically.
void write_image(const std::filesystem::path& path, const Tensor& t);

}  // namespace toroid::io
