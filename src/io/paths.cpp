// Resolving paths: a pipeline's grid paths kept inside the pipeline's folder, and the
// checks that keep an output off the files a run reads.
#include "io/paths.h"

#include "core/error.h"

#include <sys/stat.h>

#include <system_error>

namespace toroid::io {

namespace fs = std::filesystem;

std::string printable_path(const fs::path& p) { return printable(p.string()); }

fs::path resolved(const fs::path& p) {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    if (ec) abs = p;
    fs::path n = fs::weakly_canonical(abs, ec);
    return ec ? abs.lexically_normal() : n;
}

bool is_within(const fs::path& inner, const fs::path& outer) {
    const fs::path in = resolved(inner), out = resolved(outer);
    auto i = in.begin();
    for (auto o = out.begin(); o != out.end(); ++o, ++i) {
        if (o->empty()) continue;  // a trailing separator
        if (i == in.end() || *i != *o) return false;
    }
    return true;
}

std::optional<FileId> file_id(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return std::nullopt;
    return FileId{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
}

fs::path resolve_pipeline_path(const std::string& given, const fs::path& base_dir, bool allow_any_path,
                               const std::string& what) {
    const fs::path path(given);
    if (given.empty()) fail("{}: the path is empty", what);
    if (path.is_relative()) {
        const fs::path full = base_dir / path;
        if (allow_any_path) return full;
        if (!is_within(full, base_dir))
            fail("{}: path '{}' leaves the pipeline's folder; a pipeline may name files in its folder only "
                 "(--allow-paths, or allow_paths=True in Python, allows any path)",
                 what, printable(given, 200));
        return full;
    }
    if (!allow_any_path)
        fail("{}: path '{}' is absolute; a pipeline may name files in its folder only (--allow-paths, or "
             "allow_paths=True in Python, allows any path)",
             what, printable(given, 200));
    return path;
}

}  // namespace toroid::io
