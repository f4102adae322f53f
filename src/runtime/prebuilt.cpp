// Instruction-set levels and the folders of prebuilt modules (runtime/prebuilt.h).
#include "runtime/prebuilt.h"

#include "core/error.h"
#include "runtime/disk_cache.h"
#include "runtime/sha256.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include <cstdint>

#include <link.h>

namespace toroid {

namespace fs = std::filesystem;

std::string prebuilt_key_of_digest(const std::string& source_sha256, const IsaLevel& level,
                                   const std::vector<std::string>& extra_flags) {
    std::vector<std::string> parts = {source_sha256, level.name};
    for (const auto& f : level.flags) parts.push_back(f);
    for (const auto& f : extra_flags) parts.push_back(f);
    return cache_key("toroid-prebuilt-key-v2", parts);
}

std::string prebuilt_key(const std::string& source, const IsaLevel& level, const std::vector<std::string>& extra_flags) {
    return prebuilt_key_of_digest(sha256_hex(source), level, extra_flags);
}

namespace {

// The file of the loaded object (executable or shared library) whose segments hold `address`:
// the main program's has no name in the loader's list (dladdr would answer argv[0], a bare
// name when run through PATH), so it is /proc/self/exe.
struct Lookup {
    std::uintptr_t address = 0;
    bool found = false;
    std::string name;
};

int find_object(dl_phdr_info* info, std::size_t, void* data) {
    auto* q = static_cast<Lookup*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
        if (q->address >= start && q->address < start + ph.p_memsz) {
            q->found = true;
            q->name = info->dlpi_name != nullptr ? info->dlpi_name : "";
            return 1;
        }
    }
    return 0;
}

// The folder of the executable or shared library this code was linked into.
fs::path own_dir() {
    Lookup q;
    q.address = reinterpret_cast<std::uintptr_t>(&prebuilt_dirs_from_environment);
    ::dl_iterate_phdr(&find_object, &q);
    if (!q.found) return {};
    std::error_code ec;
    const fs::path p = fs::canonical(q.name.empty() ? fs::path("/proc/self/exe") : fs::path(q.name), ec);
    return ec ? fs::path{} : p.parent_path();
}

}  // namespace

std::vector<fs::path> prebuilt_dirs_from_environment() {
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("TOROID_PREBUILT"); env != nullptr) {
        if (std::string_view(env) == "none") return {};
        std::istringstream in{std::string(env)};
        for (std::string item; std::getline(in, item, ':');)
            if (!item.empty()) candidates.emplace_back(item);
    } else {
        if (fs::path dir = own_dir(); !dir.empty()) {
            candidates.push_back(dir / "prebuilt");
            candidates.push_back(dir / ".." / "share" / "toroid" / "prebuilt");
        }
#ifdef TOROID_INSTALL_PREFIX
        candidates.push_back(fs::path(TOROID_INSTALL_PREFIX) / "share" / "toroid" / "prebuilt");
#endif
    }
    std::vector<fs::path> out;
    for (const fs::path& c : candidates) {
        std::error_code ec;
        if (!fs::is_directory(c, ec)) continue;
        fs::path abs = fs::weakly_canonical(c, ec);
        if (ec) abs = c;
        bool seen = false;
        for (const fs::path& o : out) seen = seen || o == abs;
        if (!seen) out.push_back(abs);
    }
    return out;
}

}  // namespace toroid
