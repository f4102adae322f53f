// Helpers of the tests that compile preamble code with the JIT (cpu_preamble_test,
// tap_pairs_test): the preamble header's path, reading a file whole, and whether a
// compiler is on PATH.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace toroid::jit_test
