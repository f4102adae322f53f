// A content-addressed folder of build results shared by processes, used by every toolchain
// of the runtime (C++ shared objects, CUDA cubins): entries appear complete by rename only,
// are checked against their manifest, and one build per key runs at a time across processes.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <cstdint>
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

// How a cache folder is used beyond its layout: how long a builder waits for another's
// lock, how large it may grow, whose entries it loads, what it keeps.
struct CacheOptions {
    // Seconds a builder waits for another process's lock of the key it needs; then it builds
    // privately (the result serves this process and is installed only if the lock is free by
    // then). $TOROID_LOCK_TIMEOUT.
    double lock_timeout = 30;
    // The folder's size cap in bytes (installed entries and failed builds): past it, the
    // least recently used entries are evicted after a build. 0: no cap.
    // $TOROID_CACHE_MAX_BYTES or $TOROID_CACHE_SIZE (a number with an optional K/M/G/T
    // suffix, powers of 1024: "2G").
    std::uint64_t max_bytes = std::uint64_t{2} << 30;
    // Entries (folder and checked files) are loaded only when owned by this user, or by
    // this group ($TOROID_CACHE_GROUP, a name; gid -1: none), and writable by nobody else
    // (group-writable only with that group).
    long long group = -1;
    // Entries owned by root and writable by nobody else are trusted too (installed,
    // read-only prebuilt folders).
    bool trust_root = false;
    // Keep the recipe's source files in installed entries ($TOROID_KEEP_SOURCES=1, or
    // $TOROID_DEBUG set); failed builds always keep them.
    bool keep_sources = false;

    // The above from the environment; throws toroid::Error naming a malformed variable.
    static CacheOptions from_environment();
};

// "2G", "500M", "1.5g", "123456", "64KiB" as bytes; throws toroid::Error (naming `what`)
// when malformed.
std::uint64_t parse_byte_size(std::string_view text, std::string_view what);
// A timeout in seconds (> 0, finite); throws toroid::Error (naming `what`) when malformed.
double parse_seconds(std::string_view text, std::string_view what);

// Disk layout under root:
//   <key>/...                 an installed entry: the builder's files plus manifest.json
//   <key>.lock                 the lock builders of <key> take (empty; left in place)
//   failed/<key>/...           the last failed build of <key>
//   .tmp-*, .trash-*           in-flight work, named after the process that owns it
//   .usage, .usage.lock        the running size estimate the size cap works from
// manifest.json holds the key, the size and SHA-256 of each checked file, and the builder's
// own fields. An entry whose checked files disagree with the manifest, or that the opener
// rejects, is moved aside, deleted and rebuilt. Builders of one key serialize on an flock of
// <key>.lock, so processes asking for the same missing entry at once build it once: the
// others wait (CacheOptions::lock_timeout at most) and then open the installed entry.
//
// It heals and stays small: a folder it cannot write (read-only, a lock that is not a regular
// file) makes builds private (in a folder of this process's own, removed at exit) with one
// warning; the first build of a process removes `.tmp-*`/`.trash-*` folders over a minute
// old whose process is gone; a hit stamps its entry (the folder's mtime) and builds evict
// the least recently stamped entries past CacheOptions::max_bytes. An entry not owned by
// this user (or writable by others) is never loaded: skipped with a warning, and built
// privately.
class DiskCache {
public:
    explicit DiskCache(std::filesystem::path root);  // made absolute; CacheOptions::from_environment()
    DiskCache(std::filesystem::path root, CacheOptions options);

    struct Recipe {
        std::string key;
        // Files of the entry whose size and SHA-256 the manifest records and checks.
        std::vector<std::string> checked_files;
        // Files the build writes that installed entries do not keep (the generated source),
        // unless CacheOptions::keep_sources or keep_sources here says so.
        std::vector<std::string> source_files;
        bool keep_sources = false;
        // Fills the empty private folder `dir` with the entry's files (all checked_files
        // included) and returns extra manifest fields (an object, or null). Throws
        // BuildFailure to keep the folder as failed/<key>/; other exceptions discard it.
        std::function<nlohmann::json(const std::filesystem::path& dir)> build;
        // Checks an intact entry further (e.g. loads it) and throws toroid::Error when it
        // cannot be used; may be empty. Runs on the installed folder.
        std::function<void(const std::filesystem::path& dir)> open;
    };

    struct Result {
        std::filesystem::path directory;  // the installed entry (or this process's private build)
        bool built = false;               // a build ran and succeeded (installed or not)
        bool is_private = false;          // directory is a private build of this process, not an entry
        int corrupt_entries = 0;          // broken entries removed on the way
        double build_seconds = 0;         // wall time in recipe.build
    };

    // The entry of recipe.key, built when missing or broken. Throws toroid::Error when the
    // build fails (the message comes from the BuildFailure) or a fresh build is rejected by
    // recipe.open (then its folder is kept under failed/<key>/ too).
    Result get(const Recipe& recipe) const;
    // The installed entry of recipe.key when it is intact, trusted and recipe.open accepts it
    // (or this process's private build of it); never builds, waits for a builder or removes
    // anything (a broken entry is get()'s to rebuild).
    std::optional<std::filesystem::path> find(const Recipe& recipe) const;

    const std::filesystem::path& root() const { return root_; }
    const CacheOptions& options() const { return options_; }
    std::filesystem::path entry(const std::string& key) const { return root_ / key; }
    std::filesystem::path failed(const std::string& key) const { return root_ / "failed" / key; }

    // Evicts least recently used entries until the folder holds at most `target` bytes of
    // entries and failed builds (never one whose lock another builder holds; entries of
    // modules this process has loaded only when the others are not enough, the oldest
    // first); returns the bytes it holds afterwards. Normally run by get().
    std::uint64_t evict_to(std::uint64_t target) const;

private:
    enum class State { Absent, Intact, Broken, Untrusted };
    State check(const Recipe& recipe, const std::filesystem::path& dir) const;
    bool discard(const std::filesystem::path& dir) const;
    std::filesystem::path keep_failure(const std::string& key, const std::filesystem::path& from) const;
    // `what` names the trouble for warn-once purposes; `why` is the warning's text.
    Result build_privately(const Recipe& recipe, const std::filesystem::path& parent, const std::string& what,
                           const std::string& why) const;
    void account(std::uint64_t added_bytes) const;

    std::filesystem::path root_;
    CacheOptions options_;
};

// Whether `path` (not followed when a link) may be trusted under `options`: owned by this
// user (or the named group, or root when trust_root) and writable by nobody else.
bool trusted_path(const std::filesystem::path& path, const CacheOptions& options);

// Marks an entry folder as used by this process (a loaded module lives there): eviction
// leaves it alone until as many unmark calls came.
void mark_entry_in_use(const std::filesystem::path& dir);
void unmark_entry_in_use(const std::filesystem::path& dir);

// Exit and signal paths. cancel_cache_waits(): from now on a builder gives up waiting for a
// busy lock at once (its build fails with "cancelled"), so that an exiting process never
// waits on another's lock. remove_private_builds(): removes this process's private builds
// (made when the cache could not be used), as exit does.
void cancel_cache_waits();
bool cache_waits_cancelled();
void remove_private_builds();

// Small file helpers shared by the toolchains.
std::string read_file_bytes(const std::filesystem::path& path);           // throws toroid::Error
std::string read_file_or_empty(const std::filesystem::path& path);
void write_file_bytes(const std::filesystem::path& path, std::string_view bytes);  // throws
// Random hex digits for private names: pids repeat across containers, random bits do not.
std::string random_hex();

}  // namespace toroid
