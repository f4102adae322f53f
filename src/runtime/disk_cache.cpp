// The shared build cache declared in disk_cache.h: private build folders renamed into place,
// manifests of sizes and SHA-256 digests, failed builds kept for inspection, an flock per key
// (waited for with a timeout) so that concurrent processes build a missing entry once, private
// builds where the folder cannot be used, stale-folder cleanup, a size cap with LRU eviction,
// and an ownership check before anything is loaded.
#include "runtime/disk_cache.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "runtime/sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
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

// Says `message` on stderr once per process for each `what` (a folder and a kind of trouble):
// a cache that cannot be used is reported, not complained about on every call.
void warn_once(const std::string& what, const std::string& message) {
    static std::mutex& mutex = *new std::mutex;
    static std::set<std::string>& said = *new std::set<std::string>;
    {
        std::lock_guard lock(mutex);
        if (!said.insert(what).second) return;
    }
    std::fprintf(stderr, "toroid: warning: %s\n", printable(message, 2000).c_str());
}

// ---- who owns a private folder -----------------------------------------------------------

// This process's start time (clock ticks since boot, /proc/self/stat field 22), so that a
// folder named after a pid that was reused is not taken for its new owner's; 0 if unknown.
unsigned long long start_time_of(pid_t pid) {
    const std::string stat = read_file_or_empty(fmt::format("/proc/{}/stat", pid));
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) return 0;
    std::istringstream in(stat.substr(paren + 2));
    std::string field;
    for (int i = 3; i < 22 && in >> field; ++i) {
    }
    unsigned long long start = 0;
    in >> start;
    return start;
}

std::string host_name() {
    char buffer[256] = {};
    if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
    std::string out;
    for (const char* c = buffer; *c != '\0' && out.size() < 64; ++c) {
        const auto u = static_cast<unsigned char>(*c);
        out += std::isalnum(u) || *c == '.' || *c == '_' ? *c : '_';
    }
    return out.empty() ? "unknown" : out;
}

// "<pid>.<start time>-<host>": which process a .tmp-/.trash- folder belongs to. Worked out
// again after a fork (the child is another process).
std::string owner_tag() {
    static std::mutex& mutex = *new std::mutex;
    static pid_t& for_pid = *new pid_t(-1);
    static std::string& tag = *new std::string;
    std::lock_guard lock(mutex);
    if (for_pid != ::getpid()) {
        for_pid = ::getpid();
        tag = fmt::format("{}.{}-{}", for_pid, start_time_of(for_pid), host_name());
    }
    return tag;
}

// The name of a private folder: prefix, 16 random hex digits, then the owner's tag.
std::string private_name(const std::string& prefix) { return prefix + random_hex() + "-" + owner_tag(); }

// Whether the .tmp-/.trash- folder `name` (its prefix removed) may be removed by this
// process: its owner is gone, or it is far too old to be anybody's work in flight.
bool stale(const std::string& rest, fs::file_time_type mtime) {
    using namespace std::chrono;
    const auto age = fs::file_time_type::clock::now() - mtime;
    if (age < minutes(1)) return false;
    // <16 hex>-<pid>.<start>-<host>
    if (rest.size() < 18 || rest[16] != '-') return age > hours(1);  // an older toroid's name
    const std::string owner = rest.substr(17);
    const auto dot = owner.find('.');
    const auto dash = owner.find('-');
    if (dot == std::string::npos || dash == std::string::npos || dot > dash) return age > hours(1);
    const std::string host = owner.substr(dash + 1);
    if (host != host_name()) return age > hours(24);  // another machine's: its pids are not ours
    pid_t pid = 0;
    unsigned long long start = 0;
    const std::string pid_text = owner.substr(0, dot), start_text = owner.substr(dot + 1, dash - dot - 1);
    if (std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid).ec != std::errc{} ||
        std::from_chars(start_text.data(), start_text.data() + start_text.size(), start).ec != std::errc{} || pid <= 0)
        return age > hours(1);
    if (pid == ::getpid()) return false;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    // Alive, or a pid we may not signal: the same process only if it started when the owner did.
    const unsigned long long now_start = start_time_of(pid);
    return start != 0 && now_start != 0 && now_start != start;
}

// Removes the stale .tmp-* and .trash-* folders of `root`, once per process and folder.
void clean_stale_once(const fs::path& root) {
    static std::mutex& mutex = *new std::mutex;
    static std::set<std::string>& done = *new std::set<std::string>;
    {
        std::lock_guard lock(mutex);
        if (!done.insert(fmt::format("{}:{}", ::getpid(), root.string())).second) return;
    }
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::string rest;
        if (name.rfind(".tmp-", 0) == 0) rest = name.substr(5);
        else if (name.rfind(".trash-", 0) == 0) rest = name.substr(7);
        else continue;
        std::error_code e2;
        const auto mtime = fs::last_write_time(it->path(), e2);
        if (e2 || !stale(rest, mtime)) continue;
        // Renamed first, so that two processes cleaning at once do not both walk it.
        const fs::path trash = root / private_name(".trash-");
        if (fs::rename(it->path(), trash, e2); !e2) fs::remove_all(trash, e2);
    }
}

// ---- private builds and entries in use -----------------------------------------------------

struct ProcessState {
    std::mutex mutex;
    std::map<std::string, fs::path> private_results;  // root/key -> this process's private build
    // Removed at exit by the process that made them (a forked child leaves its parent's).
    std::vector<std::pair<pid_t, fs::path>> private_dirs;
    std::map<std::string, int> in_use;                // entry folders of loaded modules
    bool exit_hook = false;
    bool exited = false;  // private folders made from now on are removed at once

    static ProcessState& get() {
        static ProcessState* s = new ProcessState;
        return *s;
    }
};

std::atomic<bool> g_waits_cancelled{false};

// A folder of this process's own for private builds when the cache cannot be written:
// $TMPDIR (else /tmp)/toroid-private-<uid>, made 0700 and used only when it is ours and
// closed to others; else a fresh mkdtemp folder (removed at exit).
fs::path private_parent() {
    static std::mutex& mutex = *new std::mutex;
    static fs::path& made = *new fs::path;
    std::lock_guard lock(mutex);
    if (!made.empty()) return made;
    const fs::path tmp = env_nonempty("TMPDIR").value_or("/tmp");
    const fs::path shared = tmp / fmt::format("toroid-private-{}", ::geteuid());
    ::mkdir(shared.c_str(), 0700);
    struct stat st {};
    if (::lstat(shared.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
        (st.st_mode & 077) == 0) {
        made = shared;
        clean_stale_once(made);
        return made;
    }
    std::string pattern = (tmp / "toroid-private-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        fail("cannot make a private build folder in {}: {}", printable(tmp.string()), std::strerror(errno));
    made = pattern;
    ProcessState& ps = ProcessState::get();
    std::lock_guard plock(ps.mutex);
    ps.private_dirs.emplace_back(::getpid(), made);
    return made;
}

// ---- folders and locks ----------------------------------------------------------------------

// Mode 0755 for a folder of ours, keeping a setgid bit it inherited (a cache shared by a
// group: the entry's files then get the folder's group).
void close_folder(const fs::path& dir) {
    struct stat st {};
    const mode_t setgid = ::stat(dir.c_str(), &st) == 0 ? (st.st_mode & S_ISGID) : 0;
    ::chmod(dir.c_str(), 0755 | setgid);
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

    // A new folder `<parent>/.tmp-<random>-<owner>`, closed to writers other than us (the
    // umask may allow more: entries must not be group- or world-writable to be trusted).
    static fs::path make(const fs::path& parent) {
        for (int attempt = 0;; ++attempt) {
            fs::path path = parent / private_name(".tmp-");
            if (::mkdir(path.c_str(), 0755) == 0) {
                close_folder(path);
                return path;
            }
            if (errno != EEXIST || attempt > 100)
                fail("cannot make a private folder in {}: {}", printable(parent.string()), std::strerror(errno));
        }
    }

private:
    fs::path path_;
};

// An exclusive flock, waited for with a timeout. flock (not fcntl locks) because its lock
// belongs to the open file description: two threads of one process that open the file
// separately exclude each other too, and the lock goes away when the process dies.
class FileLock {
public:
    enum class Outcome { Locked, Busy, Unusable, Cancelled };

    FileLock() = default;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    // Unlocked explicitly: a child forked meanwhile has a copy of the descriptor, and closing
    // ours alone would leave the key locked until that child exits (every other builder of
    // the key waiting on it).
    ~FileLock() { release(); }

    // Waits up to `timeout` seconds (0: tries once). Unusable (with `why`): the lock file
    // cannot be opened or is not a regular file. Cancelled: busy, and waits are cancelled (exit)
    // or the calling thread's prepare was interrupted.
    Outcome acquire(const fs::path& path, double timeout, std::string* why) {
        release();
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (fd_ < 0) {
            if (why) *why = std::strerror(errno);
            return Outcome::Unusable;
        }
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (why) *why = "not a regular file";
            release();
            return Outcome::Unusable;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
        auto pause = std::chrono::milliseconds(1);
        for (;;) {
            if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
                locked_ = true;
                return Outcome::Locked;
            }
            if (errno == EINTR) continue;
            if (errno != EWOULDBLOCK) {
                if (why) *why = std::strerror(errno);
                release();
                return Outcome::Unusable;
            }
            if (g_waits_cancelled.load() || interrupted()) {
                release();
                return Outcome::Cancelled;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                release();
                return Outcome::Busy;
            }
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(50));
        }
    }

    void release() {
        if (fd_ < 0) return;
        if (locked_) ::flock(fd_, LOCK_UN);
        ::close(fd_);
        fd_ = -1;
        locked_ = false;
    }

private:
    int fd_ = -1;
    bool locked_ = false;
};

// The size of an entry: its regular files (entries are flat).
std::uint64_t folder_bytes(const fs::path& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_regular_file(e2)) total += it->file_size(e2);
    }
    return total;
}

bool is_key(const std::string& name) {
    return name.size() == 32 && std::all_of(name.begin(), name.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// Stamps an entry as used now (its folder's mtime), for the LRU order; a read-only folder
// keeps its stamp.
void stamp(const fs::path& dir) { ::utimensat(AT_FDCWD, dir.c_str(), nullptr, 0); }

// Makes the files of a fresh build writable by the owner alone (see TempDir::make).
void close_to_writers(const fs::path& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)))
            ::chmod(it->path().c_str(), st.st_mode & 07755);
    }
    close_folder(dir);
}

}  // namespace

// ---------------------------------------------------------------------------------------

fs::path default_cache_dir() {
    if (auto dir = env_nonempty("TOROID_CACHE_DIR")) return *dir;
    if (auto xdg = env_nonempty("XDG_CACHE_HOME")) return fs::path(*xdg) / "toroid";
    if (auto home = env_nonempty("HOME")) return fs::path(*home) / ".cache" / "toroid";
    fail("no folder for the JIT cache: set TOROID_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

std::uint64_t parse_byte_size(std::string_view text, std::string_view what) {
    auto bad = [&] {
        fail("{}='{}' is not a size in bytes (a number with an optional K, M, G or T suffix, e.g. 2G)", what,
             printable(text, 100));
    };
    std::string t(text);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(t, &used);
    } catch (const std::exception&) {
        bad();
    }
    std::string suffix = t.substr(used);
    for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double scale = 1;
    if (!suffix.empty() && std::string_view("KMGT").find(suffix[0]) != std::string_view::npos) {
        scale = std::pow(1024.0, static_cast<double>(std::string_view("KMGT").find(suffix[0]) + 1));
        suffix = suffix.substr(1);
        if (suffix == "I" || suffix == "IB") suffix.clear();
    }
    if (suffix == "B") suffix.clear();
    if (!suffix.empty() || !std::isfinite(value) || value < 0 || value * scale > 9.0e18 || t.empty() ||
        !(std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.'))
        bad();
    return static_cast<std::uint64_t>(value * scale);
}

double parse_seconds(std::string_view text, std::string_view what) {
    std::string t(text);
    std::size_t used = 0;
    double value = -1;
    try {
        value = std::stod(t, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != t.size() || !std::isfinite(value) || value <= 0 || value > 1e9)
        fail("{}='{}' is not a number of seconds greater than 0", what, printable(text, 100));
    return value;
}

CacheOptions CacheOptions::from_environment() {
    CacheOptions o;
    if (auto v = env_nonempty("TOROID_LOCK_TIMEOUT")) o.lock_timeout = parse_seconds(*v, "TOROID_LOCK_TIMEOUT");
    if (auto v = env_nonempty("TOROID_CACHE_MAX_BYTES")) o.max_bytes = parse_byte_size(*v, "TOROID_CACHE_MAX_BYTES");
    else if (auto w = env_nonempty("TOROID_CACHE_SIZE")) o.max_bytes = parse_byte_size(*w, "TOROID_CACHE_SIZE");
    if (auto v = env_nonempty("TOROID_CACHE_GROUP")) {
        struct group g {};
        struct group* found = nullptr;
        std::vector<char> buffer(16384);
        if (::getgrnam_r(v->c_str(), &g, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
            fail("TOROID_CACHE_GROUP='{}' names no group of this system", printable(*v, 100));
        o.group = static_cast<long long>(found->gr_gid);
    }
    o.keep_sources = env_nonempty("TOROID_KEEP_SOURCES").value_or("0") != "0" || env_nonempty("TOROID_DEBUG").has_value();
    return o;
}

bool trusted_path(const fs::path& path, const CacheOptions& options) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return false;
    const bool group_named = options.group >= 0 && static_cast<long long>(st.st_gid) == options.group;
    const bool owner_ok = st.st_uid == ::geteuid() || group_named || (options.trust_root && st.st_uid == 0);
    const bool writers_ok = (st.st_mode & S_IWOTH) == 0 && ((st.st_mode & S_IWGRP) == 0 || group_named);
    return owner_ok && writers_ok;
}

void mark_entry_in_use(const fs::path& dir) {
    ProcessState& ps = ProcessState::get();
    std::lock_guard lock(ps.mutex);
    ++ps.in_use[dir.lexically_normal().string()];
}

void unmark_entry_in_use(const fs::path& dir) {
    ProcessState& ps = ProcessState::get();
    std::lock_guard lock(ps.mutex);
    auto it = ps.in_use.find(dir.lexically_normal().string());
    if (it != ps.in_use.end() && --it->second <= 0) ps.in_use.erase(it);
}

void cancel_cache_waits() { g_waits_cancelled.store(true); }
bool cache_waits_cancelled() { return g_waits_cancelled.load(); }

namespace {

void remove_private_dirs(bool exiting) {
    ProcessState& ps = ProcessState::get();
    std::vector<std::pair<pid_t, fs::path>> dirs;
    {
        std::lock_guard lock(ps.mutex);
        if (exiting) ps.exited = true;
        dirs.swap(ps.private_dirs);
        ps.private_results.clear();
    }
    for (const auto& [pid, d] : dirs) {
        std::error_code ec;
        if (pid == ::getpid()) fs::remove_all(d, ec);
    }
}

void remove_private_dirs_at_exit() { remove_private_dirs(true); }

}  // namespace

void remove_private_builds() { remove_private_dirs(false); }

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

DiskCache::DiskCache(fs::path root) : DiskCache(std::move(root), CacheOptions::from_environment()) {}

DiskCache::DiskCache(fs::path root, CacheOptions options) : root_(fs::absolute(root)), options_(std::move(options)) {}

DiskCache::State DiskCache::check(const Recipe& recipe, const fs::path& dir) const {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return State::Absent;
    // Nothing of an entry someone else could have written is read before this.
    bool trusted = trusted_path(dir, options_);
    for (const auto& file : recipe.checked_files) trusted = trusted && trusted_path(dir / file, options_);
    if (!trusted) {
        if (!fs::exists(dir, ec)) return State::Absent;
        return State::Untrusted;
    }
    try {
        auto manifest = nlohmann::json::parse(read_file_bytes(dir / "manifest.json"));
        if (manifest.at("key").get<std::string>() != recipe.key) return State::Broken;
        for (const auto& file : recipe.checked_files) {
            const auto& recorded = manifest.at(manifest_field(file));
            if (recorded.at("size").get<std::uintmax_t>() != fs::file_size(dir / file) ||
                recorded.at("sha256").get<std::string>() != sha256_file_hex(dir / file))
                return State::Broken;
        }
        if (recipe.open) recipe.open(dir);
        return State::Intact;
    } catch (const std::exception&) {
        // Gone meanwhile (another process discarded it) reads as absent, not broken.
        if (!fs::exists(dir, ec)) return State::Absent;
        return State::Broken;
    }
}

// Moves a broken entry aside before deleting it, so that no reader ever sees it half
// deleted. False when it was already gone.
bool DiskCache::discard(const fs::path& dir) const {
    const fs::path trash = root_ / private_name(".trash-");
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

namespace {

// This process's private build of `key` under `root`, if it made one, opened by `open`
// (forgotten when it no longer opens: a parent that forked us may have removed it).
std::optional<fs::path> private_result(const fs::path& root, const std::string& key,
                                       const std::function<void(const fs::path&)>& open) {
    ProcessState& ps = ProcessState::get();
    fs::path dir;
    {
        std::lock_guard lock(ps.mutex);
        auto it = ps.private_results.find((root / key).string());
        if (it == ps.private_results.end()) return std::nullopt;
        dir = it->second;
    }
    try {
        if (open) open(dir);
        return dir;
    } catch (const std::exception&) {
        std::lock_guard lock(ps.mutex);
        ps.private_results.erase((root / key).string());
        return std::nullopt;
    }
}

// Keeps `dir` as this process's private build of `key` (until exit).
void keep_private(const fs::path& root, const std::string& key, const fs::path& dir) {
    ProcessState& ps = ProcessState::get();
    bool remove_now = false;
    {
        std::lock_guard lock(ps.mutex);
        if (ps.exited) {
            remove_now = true;
        } else {
            ps.private_results[(root / key).string()] = dir;
            ps.private_dirs.emplace_back(::getpid(), dir);
            if (!ps.exit_hook) {
                ps.exit_hook = true;
                std::atexit(remove_private_dirs_at_exit);
            }
        }
    }
    std::error_code ec;
    if (remove_now) fs::remove_all(dir, ec);
}

// Writes the manifest of a finished build in `dir` (size and SHA-256 of each checked file)
// and drops the sources an entry does not keep.
void finish_build(const DiskCache::Recipe& recipe, const fs::path& dir, nlohmann::json manifest, bool keep_sources) {
    if (manifest.is_null()) manifest = nlohmann::json::object();
    manifest["key"] = recipe.key;
    for (const auto& file : recipe.checked_files) {
        const fs::path path = dir / file;
        std::error_code ec;
        if (!fs::exists(path, ec)) fail("cache build of {} wrote no {}", recipe.key, file);
        manifest[manifest_field(file)] = {{"size", fs::file_size(path)}, {"sha256", sha256_file_hex(path)}};
    }
    manifest["toroid_version"] = TOROID_VERSION;
    write_file_bytes(dir / "manifest.json", manifest.dump(2) + "\n");
    if (!keep_sources && !recipe.keep_sources) {
        for (const auto& file : recipe.source_files) {
            std::error_code ec;
            fs::remove(dir / file, ec);
        }
    }
    close_to_writers(dir);
}

}  // namespace

std::optional<fs::path> DiskCache::find(const Recipe& recipe) const {
    const fs::path dir = entry(recipe.key);
    const State state = check(recipe, dir);
    if (state == State::Intact) {
        stamp(dir);
        return dir;
    }
    if (state == State::Untrusted)
        warn_once("untrusted:" + root_.string(),
                  fmt::format("cache entry {} is not owned by this user{} or is writable by others: not loaded",
                              dir.string(), options_.group >= 0 ? " (or TOROID_CACHE_GROUP)" : ""));
    if (auto mine = private_result(root_, recipe.key, recipe.open)) return mine;
    return std::nullopt;
}

// Builds `recipe` in a private folder under `parent` and uses it from there (this process
// only; removed at exit). With parent == root_ (the lock was busy), the build is installed
// after all when the lock is free by the time it is done.
DiskCache::Result DiskCache::build_privately(const Recipe& recipe, const fs::path& parent, const std::string& what,
                                             const std::string& why) const {
    Result result;
    if (auto mine = private_result(root_, recipe.key, recipe.open)) {
        result.directory = *mine;
        result.is_private = true;
        return result;
    }
    warn_once(what, why + "; building privately");
    TempDir tmp(TempDir::make(parent));
    const auto start = std::chrono::steady_clock::now();
    nlohmann::json manifest;
    try {
        manifest = recipe.build(tmp.path());
    } catch (const BuildFailure& failure) {
        result.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        // Kept for inspection: in failed/ when the cache is usable, else where it is (a later
        // process removes it as stale once this one is gone).
        const fs::path kept = parent == root_ ? keep_failure(recipe.key, tmp.path()) : tmp.path();
        tmp.release();  // the files are named in the message, so they must stay
        throw Error(failure.message(kept));
    }
    result.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.built = true;
    finish_build(recipe, tmp.path(), std::move(manifest), options_.keep_sources);

    if (parent == root_) {
        // Installed after all when the holder is done by now.
        FileLock lock;
        if (lock.acquire(root_ / (recipe.key + ".lock"), 0, nullptr) == FileLock::Outcome::Locked) {
            const fs::path dir = entry(recipe.key);
            const State state = check(recipe, dir);
            if (state == State::Intact) {
                result.directory = dir;
                return result;
            }
            if (state == State::Broken && discard(dir)) ++result.corrupt_entries;
            std::error_code ec;
            if (state != State::Untrusted) {
                fs::rename(tmp.path(), dir, ec);
                if (!ec) {
                    tmp.release();
                    lock.release();
                    result.directory = dir;
                    if (recipe.open) recipe.open(dir);
                    account(folder_bytes(dir));
                    return result;
                }
            }
        }
    }
    if (recipe.open) recipe.open(tmp.path());
    result.directory = tmp.path();
    result.is_private = true;
    keep_private(root_, recipe.key, tmp.path());
    tmp.release();
    return result;
}

DiskCache::Result DiskCache::get(const Recipe& recipe) const {
    Result result;
    const fs::path dir = entry(recipe.key);
    State state = check(recipe, dir);
    if (state == State::Intact) {
        stamp(dir);
        result.directory = dir;
        return result;
    }
    if (auto mine = private_result(root_, recipe.key, recipe.open)) {
        result.directory = *mine;
        result.is_private = true;
        return result;
    }

    std::error_code ec;
    fs::create_directories(root_, ec);
    if (ec)
        return build_privately(recipe, private_parent(), "folder:" + root_.string(),
                               fmt::format("cannot use the cache folder {}: {}", root_.string(), ec.message()));
    clean_stale_once(root_);

    FileLock lock;
    std::string why;
    const fs::path lock_path = root_ / (recipe.key + ".lock");
    switch (lock.acquire(lock_path, options_.lock_timeout, &why)) {
    case FileLock::Outcome::Locked:
        break;
    case FileLock::Outcome::Unusable:
        // Once per folder and reason: a read-only folder fails every key's lock alike.
        return build_privately(recipe, private_parent(), "lock:" + root_.string() + ":" + why,
                               fmt::format("cannot use the cache lock {}: {}", lock_path.string(), why));
    case FileLock::Outcome::Busy:
        return build_privately(
            recipe, ::access(root_.c_str(), W_OK) == 0 ? root_ : private_parent(), "busy:" + lock_path.string(),
            fmt::format("the cache lock {} was held by another process for {} s (TOROID_LOCK_TIMEOUT)",
                        lock_path.string(), options_.lock_timeout));
    case FileLock::Outcome::Cancelled:
        check_interrupt();  // this prepare was interrupted: "interrupted"
        fail("cancelled: the process is exiting while another process builds {}", recipe.key);
    }

    // Whoever held the lock before us may have installed the entry meanwhile.
    state = check(recipe, dir);
    if (state == State::Intact) {
        stamp(dir);
        result.directory = dir;
        return result;
    }
    if (state == State::Untrusted) {
        // Ours (a umask let others write it): replaced. Someone else's: left alone.
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0 || st.st_uid != ::geteuid() || !discard(dir)) {
            lock.release();
            return build_privately(recipe, private_parent(), "untrusted:" + root_.string(),
                                   fmt::format("cache entry {} is not owned by this user or is writable by others",
                                               dir.string()));
        }
        warn_once("untrusted:" + root_.string(),
                  fmt::format("cache entry {} was writable by others: removed and rebuilt", dir.string()));
        ++result.corrupt_entries;
    }
    if (state == State::Broken && discard(dir)) ++result.corrupt_entries;

    std::optional<TempDir> tmp;
    try {
        tmp.emplace(TempDir::make(root_));
    } catch (const Error& e) {
        lock.release();
        return build_privately(recipe, private_parent(), "folder:" + root_.string(), e.what());
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
    finish_build(recipe, tmp->path(), std::move(manifest), options_.keep_sources);

    // Builders that ignore the lock (another toroid version, a cache on a file system
    // without flock) may still race us to the rename; theirs then wins if it is intact.
    for (int attempt = 0; attempt < 3; ++attempt) {
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
            lock.release();
            account(folder_bytes(dir));
            return result;
        }
        if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists)
            fail("cannot install cache entry {}: {}", printable(dir.string()), ec.message());
        auto other = check(recipe, dir);
        if (other == State::Intact) {
            result.directory = dir;
            return result;
        }
        if (other == State::Broken && discard(dir)) ++result.corrupt_entries;
    }
    fail("cannot install cache entry {}: another process keeps replacing it", printable(dir.string()));
}

// The running size estimate: "<bytes> <builds since the last scan>" in .usage, under
// .usage.lock. A scan (a stat of every entry's files) runs when the estimate passes the cap,
// when it is missing, and every 256 builds (the estimate misses what others remove).
void DiskCache::account(std::uint64_t added) const {
    if (options_.max_bytes == 0) return;
    FileLock lock;
    if (lock.acquire(root_ / ".usage.lock", 2, nullptr) != FileLock::Outcome::Locked) return;
    std::uint64_t bytes = 0, builds = 0;
    std::istringstream in(read_file_or_empty(root_ / ".usage"));
    const bool known = static_cast<bool>(in >> bytes >> builds);
    if (!known || builds + 1 >= 256 || bytes + added > options_.max_bytes) {
        bytes = evict_to(options_.max_bytes / 10 * 9);
        builds = 0;
    } else {
        bytes += added;
        ++builds;
    }
    try {
        write_file_bytes(root_ / ".usage", fmt::format("{} {}\n", bytes, builds));
    } catch (const Error&) {
    }
}

std::uint64_t DiskCache::evict_to(std::uint64_t target) const {
    struct Candidate {
        fs::file_time_type stamp;
        std::uint64_t bytes;
        fs::path dir;
        std::string key;  // empty for failed builds (no lock)
    };
    std::vector<Candidate> all;
    std::uint64_t total = 0;
    auto scan = [&](const fs::path& folder, bool entries) {
        std::error_code ec;
        for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            std::error_code e2;
            if (!is_key(name) || !it->is_directory(e2) || it->is_symlink(e2)) continue;
            Candidate c{fs::last_write_time(it->path(), e2), folder_bytes(it->path()), it->path(),
                        entries ? name : std::string()};
            total += c.bytes;
            all.push_back(std::move(c));
        }
    };
    scan(root_, true);
    scan(root_ / "failed", false);
    if (total <= target) return total;

    std::set<std::string> in_use;
    {
        ProcessState& ps = ProcessState::get();
        std::lock_guard lock(ps.mutex);
        for (const auto& [dir, count] : ps.in_use) in_use.insert(dir);
    }
    std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.stamp < b.stamp; });
    // Least recently used first; entries of modules this process has loaded only when the
    // others are not enough (a long-lived process loads many: the cap holds all the same, and
    // a loaded module keeps running from its mapping when its files are removed).
    std::vector<bool> gone(all.size(), false);
    for (const bool loaded_too : {false, true}) {
        for (std::size_t i = 0; i < all.size() && total > target; ++i) {
            const Candidate& c = all[i];
            if (gone[i] || (!loaded_too && in_use.count(c.dir.lexically_normal().string()) != 0)) continue;
            FileLock lock;
            if (!c.key.empty() &&
                lock.acquire(root_ / (c.key + ".lock"), 0, nullptr) != FileLock::Outcome::Locked)
                continue;  // being built or checked: next time
            if (!discard(c.dir)) continue;
            gone[i] = true;
            total -= std::min(total, c.bytes);
            std::error_code ec;
            // Removed while held: a builder that opens the name anew locks another file, and the
            // cache tolerates two builders of one key (the second install finds the first).
            if (!c.key.empty()) fs::remove(root_ / (c.key + ".lock"), ec);
        }
    }
    return total;
}

}  // namespace toroid
