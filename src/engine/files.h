// Image files through a pipeline: process_file decodes one file, runs the pipeline and
// writes the result atomically; process_folder does that for every image of a folder tree
// on a pool of workers. The CLI's folder mode and the C API's toroid_process_file use these.
#pragma once

#include "engine/engine.h"
#include "io/file.h"

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
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

// How a folder runs on a GPU (process_folder_cuda).
struct CudaFolderOptions {
    int device = 0;
    // false ("exact", the default): every file decodes on the CPU as process_file decodes it
    // (each result is the CPU run's). true ("fast"): JPEGs decode on the GPU through nvJPEG
    // (cuda::decode_jpegs; its pixels differ from libjpeg-turbo's by a few levels), except
    // with options.file.draft or a channels_last options.file.layout, which decode on the CPU.
    bool gpu_decode = false;
    // Files read and decoded per step; a step's device buffers are split further where its
    // images would not fit in the device's memory budget (an eighth of its memory, at least
    // 64 MiB), so a batch larger than the GPU is never asked for at once.
    std::size_t batch = 128;
    std::size_t device_budget = 0;  // bytes of device buffers at once; 0: the default above
    EngineOptions engine;  // the CUDA engine's options (debug_dir, limits)
};

// process_folder on a GPU: the same checks, outputs and reports, but files go through in
// batches. Per batch the files are read (and, where they do not decode on the GPU, decoded)
// on options.jobs threads, with gpu_decode their JPEGs decode on the GPU in one call, every
// image runs in one batched launch per kernel (run_device_batch), the results come back
// into page-locked memory, and they are encoded and written on options.jobs threads while
// the next batch is read and run. A file that fails (its header, its decode, its size for
// the pipeline, its write) is reported and skipped; the rest of its batch goes on.
FolderResult process_folder_cuda(const Pipeline& pipeline, const std::filesystem::path& input_dir,
                                 const std::filesystem::path& output_dir, const FolderOptions& options,
                                 const CudaFolderOptions& cuda);

// ---- Shared by the folder runs (CPU and CUDA) ------------------------------------------

// The files of a folder run and where each result goes: plan_folder makes every check that
// comes before the first write (process_folder's list), creates the output folder and
// calls options.on_start.
struct FolderPlan {
    std::vector<std::filesystem::path> inputs, outputs;
    std::vector<std::string> clash;  // set where an earlier input already writes outputs[i]
    std::int64_t ignored = 0;
};
FolderPlan plan_folder(const Pipeline& pipeline, const std::filesystem::path& input_dir,
                       const std::filesystem::path& output_dir, const FolderOptions& options);

// The counts and callbacks of a folder run: done() once per file, from any thread (the
// callbacks are called one at a time).
class FolderReport {
public:
    FolderReport(const FolderOptions& options, std::int64_t total, std::int64_t ignored);
    void done(const std::string& error);  // empty: written
    FolderResult result() const;          // the counts, and the seconds since construction

private:
    const FolderOptions& options_;
    std::int64_t total_;
    std::chrono::steady_clock::time_point start_;
    mutable std::mutex mutex_;
    FolderResult result_;
};

// The one-line message of a file's failure: a toroid::Error's own (it names the file),
// else "<file>: out of memory" or "<file>: internal error: ...".
std::string message_for(const std::filesystem::path& input, const std::exception_ptr& error);

// The format `output` is written in (options.format, else its extension); throws
// toroid::Error for a bad quality or an unknown extension.
io::ImageFormat output_format(const std::filesystem::path& output, const FileOptions& options);
// `input` decoded as process_file decodes it (draft, layout, the read window).
Tensor read_file_input(const std::filesystem::path& input, const Pipeline& pipeline, const FileOptions& options);
// Encodes `result` and writes it to `output` atomically, creating its folder; the messages
// name `input`.
void write_result(const std::filesystem::path& input, const std::filesystem::path& output, const Tensor& result,
                  const FileOptions& options);

}  // namespace toroid
