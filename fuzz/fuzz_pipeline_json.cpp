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

namespace {

namespace fs = std::filesystem;
using namespace toroid;

fs::path g_base_dir;

void remove_base_dir() {
    std::error_code ec;
    fs::remove_all(g_base_dir, ec);
}

// Grid files the fuzzer can name (the seeds and the dictionary spell them): one valid,
// the rest each wrong in one way, so that grid validation is reached.
void write_grids(const fs::path& dir) {
    auto grid = [](DType t, const Dims& d) { return io::encode_npy(Tensor::zeros(t, d)); };
    io::write_file_atomic(dir / "grid.npy", grid(DType::Float32, {1, 4, 5, 2}));
    io::write_file_atomic(dir / "grid_b2.npy", grid(DType::Float32, {2, 3, 3, 2}));
    io::write_file_atomic(dir / "grid_u8.npy", grid(DType::UInt8, {1, 4, 5, 2}));
    io::write_file_atomic(dir / "grid_last3.npy", grid(DType::Float32, {1, 4, 5, 3}));
    io::write_file_atomic(dir / "grid_zero.npy", grid(DType::Float32, {1, 0, 5, 2}));
    io::write_file_atomic(dir / "grid_garbage.npy", "not a .npy file");
}

// parse_pipeline opens the grid files a pipeline names. Only plain names inside the
// scratch folder are let through, so the fuzzer never reads /dev/zero or a FIFO.
bool grid_paths_are_local(const std::string& text) {
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_array()) return true;
    for (const auto& op : doc) {
        if (!op.is_object()) continue;
        auto it = op.find("grid");
        if (it != op.end() && it->is_string() && it->get<std::string>().find('/') != std::string::npos)
            return false;
    }
    return true;
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
    if (!grid_paths_are_local(text)) return -1;  // -1: keep it out of the corpus
    fuzz::expect_ok_or_error([&] {
        Pipeline p = parse_pipeline(text, g_base_dir);
        std::string canonical = pipeline_to_json(p);
        Pipeline q;
        try {
            q = parse_pipeline(canonical, g_base_dir);
        } catch (const Error& e) {
            fuzz::bug("canonical JSON of a valid pipeline does not parse", canonical + " -> " + e.what());
        }
        if (pipeline_to_json(q) != canonical)
            fuzz::bug("canonical JSON is not stable", canonical + " vs " + pipeline_to_json(q));
        for (DType t : {DType::UInt8, DType::Float32}) {
            fuzz::expect_ok_or_error([&] {
                ShapeInfo out = infer_shape(p, ShapeInfo{t, {1, 3, 8, 10}});
                for (auto d : out.shape) fuzz::check(d > 0 && d <= kMaxElements, "inferred dims are in range");
            });
        }
    });
    return 0;
}
