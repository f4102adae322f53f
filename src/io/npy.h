// .npy files (NumPy format 1.0/2.0/3.0): read uint8 / float32 arrays of rank 2-4 as
// (N, C, H, W) tensors ((H, W) -> (1, 1, H, W); (C, H, W) -> (1, C, H, W)), C- or
// Fortran-order, little-endian; write C-order. Every malformed file is a toroid::Error.
#pragma once

#include "core/tensor.h"

#include <filesystem>
#include <string>
#include <vector>

namespace toroid::io {

struct NpyArray {
    DType dtype;
    std::vector<std::int64_t> shape;  // as stored in the file (rank 1..)
    Tensor data;                      // the values; for rank <= 4, dims left-padded with 1
};

// Parses .npy bytes. `max_rank` bounds the accepted rank (4 for images; grids use 4 too).
NpyArray parse_npy(const std::string& bytes, const std::string& what);
NpyArray read_npy(const std::filesystem::path& path);
// An image tensor from .npy bytes: rank 2-4, no zero dimension. `what` names the
// source in messages.
Tensor parse_npy_image(const std::string& bytes, const std::string& what);
// Reads an image tensor from a file (parse_npy_image on its bytes).
Tensor read_npy_image(const std::filesystem::path& path);
// Serializes `t` as C-order (N, C, H, W).
std::string encode_npy(const Tensor& t);

}  // namespace toroid::io
