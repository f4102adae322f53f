// A content-addressed folder of build results shared by processes, used by every toolchain
// of the runtime (C++ shared objects, CUDA cubins): entries appear complete by rename only,
// are checked against their manifest, and one build per key runs at a time across processes.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toroid {

// $TOROID_CACHE_DIR, else $XDG_CACHE_HOME/toroid, else $HOME/.cache/toroid (throws
// toroid::Error when none is set). Empty values count as unset.
std::filesystem::path default_cache_dir();

// The first 32 hex digits of the SHA-256 of `parts`, each length-prefixed so that no two
// different part lists hash the same text. `domain` names the toolchain and key version.
std::string cache_key(std::string_view domain, const std::vector<std::string>& parts);

// Thrown by a builder to say the build failed: the cache keeps the build's folder under
// failed/<key>/ and throws toroid::Error with message(where the files were kept).
struct BuildFailure {
    std::function<std::string(const std::filesystem::path& kept)> message;
};

// Disk layout under root:
//   <key>/...                 an installed entry: the builder's files plus manifest.json
//   <key>.lock                 the lock builders of <key> take (empty; left in place)
//   failed/<key>/...           the last failed build of <key>
//   .tmp-*, .trash-*           in-flight work
// manifest.json holds the key, the size and SHA-256 of each checked file, and the builder's
// own fields. An entry whose checked files disagree with the manifest, or that the opener
// rejects, is moved aside, deleted and rebuilt. Builders of one key serialize on an flock of
// <key>.lock, so processes asking for the same missing entry at once build it once: the
// others wait and then open the installed entry.
class DiskCache {
public:
    explicit DiskCache(std::filesystem::path root);  // made absolute

    struct Recipe {
        std::string key;
        // Files of the entry whose size and SHA-256 the manifest records and checks.
        std::vector<std::string> checked_files;
        // Fills the empty private folder `dir` with the entry's files (all checked_files
        // included) and returns extra manifest fields (an object, or null). Throws
        // BuildFailure to keep the folder as failed/<key>/; other exceptions discard it.
        std::function<nlohmann::json(const std::filesystem::path& dir)> build;
        // Checks an intact entry further (e.g. loads it) and throws toroid::Error when it
        // cannot be used; may be empty. Runs on the installed folder.
        std::function<void(const std::filesystem::path& dir)> open;
    };

    struct Result {
        std::filesystem::path directory;  // the installed entry
        bool built = false;               // a build ran and succeeded (installed or not)
        int corrupt_entries = 0;          // broken entries removed on the way
        double build_seconds = 0;         // wall time in recipe.build
    };

    // The entry of recipe.key, built when missing or broken. Throws toroid::Error when the
    // build fails (the message comes from the BuildFailure) or a fresh build is rejected by
    // recipe.open (then its folder is kept under failed/<key>/ too).
    Result get(const Recipe& recipe) const;
    // The installed entry of recipe.key when it is intact and recipe.open accepts it; never
    // builds, waits for a builder or removes anything (a broken entry is get()'s to rebuild).
    std::optional<std::filesystem::path> find(const Recipe& recipe) const;

    const std::filesystem::path& root() const { return root_; }
    std::filesystem::path entry(const std::string& key) const { return root_ / key; }
    std::filesystem::path failed(const std::string& key) const { return root_ / "failed" / key; }

private:
    std::optional<bool> check(const Recipe& recipe, const std::filesystem::path& dir) const;
    bool discard(const std::filesystem::path& dir) const;
    std::filesystem::path keep_failure(const std::string& key, const std::filesystem::path& from) const;

    std::filesystem::path root_;
};

// Small file helpers shared by the toolchains.
std::string read_file_bytes(const std::filesystem::path& path);           // throws toroid::Error
std::string read_file_or_empty(const std::filesystem::path& path);
void write_file_bytes(const std::filesystem::path& path, std::string_view bytes);  // throws
// Random hex digits for private names: pids repeat across containers, random bits do not.
std::string random_hex();

}  // namespace toroid
