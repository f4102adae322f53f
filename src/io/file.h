// Whole-file reads and atomic writes (temporary file in the destination folder, then
// rename), so a failed command never leaves a partial output behind.
#pragma once

#include "core/tensor.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace toroid::io {

std::string read_file(const std::filesystem::path& path);
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);

enum class ImageFormat { Npy, Png, Jpeg };

// The format a file's extension names (.npy, .png, .jpg / .jpeg; any case), if any.
std::optional<ImageFormat> image_format_of(const std::filesystem::path& path);
// A format by name ("npy", "png", "jpg" or "jpeg"); throws toroid::Error otherwise.
ImageFormat parse_image_format(std::string_view name);
// The extension toroid gives files of a format: ".npy", ".png", ".jpg".
std::string_view image_format_extension(ImageFormat f);

// Reads an image by extension (.npy: rank 2-4, uint8/float32; .png: 8-bit; .jpg / .jpeg:
// gray or RGB) as (N, C, H, W).
Tensor read_image(const std::filesystem::path& path);

struct WriteOptions {
    std::optional<ImageFormat> format;  // unset: from the path's extension
    int jpeg_quality = 90;              // 1..100
};
// Serializes `t` as `format` (.npy: C-order NCHW; PNG: uint8, N == 1, C in 1..4; JPEG:
// uint8, N == 1, C in {1, 3}).
std::string encode_image(const Tensor& t, ImageFormat format, int jpeg_quality = 90);
// Writes `t` atomically, in options.format or else by the path's extension.
void write_image(const std::filesystem::path& path, const Tensor& t, const WriteOptions& options = {});

}  // namespace toroid::io
