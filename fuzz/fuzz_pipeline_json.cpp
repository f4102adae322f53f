// libFuzzer target for the pipeline JSON front: parses arbitrary text as a pipeline,
// checks that the canonical JSON of whatever parses reads back to the same pipeline,
// and runs shape inference on a uint8 and a float32 image.
#include "fuzz_common.h"
#include "io/file.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace {

namespace fs = std::filesystem;
using namespace toroid;

fs::path g_base_dir;

void remove_base_dir() {
    std::error_code ec;
    fs::remove_all(g_base_dir, ec);
}

// Grid files the fuzzer can name (the seeds and the dictionary spell them): one valid,
// the rest each wrong in one way, so that grid validation is reached; and paths that test
// the path policy and the regular-file check: a subfolder, a FIFO, and symlinks that stay
// in the folder, leave it, or name /dev/zero.
void write_grids(const fs::path& dir) {
    auto grid = [](DType t, const Dims& d) { return io::encode_npy(Tensor::zeros(t, d)); };
    io::write_file_atomic(dir / "grid.npy", grid(DType::Float32, {1, 4, 5, 2}));
    io::write_file_atomic(dir / "grid_b2.npy", grid(DType::Float32, {2, 3, 3, 2}));
    io::write_file_atomic(dir / "grid_u8.npy", grid(DType::UInt8, {1, 4, 5, 2}));
    io::write_file_atomic(dir / "grid_last3.npy", grid(DType::Float32, {1, 4, 5, 3}));
    io::write_file_atomic(dir / "grid_zero.npy", grid(DType::Float32, {1, 0, 5, 2}));
    io::write_file_atomic(dir / "grid_garbage.npy", "not a .npy file");
    fs::create_directory(dir / "sub");
    io::write_file_atomic(dir / "sub" / "grid.npy", grid(DType::Float32, {1, 3, 3, 2}));
    if (::mkfifo((dir / "fifo.npy").c_str(), 0600) != 0) fuzz::bug("cannot create a FIFO", dir.string());
    fs::create_symlink("grid.npy", dir / "link_in.npy");
    fs::create_symlink("/dev/zero", dir / "link_zero.npy");
    fs::create_symlink("..", dir / "link_up");
    fs::create_symlink("/etc", dir / "link_out");
}

// Whether a grid path, resolved as the kernel would (symlinks followed), names something
// inside the scratch folder.
bool stays_local(const std::string& given) {
    if (given.empty() || given.find('\0') != std::string::npos) return true;  // refused before any open
    const fs::path path(given);
    if (path.is_absolute()) return false;
    std::error_code ec;
    const fs::path base = fs::canonical(g_base_dir, ec);
    fs::path full = fs::weakly_canonical(base / path, ec);
    if (ec) return false;
    auto b = base.begin();
    auto f = full.begin();
    for (; b != base.end(); ++b, ++f)
        if (f == full.end() || *f != *b) return false;
    return true;
}

// The grid paths of a pipeline that parses as JSON (each op object's "grid" string).
std::vector<std::string> grid_paths(const std::string& text) {
    std::vector<std::string> out;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_array()) return out;
    for (const auto& op : doc) {
        if (!op.is_object()) continue;
        auto it = op.find("grid");
        if (it != op.end() && it->is_string()) out.push_back(it->get<std::string>());
    }
    return out;
}

// parse_pipeline opens the grid files a pipeline names, under the path policy
// (io::resolve_pipeline_path, allow_paths off): a path that leaves the scratch folder
// (absolute, `..`, a symlink out of it or to /dev/zero) is refused before anything is
// opened, and what is not a regular file (the FIFO) is refused by its stat before it is
// opened (io::read_file). So the fuzzer never reads /dev/zero or blocks on a FIFO. This
// checks the first half: a pipeline naming a grid outside the folder never parses.
void check_path_policy(const std::string& text) {
    for (const std::string& path : grid_paths(text))
        if (!stays_local(path)) fuzz::bug("a grid path outside the pipeline's folder was accepted", path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    std::string tmpl = (fs::temp_directory_path() / "toroid_fuzz_json_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) fuzz::bug("cannot create a scratch folder", tmpl);
    g_base_dir = tmpl;
    write_grids(g_base_dir);
    std::atexit(remove_base_dir);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::expect_ok_or_error([&] {
        Pipeline p = parse_pipeline(text, g_base_dir);
        check_path_policy(text);
        std::string canonical = pipeline_to_json(p);
        Pipeline q;
        try {
            q = parse_pipeline(canonical, g_base_dir);
        } catch (const Error& e) {
            fuzz::bug("canonical JSON of a valid pipeline does not parse", canonical + " -> " + e.what());
        }
        if (pipeline_to_json(q) != canonical)
            fuzz::bug("canonical JSON is not stable", canonical + " vs " + pipeline_to_json(q));
        for (DType t : kAllDTypes) {
            fuzz::expect_ok_or_error([&] {
                ShapeInfo out = infer_shape(p, ShapeInfo{t, {1, 3, 8, 10}});
                for (auto d : out.shape) fuzz::check(d > 0 && d <= kMaxElements, "inferred dims are in range");
            });
        }
    });
    return 0;
}
