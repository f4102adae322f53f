// Whole-file reads and atomic writes (temporary file in the destination folder, then
// rename), so a failed command never leaves a partial output behind.
#pragma once

#include "core/tensor.h"
#include "io/decode.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace toroid::io {

// The most bytes read_file reads unless told otherwise, and the most of a pipeline file.
inline constexpr std::uint64_t kMaxReadBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kMaxPipelineBytes = std::uint64_t{16} << 20;

// Reads a whole file. Only regular files are read: a directory, device (/dev/zero), FIFO
// or socket is refused before anything is read (checked before opening, and again on the
// descriptor, which is opened non-blocking so that a FIFO swapped in cannot hang), and so
// is a file larger than `max_bytes`. Every failure is a toroid::Error naming the file.
std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes = kMaxReadBytes);
// The first min(n, size) bytes of a regular file (the same checks as read_file).
std::string read_file_head(const std::filesystem::path& path, std::size_t n);
// Writes through a temporary file beside `path` (".NAME.tmp.PID.RANDOM"), renamed over it.
// While it is written, the temporary's name is registered for remove_temp_files_on_signal.
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);
// Installs SIGINT, SIGTERM and SIGHUP handlers that unlink the temporary files of writes in
// progress (async-signal-safe calls only), then re-raise the signal with its default action,
// so that an interrupted command leaves no partial output. For programs (the CLI), not for a
// library's host process.
// `also` (async-signal-safe, may be null) runs in the handler too, before the signal is
// raised again: the CLI kills the compilers it started (runtime/jit.h).
void remove_temp_files_on_signal(void (*also)() = nullptr);

// The pixel limit of every decoder (PNG, JPEG) and of .npy arrays, applied to the header
// before anything is allocated: width x height (x batch for .npy). Default
// kDefaultMaxImagePixels (PIL's MAX_IMAGE_PIXELS x 2); $TOROID_MAX_IMAGE_PIXELS overrides it,
// set_max_image_pixels overrides both; 0 means no limit.
inline constexpr std::int64_t kDefaultMaxImagePixels = 178956970;
std::int64_t max_image_pixels();
// pixels < 0: back to $TOROID_MAX_IMAGE_PIXELS or the default.
void set_max_image_pixels(std::int64_t pixels);
// Throws toroid::Error "WHAT: DESCRIPTION has P pixels, more than the limit ..." when
// `pixels` exceeds the limit.
void check_image_pixels(std::int64_t pixels, const std::string& what, const std::string& description);
// The largest image file (PNG or JPEG) read under the pixel limit (8 bytes a pixel and 16 MiB;
// no limit with no pixel limit).
std::uint64_t max_image_file_bytes();

enum class ImageFormat { Npy, Png, Jpeg, Webp };

// The format a file's extension names (.npy, .png, .jpg / .jpeg, .webp; any case), if any.
std::optional<ImageFormat> image_format_of(const std::filesystem::path& path);
// A format by name ("npy", "png", "jpg" or "jpeg"); throws toroid::Error otherwise.
ImageFormat parse_image_format(std::string_view name);
// The extension toroid gives files of a format: ".npy", ".png", ".jpg", ".webp".
std::string_view image_format_extension(ImageFormat f);
// The format results of an input of format `f` are written in when none is asked for: its
// own, except WebP (read only), whose results are PNG files.
ImageFormat result_format(ImageFormat f);

// The format of image bytes by their signature (PNG, JPEG, WebP, .npy), if any.
std::optional<ImageFormat> sniff_image_format(std::string_view bytes);
// Decodes image bytes of `format` as (1, C, H, W) uint8 (PNG, JPEG: in options.mode, the
// EXIF orientation applied unless options say not) or as the array stored (.npy: rank 2-4,
// uint8/float32, (N, C, H, W); the options do not apply). `what` names the source in messages.
Tensor decode_image(const std::string& bytes, const std::string& what, ImageFormat format,
                    const DecodeOptions& options = {});
// The (C, H, W) decode_image gives for these bytes with `options` (its region ignored):
// read from a JPEG's header (the EXIF orientation's transposes swap H and W), other files
// decoded.
std::array<std::int64_t, 3> image_info(const std::string& bytes, const std::string& what, ImageFormat format,
                                       const DecodeOptions& options = {});
// decode_image into `out`, a tensor of the whole image's dtype and (1, C, H, W) shape (as
// image_info gives): options.region's pixels (every pixel without one) are written at their
// place, the same pixels decode_image gives; a JPEG without an EXIF turn to apply decodes
// only around the region straight into `out` (pixels near the region may be written too),
// other files decode whole and are copied.
void decode_image_into(const std::string& bytes, const std::string& what, ImageFormat format,
                       const DecodeOptions& options, const Tensor& out);
// Reads an image by extension (.npy, .png, .jpg / .jpeg) through decode_image.
Tensor read_image(const std::filesystem::path& path, const DecodeOptions& options = {});

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
