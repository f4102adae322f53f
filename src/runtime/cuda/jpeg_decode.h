// JPEG decoding on the GPU (nvJPEG, loaded at run time: cuda_api.h), straight into device
// memory in a stream's order. Baseline JPEGs go through the GPU's hardware decoder in one
// batch where it has one (A100, H100, H200: NVJPEG_BACKEND_HARDWARE); the others (progressive,
// or a GPU without the decoder) through nvJPEG's CUDA decoder one by one. nvJPEG's IDCT and
// chroma upsampling are not libjpeg-turbo's: pixels differ from the CPU decoders' by a few
// levels (docs/reference.md). What nvJPEG cannot decode as asked (CMYK/YCCK, an EXIF turn to
// apply) and files whose marker walk does not reach the end marker (truncated: judged by
// libjpeg-turbo, as the CPU path judges them) are decoded on the CPU by io::decode_image and
// copied up; a file that does not decode fails alone, with a message, and the rest of the
// batch still decodes.
#pragma once

#include "io/decode.h"
#include "runtime/cuda/cuda.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toroid::cuda {

// One JPEG file and where its image goes: `info` (C, H, W) as jpeg_image_info gave it;
// the output is planar uint8 (C, H, W), dense, at device address `out`.
struct JpegJob {
    std::string_view bytes;
    CUdeviceptr out = 0;
    std::array<std::int64_t, 3> info{};
};

// (C, H, W) of the image the decode of `bytes` gives (io::image_info for a JPEG with these
// options); throws toroid::Error "<name>: ..." for a file that is not a JPEG, a header
// that does not parse, or a pixel count over the decoders' limit.
std::array<std::int64_t, 3> jpeg_image_info(const std::string& bytes, const std::string& name,
                                            const io::DecodeOptions& options);

// Decodes every job on `device` in `stream`'s order (the outputs are complete when work
// queued on `stream` after this call runs). Returns one message per job: empty where the
// image decoded, else why not. `options` is the mode and the EXIF flag the jobs' infos were
// computed with. The bytes are read before this call returns (nvJPEG copies what its
// hardware and CUDA decoders read). Calls may come from several threads: one decoder per
// device serves them in turn.
std::vector<std::string> decode_jpegs(const Device& device, std::vector<JpegJob> jobs,
                                      const io::DecodeOptions& options, CUstream stream);

// "nvJPEG 13.0 (hardware decoder)" or "nvJPEG 12.4 (CUDA decoder)" for `device`; throws
// toroid::Error when nvJPEG does not load.
std::string describe_jpeg_decoder(const Device& device);

}  // namespace toroid::cuda
