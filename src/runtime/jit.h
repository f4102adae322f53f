// The runtime layer of the compiled engine: a generated C++ translation unit becomes a
// loaded shared object through the system C++ compiler. Modules are cached in memory per
// JitCompiler and on disk in a folder that several processes may share at once.
#pragma once

#include "runtime/disk_cache.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace toroid {

// How generated code is compiled and where the results are kept.
struct CompilerConfig {
    // The compiler driver: a name searched on PATH, or a path. Run without a shell.
    std::string cxx;
    // Replaced as a whole by $TOROID_CXXFLAGS (split on whitespace) in from_environment().
    std::vector<std::string> optimization_flags;
    // Flags the caller needs whatever the user's optimization choice (e.g. -fopenmp, -I...).
    std::vector<std::string> extra_flags;
    // In place of optimization_flags for the quick tier of load_tiered(); when empty, the
    // optimization flags with their -O level replaced by -O1.
    std::vector<std::string> quick_optimization_flags;
    std::filesystem::path cache_dir;
    // Folders of prebuilt modules (runtime/prebuilt.h) looked in before a full build
    // compiles; read only.
    std::vector<std::filesystem::path> prebuilt_dirs;
    // Seconds a compiler run may take (its --version included); then its whole process group
    // is killed and the build fails with an error saying so.
    double compile_timeout = 120;
    // Lock timeout, size cap, trusted group, kept sources of cache_dir (runtime/disk_cache.h).
    CacheOptions cache_options;

    // cxx: $TOROID_CXX, else $CXX, else "c++". optimization_flags: $TOROID_CXXFLAGS, else
    // "-O3 -march=native". quick_optimization_flags: $TOROID_QUICK_CXXFLAGS (unset or empty:
    // derived as above). cache_dir: $TOROID_CACHE_DIR, else $XDG_CACHE_HOME/toroid, else
    // $HOME/.cache/toroid (throws toroid::Error when none of these is set). prebuilt_dirs:
    // prebuilt_dirs_from_environment(), none when $TOROID_CXXFLAGS is set (the user chose
    // the flags their code is built with). compile_timeout: $TOROID_COMPILE_TIMEOUT.
    // cache_options: CacheOptions::from_environment().
    static CompilerConfig from_environment();
};

// The flags of a quick build: `flags` without their -O options, then -O1.
std::vector<std::string> quick_flags_from(const std::vector<std::string>& flags);

// Flags every build gets, ahead of the configurable ones: the output must be a
// position-independent shared object of the language level the generator writes.
inline const std::vector<std::string>& required_compiler_flags() {
    static const std::vector<std::string> flags = {"-std=c++20", "-fPIC", "-shared"};
    return flags;
}

// What "-march=native" (or -mcpu=native) means on this machine: the CPU's feature flags
// (/proc/cpuinfo's, else the ones the compiler's builtins test). A build whose command asks
// for the native CPU depends on it, so it is part of the build's cache key: a cache folder
// shared by machines of different CPUs (a network home, a baked container image) never
// hands one CPU's module to another that lacks its instructions.
const std::string& native_cpu_signature();
// The cache key of a build of `source` by the compiler `identity` (its --version) with the
// argv `command`: with a native CPU flag in the command, `native_signature` is part of it.
std::string module_key(const std::string& source, const std::string& identity, const std::vector<std::string>& command,
                       const std::string& native_signature);

// Counters of one JitCompiler since it was made.
struct JitStats {
    int compiled = 0;         // compiler runs that produced a module (installed or not)
    int disk_hits = 0;        // modules loaded from an intact on-disk entry
    int memory_hits = 0;      // loads answered by a module this object already held
    int corrupt_entries = 0;  // broken on-disk entries found, removed and rebuilt
    double compile_seconds = 0;  // wall time spent in the compiler (background builds included)
    int quick_loads = 0;      // load_tiered() calls answered by a quick build (the full one in the background)
    int prebuilt_hits = 0;    // full builds loaded from a prebuilt folder (CompilerConfig::prebuilt_dirs)
    int background_compiled = 0;  // of `compiled`, the full builds of load_tiered's background threads
};

// Compiler runs of background builds (load_tiered) in this process that produced a module,
// every JitCompiler together (the engines' cache_stats() reports them).
std::int64_t background_compiles();

// Kills the process group of every compiler this process is running (async-signal-safe:
// for a SIGINT/SIGTERM handler that is about to end the process). Each compiler also runs
// in its own process group and gets SIGKILL when the thread that started it dies
// (PR_SET_PDEATHSIG).
void kill_running_compilers();

// One loaded shared object. Owns the dlopen handle: the code stays mapped while any
// shared_ptr to the module (including the JitCompiler's memory cache) is alive.
class CompiledModule {
public:
    struct Info {
        std::string key;                   // cache key (hex), also the entry's folder name
        std::filesystem::path directory;   // the cache entry holding kernel.cpp / kernel.so
        std::vector<std::string> command;  // compiler argv, run inside `directory`
    };

    // dlopens `library` with RTLD_NOW | RTLD_LOCAL; throws toroid::Error with dlerror's text.
    CompiledModule(const std::filesystem::path& library, Info info);
    ~CompiledModule();
    CompiledModule(const CompiledModule&) = delete;
    CompiledModule& operator=(const CompiledModule&) = delete;

    // The address of an exported symbol; throws toroid::Error naming it when absent.
    void* symbol(const std::string& name) const;

    // The symbol as a function pointer type, e.g. lookup<int (*)(int)>("kernel_entry").
    template <typename FnPtr>
    FnPtr lookup(const std::string& name) const {
        static_assert(std::is_pointer_v<FnPtr> && std::is_function_v<std::remove_pointer_t<FnPtr>>,
                      "lookup<FnPtr> wants a function pointer type");
        return reinterpret_cast<FnPtr>(symbol(name));
    }

    const Info& info() const { return info_; }
    const std::string& key() const { return info_.key; }
    const std::filesystem::path& directory() const { return info_.directory; }
    const std::vector<std::string>& command() const { return info_.command; }

private:
    struct Closer {
        void operator()(void* handle) const;
    };
    std::unique_ptr<void, Closer> handle_;
    Info info_;
};

// What load_tiered() returns: the entry point of the best build loaded so far. A quick
// build serves the first calls while the full build compiles in a background thread; when
// that is loaded, entry() returns its entry point from the next call on (an atomic swap:
// calls already running finish in the quick build, which stays loaded as long as this
// object). Thread-safe.
class TieredModule {
public:
    TieredModule();
    ~TieredModule();
    // One build alone, settled: entry() is its `entry` symbol.
    static std::shared_ptr<TieredModule> of(std::shared_ptr<CompiledModule> module, const std::string& entry);
    TieredModule(const TieredModule&) = delete;
    TieredModule& operator=(const TieredModule&) = delete;

    void* entry() const { return entry_.load(std::memory_order_acquire); }
    template <typename FnPtr>
    FnPtr entry_as() const {
        static_assert(std::is_pointer_v<FnPtr> && std::is_function_v<std::remove_pointer_t<FnPtr>>,
                      "entry_as<FnPtr> wants a function pointer type");
        return reinterpret_cast<FnPtr>(entry());
    }
    // Whether the full build is the one entry() returns.
    bool full() const;
    // Whether the full build is done: loaded, or failed (the quick build then stays).
    bool settled() const;
    // Waits until the full build is settled; throws its error (toroid::Error) when it failed.
    void wait() const;
    // Seconds from the load_tiered() call until the full build was loaded (0 when it was
    // loaded at once; meaningful once full()).
    double full_seconds() const;
    // The build entry() belongs to.
    std::shared_ptr<CompiledModule> module() const;
    // The quick build, when one was loaded (else null).
    std::shared_ptr<CompiledModule> quick_module() const;

private:
    friend class JitCompiler;
    // The full build loaded (module) or failed (error), `seconds` after the load began.
    void settle(std::shared_ptr<CompiledModule> module, std::exception_ptr error, const std::string& entry,
                double seconds);
    // The quick build loaded: it serves until the full one is.
    void serve_quick(std::shared_ptr<CompiledModule> module, const std::string& entry);
    static void warn_full_failed(const std::exception_ptr& error);

    struct State;
    std::shared_ptr<State> state_;
    std::atomic<void*> entry_{nullptr};
};

// Waits until every background build of this process has settled (the full builds of
// load_tiered), and every load another thread has in flight. A process also waits for them
// before it forks (pthread_atfork: a child has none of its parent's threads, so a build or
// load in flight there would never finish, and a module, lock or compiler --version another
// thread held would stay held). At exit (atexit) it waits for no lock: builds waiting for
// another process's lock give up at once, compilers already running get 10 s to finish (so
// that the disk cache gets the full build), then are killed, their folders removed. Each
// wait is bounded by the compiles in flight (at most one per source and process), the lock
// timeout and the compile timeout.
void wait_for_background_builds();

struct LoadOptions {
    // When set, kernel.cpp, command.txt, compiler_output.txt and manifest.json (whatever
    // exists for this load, failed or not) are written into this folder, created if needed.
    std::filesystem::path debug_dir;
    // Build with the quick flags (CompilerConfig::quick_optimization_flags).
    bool quick = false;
    // When set, this load's own work is counted here too (a background build's is not),
    // besides the compiler's stats().
    JitStats* stats = nullptr;
};

// Compiles and loads generated translation units. load() may be called from several
// threads; concurrent loads of one source compile it once.
//
// A full build is looked for in memory, then in the prebuilt folders (config().prebuilt_dirs,
// at each instruction-set level this CPU has, best first), then on disk; last, the compiler
// builds it.
//
// Disk layout under cache_dir (runtime/disk_cache.h, shared with the CUDA toolchain):
//   <key>/kernel.so, command.txt, compiler_output.txt, manifest.json   an entry (kernel.cpp
//                too with CacheOptions::keep_sources or a LoadOptions::debug_dir)
//   <key>.lock                                                          builders' lock
//   failed/<key>/kernel.cpp, compiler_output.txt, command.txt          the last failed build
//                (plus kernel.so and manifest.json when it built but would not dlopen)
//   .tmp-*, .trash-*                                                   in-flight work
// An entry is built in a private .tmp folder and renamed into place, so readers only
// ever see complete entries; processes that miss the same key at once compile it once
// (the others wait on the lock, then load the installed entry). An entry whose .so does
// not match its manifest's size and SHA-256, or that fails to dlopen, is removed and rebuilt.
class JitCompiler {
public:
    JitCompiler();  // CompilerConfig::from_environment()
    explicit JitCompiler(CompilerConfig config);
    ~JitCompiler();
    JitCompiler(JitCompiler&&) noexcept;
    JitCompiler& operator=(JitCompiler&&) noexcept;

    // The module built from `source`, with `entry` checked to be an exported symbol.
    // Throws toroid::Error when the compiler fails (the message names the folder where
    // source and compiler output were saved), when the module does not load, or when
    // `entry` is missing.
    std::shared_ptr<CompiledModule> load(const std::string& source, const std::string& entry,
                                         const LoadOptions& options = {});

    // Two builds of one function: `full_source` with the optimization flags, and
    // `quick_source` (the same results, code the compiler builds faster) with the quick
    // flags. When the full build is in memory or in the disk cache, it is loaded and
    // returned alone. Otherwise the quick build is loaded (from memory or disk, or compiled
    // now) and the full one compiles in a background thread and replaces it when loaded
    // (and is installed in the disk cache, so later processes load it at once). Throws as
    // load() does for the quick build; a failed full build is reported by wait() (the quick
    // build stays). The background work keeps this compiler's state alive: the object may
    // be destroyed meanwhile. When the quick build fails, the call waits for the full one
    // (and throws its error if it fails too). options: stats only.
    std::shared_ptr<TieredModule> load_tiered(const std::string& full_source, const std::string& quick_source,
                                              const std::string& entry, const LoadOptions& options = {});
    // The same, with the quick source made only when a quick build is needed (not when the
    // full build is found): `make_quick` runs at most once, before this returns; an empty
    // string means there is no quick program (the full build is then compiled and waited for).
    std::shared_ptr<TieredModule> load_tiered(const std::string& full_source,
                                              const std::function<std::string()>& make_quick,
                                              const std::string& entry, const LoadOptions& options = {});

    // Ahead of time (`toroid prebuild`): the full build of `source` for the instruction-set
    // level named `level` (runtime/prebuilt.h) in the folder `into` (the disk cache's layout),
    // compiled unless it is there, and loaded (a module of a level this CPU lacks loads but
    // must not run). Counted as compiled or as a prebuilt hit. options: stats only.
    std::shared_ptr<CompiledModule> prebuild(const std::string& source, const std::string& entry,
                                             const std::filesystem::path& into, const std::string& level,
                                             const LoadOptions& options = {});

    // The cache key of `source` under this configuration (32 hex digits); quick: as the
    // quick build of load_tiered(). Runs the compiler's --version once per process and
    // compiler to learn its identity.
    std::string key(const std::string& source, bool quick = false);

    JitStats stats() const;
    const CompilerConfig& config() const;

    // The compiler argv (argv[0] is config().cxx), run with the entry folder as working
    // directory so that it reads kernel.cpp and writes kernel.so there.
    std::vector<std::string> command(bool quick = false) const;
    // command() as one shell-quoted line, for logs and debug dumps.
    std::string command_line() const;

private:
    struct State;
    // The module of `source` from the memory cache, the disk cache or the compiler (threads
    // asking for one key at once build it once); quick: the quick build's flags.
    static std::shared_ptr<CompiledModule> load_module(State& s, const std::string& source, const std::string& entry,
                                                       bool quick, const LoadOptions& options);
    // Shared with background builds, which may outlive this object.
    std::shared_ptr<State> state_;
};

// argv joined with POSIX shell quoting where an argument needs it.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace toroid
