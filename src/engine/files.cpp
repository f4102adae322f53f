// Image files and folder trees through a pipeline: decode, prepare (cached per input spec
// by the engine), run, encode and write atomically, one file per worker at a time.
#include "engine/files.h"

#include "core/error.h"
#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

namespace toroid {
namespace {

namespace fs = std::filesystem;

std::string quoted(const fs::path& p) { return printable(p.string()); }

void create_folder(const fs::path& dir) {
    if (dir.empty()) return;
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        fail("cannot create output folder '{}': {}", quoted(dir), ec ? ec.message() : "not a folder");
}

// `p` made absolute and free of "." / ".." / symlinks as far as it exists.
fs::path normalized(const fs::path& p) {
    std::error_code ec;
    fs::path n = fs::weakly_canonical(p, ec);
    return ec ? fs::absolute(p).lexically_normal() : n;
}

}  // namespace

void process_file(Engine& engine, const Pipeline& pipeline, const fs::path& input, const fs::path& output,
                  const FileOptions& options) {
    if (options.jpeg_quality < 1 || options.jpeg_quality > 100)
        fail("JPEG quality must be 1..100 (got {})", options.jpeg_quality);
    const std::optional<io::ImageFormat> format =
        options.format ? options.format : io::image_format_of(output);
    if (!format)
        fail("cannot write '{}': unsupported extension '{}' (toroid writes .npy, .png, .jpg and .jpeg)",
             quoted(output), printable(output.extension().string(), 20));

    Tensor in = io::read_image(input);  // its messages name the file
    if (options.layout) in = in.to_layout(*options.layout);
    Tensor result;
    try {
        auto prepared = engine.prepare(pipeline, in.spec());
        result = prepared->run(in);
    } catch (const Error& e) {
        fail("{}: {}", quoted(input), e.what());
    }
    std::string bytes;
    try {
        bytes = io::encode_image(result, *format, options.jpeg_quality);
    } catch (const Error& e) {
        fail("{}: cannot write '{}': {}", quoted(input), quoted(output), e.what());
    }
    create_folder(output.parent_path());
    io::write_file_atomic(output, bytes);
}

FolderScan scan_image_folder(const fs::path& root, const fs::path& skip) {
    std::error_code ec;
    if (!fs::exists(root, ec)) fail("input folder '{}' does not exist", quoted(root));
    if (!fs::is_directory(root, ec)) fail("input '{}' is not a folder", quoted(root));
    const fs::path skip_norm = skip.empty() ? fs::path() : normalized(skip);
    FolderScan scan;
    try {
        fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied), end;
        for (; it != end; it.increment(ec)) {
            if (ec) fail("cannot list '{}': {}", quoted(root), ec.message());
            const fs::directory_entry& entry = *it;
            if (entry.is_directory(ec)) {
                if (!skip_norm.empty() && normalized(entry.path()) == skip_norm) it.disable_recursion_pending();
                continue;
            }
            if (!entry.is_regular_file(ec)) continue;
            if (io::image_format_of(entry.path())) scan.images.push_back(entry.path().lexically_relative(root));
            else ++scan.ignored;
        }
        if (ec) fail("cannot list '{}': {}", quoted(root), ec.message());
    } catch (const fs::filesystem_error& e) {
        fail("cannot list '{}': {}", quoted(root), e.code().message());
    }
    std::sort(scan.images.begin(), scan.images.end(),
              [](const fs::path& a, const fs::path& b) { return a.generic_string() < b.generic_string(); });
    return scan;
}

FolderResult process_folder(Engine& engine, const Pipeline& pipeline, const fs::path& input_dir,
                            const fs::path& output_dir, const FolderOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    if (options.file.jpeg_quality < 1 || options.file.jpeg_quality > 100)
        fail("JPEG quality must be 1..100 (got {})", options.file.jpeg_quality);
    if (options.jobs < 0) fail("jobs must be at least 1 (got {})", options.jobs);
    // The output folder is left out of the scan when it lies inside the input folder, so a
    // second run does not read the first run's results.
    FolderScan scan = scan_image_folder(input_dir, output_dir);
    create_folder(output_dir);

    const std::size_t n = scan.images.size();
    std::vector<fs::path> outputs(n);
    std::vector<std::string> clash(n);  // set when an earlier input already writes outputs[i]
    std::map<std::string, std::size_t> first_writer;
    for (std::size_t i = 0; i < n; ++i) {
        fs::path rel = scan.images[i];
        if (options.file.format) rel.replace_extension(io::image_format_extension(*options.file.format));
        outputs[i] = output_dir / rel;
        auto [it, fresh] = first_writer.emplace(outputs[i].generic_string(), i);
        if (!fresh)
            clash[i] = fmt::format("{}: output '{}' is already written from '{}'", quoted(input_dir / scan.images[i]),
                                   quoted(outputs[i]), quoted(input_dir / scan.images[it->second]));
    }

    FolderResult result;
    result.ignored = scan.ignored;
    std::mutex mutex;  // guards the counts and serializes the callbacks
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
            std::string error = clash[i];
            if (error.empty()) {
                try {
                    process_file(engine, pipeline, input_dir / scan.images[i], outputs[i], options.file);
                } catch (const Error& e) {
                    error = e.what();
                } catch (const std::bad_alloc&) {
                    error = fmt::format("{}: out of memory", quoted(input_dir / scan.images[i]));
                } catch (const std::exception& e) {
                    error = fmt::format("{}: internal error: {}", quoted(input_dir / scan.images[i]), e.what());
                }
            }
            std::lock_guard lock(mutex);
            if (error.empty()) {
                ++result.written;
            } else {
                ++result.failed;
                if (options.on_error) options.on_error(error);
            }
            if (options.on_progress)
                options.on_progress(result.written + result.failed, result.failed, static_cast<std::int64_t>(n));
        }
    };
    const int jobs = static_cast<int>(
        std::min<std::size_t>(std::max<std::size_t>(n, 1), options.jobs > 0 ? options.jobs : default_threads()));
    if (jobs <= 1) {
        worker();
    } else {
        std::vector<std::thread> pool;
        for (int j = 0; j < jobs; ++j) pool.emplace_back(worker);
        for (auto& t : pool) t.join();
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace toroid
