// Image files and folder trees through a pipeline: decode, prepare (cached per input spec
// by the engine), run, encode and write atomically, one file per worker at a time.
#include "engine/files.h"

#include "core/error.h"
#include "core/parallel.h"
#include "io/paths.h"
#include "ops/read_window.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <system_error>

namespace toroid {
namespace {

namespace fs = std::filesystem;

void create_folder(const fs::path& dir) {
    if (dir.empty()) return;
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        fail("cannot create output folder '{}': {}", io::printable_path(dir), ec ? ec.message() : "not a folder");
}

std::string_view format_name(io::ImageFormat f) {
    switch (f) {
        case io::ImageFormat::Npy: return "npy";
        case io::ImageFormat::Png: return "png";
        case io::ImageFormat::Jpeg: return "jpg";
        case io::ImageFormat::Webp: return "webp";
    }
    return "npy";
}

}  // namespace

void check_output_is_not_input(const fs::path& input, const fs::path& output) {
    const std::optional<io::FileId> in = io::file_id(input), out = io::file_id(output);
    if ((in && out && *in == *out) || io::resolved(input) == io::resolved(output))
        fail("output '{}' is the input file '{}': writing it would replace the input; choose another output",
             io::printable_path(output), io::printable_path(input));
}

void check_folder_paths(const fs::path& input_dir, const fs::path& output_dir) {
    const fs::path in = io::resolved(input_dir), out = io::resolved(output_dir);
    if (in == out)
        fail("output folder '{}' is the input folder '{}': the results would overwrite the inputs; choose another "
             "output folder",
             io::printable_path(output_dir), io::printable_path(input_dir));
    if (io::is_within(out, in))
        fail("output folder '{}' lies inside the input folder '{}': choose an output folder outside it",
             io::printable_path(output_dir), io::printable_path(input_dir));
}

void check_output_format(const Pipeline& pipeline, io::ImageFormat format, const std::string& why) {
    if (format == io::ImageFormat::Npy) return;
    // The result's dtype does not depend on the image's size, but a probe can fail for
    // its size (a crop larger than it): the first probe that works decides.
    static const Dims kProbes[] = {{1, 3, 512, 512}, {1, 3, 4096, 4096}, {1, 1, 512, 512}, {1, 3, 64, 64}};
    for (const Dims& probe : kProbes) {
        ShapeInfo out;
        try {
            out = infer_shape(pipeline, ShapeInfo{DType::UInt8, probe});
        } catch (const Error&) {
            continue;
        }
        const bool png16 = format == io::ImageFormat::Png && out.dtype == DType::UInt16;
        if (out.dtype != DType::UInt8 && !png16)
            fail("the pipeline's result is {} for uint8 images, and {} ({}) holds {} only: give --format npy, or "
                 "end the pipeline with {{\"op\": \"convert\", \"dtype\": \"uint8\"}}",
                 dtype_name(out.dtype), why, format_name(format),
                 format == io::ImageFormat::Png ? "uint8 and uint16" : "uint8");
        return;
    }
}

std::function<std::array<std::int64_t, 2>(std::int64_t, std::int64_t)> draft_for(const Pipeline& pipeline) {
    const ResizeOp* first = pipeline.ops.empty() ? nullptr : std::get_if<ResizeOp>(&pipeline.ops.front());
    if (first == nullptr || first->scale_factor) return {};
    const ResizeOp op = *first;
    return [op](std::int64_t h, std::int64_t w) -> std::array<std::int64_t, 2> {
        try {
            const ShapeInfo out = infer_shape(Op{op}, ShapeInfo{DType::UInt8, {1, 3, h, w}});
            if (out.shape[2] < h && out.shape[3] < w) return {out.shape[2], out.shape[3]};
        } catch (const Error&) {
        }
        return {0, 0};
    };
}

Tensor read_input(const fs::path& input, const Pipeline& pipeline, const io::DecodeOptions& decode) {
    const std::optional<io::ImageFormat> format = io::image_format_of(input);
    if (format != io::ImageFormat::Jpeg || decode.draft) return io::read_image(input, decode);
    const std::string what = printable(input.string());  // the messages name the file
    const std::string bytes = io::read_file(input, io::max_image_file_bytes());
    const auto [c, h, w] = io::image_info(bytes, what, *format, decode);
    Tensor image = Tensor::empty(DType::UInt8, {1, c, h, w}, Layout::ChannelsLast);
    io::DecodeOptions o = decode;
    try {
        o.region = read_window(pipeline, image.spec());
    } catch (const Error&) {  // a pipeline that cannot run on this image: prepare says why
    }
    io::decode_image_into(bytes, what, *format, o, image);
    return image;
}

io::ImageFormat output_format(const fs::path& output, const FileOptions& options) {
    if (options.jpeg_quality < 1 || options.jpeg_quality > 100)
        fail("JPEG quality must be 1..100 (got {})", options.jpeg_quality);
    const std::optional<io::ImageFormat> format =
        options.format ? options.format : io::image_format_of(output);
    if (!format)
        fail("cannot write '{}': unsupported extension '{}' (toroid writes .npy, .png, .jpg and .jpeg)",
             io::printable_path(output), printable(output.extension().string(), 20));
    return *format;
}

void write_result(const fs::path& input, const fs::path& output, const Tensor& result, const FileOptions& options) {
    const io::ImageFormat format = output_format(output, options);
    std::string bytes;
    try {
        bytes = io::encode_image(result, format, options.jpeg_quality);
    } catch (const Error& e) {
        fail("{}: cannot write '{}': {}", io::printable_path(input), io::printable_path(output), e.what());
    }
    create_folder(output.parent_path());
    io::write_file_atomic(output, bytes);
}

Tensor read_file_input(const fs::path& input, const Pipeline& pipeline, const FileOptions& options) {
    io::DecodeOptions decode = options.decode;
    if (options.draft) decode.draft = draft_for(pipeline);
    return options.layout ? io::read_image(input, decode).to_layout(*options.layout)
                          : read_input(input, pipeline, decode);
}

void process_file(Engine& engine, const Pipeline& pipeline, const fs::path& input, const fs::path& output,
                  const FileOptions& options) {
    output_format(output, options);
    check_output_is_not_input(input, output);
    Tensor in = read_file_input(input, pipeline, options);
    Tensor result;
    try {
        auto prepared = engine.prepare(pipeline, in.spec());
        result = prepared->run(in);
    } catch (const Error& e) {
        fail("{}: {}", io::printable_path(input), e.what());
    }
    write_result(input, output, result, options);
}

FolderScan scan_image_folder(const fs::path& root) {
    std::error_code ec;
    if (!fs::exists(root, ec)) fail("input folder '{}' does not exist", io::printable_path(root));
    if (!fs::is_directory(root, ec)) fail("input '{}' is not a folder", io::printable_path(root));
    FolderScan scan;
    try {
        fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied), end;
        for (; it != end; it.increment(ec)) {
            if (ec) fail("cannot list '{}': {}", io::printable_path(root), ec.message());
            const fs::directory_entry& entry = *it;
            if (entry.is_directory(ec)) continue;
            if (!entry.is_regular_file(ec)) continue;
            if (io::image_format_of(entry.path())) scan.images.push_back(entry.path().lexically_relative(root));
            else ++scan.ignored;
        }
        if (ec) fail("cannot list '{}': {}", io::printable_path(root), ec.message());
    } catch (const fs::filesystem_error& e) {
        fail("cannot list '{}': {}", io::printable_path(root), e.code().message());
    }
    std::sort(scan.images.begin(), scan.images.end(),
              [](const fs::path& a, const fs::path& b) { return a.generic_string() < b.generic_string(); });
    return scan;
}

FolderPlan plan_folder(const Pipeline& pipeline, const fs::path& input_dir, const fs::path& output_dir,
                       const FolderOptions& options) {
    if (options.file.jpeg_quality < 1 || options.file.jpeg_quality > 100)
        fail("JPEG quality must be 1..100 (got {})", options.file.jpeg_quality);
    if (options.jobs < 0) fail("jobs must be at least 1 (got {})", options.jobs);
    {
        std::error_code ec;
        if (!fs::is_directory(input_dir, ec)) scan_image_folder(input_dir);  // its message
    }
    // Nothing is written until every check has passed.
    check_folder_paths(input_dir, output_dir);
    FolderScan scan = scan_image_folder(input_dir);

    FolderPlan plan;
    plan.ignored = scan.ignored;
    const std::size_t n = scan.images.size();
    plan.inputs.resize(n);
    plan.outputs.resize(n);
    plan.clash.resize(n);
    std::map<std::string, std::size_t> first_writer;
    for (std::size_t i = 0; i < n; ++i) {
        fs::path rel = scan.images[i];
        plan.inputs[i] = input_dir / rel;
        const std::optional<io::ImageFormat> read = io::image_format_of(rel);
        if (options.file.format) rel.replace_extension(io::image_format_extension(*options.file.format));
        else if (read && io::result_format(*read) != *read)
            rel.replace_extension(io::image_format_extension(io::result_format(*read)));
        plan.outputs[i] = output_dir / rel;
        auto [it, fresh] = first_writer.emplace(plan.outputs[i].generic_string(), i);
        if (!fresh)
            plan.clash[i] = fmt::format("{}: output '{}' is already written from '{}'", io::printable_path(plan.inputs[i]),
                                        io::printable_path(plan.outputs[i]), io::printable_path(plan.inputs[it->second]));
    }
    // No output may land on a file the run reads (the input folder inside the output
    // folder, a symlink, a hard link): by resolved path and by inode.
    {
        std::set<io::FileId> input_ids;
        std::map<fs::path, std::size_t> input_paths;
        for (std::size_t i = 0; i < n; ++i) {
            if (auto id = io::file_id(plan.inputs[i])) input_ids.insert(*id);
            input_paths.emplace(io::resolved(plan.inputs[i]), i);
        }
        for (std::size_t i = 0; i < n; ++i) {
            const std::optional<io::FileId> id = io::file_id(plan.outputs[i]);
            auto hit = input_paths.find(io::resolved(plan.outputs[i]));
            if ((id && input_ids.count(*id)) || hit != input_paths.end())
                fail("output '{}' is one of the input files: the run would overwrite what it reads; choose an "
                     "output folder apart from the input folder",
                     io::printable_path(plan.outputs[i]));
        }
    }
    // The pipeline's result against the output formats, once: .jpg and .png inputs decode
    // to uint8 (.npy inputs may be float32: each file reports for itself).
    {
        std::set<io::ImageFormat> formats;
        for (const fs::path& rel : scan.images) {
            const std::optional<io::ImageFormat> f = io::image_format_of(rel);
            if (f && *f != io::ImageFormat::Npy)
                formats.insert(options.file.format ? *options.file.format : io::result_format(*f));
        }
        for (io::ImageFormat f : formats)
            check_output_format(pipeline, f,
                                options.file.format ? std::string("the output format")
                                                    : fmt::format("the {} inputs' own format", io::image_format_extension(f)));
    }
    create_folder(output_dir);
    if (options.on_start) options.on_start(static_cast<std::int64_t>(n));
    return plan;
}

FolderReport::FolderReport(const FolderOptions& options, std::int64_t total, std::int64_t ignored)
    : options_(options), total_(total), start_(std::chrono::steady_clock::now()) {
    result_.ignored = ignored;
}

void FolderReport::done(const std::string& error) {
    std::lock_guard lock(mutex_);
    if (error.empty()) {
        ++result_.written;
    } else {
        ++result_.failed;
        if (options_.on_error) options_.on_error(error);
    }
    if (options_.on_progress) options_.on_progress(result_.written + result_.failed, result_.failed, total_);
}

FolderResult FolderReport::result() const {
    std::lock_guard lock(mutex_);
    FolderResult r = result_;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return r;
}

std::string message_for(const fs::path& input, const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const Error& e) {
        return e.what();
    } catch (const std::bad_alloc&) {
        return fmt::format("{}: out of memory", io::printable_path(input));
    } catch (const std::exception& e) {
        return fmt::format("{}: internal error: {}", io::printable_path(input), e.what());
    } catch (...) {
        return fmt::format("{}: internal error", io::printable_path(input));
    }
}

FolderResult process_folder(Engine& engine, const Pipeline& pipeline, const fs::path& input_dir,
                            const fs::path& output_dir, const FolderOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const FolderPlan plan = plan_folder(pipeline, input_dir, output_dir, options);
    const std::size_t n = plan.inputs.size();
    FolderReport report(options, static_cast<std::int64_t>(n), plan.ignored);
    parallel_each(n, options.jobs > 0 ? options.jobs : default_threads(), [&](std::size_t i) {
        std::string error = plan.clash[i];
        if (error.empty()) {
            try {
                process_file(engine, pipeline, plan.inputs[i], plan.outputs[i], options.file);
            } catch (...) {
                error = message_for(plan.inputs[i], std::current_exception());
            }
        }
        report.done(error);
    });
    FolderResult result = report.result();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace toroid
