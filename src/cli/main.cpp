// The `toroid` command: `apply` runs a pipeline on an image file or on every image of a
// folder tree, `bench` measures engines on a suite, `bench compare` sets two result files
// side by side. Every user error ends with exit code 2 and one line `toroid: error: ...`
// on stderr; in folder mode a file that fails is reported and skipped (exit code 1).
#include "bench/bench.h"
#include "cli/prebuild.h"
#include "cli/progress.h"
#include "core/error.h"
#include "core/parallel.h"
#include "engine/engine.h"
#include "engine/files.h"
#include "io/file.h"
#include "io/jpeg.h"
#include "io/paths.h"
#include "ops/pipeline_json.h"
#include "runtime/jit.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <string_view>

namespace {

using namespace toroid;

struct ApplyArgs {
    std::string pipeline, input, output;
    std::string engine = "compiled";
    std::string device = "cpu";  // cuda: the cuda engine (input copied to the GPU, result back)
    std::string layout;  // unset: contiguous for one file, as decoded in folder mode
    int threads = 0;     // 0: all cores for one file, 1 per file in folder mode
    std::string format;  // unset: the output's extension (folder mode: the input's)
    int quality = io::kDefaultJpegQuality;
    int jobs = 0;  // folder mode: files at once; 0: all cores
    std::string debug_dir;  // --debug-dir, else $TOROID_DEBUG
    bool stats = false;
    bool prepare_only = false;  // --prepare-only
    bool explain = false;
    bool allow_paths = false;      // --allow-paths: grid paths anywhere
    std::int64_t max_pixels = -1;  // --max-pixels; < 0: $TOROID_MAX_IMAGE_PIXELS or the default
    std::string mode;              // --mode; unset: rgb in folder mode, unchanged for one file
    bool no_exif = false;          // --no-exif-orientation
    bool draft = false;            // --draft: JPEGs decoded smaller where the pipeline shrinks them
    std::string decode;            // --decode fast|exact: folder mode on cuda (default exact)
    int batch = 0;                 // --batch: folder mode on cuda, files per batch (0: the default)
};

// How PNG and JPEG inputs decode: --mode (folder mode's default rgb, so that gray, RGBA and
// palette files reach a 3-channel pipeline as torchvision's decode_image(mode=RGB) gives
// them; a single file's default keeps its channels) and the EXIF orientation.
io::DecodeOptions decode_options(const ApplyArgs& a, bool folder) {
    io::DecodeOptions d;
    d.mode = !a.mode.empty() ? io::parse_image_mode(a.mode) : folder ? io::ImageMode::Rgb : io::ImageMode::Unchanged;
    d.apply_exif_orientation = !a.no_exif;
    return d;
}

// --device cuda runs the cuda engine (copies to the GPU and back); else --engine.
std::string engine_name(const ApplyArgs& a) {
    if (a.device != "cpu" && a.device != "cuda") fail("unknown device '{}' (available: cpu, cuda)", a.device);
    return a.device == "cuda" ? "cuda" : a.engine;
}

// one_file: a single-file apply runs the pipeline once, and its exit waits for a background
// full build anyway (runtime/jit.h), so a quick build first would only add its compile to the
// command's time (measured on two cores: 0.61-0.71 s full build alone, 0.77-1.04 s with the
// quick one first): it builds the full program only, unless $TOROID_TIERED asks for tiers
// (1, or quick for the quick build alone) to measure them. Folder mode keeps the tiers: its
// first images run on the quick build while the full one compiles.
EngineOptions engine_options(const ApplyArgs& a, int threads, bool one_file) {
    EngineOptions options;
    options.threads = threads;
    options.debug_dir = a.debug_dir;
    if (options.debug_dir.empty())
        if (const char* env = std::getenv("TOROID_DEBUG"); env && *env) options.debug_dir = env;
    const char* tiered = std::getenv("TOROID_TIERED");
    const bool asked = tiered != nullptr && (std::string_view(tiered) == "1" || std::string_view(tiered) == "quick");
    if (one_file && !asked) options.tiers = Tiers::FullOnly;
    return options;
}

// Folder mode: every image under IN_DIR through the pipeline into OUT_DIR (same relative
// paths), files processed in parallel, each file's kernels on --threads threads (1).
int run_apply_folder(const ApplyArgs& a) {
    if (a.stats || a.explain || a.prepare_only)
        fail("--stats, --explain and --prepare-only apply to a single file, not to folder mode");
    if (a.jobs < 0) fail("--jobs must be at least 1 (got {})", a.jobs);
    if (a.threads < 0) fail("--threads must be at least 1 (got {})", a.threads);
    if (a.quality < 1 || a.quality > 100) fail("--quality must be 1..100 (got {})", a.quality);
    FolderOptions options;
    if (!a.format.empty()) options.file.format = io::parse_image_format(a.format);
    options.file.jpeg_quality = a.quality;
    if (!a.layout.empty()) options.file.layout = parse_layout(a.layout);
    options.file.decode = decode_options(a, true);
    options.file.draft = a.draft;
    options.jobs = a.jobs > 0 ? a.jobs : default_threads();
    const std::filesystem::path in_dir(a.input), out_dir(a.output);
    std::error_code ec;
    if (std::filesystem::exists(out_dir, ec) && !std::filesystem::is_directory(out_dir, ec))
        fail("output '{}' is not a folder (the input is a folder)", printable(a.output));
    check_folder_paths(in_dir, out_dir);  // before anything else: a usage error touches nothing
    const bool on_cuda = engine_name(a) == "cuda";
    if (!a.decode.empty() && a.decode != "fast" && a.decode != "exact")
        fail("--decode must be fast or exact (got '{}')", printable(a.decode, 40));
    if (!a.decode.empty() && !on_cuda)
        fail("--decode applies to --device cuda (the CPU decodes with libjpeg-turbo: exact)");
    if (a.batch < 0) fail("--batch must be at least 1 (got {})", a.batch);
    if (a.batch > 0 && !on_cuda) fail("--batch applies to --device cuda (the CPU runs one file per job)");
    Pipeline pipeline = load_pipeline(a.pipeline, a.allow_paths);
    std::unique_ptr<Engine> engine;
    if (!on_cuda) engine = make_engine(engine_name(a), engine_options(a, a.threads > 0 ? a.threads : 1, false));

    // process_folder checks the paths and the output format, then says how many images.
    std::unique_ptr<cli::Progress> progress;
    options.on_start = [&](std::int64_t total) { progress = std::make_unique<cli::Progress>(stderr, total); };
    options.on_progress = [&](std::int64_t done, std::int64_t failed, std::int64_t) { progress->update(done, failed); };
    options.on_error = [&](const std::string& message) {
        std::string line = message;
        for (char& c : line)
            if (c == '\n' || c == '\r') c = ' ';
        progress->message("toroid: error: " + line);
    };
    FolderResult r;
    if (on_cuda) {
        CudaFolderOptions cuda;
        cuda.gpu_decode = a.decode == "fast";
        if (a.batch > 0) cuda.batch = static_cast<std::size_t>(a.batch);
        cuda.engine = engine_options(a, 1, false);
        r = process_folder_cuda(pipeline, in_dir, out_dir, options, cuda);
    } else {
        r = process_folder(*engine, pipeline, in_dir, out_dir, options);
    }
    if (progress) progress->finish();
    std::printf("toroid: %lld written, %lld failed, %lld ignored (not images), %.2f s, %.1f images/s\n",
                static_cast<long long>(r.written), static_cast<long long>(r.failed),
                static_cast<long long>(r.ignored), r.seconds,
                r.seconds > 0 ? static_cast<double>(r.written + r.failed) / r.seconds : 0.0);
    std::fflush(stdout);
    return r.failed > 0 ? 1 : 0;
}

// run_s < 0: nothing ran (--prepare-only). With a quick build, waits for the full one and
// says when it was loaded (seconds since `start`, before prepare).
void print_prepare_stats(const PreparedPipeline& prepared, double run_s, std::chrono::steady_clock::time_point start) {
    const PrepareStats st = prepared.stats();
    std::fprintf(stderr, "cache: compiled %d, disk hits %d, memory hits %d, prebuilt %d\n", st.compiled,
                 st.disk_hits, st.memory_hits, st.prebuilt_hits);
    std::fprintf(stderr, "prepare: %.3f ms (compiler %.3f ms)", st.prepare_seconds * 1e3, st.compile_seconds * 1e3);
    if (run_s >= 0) std::fprintf(stderr, ", run: %.3f ms", run_s * 1e3);
    std::fprintf(stderr, "\n");
    if (st.quick) {
        try {
            prepared.wait_full();
        } catch (const Error&) {
            // The result came from the quick build and is written; the failure was said on
            // stderr when it happened.
            std::fprintf(stderr, "tiers: the quick build ran; the full build failed\n");
            return;
        }
        const double full_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "tiers: the quick build ran; the full build was loaded %.3f ms after prepare began\n",
                     full_s * 1e3);
    }
}

int run_apply(const ApplyArgs& a) {
    if (a.max_pixels >= 0) io::set_max_image_pixels(a.max_pixels);
    io::max_image_pixels();  // a bad $TOROID_MAX_IMAGE_PIXELS is a usage error before anything runs
    std::error_code ec;
    if (std::filesystem::is_directory(a.input, ec)) return run_apply_folder(a);
    if (!std::filesystem::exists(a.input, ec)) fail("input '{}' does not exist", printable(a.input));
    if (a.jobs != 0) fail("--jobs applies to folder mode (IN a folder), not to a single file");
    if (!a.decode.empty() || a.batch != 0)
        fail("--decode and --batch apply to folder mode with --device cuda (a single file decodes with libjpeg-turbo: "
             "exact)");
    Layout layout = parse_layout(a.layout.empty() ? "contiguous" : a.layout);
    int threads = a.threads > 0 ? a.threads : default_threads();
    if (a.threads < 0) fail("--threads must be at least 1 (got {})", a.threads);
    io::WriteOptions write;
    if (!a.format.empty()) write.format = io::parse_image_format(a.format);
    if (a.quality < 1 || a.quality > 100) fail("--quality must be 1..100 (got {})", a.quality);
    write.jpeg_quality = a.quality;
    std::filesystem::path out(a.output);
    std::filesystem::path out_dir = out.parent_path().empty() ? "." : out.parent_path();
    if (!std::filesystem::is_directory(out_dir)) fail("output folder '{}' does not exist", out_dir.string());
    if (!a.prepare_only) check_output_is_not_input(a.input, out);

    Pipeline pipeline = load_pipeline(a.pipeline, a.allow_paths);
    auto engine = make_engine(engine_name(a), engine_options(a, threads, true));
    io::DecodeOptions decode = decode_options(a, false);
    if (a.draft) decode.draft = draft_for(pipeline);
    Tensor input = io::read_image(a.input, decode).to_layout(layout);
    const auto prepare_start = std::chrono::steady_clock::now();
    auto prepared = engine->prepare(pipeline, input.spec());
    if (a.prepare_only) {
        if (a.explain) std::cout << prepared->explain();
        if (a.stats) print_prepare_stats(*prepared, -1, prepare_start);
        return 0;
    }
    const auto start = std::chrono::steady_clock::now();
    Tensor result = prepared->run(input);
    const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    io::write_image(out, result, write);
    if (a.explain) std::cout << prepared->explain();
    if (a.stats) print_prepare_stats(*prepared, run_s, prepare_start);
    return 0;
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

int error_exit(const std::string& message) {
    std::string line = message;
    for (char& c : line)
        if (c == '\n') c = ' ';
    std::fprintf(stderr, "toroid: error: %s\n", line.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    // Ctrl-C or a kill while an output is written removes its temporary file.
    io::remove_temp_files_on_signal(kill_running_compilers);
    CLI::App app{"toroid: a just-in-time compiler for image-transform pipelines"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("toroid ") + TOROID_VERSION);

    ApplyArgs apply;
    auto* apply_cmd = app.add_subcommand(
        "apply", "Run a pipeline on an image (.npy, .png, .jpg) or on every image of a folder tree");
    apply_cmd->add_option("PIPELINE", apply.pipeline, "pipeline JSON file, or inline JSON starting with '['")->required();
    apply_cmd->add_option("IN", apply.input, "input .npy, .png, .jpg/.jpeg, or a folder of them")->required();
    apply_cmd->add_option("OUT", apply.output, "output file (written atomically), or output folder")->required();
    apply_cmd->add_option("--format", apply.format,
                          "output format jpg|png|npy (default: the output's extension; folder mode: the input's)");
    apply_cmd->add_option("--quality", apply.quality, "JPEG output quality 1..100 (default 90)");
    apply_cmd->add_option("--mode", apply.mode,
                          "channels PNG/JPEG inputs decode to: rgb|gray|rgb_alpha|gray_alpha|unchanged (default: rgb in "
                          "folder mode, unchanged for one file), as torchvision's decode_image converts them");
    apply_cmd->add_flag("--no-exif-orientation", apply.no_exif,
                        "do not apply the EXIF orientation of PNG/JPEG inputs (applied by default)");
    apply_cmd->add_flag("--draft", apply.draft,
                        "decode a JPEG at 1/2, 1/4 or 1/8 scale where the pipeline's first op resizes it to at most "
                        "that (faster; not exact: the result differs from the full decode's)");
    apply_cmd->add_option("--decode", apply.decode,
                          "folder mode with --device cuda: exact (default: every file decodes on the CPU, each "
                          "result is the CPU run's) or fast (JPEGs decode on the GPU through nvJPEG, a few levels from "
                          "libjpeg-turbo's pixels)");
    apply_cmd->add_option("--batch", apply.batch,
                          "folder mode with --device cuda: files read, decoded and run at once (default 128)");
    apply_cmd->add_option("--jobs", apply.jobs,
                          "folder mode: files processed at once (default: all cores; with --device cuda: the threads "
                          "that read, decode and write each batch)");
    apply_cmd->add_option("--engine", apply.engine, "engine: compiled (default) or reference");
    apply_cmd->add_option("--device", apply.device,
                          "cpu (default) or cuda (input copied to the GPU, result back; folder mode runs batches of "
                          "files: --decode, --batch)");
    apply_cmd->add_option("--layout", apply.layout, "memory layout the input is placed in: contiguous|channels_last");
    apply_cmd->add_option("--threads", apply.threads,
                          "kernel threads (default: all cores; folder mode: 1 per file)");
    apply_cmd->add_option("--debug-dir", apply.debug_dir,
                          "write the primitive graph, loop IR after each pass, decisions and generated C++ here "
                          "(default: $TOROID_DEBUG)");
    apply_cmd->add_flag("--stats", apply.stats, "print cache hits and compile/run times to stderr");
    apply_cmd->add_flag("--prepare-only", apply.prepare_only,
                        "compile (prepare) for IN and stop: nothing runs, OUT is not written (with "
                        "TOROID_CPU_TARGET, another CPU's code)");
    apply_cmd->add_flag("--explain", apply.explain, "print the kernels that run: loop nests, axes, bytes, FLOPs");
    apply_cmd->add_flag("--allow-paths", apply.allow_paths,
                        "let grid paths in the pipeline be absolute or leave the pipeline file's folder");
    apply_cmd->add_option("--max-pixels", apply.max_pixels,
                          "refuse images (and .npy arrays) of more pixels than this, before decoding "
                          "(default 178956970 or $TOROID_MAX_IMAGE_PIXELS; 0: no limit)")
        ->check(CLI::NonNegativeNumber);

    BenchOptions bench_opts;
    std::string engines = "reference,compiled";
    auto* bench_cmd = app.add_subcommand(
        "bench", "Benchmark engines on a suite (seeds | quick | workloads), or on your pipeline and images");
    bench_cmd->add_option("PIPELINE", bench_opts.pipeline,
                          "time this pipeline (a JSON file, or inline JSON starting with '[') instead of a suite");
    bench_cmd->add_option("IMAGES", bench_opts.images,
                          "images to run PIPELINE on: .jpg/.jpeg/.png/.npy files, or folders of them (the first " +
                              std::to_string(bench::kMaxFolderImages) + " by name)");
    bench_cmd->add_option("--size", bench_opts.sizes,
                          "also run PIPELINE on a generated image of this size, HxW (repeatable)");
    bench_cmd->add_option("--input", bench_opts.input_class,
                          "the generated images' dtype:channels:layout (default uint8:3:channels_last)");
    bench_cmd->add_option("--mode", bench_opts.mode,
                          "decode IMAGES as rgb (default), gray, rgb_alpha, gray_alpha or unchanged");
    auto* bench_suite = bench_cmd->add_option("--suite", bench_opts.suite, "suite: seeds (default), quick or workloads (4K thumbnail, 1080p frame to a normalized 224² tensor, a training batch, a uint8 training sample)");
    bench_cmd->add_option("--engine", engines,
                          "comma-separated engines (default: reference,compiled; with --device cuda: cuda)");
    bench_cmd->add_option("--threads", bench_opts.threads, "threads per engine (default 1)");
    bench_cmd->add_option("--filter", bench_opts.filter, "only cases whose name matches this regex");
    auto* bench_json = bench_cmd->add_option("--json", bench_opts.json_path,
                                             "write the results to this JSON file (with --list: print JSON)")
                           ->expected(0, 1);
    bool bench_list = false;
    bench_cmd->add_flag("--list", bench_list,
                        "print the cases (pipeline, input dtype/shape/layout) of --suite, default every suite");
    bench_cmd->add_option("--device", bench_opts.device,
                          "device whose rows run: cpu (default) or cuda (the cuda engine, timed with CUDA events)");
    bench_cmd->add_option("--min-time", bench_opts.min_time_s, "minimum measured seconds per case and engine");
    std::string cmp_a, cmp_b;
    auto* compare_cmd = bench_cmd->add_subcommand("compare", "Print two result files side by side with speed-ups");
    compare_cmd->add_option("A", cmp_a, "baseline results (.json)")->required();
    compare_cmd->add_option("B", cmp_b, "new results (.json)")->required();

    cli::PrebuildArgs prebuild;
    auto* prebuild_cmd = app.add_subcommand(
        "prebuild",
        "Build pipelines' programs ahead of time into a folder of prebuilt modules, for every image size of "
        "the input classes given (found there by any later process: $TOROID_PREBUILT)");
    // PIPELINE...: the arguments left after the options (an option of a list would split an
    // inline JSON pipeline "[a, b]" at its commas).
    prebuild_cmd->allow_extras();
    prebuild_cmd->positionals_at_end(false);
    prebuild_cmd->footer("PIPELINE...: pipeline JSON files, or inline JSON starting with '['");
    prebuild_cmd->add_option("--into", prebuild.into, "the folder of prebuilt modules (made when missing)")->required();
    prebuild_cmd->add_option("--input", prebuild.inputs,
                             "input class dtype:channels:layout, repeatable (default: uint8:3:channels_last and "
                             "uint8:3:contiguous)");
    prebuild_cmd->add_option("--sizes", prebuild.sizes, "probe sides, every H x W pair (default 24,200,720,2400)")
        ->delimiter(',');
    prebuild_cmd->add_option("--batch", prebuild.batches, "probe batch sizes (default 1)")->delimiter(',');

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return error_exit(e.what());
    }

    try {
        if (*apply_cmd) return run_apply(apply);
        if (*prebuild_cmd) {
            prebuild.pipelines = prebuild_cmd->remaining();
            for (const auto& arg : prebuild.pipelines)
                if (arg.size() > 1 && arg[0] == '-') fail("prebuild: unknown option '{}'", printable(arg, 80));
            if (prebuild.pipelines.empty()) fail("prebuild: no PIPELINE given");
            return cli::run_prebuild(prebuild, std::cout);
        }
        if (*compare_cmd) return compare_bench(cmp_a, cmp_b, std::cout);
        if (*bench_cmd && bench_list) {
            std::vector<std::string> suites = bench_suite->count() ? std::vector<std::string>{bench_opts.suite}
                                                                   : bench::suite_names();
            if (bench_json->count() && !bench_opts.json_path.empty())
                fail("--list prints to stdout: give --json without a file name");
            if (bench_json->count()) {
                std::cout << bench::suites_to_json(suites);
            } else {
                for (const std::string& suite : suites)
                    for (const bench::BenchCase& c : bench::suite_cases(suite))
                        std::cout << suite << "\t" << c.device << "\t" << c.name << "\n";
            }
            return 0;
        }
        if (*bench_cmd) {
            if (bench_opts.device == "cuda" && bench_cmd->count("--engine") == 0) engines = "cuda";
            if (bench_json->count() && bench_opts.json_path.empty()) fail("--json needs a file name");
            bench_opts.engines = split_commas(engines);
            return run_bench(bench_opts, std::cout);
        }
    } catch (const Error& e) {
        return error_exit(e.what());
    } catch (const std::bad_alloc&) {
        return error_exit("out of memory");
    } catch (const std::exception& e) {
        return error_exit(fmt::format("internal error: {}", e.what()));
    }
    return 0;
}
