// The JIT runtime against the real system compiler: compile and call, the memory and disk
// caches, broken entries, compiler failures, threads and processes sharing one cache
// folder. Each test gets its own cache folder; builds use -O0 to stay quick.
#include "runtime/jit.h"

#include "core/error.h"
#include "runtime/sha256.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

const std::string kAnswer = "extern \"C\" int answer(int x) { return x + 22; }\n";

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void spit(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Names under the cache folder starting with `prefix` (in-flight work must not linger).
int count_prefixed(const fs::path& dir, const std::string& prefix) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
}

class JitTest : public ::testing::Test {
protected:
    void SetUp() override {
        cache_ = fs::path(::testing::TempDir()) /
                 ("toroid_jit_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                  "_" + std::to_string(::getpid()));
        fs::remove_all(cache_);
    }
    void TearDown() override {
        if (fs::exists(cache_)) {
            EXPECT_EQ(count_prefixed(cache_, ".tmp-"), 0);
            EXPECT_EQ(count_prefixed(cache_, ".trash-"), 0);
        }
        fs::remove_all(cache_);
    }

    CompilerConfig config() const {
        CompilerConfig c;
        c.cxx = TOROID_CXX_COMPILER;
        c.optimization_flags = {"-O0"};
        c.cache_dir = cache_;
        return c;
    }

    static int call_answer(const CompiledModule& module, int x) { return module.lookup<int (*)(int)>("answer")(x); }

    fs::path cache_;
};

TEST_F(JitTest, CompilesAndCalls) {
    JitCompiler jit(config());
    auto module = jit.load(kAnswer, "answer");
    EXPECT_EQ(call_answer(*module, 20), 42);
    EXPECT_EQ(module->key(), jit.key(kAnswer));
    EXPECT_EQ(module->directory(), fs::absolute(cache_) / module->key());
    EXPECT_EQ(module->command(), jit.command());
    for (const char* name : {"kernel.so", "compiler_output.txt", "command.txt", "manifest.json"})
        EXPECT_TRUE(fs::exists(module->directory() / name)) << name;
    // The source is not kept by default (most of an entry's bytes; nothing reads it back).
    EXPECT_FALSE(fs::exists(module->directory() / "kernel.cpp"));

    auto manifest = nlohmann::json::parse(slurp(module->directory() / "manifest.json"));
    EXPECT_EQ(manifest["key"], module->key());
    EXPECT_EQ(manifest["kernel_so"]["size"].get<std::uintmax_t>(), fs::file_size(module->directory() / "kernel.so"));
    EXPECT_EQ(manifest["kernel_so"]["sha256"], sha256_file_hex(module->directory() / "kernel.so"));
    EXPECT_EQ(manifest["command"].get<std::vector<std::string>>(), jit.command());
    EXPECT_EQ(manifest["toroid_version"], TOROID_VERSION);

    JitStats s = jit.stats();
    EXPECT_EQ(s.compiled, 1);
    EXPECT_EQ(s.disk_hits, 0);
    EXPECT_EQ(s.memory_hits, 0);
    EXPECT_GT(s.compile_seconds, 0.0);
}

TEST_F(JitTest, SecondObjectLoadsFromDisk) {
    std::string key;
    {
        JitCompiler first(config());
        key = first.load(kAnswer, "answer")->key();
    }
    JitCompiler second(config());
    auto module = second.load(kAnswer, "answer");
    EXPECT_EQ(module->key(), key);
    EXPECT_EQ(call_answer(*module, 1), 23);
    JitStats s = second.stats();
    EXPECT_EQ(s.compiled, 0);
    EXPECT_EQ(s.disk_hits, 1);
    EXPECT_EQ(s.compile_seconds, 0.0);
}

TEST_F(JitTest, SameObjectTwiceIsMemoryHit) {
    JitCompiler jit(config());
    auto a = jit.load(kAnswer, "answer");
    auto b = jit.load(kAnswer, "answer");
    EXPECT_EQ(a.get(), b.get());
    JitStats s = jit.stats();
    EXPECT_EQ(s.compiled, 1);
    EXPECT_EQ(s.memory_hits, 1);
}

TEST_F(JitTest, TruncatedLibraryIsRebuilt) {
    fs::path so;
    {
        JitCompiler first(config());
        so = first.load(kAnswer, "answer")->directory() / "kernel.so";
    }  // unmapped before it is damaged
    fs::resize_file(so, fs::file_size(so) / 2);

    JitCompiler second(config());
    auto module = second.load(kAnswer, "answer");
    EXPECT_EQ(call_answer(*module, 0), 22);
    JitStats s = second.stats();
    EXPECT_EQ(s.corrupt_entries, 1);
    EXPECT_EQ(s.compiled, 1);
    EXPECT_EQ(s.disk_hits, 0);
}

TEST_F(JitTest, LibraryThatDoesNotLoadIsRebuilt) {
    fs::path dir;
    {
        JitCompiler first(config());
        dir = first.load(kAnswer, "answer")->directory();
    }
    // Garbage whose manifest agrees, so that only dlopen can tell.
    const std::string garbage(4096, 'x');
    spit(dir / "kernel.so", garbage);
    auto manifest = nlohmann::json::parse(slurp(dir / "manifest.json"));
    manifest["kernel_so"]["size"] = garbage.size();
    manifest["kernel_so"]["sha256"] = sha256_hex(garbage);
    spit(dir / "manifest.json", manifest.dump());

    JitCompiler second(config());
    auto module = second.load(kAnswer, "answer");
    EXPECT_EQ(call_answer(*module, 1), 23);
    EXPECT_EQ(second.stats().corrupt_entries, 1);
    EXPECT_EQ(second.stats().compiled, 1);
}

TEST_F(JitTest, CompilerErrorNamesFailedFolder) {
    JitCompiler jit(config());
    const std::string bad = "extern \"C\" int answer(int x) { return x + }\n";
    const fs::path failed = fs::absolute(cache_) / "failed" / jit.key(bad);
    const fs::path debug = cache_ / "debug";
    try {
        jit.load(bad, "answer", LoadOptions{debug});
        FAIL() << "no exception";
    } catch (const Error& e) {
        std::string message = e.what();
        EXPECT_NE(message.find(failed.string()), std::string::npos) << message;
        EXPECT_NE(message.find("error"), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    for (const char* name : {"kernel.cpp", "command.txt", "compiler_output.txt"}) {
        EXPECT_TRUE(fs::exists(failed / name)) << name;
        EXPECT_TRUE(fs::exists(debug / name)) << name;
    }
    EXPECT_FALSE(fs::exists(failed / "kernel.so"));
    EXPECT_EQ(slurp(failed / "kernel.cpp"), bad);
    EXPECT_NE(slurp(failed / "compiler_output.txt").find("error"), std::string::npos);
    EXPECT_EQ(slurp(failed / "command.txt"), jit.command_line() + "\n");
    EXPECT_FALSE(fs::exists(cache_ / jit.key(bad)));
    EXPECT_EQ(jit.stats().compiled, 0);
    // A failure is not remembered: the next load runs the compiler again.
    EXPECT_THROW(jit.load(bad, "answer"), Error);
}

TEST_F(JitTest, DebugDirGetsTheFiles) {
    JitCompiler jit(config());
    const fs::path debug = cache_ / "debug" / "nested";
    jit.load(kAnswer, "answer", LoadOptions{debug});
    for (const char* name : {"kernel.cpp", "command.txt", "compiler_output.txt", "manifest.json"})
        EXPECT_TRUE(fs::exists(debug / name)) << name;
    EXPECT_EQ(slurp(debug / "kernel.cpp"), kAnswer);
    EXPECT_EQ(slurp(debug / "command.txt"), jit.command_line() + "\n");
}

TEST_F(JitTest, ThreadsCompileOnce) {
    JitCompiler jit(config());
    constexpr int kThreads = 8;
    std::latch start(kThreads);
    std::vector<std::shared_ptr<CompiledModule>> modules(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            start.arrive_and_wait();
            modules[i] = jit.load(kAnswer, "answer");
        });
    }
    for (auto& t : threads) t.join();
    for (const auto& m : modules) {
        ASSERT_NE(m, nullptr);
        EXPECT_EQ(m.get(), modules[0].get());
    }
    JitStats s = jit.stats();
    EXPECT_EQ(s.compiled, 1);
    EXPECT_EQ(s.memory_hits, kThreads - 1);
}

TEST_F(JitTest, MissingEntryThrows) {
    JitCompiler jit(config());
    try {
        jit.load(kAnswer, "no_such_function");
        FAIL() << "no exception";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_function"), std::string::npos) << e.what();
    }
    // The module itself is fine and stays cached.
    EXPECT_EQ(call_answer(*jit.load(kAnswer, "answer"), 0), 22);
    EXPECT_EQ(jit.stats().compiled, 1);
    EXPECT_EQ(jit.stats().memory_hits, 1);
}

TEST_F(JitTest, KeyDependsOnSourceAndFlags) {
    JitCompiler plain(config());
    CompilerConfig optimized = config();
    optimized.optimization_flags = {"-O1"};
    CompilerConfig extra = config();
    extra.extra_flags = {"-DX=1"};
    const std::string k = plain.key(kAnswer);
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(JitCompiler(config()).key(kAnswer), k);
    EXPECT_NE(JitCompiler(optimized).key(kAnswer), k);
    EXPECT_NE(JitCompiler(extra).key(kAnswer), k);
    EXPECT_NE(plain.key(kAnswer + " "), k);
}

// A build for the native CPU is keyed by that CPU's features: a cache folder shared by two
// machines (a network home) never hands one CPU's module to the other when they differ;
// builds of named instruction sets do not depend on the machine.
TEST_F(JitTest, NativeBuildsAreKeyedByTheCpu) {
    const std::vector<std::string> native = {"c++", "-O3", "-march=native", "kernel.cpp"};
    const std::vector<std::string> named = {"c++", "-O3", "-march=x86-64-v3", "kernel.cpp"};
    const std::string a = "flags: avx2 avx512f", b = "flags: avx2";
    EXPECT_NE(module_key(kAnswer, "g++ 12", native, a), module_key(kAnswer, "g++ 12", native, b));
    EXPECT_EQ(module_key(kAnswer, "g++ 12", native, a), module_key(kAnswer, "g++ 12", native, a));
    EXPECT_EQ(module_key(kAnswer, "g++ 12", named, a), module_key(kAnswer, "g++ 12", named, b));
    EXPECT_NE(module_key(kAnswer, "g++ 12", native, a), module_key(kAnswer, "g++ 13", native, a));
    const std::vector<std::string> mcpu = {"c++", "-mcpu=native", "kernel.cpp"};
    EXPECT_NE(module_key(kAnswer, "g++ 12", mcpu, a), module_key(kAnswer, "g++ 12", mcpu, b));
    // This machine's signature: read once, the same every time, naming its features.
    EXPECT_FALSE(native_cpu_signature().empty());
    EXPECT_EQ(&native_cpu_signature(), &native_cpu_signature());
#if defined(__x86_64__)
    EXPECT_NE(native_cpu_signature().find("sse"), std::string::npos) << native_cpu_signature();
#endif
}

TEST_F(JitTest, CommandLayout) {
    CompilerConfig c = config();
    c.extra_flags = {"-DNAME=a b"};
    JitCompiler jit(c);
    std::vector<std::string> expected = {TOROID_CXX_COMPILER, "-std=c++20", "-fPIC", "-shared", "-O0",
                                         "-DNAME=a b", "kernel.cpp", "-o", "kernel.so"};
    EXPECT_EQ(jit.command(), expected);
    EXPECT_EQ(jit.command_line(), std::string(TOROID_CXX_COMPILER) +
                                      " -std=c++20 -fPIC -shared -O0 '-DNAME=a b' kernel.cpp -o kernel.so");
}

TEST_F(JitTest, ProcessesShareTheFolder) {
    // Both children wait on one pipe so that they compile at the same time and race to
    // install; each reports through its exit status.
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < 2; ++i) {
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(go[1]);
            char c;
            while (::read(go[0], &c, 1) > 0) {
            }
            int code = 3;
            try {
                JitCompiler jit(config());
                auto module = jit.load(kAnswer, "answer");
                JitStats s = jit.stats();
                code = call_answer(*module, 20) == 42 && s.compiled + s.disk_hits == 1 ? 0 : 1;
            } catch (...) {
                code = 2;
            }
            ::_exit(code);
        }
        children.push_back(pid);
    }
    ::close(go[0]);
    ::close(go[1]);
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    }
    JitCompiler jit(config());
    EXPECT_EQ(call_answer(*jit.load(kAnswer, "answer"), 1), 23);
    EXPECT_EQ(jit.stats().disk_hits, 1);
}

TEST_F(JitTest, BadCompilerIsAnError) {
    CompilerConfig c = config();
    c.cxx = "toroid-no-such-compiler";
    JitCompiler jit(c);
    EXPECT_THROW(jit.load(kAnswer, "answer"), Error);
}

TEST(JitConfig, FromEnvironment) {
    const char* names[] = {"TOROID_CXX", "CXX", "TOROID_CXXFLAGS", "TOROID_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
    std::vector<std::optional<std::string>> saved;
    for (const char* n : names) {
        const char* v = std::getenv(n);
        saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
        ::unsetenv(n);
    }

    EXPECT_THROW(CompilerConfig::from_environment(), Error);
    ::setenv("HOME", "/home/u", 1);
    CompilerConfig c = CompilerConfig::from_environment();
    EXPECT_EQ(c.cxx, "c++");
    EXPECT_EQ(c.optimization_flags, (std::vector<std::string>{"-O3", "-march=native"}));
    EXPECT_EQ(c.cache_dir, fs::path("/home/u/.cache/toroid"));
    ::setenv("XDG_CACHE_HOME", "/xdg", 1);
    ::setenv("CXX", "g++", 1);
    ::setenv("TOROID_CXXFLAGS", "  -O2   -g ", 1);
    c = CompilerConfig::from_environment();
    EXPECT_EQ(c.cxx, "g++");
    EXPECT_EQ(c.optimization_flags, (std::vector<std::string>{"-O2", "-g"}));
    EXPECT_EQ(c.cache_dir, fs::path("/xdg/toroid"));
    ::setenv("TOROID_CXX", "clang++", 1);
    ::setenv("TOROID_CACHE_DIR", "/c", 1);
    c = CompilerConfig::from_environment();
    EXPECT_EQ(c.cxx, "clang++");
    EXPECT_EQ(c.cache_dir, fs::path("/c"));

    for (std::size_t i = 0; i < saved.size(); ++i) {
        if (saved[i]) ::setenv(names[i], saved[i]->c_str(), 1);
        else ::unsetenv(names[i]);
    }
}

TEST(JitShellJoin, QuotesWhereNeeded) {
    EXPECT_EQ(shell_join({"c++", "-O2", "-DA=b,c", "a b", "it's", ""}), "c++ -O2 -DA=b,c 'a b' 'it'\\''s' ''");
}

TEST(JitSha256, KnownVectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const fs::path file = fs::path(::testing::TempDir()) / ("toroid_sha_" + std::to_string(::getpid()));
    spit(file, std::string(100000, 'a'));
    EXPECT_EQ(sha256_file_hex(file), sha256_hex(std::string(100000, 'a')));
    fs::remove(file);
    EXPECT_THROW(sha256_file_hex(file), Error);
}

}  // namespace
}  // namespace toroid
