// Ahead-of-time builds: full builds of generated C++ made before any process needs them
// (`toroid prebuild`, and the catalogue the build makes for common pipelines), for named
// instruction-set levels rather than for the machine that built them. They live in folders of
// the disk cache's layout (runtime/disk_cache.h), read-only to the processes that use them,
// and are found by the source and the level alone: any compiler made them, any machine whose
// CPU has the level's features runs them. The JIT looks there before it compiles
// (runtime/jit.h).
#pragma once

#include "target/isa_level.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace toroid {

// The key of a prebuilt module: the source, the level and the flags every build of the
// runtime's caller gets (e.g. -fopenmp -ffp-contract=off); not the compiler's identity.
std::string prebuilt_key(const std::string& source, const IsaLevel& level, const std::vector<std::string>& extra_flags);
// The same from the source's SHA-256 (hex): a lookup at several levels hashes the source once.
std::string prebuilt_key_of_digest(const std::string& source_sha256, const IsaLevel& level,
                                   const std::vector<std::string>& extra_flags);

// The folders searched for prebuilt modules, existing ones only: $TOROID_PREBUILT (a
// ':'-separated list; set but empty, or "none": no folder), else beside the library that
// holds this code: <dir>/prebuilt (a build tree), <dir>/../share/toroid/prebuilt and the
// install prefix's share/toroid/prebuilt (an installed copy).
std::vector<std::filesystem::path> prebuilt_dirs_from_environment();

}  // namespace toroid
