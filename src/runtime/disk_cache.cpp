// The shared build cache declared in disk_cache.h: private build folders renamed into place,
// manifests of sizes and SHA-256 digests, failed builds kept for inspection, and an flock
// per key so that concurrent processes build a missing entry once.
#include "runtime/disk_cache.h"

#include "core/error.h"
#include "runtime/sha256.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace toroid {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> env_nonempty(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
}

// The manifest field of a checked file: its name with '.' made '_' (kernel.so -> kernel_so).
std::string manifest_field(const std::string& file) {
    std::string out = file;
    for (char& c : out)
        if (c == '.') c = '_';
    return out;
}

// A private folder removed on scope exit unless released (moved into the cache).
class TempDir {
public:
    explicit TempDir(fs::path path) : path_(std::move(path)) {}
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }
    void release() { path_.clear(); }

private:
    fs::path path_;
};

// An exclusive flock held for the life of the object. flock (not fcntl locks) because its
// lock belongs to the open file description: two threads of one process that open the
// file separately exclude each other too, and the lock goes away when the process dies.
class FileLock {
public:
    explicit FileLock(const fs::path& path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) fail("cannot open the cache lock {}: {}", printable(path.string()), std::strerror(errno));
        while (::flock(fd_, LOCK_EX) != 0) {
            if (errno == EINTR) continue;
            int error = errno;
            ::close(fd_);
            fail("cannot lock {}: {}", printable(path.string()), std::strerror(error));
        }
    }
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    // Unlocked explicitly: a child forked meanwhile has a copy of the descriptor, and closing
    // ours alone would leave the key locked until that child exits (every other builder of
    // the key waiting on it).
    ~FileLock() {
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
    }

private:
    int fd_ = -1;
};

}  // namespace

fs::path default_cache_dir() {
    if (auto dir = env_nonempty("TOROID_CACHE_DIR")) return *dir;
    if (auto xdg = env_nonempty("XDG_CACHE_HOME")) return fs::path(*xdg) / "toroid";
    if (auto home = env_nonempty("HOME")) return fs::path(*home) / ".cache" / "toroid";
    fail("no folder for the JIT cache: set TOROID_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

std::string cache_key(std::string_view domain, const std::vector<std::string>& parts) {
    std::string material(domain);
    for (const auto& part : parts) {
        material += fmt::format("\n{}:", part.size());
        material += part;
    }
    return sha256_hex(material).substr(0, 32);
}

std::string read_file_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read {}: {}", printable(path.string()), std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string read_file_or_empty(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    return text.str();
}

void write_file_bytes(const fs::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) fail("cannot write {}: {}", printable(path.string()), std::strerror(errno));
}

std::string random_hex() {
    thread_local std::mt19937_64 engine{[] {
        std::random_device device;
        std::seed_seq seed{device(), device(), device(), device(), static_cast<unsigned>(::getpid())};
        return std::mt19937_64(seed);
    }()};
    return fmt::format("{:016x}", engine());
}

// ---------------------------------------------------------------------------------------

DiskCache::DiskCache(fs::path root) : root_(fs::absolute(root)) {}

// nullopt: no entry; true: intact and accepted by the opener; false: there but broken.
std::optional<bool> DiskCache::check(const Recipe& recipe, const fs::path& dir) const {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return std::nullopt;
    try {
        auto manifest = nlohmann::json::parse(read_file_bytes(dir / "manifest.json"));
        if (manifest.at("key").get<std::string>() != recipe.key) return false;
        for (const auto& file : recipe.checked_files) {
            const auto& recorded = manifest.at(manifest_field(file));
            if (recorded.at("size").get<std::uintmax_t>() != fs::file_size(dir / file) ||
                recorded.at("sha256").get<std::string>() != sha256_file_hex(dir / file))
                return false;
        }
        if (recipe.open) recipe.open(dir);
        return true;
    } catch (const std::exception&) {
        // Gone meanwhile (another process discarded it) reads as absent, not broken.
        if (!fs::exists(dir, ec)) return std::nullopt;
        return false;
    }
}

// Moves a broken entry aside before deleting it, so that no reader ever sees it half
// deleted. False when it was already gone.
bool DiskCache::discard(const fs::path& dir) const {
    const fs::path trash = root_ / (".trash-" + random_hex());
    std::error_code ec;
    fs::rename(dir, trash, ec);
    if (ec) return false;
    fs::remove_all(trash, ec);
    return true;
}

// Moves a build that cannot be used to failed/<key>/ (replacing the last failure of that
// key); returns where the files ended up.
fs::path DiskCache::keep_failure(const std::string& key, const fs::path& from) const {
    std::error_code ec;
    const fs::path target = failed(key);
    fs::create_directories(target.parent_path(), ec);
    for (int attempt = 0; attempt < 3; ++attempt) {
        fs::remove_all(target, ec);
        fs::rename(from, target, ec);
        if (!ec) return target;
    }
    return from;  // another process keeps replacing it; ours stays where it is
}

std::optional<fs::path> DiskCache::find(const Recipe& recipe) const {
    const fs::path dir = entry(recipe.key);
    if (check(recipe, dir) == std::optional<bool>(true)) return dir;
    return std::nullopt;
}

DiskCache::Result DiskCache::get(const Recipe& recipe) const {
    Result result;
    const fs::path dir = entry(recipe.key);
    if (check(recipe, dir) == std::optional<bool>(true)) {
        result.directory = dir;
        return result;
    }

    fs::create_directories(root_);
    FileLock lock(root_ / (recipe.key + ".lock"));
    // Whoever held the lock before us may have installed the entry meanwhile.
    auto state = check(recipe, dir);
    if (state == std::optional<bool>(true)) {
        result.directory = dir;
        return result;
    }
    if (state == std::optional<bool>(false) && discard(dir)) ++result.corrupt_entries;

    std::optional<TempDir> tmp;
    for (int attempt = 0; !tmp; ++attempt) {
        fs::path path = root_ / (".tmp-" + random_hex());
        if (fs::create_directory(path)) tmp.emplace(path);
        else if (attempt > 100) fail("cannot make a private folder in {}", printable(root_.string()));
    }

    const auto start = std::chrono::steady_clock::now();
    nlohmann::json manifest;
    try {
        manifest = recipe.build(tmp->path());
    } catch (const BuildFailure& failure) {
        result.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const fs::path kept = keep_failure(recipe.key, tmp->path());
        tmp->release();  // the files are named in the message, so they must stay
        throw Error(failure.message(kept));
    }
    result.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.built = true;
    if (manifest.is_null()) manifest = nlohmann::json::object();
    manifest["key"] = recipe.key;
    for (const auto& file : recipe.checked_files) {
        const fs::path path = tmp->path() / file;
        std::error_code ec;
        if (!fs::exists(path, ec)) fail("cache build of {} wrote no {}", recipe.key, file);
        manifest[manifest_field(file)] = {{"size", fs::file_size(path)}, {"sha256", sha256_file_hex(path)}};
    }
    manifest["toroid_version"] = TOROID_VERSION;
    write_file_bytes(tmp->path() / "manifest.json", manifest.dump(2) + "\n");

    // Builders that ignore the lock (another toroid version, a cache on a file system
    // without flock) may still race us to the rename; theirs then wins if it is intact.
    for (int attempt = 0; attempt < 3; ++attempt) {
        std::error_code ec;
        fs::rename(tmp->path(), dir, ec);
        if (!ec) {
            tmp->release();
            result.directory = dir;
            if (recipe.open) {
                try {
                    recipe.open(dir);
                } catch (const Error& e) {
                    // A fresh build that does not open would fail the same way for every
                    // reader, so it is kept with the failed builds, not left as an entry.
                    const fs::path kept = keep_failure(recipe.key, dir);
                    fail("{}; the build's files are in {}/", e.what(), printable(kept.string()));
                }
            }
            return result;
        }
        if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists)
            fail("cannot install cache entry {}: {}", printable(dir.string()), ec.message());
        auto other = check(recipe, dir);
        if (other == std::optional<bool>(true)) {
            result.directory = dir;
            return result;
        }
        if (other == std::optional<bool>(false) && discard(dir)) ++result.corrupt_entries;
    }
    fail("cannot install cache entry {}: another process keeps replacing it", printable(dir.string()));
}

}  // namespace toroid
