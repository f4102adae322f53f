// The runtime layer of the compiled engine: a generated C++ translation unit becomes a
// loaded shared object through the system C++ compiler. Modules are cached in memory per
// JitCompiler and on disk in a folder that several processes may share at once.
#pragma once

#include <filesystem>
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
    std::filesystem::path cache_dir;

    // cxx: $TOROID_CXX, else $CXX, else "c++". optimization_flags: $TOROID_CXXFLAGS, else
    // "-O3 -march=native". cache_dir: $TOROID_CACHE_DIR, else $XDG_CACHE_HOME/toroid, else
    // $HOME/.cache/toroid (throws toroid::Error when none of these is set).
    static CompilerConfig from_environment();
};

// Flags every build gets, ahead of the configurable ones: the output must be a
// position-independent shared object of the language level the generator writes.
inline const std::vector<std::string>& required_compiler_flags() {
    static const std::vector<std::string> flags = {"-std=c++20", "-fPIC", "-shared"};
    return flags;
}

// Counters of one JitCompiler since it was made.
struct JitStats {
    int compiled = 0;         // compiler runs that produced a module (installed or not)
    int disk_hits = 0;        // modules loaded from an intact on-disk entry
    int memory_hits = 0;      // loads answered by a module this object already held
    int corrupt_entries = 0;  // broken on-disk entries found, removed and rebuilt
    double compile_seconds = 0;  // wall time spent in the compiler
};

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

struct LoadOptions {
    // When set, kernel.cpp, command.txt, compiler_output.txt and manifest.json (whatever
    // exists for this load, failed or not) are written into this folder, created if needed.
    std::filesystem::path debug_dir;
};

// Compiles and loads generated translation units. load() may be called from several
// threads; concurrent loads of one source compile it once.
//
// Disk layout under cache_dir (runtime/disk_cache.h, shared with the CUDA toolchain):
//   <key>/kernel.cpp, kernel.so, command.txt, compiler_output.txt, manifest.json   an entry
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

    // The cache key of `source` under this configuration (32 hex digits). Runs the
    // compiler's --version once per process and compiler to learn its identity.
    std::string key(const std::string& source);

    JitStats stats() const;
    const CompilerConfig& config() const;

    // The compiler argv (argv[0] is config().cxx), run with the entry folder as working
    // directory so that it reads kernel.cpp and writes kernel.so there.
    std::vector<std::string> command() const;
    // command() as one shell-quoted line, for logs and debug dumps.
    std::string command_line() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// argv joined with POSIX shell quoting where an argument needs it.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace toroid
