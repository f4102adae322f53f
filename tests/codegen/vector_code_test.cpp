// The generated kernels' vector helpers stay vector code under the tunings of the CPUs they
// run on. GCC turns some lane loops and vector conversions into vector instructions only
// under some tunings: with -march=sapphirerapids (the GPU machine's host CPU), fma_v's lane
// loop became one scalar vfmadd231ss per lane, and a conversion of float lanes to bytes one
// vcvttss2si and one insert per lane under every tuning. This compiles real kernels (a blur,
// the colour ops) for named targets under Intel tunings to assembly and counts the scalar
// forms: a few belong to the kernels' scalar tails, hundreds mean a vector loop went scalar.
#include "codegen/cpp.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"
#include "target/target.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

// The target TOROID_CPU_TARGET=`name` names (its feature set, as the engine schedules for it).
Target named_target(const char* name) {
    const char* old = std::getenv("TOROID_CPU_TARGET");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("TOROID_CPU_TARGET", name, 1);
    Target t = Target::host_cpu();
    if (old != nullptr) ::setenv("TOROID_CPU_TARGET", saved.c_str(), 1);
    else ::unsetenv("TOROID_CPU_TARGET");
    return t;
}

std::string kernel_source(const std::string& json, const Target& target) {
    schedule::Options o;
    o.target = target;
    const Dims shape{1, 3, 64, 80};
    const ir::Program p = schedule::schedule(
        decomp::decompose(parse_pipeline(json, "."), TensorSpec{DType::UInt8, shape, dense_strides(shape, Layout::Contiguous)}),
        o);
    return codegen::generate_cpp(p, target.kernel_lanes());
}

// The assembly of `source` compiled with `flags`, or empty (with the compiler's message in
// `why`) where this compiler cannot.
std::string assembly(const std::string& source, const std::string& flags, std::string& why) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("toroid_vector_code_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "kernel.cpp") << source;
    const std::string cmd = std::string(TOROID_CXX_COMPILER) + " -std=c++20 -O3 -fPIC -fopenmp -ffp-contract=off " + flags +
                            " -S -o " + (dir / "kernel.s").string() + " " + (dir / "kernel.cpp").string() + " 2> " +
                            (dir / "err.txt").string();
    std::string text;
    if (std::system(cmd.c_str()) == 0) {
        std::ifstream f(dir / "kernel.s");
        std::stringstream ss;
        ss << f.rdbuf();
        text = ss.str();
    } else {
        std::ifstream f(dir / "err.txt");
        std::getline(f, why);
    }
    fs::remove_all(dir);
    return text;
}

int count(const std::string& text, const std::regex& re) {
    return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(VectorCode, HelpersStayVectorCodeUnderIntelTunings) {
    const std::regex scalar_fma(R"(\bvfmadd\d+ss\b)"), scalar_convert(R"(\bvcvttss2si[lq]?\b)");
    struct Case {
        const char* target;
        const char* flags;
    } targets[] = {
        {"avx512vbmi", "-march=sapphirerapids"},
        {"avx512", "-march=skylake-avx512"},
        {"avx2", "-march=haswell"},
    };
    const char* pipelines[] = {
        R"([{"op": "gaussian_blur", "kernel_size": [9, 9], "sigma": [2.0, 2.0]}])",
        R"([{"op": "rgb_to_grayscale", "num_output_channels": 1}])",
        R"([{"op": "adjust_saturation", "factor": 0.7}])",
        R"([{"op": "adjust_sharpness", "factor": 2.0}])",
    };
    int compiled = 0;
    for (const Case& c : targets) {
        const Target target = named_target(c.target);
        for (const char* json : pipelines) {
            SCOPED_TRACE(std::string(c.target) + " " + c.flags + " " + json);
            std::string why;
            const std::string s = assembly(kernel_source(json, target), c.flags, why);
            if (s.empty()) {
                ADD_FAILURE() << "the compiler could not build the kernel: " << why;
                continue;
            }
            ++compiled;
            // Scalar tails: a handful of each. Before the fixes: 461 scalar multiply-adds in
            // the blur under Sapphire Rapids tuning, 16 conversions per vector of bytes.
            EXPECT_LE(count(s, scalar_fma), 24);
            EXPECT_LE(count(s, scalar_convert), 24);
        }
    }
    EXPECT_EQ(compiled, 12);
}

}  // namespace
}  // namespace toroid
