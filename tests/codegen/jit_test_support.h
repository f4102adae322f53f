// Helpers of the tests that compile preamble code with the JIT (cpu_preamble_test,
// tap_pairs_test): the preamble header's path, reading a file whole, whether a compiler
// is on PATH, and the variants a check is compiled in.
#pragma once

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

// One way to compile a check: the lane count the preamble is pasted with and the flags
// (instruction sets) it is compiled under.
struct Variant {
    int lanes;
    std::vector<std::string> flags;
};

}  // namespace toroid::jit_test
