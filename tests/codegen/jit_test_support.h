// Helpers of the tests that compile preamble code with the JIT (cpu_preamble_test,
// tap_pairs_test): the preamble header's path, reading a file whole, whether a compiler
// is on PATH, and the variants a check is compiled in.
#pragma once

#include "target/cpu_features.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace toroid::jit_test {

inline const std::filesystem::path kHeader =
    std::filesystem::path(TOROID_SOURCE_DIR) / "src" / "codegen" / "cpu_preamble.h";

inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline bool on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');)
        if (!d.empty() && ::access((std::filesystem::path(d) / program).c_str(), X_OK) == 0) return true;
    return false;
}

// One way to compile a check: the lane count the preamble is pasted with, the instruction
// set (as a generated source has it: its defines before the preamble, its flags for the
// compiler) and any further flags.
struct Variant {
    int lanes;
    CpuFeatures features;
    std::vector<std::string> extra_flags = {};

    std::vector<std::string> flags() const {
        std::vector<std::string> f = features.compiler_flags();
        f.insert(f.end(), extra_flags.begin(), extra_flags.end());
        return f;
    }
    // The source's opening: the features' defines, TOROID_LANES and TOROID_REVERSE.
    std::string prefix() const {
        std::string src = features.defines() + "#define TOROID_LANES " + std::to_string(lanes) + "\n#define TOROID_REVERSE ";
        for (int i = lanes - 1; i >= 0; --i) src += std::to_string(i) + (i > 0 ? ", " : "\n");
        return src;
    }
    std::string name() const {
        std::string s = "lanes " + std::to_string(lanes) + " [" + features.names() + "]";
        for (const std::string& f : extra_flags) s += " " + f;
        return s;
    }
};

// The variants this CPU runs.
inline std::vector<Variant> runnable(std::vector<Variant> all) {
    std::vector<Variant> v;
    for (Variant& x : all)
        if (CpuFeatures::host().contains(x.features)) v.push_back(std::move(x));
    return v;
}

}  // namespace toroid::jit_test
