// Image files through a pipeline: process_file decodes one file, runs the pipeline and
// writes the result atomically; process_folder does that for every image of a folder tree
// on a pool of workers. The CLI's folder mode and the C API's toroid_process_file use these.
#pragma once

#include "engine/engine.h"
#include "io/file.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace toroid {

struct FileOptions {
    std::optional<io::ImageFormat> format;  // unset: from the output path's extension
    int jpeg_quality = 90;                  // 1..100
    std::optional<Layout> layout;           // unset: the input stays in the layout it decodes to
    io::DecodeOptions decode;               // PNG and JPEG inputs: channels, EXIF orientation
    // Draft decoding (not exact): a JPEG whose pipeline starts by shrinking it decodes at the
    // smallest DCT scale that is still at least the first resize's result (draft_for).
    bool draft = false;
};

// The draft rule of `pipeline` (io::DecodeOptions::draft): where its first op is a resize to
// a size (given, or torchvision's smaller-edge / max-size rule; not a scale factor) smaller
// than the image in both dimensions, that size; else {0, 0} (decode whole).
std::function<std::array<std::int64_t, 2>(std::int64_t, std::int64_t)> draft_for(const Pipeline& pipeline);
// An input file decoded for `pipeline`: a JPEG (without draft) decodes only the window its
// first ops read (ops/read_window.h) into an image of its whole size whose other pixels the
// pipeline never reads; other files decode whole. Its messages name the file.
Tensor read_input(const std::filesystem::path& input, const Pipeline& pipeline, const io::DecodeOptions& decode);

// Decodes `input` (.jpg/.jpeg/.png/.npy), prepares `pipeline` for its spec with `engine`
// (the engines keep prepared pipelines per spec, so same-sized images compile once), runs
// it and writes the result to `output` atomically, creating its folder. Every failure is a
// toroid::Error whose message names the file; nothing is written then. Safe to call from
// several threads at once with one engine.
void process_file(Engine& engine, const Pipeline& pipeline, const std::filesystem::path& input,
                  const std::filesystem::path& output, const FileOptions& options);

struct FolderScan {
    std::vector<std::filesystem::path> images;  // relative to the root, sorted byte-wise
    std::int64_t ignored = 0;                   // regular files that are not images
};

// Every image file (by extension, any case) under `root`, recursively (regular files only,
// symlinks to them included; symlinked folders are not entered).
FolderScan scan_image_folder(const std::filesystem::path& root);

// Throws toroid::Error when `output` is the same file as `input` (after resolving ".",
// ".." and symlinks, or the same inode: a hard link): writing it would replace the input.
void check_output_is_not_input(const std::filesystem::path& input, const std::filesystem::path& output);

// Throws toroid::Error (a usage error, before any file is touched) when `output_dir` is
// `input_dir` or lies inside it, after resolving ".", ".." and symlinks.
void check_folder_paths(const std::filesystem::path& input_dir, const std::filesystem::path& output_dir);

// Throws toroid::Error when the pipeline's result for uint8 images (what .jpg and .png
// inputs decode to) cannot be stored as `format` (PNG and JPEG hold uint8 only). `why`
// says where the format comes from ("--format png", "the .jpg inputs' own format"). A
// pipeline whose result cannot be worked out without an image passes (each file reports).
void check_output_format(const Pipeline& pipeline, io::ImageFormat format, const std::string& why);

struct FolderOptions {
    FileOptions file;
    int jobs = 0;  // files processed at once; 0: every core
    // Called once, after the checks and before the first file, with the number of images.
    std::function<void(std::int64_t total)> on_start;
    // Called (one call at a time) after each file, with the counts so far.
    std::function<void(std::int64_t done, std::int64_t failed, std::int64_t total)> on_progress;
    // Called (one call at a time) for each file that failed, with the one-line message.
    std::function<void(const std::string& message)> on_error;
};

struct FolderResult {
    std::int64_t written = 0, failed = 0, ignored = 0;
    double seconds = 0;
};

// Runs `pipeline` on every image under `input_dir` and writes each result under the same
// relative path in `output_dir` (created if missing), with the extension of
// options.file.format when set. A file that fails is reported through on_error and
// skipped. Throws toroid::Error, before any file is written, for a missing input folder,
// an output folder that is the input folder or inside it (check_folder_paths), an output
// path that is one of the inputs (an input folder inside the output folder), a pipeline
// whose uint8 result an output format cannot hold (check_output_format), or an output
// folder that cannot be created.
FolderResult process_folder(Engine& engine, const Pipeline& pipeline, const std::filesystem::path& input_dir,
                            const std::filesystem::path& output_dir, const FolderOptions& options);

}  // namespace toroid
