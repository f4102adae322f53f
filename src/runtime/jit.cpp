// The C++ toolchain declared in jit.h: runs the system C++ compiler without a shell, keeps
// the results in the shared disk cache (runtime/disk_cache.h) and in a per-JitCompiler
// memory cache, and dlopens them.
#include "runtime/jit.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "runtime/disk_cache.h"
#include "runtime/prebuilt.h"
#include "runtime/sha256.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <utility>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace toroid {

namespace fs = std::filesystem;

namespace {

// Compiler output, dlerror text and paths go into one-line error messages.
std::string one_line(std::string_view s, std::size_t max = 300) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i >= max) return out + "...";
        auto c = static_cast<unsigned char>(s[i]);
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += ' ';
        else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
    return out;
}

std::optional<std::string> env_value(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
}

// Empty counts as unset, as XDG asks for its variables and as users expect of CXX.
std::optional<std::string> env_nonempty(const char* name) {
    auto v = env_value(name);
    if (v && v->empty()) return std::nullopt;
    return v;
}

std::vector<std::string> split_whitespace(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string word; in >> word;) out.push_back(word);
    return out;
}

// ---- compiler processes -------------------------------------------------------------------

// The process groups of the compilers running now, for kill_running_compilers() (a signal
// handler may call it: plain atomics, no locks). A slot is cleared before its process is
// reaped, so that a group id is never signalled after it could be reused.
constexpr int kMaxRunning = 64;
std::atomic<pid_t> g_running[kMaxRunning];
// Set at exit once the grace for running compiles is over: waits kill their compilers.
std::atomic<bool> g_kill_compilers{false};
std::atomic<std::int64_t> g_background_compiles{0};

int register_running(pid_t pid) {
    for (int i = 0; i < kMaxRunning; ++i) {
        pid_t expected = 0;
        if (g_running[i].compare_exchange_strong(expected, pid)) return i;
    }
    return -1;  // more than kMaxRunning at once: this one is killed on timeout only
}

struct Spawned {
    pid_t pid = -1;
    int error = 0;  // errno-style code when the program could not be started
    int slot = -1;  // in g_running
};

// The file `name` (no '/') names on $PATH, as execvp would find it; empty when none.
std::string search_path(const std::string& name) {
    const char* env = std::getenv("PATH");
    std::istringstream in(env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin");
    for (std::string dir; std::getline(in, dir, ':');) {
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return {};
}

// The child side of spawn(), between vfork and exec: system calls only. It leads a process
// group of its own (so that a timeout kills the compiler's own children too), dies with the
// thread that started it, and reports a failed exec through `report`.
[[noreturn]] __attribute__((noinline)) void exec_child(const char* program, char* const* args, const char* cwd,
                                                       int in, int out, int report, pid_t parent,
                                                       const sigset_t* mask, int death_signal) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, death_signal);
    if (::getppid() != parent) ::_exit(127);
    // The parent's handlers must not run here (this child shares its memory until exec).
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        struct sigaction sa {};
        if (::sigaction(sig, nullptr, &sa) != 0) continue;
        if (sig == SIGCHLD || (sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            ::sigaction(sig, &sa, nullptr);
        }
    }
    ::sigprocmask(SIG_SETMASK, mask, nullptr);
    int error = 0;
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(1, 2) < 0) error = errno;
    else if (cwd != nullptr && ::chdir(cwd) != 0) error = errno;
    if (error == 0) {
        ::execve(program, args, environ);
        error = errno;
    }
    (void)!::write(report, &error, sizeof error);
    ::_exit(127);
}

// vfork (no pthread_atfork handlers run, nothing of the parent is copied) and exec_child;
// the child's pid, or -1. Alone in a function of its own: nothing here lives across the
// vfork in a register the child could clobber.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclobbered"
__attribute__((noinline)) pid_t vfork_exec(const char* program, char* const* args, const char* cwd, int in, int out,
                                           int report, pid_t parent, const sigset_t* mask, int death_signal) {
    const pid_t pid = ::vfork();
    if (pid == 0) exec_child(program, args, cwd, in, out, report, parent, mask, death_signal);
    return pid;
}
#pragma GCC diagnostic pop

// Starts argv without a shell, stdin from /dev/null and stdout+stderr into `out_path`
// (when set) or `out_fd`, in `cwd` when set; in a process group of its own, registered for
// kill_running_compilers().
Spawned spawn(const std::vector<std::string>& argv, const fs::path& cwd, const fs::path& out_path, int out_fd) {
    // The child changes directory before exec, so a relative path must be made absolute
    // here, against the caller's working directory; a bare name is looked up on $PATH.
    std::string program;
    if (argv[0].find('/') != std::string::npos) program = fs::absolute(argv[0]).string();
    else program = search_path(argv[0]);
    if (program.empty()) return {-1, ENOENT};
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0) return {-1, errno};
    if (!S_ISREG(st.st_mode) || ::access(program.c_str(), X_OK) != 0) return {-1, EACCES};

    // The program runs under a guard shell that leads its process group: when the thread
    // that started it dies (PR_SET_PDEATHSIG sends SIGTERM), the guard kills the whole group,
    // so that a compiler driver's own children (cc1plus, as, ld) do not outlive us either.
    // Without /bin/sh, the program itself gets SIGKILL.
    static const bool guard = ::access("/bin/sh", X_OK) == 0;
    std::vector<std::string> full;
    if (guard) {
        full = {"/bin/sh", "-c", "trap 'kill -KILL 0' TERM HUP; \"$@\" & wait $!", "toroid-compiler", program};
        full.insert(full.end(), argv.begin() + 1, argv.end());
        program = "/bin/sh";
    } else {
        full = argv;
    }
    std::vector<char*> args;
    for (const auto& a : full) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);

    const int out = out_path.empty() ? out_fd : ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) return {-1, errno};
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2] = {-1, -1};
    if (in < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
        const int error = errno;
        if (in >= 0) ::close(in);
        if (!out_path.empty()) ::close(out);
        return {-1, error};
    }
    const std::string dir = cwd.string();
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = vfork_exec(program.c_str(), args.data(), dir.empty() ? nullptr : dir.c_str(), in, out, report[1],
                                 ::getpid(), &old, guard ? SIGTERM : SIGKILL);
    const int fork_error = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(report[1]);
    ::close(in);
    if (!out_path.empty()) ::close(out);
    if (pid < 0) {
        ::close(report[0]);
        return {-1, fork_error};
    }
    // Also from here, so that a kill right after never misses the group.
    ::setpgid(pid, pid);
    int error = 0;
    ssize_t n;
    do {
        n = ::read(report[0], &error, sizeof error);
    } while (n < 0 && errno == EINTR);
    ::close(report[0]);
    if (n == static_cast<ssize_t>(sizeof error)) {  // exec failed: the child is gone
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return {-1, error};
    }
    return {pid, 0, register_running(pid)};
}

struct Waited {
    std::optional<int> status;  // nullopt when it cannot be had (e.g. SIGCHLD ignored by the host)
    bool timed_out = false;
    bool cancelled = false;  // killed because the process is exiting
    bool interrupted = false;  // killed because the prepare waiting for it was interrupted
};

void kill_group(pid_t pid) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
}

// Waits for a spawned child, `timeout` seconds at most: past it, once exit cancels the builds,
// or once the prepare on this thread is interrupted (Ctrl-C), its whole process group is killed.
Waited wait_for(const Spawned& child, double timeout) {
    Waited out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    auto pause = std::chrono::microseconds(500);
    // A pidfd wakes us the moment the child exits; without one (kernels before 5.3), short sleeps.
#ifdef SYS_pidfd_open
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0));
#else
    const int pidfd = -1;
#endif
    for (;;) {
        siginfo_t info{};
        // WNOWAIT: the child stays unreaped (its pid and group not reusable) until its slot
        // is cleared.
        const int rc = ::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT);
        if (rc < 0 && errno == EINTR) continue;
        const bool exited = rc == 0 && info.si_pid == child.pid;
        if (rc < 0 || exited) break;
        if (g_kill_compilers.load()) {
            out.cancelled = true;
            kill_group(child.pid);
            break;
        }
        if (interrupted()) {
            out.interrupted = true;
            kill_group(child.pid);
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            out.timed_out = true;
            kill_group(child.pid);
            break;
        }
        if (pidfd >= 0) {
            // Woken by the exit, or every 50 ms to look at the deadline, the exit flag and
            // interrupts.
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{pidfd, POLLIN, 0};
            ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left.count() + 1, 1, 50)));
        } else {
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::microseconds(5000));
        }
    }
    if (pidfd >= 0) ::close(pidfd);
    if (g_kill_compilers.load()) out.cancelled = true;
    if (child.slot >= 0) g_running[child.slot].store(0);
    int status = 0;
    pid_t r;
    while ((r = ::waitpid(child.pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (r == child.pid) out.status = status;
    return out;
}

bool succeeded(const std::optional<int>& status) {
    return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

std::string describe(const std::optional<int>& status) {
    if (!status) return fmt::format("could not wait for it: {}", std::strerror(errno));
    if (WIFEXITED(*status)) return fmt::format("exit status {}", WEXITSTATUS(*status));
    if (WIFSIGNALED(*status)) {
        const char* name = ::strsignal(WTERMSIG(*status));
        return fmt::format("killed by signal {} ({})", WTERMSIG(*status), name ? name : "?");
    }
    return fmt::format("wait status {}", *status);
}

std::string timeout_text(double seconds) { return fmt::format("{:g} s", seconds); }

// `cxx --version`, memoized per process: it costs a process start and the answer only
// changes when the compiler is reinstalled, which a running process need not notice.
std::string compiler_identity(const std::string& cxx, double timeout) {
    // Never destroyed: a background build may still ask while static objects go away at
    // exit (before the exit hook below has waited for it, when these were made after it).
    static std::mutex& mutex = *new std::mutex;
    static std::map<std::string, std::string>& known = *new std::map<std::string, std::string>;
    std::lock_guard lock(mutex);
    if (auto it = known.find(cxx); it != known.end()) return it->second;

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail("cannot run the C++ compiler '{}': pipe: {}", one_line(cxx), std::strerror(errno));
    Spawned child = spawn({cxx, "--version"}, {}, {}, fds[1]);
    ::close(fds[1]);
    if (child.error != 0) {
        ::close(fds[0]);
        fail("cannot run the C++ compiler '{}' (set TOROID_CXX or CXX): {}", one_line(cxx), std::strerror(child.error));
    }
    std::string output;
    char buffer[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || g_kill_compilers.load() || interrupted()) break;
        pollfd p{fds[0], POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n > 0) output.append(buffer, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    ::close(fds[0]);
    // An output that never ended is a hung compiler: the wait below kills it at once.
    const bool ended = std::chrono::steady_clock::now() < deadline && !g_kill_compilers.load() && !interrupted();
    const Waited waited = wait_for(child, ended ? timeout : 0);
    check_interrupt();
    if (waited.timed_out)
        fail("'{} --version' did not finish within {} (TOROID_COMPILE_TIMEOUT); it was killed", one_line(cxx),
             timeout_text(timeout));
    if (waited.cancelled) fail("cancelled: the process is exiting");
    if (!succeeded(waited.status))
        fail("'{} --version' failed ({}): {}", one_line(cxx), describe(waited.status),
             one_line(output.substr(0, output.find('\n'))));
    known.emplace(cxx, output);
    return output;
}

// The line of compiler output most worth quoting: the first diagnostic marked as an
// error, else the first non-blank line.
std::string first_error_line(const std::string& output) {
    std::istringstream in(output);
    std::string first_nonblank;
    for (std::string line; std::getline(in, line);) {
        if (first_nonblank.empty() && line.find_first_not_of(" \t\r") != std::string::npos) first_nonblank = line;
        std::string lower = line;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower.find("error") != std::string::npos) return one_line(line);
    }
    return first_nonblank.empty() ? std::string("(no compiler output)") : one_line(first_nonblank);
}

using ModuleFuture = std::shared_future<std::shared_ptr<CompiledModule>>;

// The process's compiles in flight: background builds (from their start until they have
// settled) and loads (from before a load looks for its module until it has it), counted so
// that fork and exit can wait for them. A child has only the forking thread: a build in
// flight would never settle there, a module another thread was building would be waited for
// forever, and a lock or the compiler's --version another thread held would stay held. Never
// destroyed (a build may still be finishing while static objects go away at exit).
struct InFlight {
    std::mutex mutex;
    std::condition_variable settled;
    int running = 0;
    // Of `running`, what this thread counts itself (its loads, the build it runs): a wait
    // from inside one (a fork or exit while it runs) waits for the others only.
    static inline thread_local int mine = 0;
    // The generation of each compile in `running` (core/interrupt.h), and the one a
    // background build's thread inherits from the prepare that started it.
    std::multiset<std::uint64_t> generations;
    static inline thread_local std::optional<std::uint64_t> t_generation;

    static InFlight& get() {
        static InFlight* b = new InFlight;
        return *b;
    }

    // fork waits for the compiles in flight: installed by the first JitCompiler.
    static void install_fork_hook() {
        static std::once_flag hook;
        std::call_once(hook, [] { ::pthread_atfork(&before_fork, &after_fork, &after_fork); });
    }
    // exit waits for them too: installed by the first background build, after its compiler
    // was made and after a key was computed (so OpenSSL, which frees its state in an atexit
    // handler of its own registered when a key is first hashed, and the static compilers
    // made before are still there while the build finishes: atexit handlers and static
    // destructors run in the reverse order of their registration).
    static void install_exit_hook() {
        static std::once_flag hook;
        std::call_once(hook, [] { std::atexit(&at_exit); });
    }

    // Exit waits for no lock: builds waiting for another process's lock give up at once;
    // compilers already running get a grace to finish (their builds then land in the disk
    // cache), then are killed and their builds fail (their private folders removed).
    // Compiles that an interrupt abandoned (Ctrl-C during their prepare, or since they
    // started) get no grace: the user asked to stop.
    static void at_exit() {
        cancel_cache_waits();
        InFlight& b = get();
        {
            std::unique_lock lock(b.mutex);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            // Woken when a compile settles, and every 50 ms to see interrupts.
            while (b.running != mine && b.wanted() > mine) {
                if (b.settled.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                                      std::chrono::milliseconds(50))) ==
                        std::cv_status::timeout &&
                    std::chrono::steady_clock::now() >= deadline)
                    break;
            }
            if (b.running == mine) return;
        }
        g_kill_compilers.store(true);
        kill_running_compilers();
        b.wait_all();
    }

    // The compiles in flight no interrupt has abandoned (mutex held).
    int wanted() const {
        int n = 0;
        for (const std::uint64_t g : generations)
            if (!interrupted_since(g)) ++n;
        return n;
    }

    // Counts a compile of the calling thread; returns its generation, for leave().
    std::uint64_t enter() {
        const std::uint64_t g = t_generation.value_or(interrupt_generation());
        std::lock_guard lock(mutex);
        ++running;
        ++mine;
        generations.insert(g);
        return g;
    }
    void leave(std::uint64_t generation) {
        std::lock_guard lock(mutex);
        --running;
        --mine;
        generations.erase(generations.find(generation));
        settled.notify_all();
    }

    // Runs `work` on a thread of its own, or here when no thread can be started; counted
    // from now until it is done.
    // The build belongs to the prepare that starts it: the calling thread's generation.
    void start(std::function<void()> work) {
        install_exit_hook();
        const std::uint64_t g = t_generation.value_or(interrupt_generation());
        {
            std::lock_guard lock(mutex);
            ++running;
            generations.insert(g);
        }
        // Shared with the thread, so that it is still here to run when no thread starts.
        auto task = std::make_shared<std::function<void()>>(std::move(work));
        try {
            std::thread([this, task, g]() mutable {
                mine = 1;  // this thread's own build
                t_generation = g;
                try {
                    (*task)();
                } catch (...) {  // the work reports its own failures; nothing may end the process
                }
                task.reset();  // what it holds goes first: the process may exit right after
                done(g);
            }).detach();
        } catch (const std::system_error&) {
            ++mine;
            try {
                (*task)();
            } catch (...) {
                --mine;
                done(g);
                throw;
            }
            --mine;
            done(g);
        }
    }

    void done(std::uint64_t generation) {
        std::lock_guard lock(mutex);
        --running;
        generations.erase(generations.find(generation));
        settled.notify_all();
    }

    void wait_all() {
        std::unique_lock lock(mutex);
        settled.wait(lock, [&] { return running == mine; });
    }

    // fork waits for the compiles in flight and holds the lock across it, so that none
    // starts meanwhile.
    static void before_fork() {
        InFlight& b = get();
        std::unique_lock lock(b.mutex);
        b.settled.wait(lock, [&] { return b.running == mine; });
        lock.release();
    }
    static void after_fork() { get().mutex.unlock(); }
};

// A load counted in flight for its scope.
class LoadInFlight {
public:
    LoadInFlight() : generation_(InFlight::get().enter()) {}
    ~LoadInFlight() { InFlight::get().leave(generation_); }
    LoadInFlight(const LoadInFlight&) = delete;
    LoadInFlight& operator=(const LoadInFlight&) = delete;

private:
    std::uint64_t generation_;
};

// The cores this process may run on (its affinity mask), at least 1.
int usable_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

// ---------------------------------------------------------------------------------------

std::int64_t background_compiles() { return g_background_compiles.load(); }

void kill_running_compilers() {
    for (auto& slot : g_running) {
        const pid_t pid = slot.load();
        if (pid > 0) ::kill(-pid, SIGKILL);
    }
}

const std::string& native_cpu_signature() {
    static const std::string signature = [] {
        // Linux: the first processor's flags (x86; "Features" on ARM; every core of a
        // machine has the same ones).
        if (std::ifstream cpuinfo("/proc/cpuinfo"); cpuinfo) {
            std::string line;
            while (std::getline(cpuinfo, line))
                if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
                    const auto colon = line.find(':');
                    if (colon != std::string::npos) return "cpuinfo " + line;
                }
        }
        std::string s = "builtin flags:";
#if defined(__x86_64__) || defined(__i386__)
        __builtin_cpu_init();
#define TOROID_FEATURE(name) \
    if (__builtin_cpu_supports(name)) s += " " name;
        TOROID_FEATURE("sse4.2")
        TOROID_FEATURE("popcnt")
        TOROID_FEATURE("avx")
        TOROID_FEATURE("avx2")
        TOROID_FEATURE("fma")
        TOROID_FEATURE("bmi2")
        TOROID_FEATURE("avx512f")
        TOROID_FEATURE("avx512bw")
        TOROID_FEATURE("avx512vl")
        TOROID_FEATURE("avx512dq")
        TOROID_FEATURE("avx512cd")
        TOROID_FEATURE("avx512vbmi")
        TOROID_FEATURE("avx512vbmi2")
        TOROID_FEATURE("avx512vnni")
        TOROID_FEATURE("avx512bf16")
        TOROID_FEATURE("avx512fp16")
        TOROID_FEATURE("gfni")
        TOROID_FEATURE("vpclmulqdq")
#undef TOROID_FEATURE
#endif
        return s;
    }();
    return signature;
}

std::string module_key(const std::string& source, const std::string& identity, const std::vector<std::string>& command,
                       const std::string& native_signature) {
    std::vector<std::string> parts = {source, identity};
    bool native = false;
    for (const auto& arg : command) {
        parts.push_back(arg);
        native = native || arg == "-march=native" || arg == "-mcpu=native";
    }
    if (native) parts.push_back(native_signature);
    return cache_key("toroid-jit-key-v1", parts);
}

CompilerConfig CompilerConfig::from_environment() {
    CompilerConfig config;
    if (auto t = env_nonempty("TOROID_COMPILE_TIMEOUT")) config.compile_timeout = parse_seconds(*t, "TOROID_COMPILE_TIMEOUT");
    config.cache_options = CacheOptions::from_environment();
    config.cxx = env_nonempty("TOROID_CXX").value_or(env_nonempty("CXX").value_or("c++"));
    // Set but empty is honoured: it is how a user asks for the compiler's own defaults.
    if (auto flags = env_value("TOROID_CXXFLAGS")) {
        config.optimization_flags = split_whitespace(*flags);
    } else {
        config.optimization_flags = {"-O3", "-march=native"};
        config.prebuilt_dirs = prebuilt_dirs_from_environment();
    }
    if (auto flags = env_nonempty("TOROID_QUICK_CXXFLAGS")) config.quick_optimization_flags = split_whitespace(*flags);
    config.cache_dir = default_cache_dir();
    return config;
}

std::vector<std::string> quick_flags_from(const std::vector<std::string>& flags) {
    std::vector<std::string> out;
    for (const auto& f : flags)
        if (f.rfind("-O", 0) != 0) out.push_back(f);
    out.emplace_back("-O1");
    return out;
}

// ---------------------------------------------------------------------------------------

CompiledModule::CompiledModule(const fs::path& library, Info info) : info_(std::move(info)) {
    ::dlerror();
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();
        fail("cannot load JIT module {}: {}", one_line(library.string()), one_line(why ? why : "unknown dlopen error"));
    }
    handle_.reset(handle);
    // The cache's eviction leaves the entry of a loaded module alone.
    if (!info_.directory.empty()) mark_entry_in_use(info_.directory);
}

CompiledModule::~CompiledModule() {
    if (!info_.directory.empty()) unmark_entry_in_use(info_.directory);
}

void CompiledModule::Closer::operator()(void* handle) const {
    if (handle != nullptr) ::dlclose(handle);
}

void* CompiledModule::symbol(const std::string& name) const {
    ::dlerror();
    void* address = ::dlsym(handle_.get(), name.c_str());
    if (address == nullptr)
        fail("JIT module {} has no exported symbol '{}' (is it declared extern \"C\"?)", info_.key, one_line(name));
    return address;
}

// ---------------------------------------------------------------------------------------

struct JitCompiler::State {
    CompilerConfig config;
    DiskCache cache;  // under config.cache_dir made absolute: the compiler runs elsewhere
    // [0]: full builds, [1]: the quick builds of load_tiered.
    std::vector<std::string> commands[2];
    std::string command_lines[2];

    mutable std::mutex mutex;  // guards stats and modules
    JitStats stats;
    // Shared (not weak) so that a module stays mapped for the life of this object and a
    // later load of the same key is a plain lookup; a pending future means a thread is
    // building it and others wait for that result instead of compiling again.
    std::unordered_map<std::string, ModuleFuture> modules;

    // The prebuilt folders, and the instruction-set levels of this CPU, best first.
    std::vector<DiskCache> prebuilt;
    std::vector<const IsaLevel*> levels;

    State(const fs::path& root, const CacheOptions& options) : cache(root, options) {}

    // Counts into this compiler's stats and, when set, the caller's own (LoadOptions::stats).
    template <typename F>
    void count(F&& update, JitStats* also = nullptr) {
        std::lock_guard lock(mutex);
        update(stats);
        if (also != nullptr) update(*also);
    }

    std::string key(const std::string& source, bool quick) const {
        return module_key(source, compiler_identity(config.cxx, config.compile_timeout), commands[quick],
                          native_cpu_signature());
    }

    // The compiler argv of a prebuilt module of `level` (run in the entry's folder).
    std::vector<std::string> level_command(const IsaLevel& level) const {
        std::vector<std::string> command = {config.cxx};
        for (const auto& f : required_compiler_flags()) command.push_back(f);
        command.emplace_back("-O3");
        for (const auto& f : level.flags) command.push_back(f);
        for (const auto& f : config.extra_flags) command.push_back(f);
        for (const char* f : {"kernel.cpp", "-o", "kernel.so"}) command.emplace_back(f);
        return command;
    }

    nlohmann::json build(const fs::path& dir, const std::string& source, bool quick) const {
        return build_with(dir, source, commands[quick], quick ? "quick" : "full");
    }

    // Compiles kernel.cpp into kernel.so inside the cache's private folder `dir`.
    nlohmann::json build_with(const fs::path& dir, const std::string& source, const std::vector<std::string>& command,
                              const std::string& tier) const {
        write_file_bytes(dir / "kernel.cpp", source);
        write_file_bytes(dir / "command.txt", shell_join(command) + "\n");
        const fs::path output = dir / "compiler_output.txt";
        Spawned child = spawn(command, dir, output, -1);
        std::string problem;
        if (child.error != 0) {
            problem = fmt::format("cannot run '{}': {}", one_line(command[0]), std::strerror(child.error));
            write_file_bytes(output, problem + "\n");
        } else if (const Waited waited = wait_for(child, config.compile_timeout); waited.cancelled || waited.interrupted) {
            check_interrupt();  // not failures of the source: nothing kept
            fail("cancelled: the process is exiting");
        } else if (waited.timed_out) {
            const std::string limit = timeout_text(config.compile_timeout);
            throw BuildFailure{[limit](const fs::path& kept) {
                return fmt::format(
                    "C++ compiler did not finish within {} (TOROID_COMPILE_TIMEOUT) and was killed; kernel.cpp, "
                    "command.txt and compiler_output.txt are in {}/",
                    limit, one_line(kept.string()));
            }};
        } else if (!succeeded(waited.status)) {
            problem = describe(waited.status);
        } else if (!fs::exists(dir / "kernel.so")) {
            problem = "it wrote no kernel.so";
        }
        if (!problem.empty()) {
            std::error_code ec;
            fs::remove(dir / "kernel.so", ec);
            std::string quoted = first_error_line(read_file_or_empty(output));
            throw BuildFailure{[problem, quoted](const fs::path& kept) {
                return fmt::format(
                    "C++ compiler failed ({}); kernel.cpp, command.txt and compiler_output.txt are in {}/: {}",
                    problem, one_line(kept.string()), quoted);
            }};
        }
        const std::string identity = compiler_identity(config.cxx, config.compile_timeout);
        return {{"command", command}, {"compiler", identity.substr(0, identity.find('\n'))}, {"tier", tier}};
    }

    DiskCache::Recipe recipe(const std::string& key, const std::string& source, bool quick,
                             std::shared_ptr<CompiledModule>& module, bool keep_source = false) const {
        DiskCache::Recipe recipe;
        recipe.key = key;
        recipe.checked_files = {"kernel.so"};
        recipe.source_files = {"kernel.cpp"};
        recipe.keep_sources = keep_source;
        recipe.build = [this, &source, quick](const fs::path& dir) { return build(dir, source, quick); };
        // dlopen is the last check: an entry that passes its manifest but does not load
        // is as broken as one that fails it.
        recipe.open = [this, &module, key, quick](const fs::path& dir) {
            module = std::make_shared<CompiledModule>(dir / "kernel.so", CompiledModule::Info{key, dir, commands[quick]});
        };
        return recipe;
    }

    // The installed disk entry of `key`, loaded, or null; builds nothing, waits for nobody.
    std::shared_ptr<CompiledModule> find(const std::string& key, const std::string& source, bool quick,
                                         JitStats* also) {
        std::shared_ptr<CompiledModule> module;
        if (!cache.find(recipe(key, source, quick, module))) return nullptr;
        count([](JitStats& s) { ++s.disk_hits; }, also);
        return module;
    }

    // The prebuilt module of `source` at the best level this CPU has, loaded, or null.
    std::shared_ptr<CompiledModule> find_prebuilt(const std::string& source, JitStats* also) {
        if (levels.empty()) return nullptr;
        const std::string digest = sha256_hex(source);  // once for every level
        for (const IsaLevel* level : levels) {
            const std::string key = prebuilt_key_of_digest(digest, *level, config.extra_flags);
            for (const DiskCache& dir : prebuilt) {
                std::shared_ptr<CompiledModule> module;
                DiskCache::Recipe r;
                r.key = key;
                r.checked_files = {"kernel.so"};
                r.open = [&](const fs::path& d) {
                    module = std::make_shared<CompiledModule>(d / "kernel.so", CompiledModule::Info{key, d, level_command(*level)});
                };
                try {
                    if (!dir.find(r)) continue;
                } catch (const std::exception&) {
                    continue;  // unreadable or broken: not ours to mend; the JIT builds instead
                }
                count([](JitStats& st) { ++st.prebuilt_hits; }, also);
                return module;
            }
        }
        return nullptr;
    }

    std::shared_ptr<CompiledModule> resolve(const std::string& key, const std::string& source, bool quick,
                                            JitStats* also, bool keep_source) {
        if (!quick && !prebuilt.empty())
            if (auto module = find_prebuilt(source, also)) return module;
        std::shared_ptr<CompiledModule> module;
        const DiskCache::Recipe recipe = this->recipe(key, source, quick, module, keep_source);
        DiskCache::Result result;
        try {
            result = cache.get(recipe);
        } catch (...) {
            count([&](JitStats& s) { s.compile_seconds += result.build_seconds; }, also);
            throw;
        }
        count(
            [&](JitStats& s) {
                s.corrupt_entries += result.corrupt_entries;
                s.compile_seconds += result.build_seconds;
                if (result.built) ++s.compiled;
                else ++s.disk_hits;
            },
            also);
        return module;
    }

    // Best effort: the compiler's error matters more than a failed debug dump.
    void write_failure_debug(const LoadOptions& options, const std::string& key, const std::string& source,
                             bool quick) const {
        if (options.debug_dir.empty()) return;
        try {
            write_debug(options.debug_dir, cache.failed(key), source, quick);
        } catch (const std::exception&) {
        }
    }

    void write_debug(const fs::path& debug_dir, const fs::path& from, const std::string& source, bool quick) const {
        fs::create_directories(debug_dir);
        write_file_bytes(debug_dir / "kernel.cpp", source);
        write_file_bytes(debug_dir / "command.txt", command_lines[quick] + "\n");
        for (const char* name : {"compiler_output.txt", "manifest.json"}) {
            std::error_code ec;
            if (fs::exists(from / name, ec))
                fs::copy_file(from / name, debug_dir / name, fs::copy_options::overwrite_existing);
        }
    }
};

JitCompiler::JitCompiler() : JitCompiler(CompilerConfig::from_environment()) {}

JitCompiler::JitCompiler(CompilerConfig config) {
    if (config.cxx.empty()) fail("JIT compiler configuration: no C++ compiler named");
    if (config.cache_dir.empty()) fail("JIT compiler configuration: no cache folder named");
    if (!(config.compile_timeout > 0)) fail("JIT compiler configuration: the compile timeout must be positive");
    state_ = std::make_shared<State>(config.cache_dir, config.cache_options);
    State& s = *state_;
    const std::vector<std::string> quick_flags = config.quick_optimization_flags.empty()
                                                     ? quick_flags_from(config.optimization_flags)
                                                     : config.quick_optimization_flags;
    for (int quick = 0; quick < 2; ++quick) {
        std::vector<std::string>& command = s.commands[quick];
        command.push_back(config.cxx);
        for (const auto& f : required_compiler_flags()) command.push_back(f);
        for (const auto& f : quick ? quick_flags : config.optimization_flags) command.push_back(f);
        for (const auto& f : config.extra_flags) command.push_back(f);
        for (const char* f : {"kernel.cpp", "-o", "kernel.so"}) command.emplace_back(f);
        s.command_lines[quick] = shell_join(command);
    }
    // Prebuilt folders are read only here (no size cap applies); root-owned installs are
    // trusted as the user's own.
    CacheOptions prebuilt_options = config.cache_options;
    prebuilt_options.trust_root = true;
    prebuilt_options.max_bytes = 0;
    for (const auto& dir : config.prebuilt_dirs) s.prebuilt.emplace_back(dir, prebuilt_options);
    for (const IsaLevel& level : isa_levels())
        if (isa_supported(level.name)) s.levels.push_back(&level);
    s.config = std::move(config);
    InFlight::install_fork_hook();
}

JitCompiler::~JitCompiler() = default;
JitCompiler::JitCompiler(JitCompiler&&) noexcept = default;
JitCompiler& JitCompiler::operator=(JitCompiler&&) noexcept = default;

std::string JitCompiler::key(const std::string& source, bool quick) {
    LoadInFlight in_flight;  // the compiler's --version may run
    return state_->key(source, quick);
}

std::shared_ptr<CompiledModule> JitCompiler::load(const std::string& source, const std::string& entry,
                                                  const LoadOptions& options) {
    return load_module(*state_, source, entry, options.quick, options);
}

std::shared_ptr<CompiledModule> JitCompiler::load_module(State& s, const std::string& source, const std::string& entry,
                                                         bool quick, const LoadOptions& options) {
    LoadInFlight in_flight;
    const std::string k = s.key(source, quick);

    std::promise<std::shared_ptr<CompiledModule>> promise;
    ModuleFuture future;
    bool owner = false;
    {
        std::lock_guard lock(s.mutex);
        if (auto it = s.modules.find(k); it != s.modules.end()) {
            future = it->second;
        } else {
            future = promise.get_future().share();
            s.modules.emplace(k, future);
            owner = true;
        }
    }

    std::shared_ptr<CompiledModule> module;
    if (owner) {
        try {
            try {
                module = s.resolve(k, source, quick, options.stats, !options.debug_dir.empty());
            } catch (const Error&) {
                throw;
            } catch (const std::bad_alloc&) {
                throw;
            } catch (const std::exception& e) {
                // filesystem_error and the like: still one line, still toroid::Error.
                fail("JIT cache {}: {}", one_line(s.cache.root().string()), one_line(e.what()));
            }
        } catch (...) {
            {
                // Forget the failure so that a later load tries again (the compiler or the
                // disk may have been fixed); threads already waiting get this error.
                std::lock_guard lock(s.mutex);
                s.modules.erase(k);
            }
            promise.set_exception(std::current_exception());
            s.write_failure_debug(options, k, source, quick);
            throw;
        }
        promise.set_value(module);
    } else {
        try {
            module = future.get();
        } catch (...) {
            s.write_failure_debug(options, k, source, quick);
            throw;
        }
        s.count([](JitStats& st) { ++st.memory_hits; }, options.stats);
    }

    if (!options.debug_dir.empty()) {
        try {
            s.write_debug(options.debug_dir, module->directory(), source, quick);
        } catch (const fs::filesystem_error& e) {
            fail("cannot write JIT debug files to {}: {}", one_line(options.debug_dir.string()), one_line(e.what()));
        }
    }
    module->symbol(entry);
    return module;
}

std::shared_ptr<CompiledModule> JitCompiler::prebuild(const std::string& source, const std::string& entry,
                                                      const fs::path& into, const std::string& level_name,
                                                      const LoadOptions& options) {
    LoadInFlight in_flight;  // the compiler runs
    State& s = *state_;
    const IsaLevel& level = isa_level(level_name);
    // A catalogue being made: no size cap, no eviction.
    CacheOptions into_options = s.config.cache_options;
    into_options.max_bytes = 0;
    const DiskCache cache(into, into_options);
    const std::vector<std::string> command = s.level_command(level);
    const std::string key = prebuilt_key(source, level, s.config.extra_flags);
    std::shared_ptr<CompiledModule> module;
    DiskCache::Recipe r;
    r.key = key;
    r.checked_files = {"kernel.so"};
    r.build = [&](const fs::path& dir) { return s.build_with(dir, source, command, "prebuilt " + level.name); };
    r.open = [&](const fs::path& dir) {
        module = std::make_shared<CompiledModule>(dir / "kernel.so", CompiledModule::Info{key, dir, command});
    };
    DiskCache::Result result;
    try {
        result = cache.get(r);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        fail("prebuilt folder {}: {}", one_line(into.string()), one_line(e.what()));
    }
    s.count(
        [&](JitStats& st) {
            st.compile_seconds += result.build_seconds;
            if (result.built) ++st.compiled;
            else ++st.prebuilt_hits;
        },
        options.stats);
    module->symbol(entry);
    return module;
}

JitStats JitCompiler::stats() const {
    std::lock_guard lock(state_->mutex);
    return state_->stats;
}

const CompilerConfig& JitCompiler::config() const { return state_->config; }

std::vector<std::string> JitCompiler::command(bool quick) const { return state_->commands[quick]; }

std::string JitCompiler::command_line() const { return state_->command_lines[0]; }

void wait_for_background_builds() { InFlight::get().wait_all(); }

struct TieredModule::State {
    mutable std::mutex mutex;
    mutable std::condition_variable cv;
    std::shared_ptr<CompiledModule> quick, full;
    bool settled = false;
    std::exception_ptr error;
    double full_seconds = 0;
};

// Entry swaps happen under the mutex, so that a quick build loaded late never replaces a
// full one. A failed full build is reported once the quick build serves (before that, the
// quick build may fail too, and then the full build's error is the call's own).
void TieredModule::settle(std::shared_ptr<CompiledModule> module, std::exception_ptr error, const std::string& entry,
                          double seconds) {
    void* address = nullptr;
    if (module) {
        try {
            address = module->symbol(entry);
        } catch (...) {
            error = std::current_exception();
            module = nullptr;
        }
    }
    bool warn = false;
    {
        std::lock_guard lock(state_->mutex);
        state_->settled = true;
        if (module) {
            state_->full = std::move(module);
            state_->full_seconds = seconds;
            entry_.store(address, std::memory_order_release);
        } else {
            state_->error = error;
            warn = state_->quick != nullptr;
        }
    }
    state_->cv.notify_all();
    if (warn) warn_full_failed(error);
}

void TieredModule::serve_quick(std::shared_ptr<CompiledModule> module, const std::string& entry) {
    void* address = module->symbol(entry);
    bool warn = false;
    std::exception_ptr error;
    {
        std::lock_guard lock(state_->mutex);
        state_->quick = std::move(module);
        if (!state_->full) entry_.store(address, std::memory_order_release);
        warn = state_->settled && state_->error;
        error = state_->error;
    }
    if (warn) warn_full_failed(error);
}

// Nobody may ever wait() for a background build: its failure is said here, as a compiler's
// warning would be.
void TieredModule::warn_full_failed(const std::exception_ptr& error) {
    if (cache_waits_cancelled()) return;  // cancelled at exit: nobody runs it any more
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toroid: warning: the full build failed; its quick build keeps serving: %s\n",
                     one_line(e.what(), 2000).c_str());
    } catch (...) {
    }
}

TieredModule::TieredModule() : state_(std::make_shared<State>()) {}
TieredModule::~TieredModule() = default;

std::shared_ptr<TieredModule> TieredModule::of(std::shared_ptr<CompiledModule> module, const std::string& entry) {
    auto t = std::make_shared<TieredModule>();
    void* address = module->symbol(entry);
    t->state_->full = std::move(module);
    t->state_->settled = true;
    t->entry_.store(address, std::memory_order_release);
    return t;
}

bool TieredModule::full() const {
    std::lock_guard lock(state_->mutex);
    return state_->full != nullptr;
}

bool TieredModule::settled() const {
    std::lock_guard lock(state_->mutex);
    return state_->settled;
}

void TieredModule::wait() const {
    std::unique_lock lock(state_->mutex);
    state_->cv.wait(lock, [&] { return state_->settled; });
    if (state_->error) std::rethrow_exception(state_->error);
}

double TieredModule::full_seconds() const {
    std::lock_guard lock(state_->mutex);
    return state_->full_seconds;
}

std::shared_ptr<CompiledModule> TieredModule::module() const {
    std::lock_guard lock(state_->mutex);
    return state_->full ? state_->full : state_->quick;
}

std::shared_ptr<CompiledModule> TieredModule::quick_module() const {
    std::lock_guard lock(state_->mutex);
    return state_->quick;
}

std::shared_ptr<TieredModule> JitCompiler::load_tiered(const std::string& full_source, const std::string& quick_source,
                                                       const std::string& entry, const LoadOptions& options) {
    return load_tiered(full_source, [&quick_source] { return quick_source; }, entry, options);
}

std::shared_ptr<TieredModule> JitCompiler::load_tiered(const std::string& full_source,
                                                       const std::function<std::string()>& make_quick,
                                                       const std::string& entry, const LoadOptions& options) {
    // In flight until it returns: a fork waits until the full build has started (and for it).
    LoadInFlight in_flight;
    const auto start = std::chrono::steady_clock::now();
    auto tiered = std::make_shared<TieredModule>();

    // The full build at once when it is there: in memory (built), or on disk.
    State& s = *state_;
    const std::string full_key = s.key(full_source, false);
    std::shared_ptr<CompiledModule> full;
    {
        std::lock_guard lock(s.mutex);
        if (auto it = s.modules.find(full_key);
            it != s.modules.end() && it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
            full = it->second.get();  // failures are not kept in the map
            ++s.stats.memory_hits;
            if (options.stats) ++options.stats->memory_hits;
        }
    }
    if (!full) {
        try {
            if (!s.prebuilt.empty()) full = s.find_prebuilt(full_source, options.stats);
            if (!full) full = s.find(full_key, full_source, false, options.stats);
        } catch (const std::exception&) {
            full = nullptr;  // unusable: the build below goes through get(), which says why
        }
        if (full) {
            std::promise<std::shared_ptr<CompiledModule>> ready;
            ready.set_value(full);
            std::lock_guard lock(s.mutex);
            s.modules.emplace(full_key, ready.get_future().share());
        }
    }
    if (full) {
        tiered->settle(std::move(full), nullptr, entry, 0);
        return tiered;
    }

    const std::string quick_source = make_quick();
    if (quick_source.empty()) {  // no quick program: the full build alone
        LoadOptions full_options;
        full_options.stats = options.stats;
        return TieredModule::of(load_module(s, full_source, entry, false, full_options), entry);
    }

    // With cores to spare, the full build starts first and runs beside the quick one; with
    // two or fewer it would slow the quick build down (measured: 0.22 -> 0.45 s on two
    // cores), so it starts once the quick build is loaded.
    auto background = [state = state_, tiered, full_source, entry, start] {
        std::shared_ptr<CompiledModule> module;
        std::exception_ptr error;
        JitStats own;  // counted as background work, besides the compiler's stats
        LoadOptions background_options;
        background_options.stats = &own;
        try {
            module = load_module(*state, full_source, entry, false, background_options);
        } catch (...) {
            error = std::current_exception();
        }
        if (own.compiled > 0) {
            g_background_compiles.fetch_add(own.compiled);
            state->count([&](JitStats& st) { st.background_compiled += own.compiled; });
        }
        tiered->settle(std::move(module), error, entry,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    const bool beside = usable_cores() > 2;
    if (beside) InFlight::get().start(background);

    LoadOptions quick_options;
    quick_options.quick = true;
    quick_options.stats = options.stats;
    std::shared_ptr<CompiledModule> quick;
    try {
        quick = load_module(s, quick_source, entry, true, quick_options);
    } catch (const Error& e) {
        // The quick build is an optimization: without it, the call waits for the full
        // build and reports its error (the one a single build would have had).
        if (!beside) InFlight::get().start(background);
        tiered->wait();
        std::fprintf(stderr, "toroid: warning: the quick build failed; the full build serves: %s\n",
                     one_line(e.what(), 2000).c_str());
        return tiered;
    }
    tiered->serve_quick(std::move(quick), entry);
    s.count([](JitStats& st) { ++st.quick_loads; }, options.stats);
    if (!beside) InFlight::get().start(background);
    return tiered;
}

// ---------------------------------------------------------------------------------------

std::string shell_join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& arg : argv) {
        if (!out.empty()) out += ' ';
        bool plain = !arg.empty();
        for (char c : arg) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_@%+=:,./-").find(c) == std::string_view::npos) {
                plain = false;
                break;
            }
        }
        if (plain) {
            out += arg;
            continue;
        }
        out += '\'';
        for (char c : arg) {
            if (c == '\'') out += "'\\''";
            else out += c;
        }
        out += '\'';
    }
    return out;
}

}  // namespace toroid
