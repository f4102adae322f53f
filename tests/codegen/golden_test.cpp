// Golden printer output: the kernels the C++ and CUDA printers write for a few pipelines
// (planar and channels-last flips, an antialiased uint8 resize, the same mirrored after it,
// equalize's histogram and table, normalize; CUDA block reductions and a bicubic resize),
// for fixed targets, against files under tests/data/golden. A change to what the
// scheduler decides or the printers write shows up here as a readable diff of generated
// code, reviewed with the change:
//     TOROID_UPDATE_GOLDEN=1 build/tests/toroid_tests --gtest_filter='Golden.*'
// rewrites the files. The preambles are left out (their own tests check them exhaustively).
#include "codegen/cpp.h"
#include "codegen/cuda.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace toroid {
namespace {

namespace fs = std::filesystem;

Target cpu_target(int vector_bytes, bool byte_permute) {
    Target t;
    t.kind = TargetKind::Cpu;
    t.vector_bytes = vector_bytes;
    t.byte_permute = byte_permute;
    t.byte_tables = byte_permute;
    t.byte_windows = byte_permute || vector_bytes == 32;  // AVX2: 32-byte windows
    t.word_gather = true;
    return t;
}

ir::Program program(const std::string& json, const Target& target, DType dtype, Dims shape, Layout layout) {
    schedule::Options o;
    o.target = target;
    return schedule::schedule(decomp::decompose(parse_pipeline(json, "."), TensorSpec{dtype, shape, dense_strides(shape, layout)}),
                              o);
}

// The generated source from its first kernel on (CPU: the buffer list; CUDA: the first kernel).
std::string kernels_of(const std::string& src, const std::string& marker) {
    const auto at = src.find(marker);
    return at == std::string::npos ? src : src.substr(at);
}

void expect_golden(const std::string& name, const std::string& text) {
    const fs::path path = fs::path(TOROID_TEST_DATA) / "golden" / name;
    const char* update = std::getenv("TOROID_UPDATE_GOLDEN");
    if (update != nullptr && std::string(update) == "1") {
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << text;
        return;
    }
    std::ifstream f(path, std::ios::binary);
    ASSERT_TRUE(f.good()) << path << " is missing: run with TOROID_UPDATE_GOLDEN=1 to write it";
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string want = ss.str();
    if (want == text) return;
    std::istringstream a(want), b(text);
    std::string la, lb;
    int line = 1;
    while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
    ADD_FAILURE() << name << " differs from the generated code at line " << line << ":\n  golden:    " << la
                  << "\n  generated: " << lb
                  << "\nReview the change; if it is intended, TOROID_UPDATE_GOLDEN=1 rewrites the golden files.";
}

const Dims kImage{1, 3, 37, 53};

TEST(Golden, CppKernels) {
    const auto vbmi = cpu_target(64, true), avx2 = cpu_target(32, false);
    auto avx2_lanes = avx2;  // TOROID_CPU_TARGET=avx2: taps in lanes on every channels-last row
    avx2_lanes.tap_lanes_span = Target::kTapLanesSpanAvx2;
    struct Case {
        const char* name;
        const char* json;
        Target target;
        DType dtype;
        Layout layout;
    } cases[] = {
        {"hflip_u8_cf_avx512vbmi.cpp", R"([{"op": "flip", "dims": [-1]}])", vbmi, DType::UInt8, Layout::Contiguous},
        {"hflip_u8_cl_avx2.cpp", R"([{"op": "flip", "dims": [-1]}])", avx2, DType::UInt8, Layout::ChannelsLast},
        {"resize_aa_u8_cl_avx512vbmi.cpp", R"([{"op": "resize", "size": [9, 17], "mode": "bilinear", "antialias": true}])",
         vbmi, DType::UInt8, Layout::ChannelsLast},
        {"resize_aa_flip_u8_cl_avx512vbmi.cpp",
         R"([{"op": "resize", "size": [9, 17], "mode": "bilinear", "antialias": true}, {"op": "flip", "dims": [-1]}])", vbmi,
         DType::UInt8, Layout::ChannelsLast},
        {"resize_aa_u8_cl_avx2.cpp", R"([{"op": "resize", "size": [9, 17], "mode": "bilinear", "antialias": true}])",
         avx2_lanes, DType::UInt8, Layout::ChannelsLast},
        {"equalize_u8_cf_avx512vbmi.cpp", R"([{"op": "equalize"}])", vbmi, DType::UInt8, Layout::Contiguous},
        {"normalize_u8_cf_avx2.cpp",
         R"([{"op": "convert", "dtype": "float32"}, {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])",
         avx2, DType::UInt8, Layout::Contiguous},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const ir::Program p = program(c.json, c.target, c.dtype, kImage, c.layout);
        expect_golden(c.name, kernels_of(codegen::generate_cpp(p, c.target.kernel_lanes()), "\n// Buffers:\n"));
    }
}

TEST(Golden, CudaKernels) {
    const auto cuda = Target::cuda("sm_90");
    struct Case {
        const char* name;
        const char* json;
        DType dtype;
        Layout layout;
    } cases[] = {
        {"autocontrast_u8_cf.cu", R"([{"op": "autocontrast"}])", DType::UInt8, Layout::Contiguous},
        {"equalize_u8_cl.cu", R"([{"op": "equalize"}])", DType::UInt8, Layout::ChannelsLast},
        {"resize_bicubic_f32_cf.cu", R"([{"op": "resize", "size": [19, 23], "mode": "bicubic"}])", DType::Float32,
         Layout::Contiguous},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const ir::Program p = program(c.json, cuda, c.dtype, kImage, c.layout);
        expect_golden(c.name, kernels_of(codegen::generate_cuda(p, 128), "// kernel_0"));
    }
}

}  // namespace
}  // namespace toroid
