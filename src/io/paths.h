// Path policy for the files toroid reads and writes: where a pipeline may point for its
// grid files, and whether an output would land on an input.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace toroid::io {

// The file a path named inside a pipeline (a grid_sample op's "grid") refers to, resolved
// against `base_dir` (the pipeline file's folder; the current folder for inline JSON).
// Unless `allow_any_path`, the path must be relative and stay inside base_dir once ".",
// ".." and symlinks are resolved; otherwise a toroid::Error says so without reading the
// file (nor telling whether it exists). `what` starts the message ("op 2 (grid_sample)").
std::filesystem::path resolve_pipeline_path(const std::string& given, const std::filesystem::path& base_dir,
                                            bool allow_any_path, const std::string& what);

// The path as messages show it: control characters and invalid UTF-8 escaped (core/error.h
// printable).
std::string printable_path(const std::filesystem::path& p);

// `p` absolute, with ".", ".." and symlinks resolved as far as it exists (the rest is
// appended lexically normalized).
std::filesystem::path resolved(const std::filesystem::path& p);
// Whether `inner` (resolved) is `outer` (resolved) or lies below it.
bool is_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

// The (device, inode) of an existing file, symlinks followed; nullopt when it does not exist.
struct FileId {
    unsigned long long dev = 0, ino = 0;
    bool operator<(const FileId& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
    bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};
std::optional<FileId> file_id(const std::filesystem::path& p);

}  // namespace toroid::io
