// The engine interface shared by the fronts (CLI, bench, C API): an engine prepares a
// pipeline for one input spec (the compiled engine compiles here) and the prepared
// object runs it on any input of that spec.
#pragma once

#include "core/tensor.h"
#include "ops/ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toroid {

// How the compiled engine builds a program it finds in no cache (runtime/jit.h,
// load_tiered). $TOROID_TIERED=0 makes Tiered mean FullOnly, =quick QuickOnly.
enum class Tiers : std::uint8_t {
    // prepare() returns with a quick build (scalar loops, fewer compiler passes: a fifth of
    // the compile time) and the full build compiles in the background, replacing it for
    // later runs once loaded. Both compute the same results.
    Tiered,
    FullOnly,   // prepare() returns once the full build is loaded
    QuickOnly,  // the quick build alone (tests compare the tiers)
};

struct EngineOptions {
    int threads = 1;
    // Compiled and CUDA engines: when set, each compile writes its primitive graph, the loop
    // IR after every scheduling pass, the decisions (decisions.txt), the generated C++ and the
    // compiler command and output (CPU) or kernel.cu (CUDA), and explain.txt into this folder.
    std::string debug_dir;
    // Compiled engine: bake every size and parameter into the code (one compile per input
    // size; the `specialized` engine) instead of sharing one program across sizes.
    bool specialize = false;
    // Compiled and CUDA engines: prepare() looks in none of the process's in-memory caches
    // (bound instances, programs, loaded modules), so that it costs what a new process's
    // first prepare does: a compile, or a load from the disk cache. Benchmarks set it to
    // report compile latency.
    bool cold_prepare = false;
    // Compiled engine: the builds prepare() waits for (with debug_dir: FullOnly).
    Tiers tiers = Tiers::Tiered;
    // Compiled engine, `toroid prebuild`: programs are built ahead of time into this folder
    // (runtime/prebuilt.h) for the target's instruction-set level, not into the JIT cache;
    // no quick build.
    std::string prebuild_into;
    // Compiled and CUDA engines: the most ops a pipeline may have, and the most expression
    // nodes its decomposition may build (every tensor's distinct nodes, summed); past either
    // prepare() fails at once with a toroid::Error instead of working for hours. 0: the
    // default, $TOROID_MAX_OPS or 100000 ops, $TOROID_MAX_GRAPH_NODES or 200000 nodes.
    std::size_t max_ops = 0;
    std::size_t max_graph_nodes = 0;
};

// What preparing cost, for `--stats`.
struct PrepareStats {
    int compiled = 0, disk_hits = 0, memory_hits = 0;
    int prebuilt_hits = 0;  // programs loaded from a prebuilt folder (runtime/prebuilt.h)
    double prepare_seconds = 0;
    double compile_seconds = 0;  // of prepare_seconds, the time spent in the C++ compiler
    // The prepared pipeline runs a quick build; the full build compiles in the background
    // (PreparedPipeline::wait_full).
    bool quick = false;
};

// Process-wide counters of the compiling engines' caches since the process started
// (toroid_cache_stats): how often a prepare found its bound instance, how often the
// compiler ran. A pipeline run on many sizes of one structure compiles once and binds
// once per size.
struct CacheStats {
    std::int64_t prepares = 0;     // prepare() calls of the compiled and CUDA engines
    std::int64_t compiles = 0;     // compiler runs (C++ or NVRTC) that produced a module, background ones included
    std::int64_t disk_hits = 0;    // modules loaded from the on-disk cache
    std::int64_t memory_hits = 0;  // prepares answered from memory: a bound instance or a program
    std::int64_t binds = 0;        // instances bound: a graph decomposed and bound to its program
    std::int64_t prebuilt_hits = 0;  // programs loaded from a prebuilt folder (built ahead of time)
    std::int64_t background_compiles = 0;  // of `compiles`, the full builds compiled in the background
};
CacheStats cache_stats();
// Adds `delta` to the process-wide counters (the engines call it once per prepare).
void count_cache(const CacheStats& delta);

class PreparedPipeline {
public:
    virtual ~PreparedPipeline() = default;
    // Runs on `in` (whose spec must equal the one prepared for) and returns a new tensor.
    virtual Tensor run(const Tensor& in) = 0;
    // Runs on `in` and writes the result into `out` (caller memory of the result's dtype
    // and shape, any non-overlapping strides). The compiled engine writes `out` directly
    // when its strides are the ones it schedules for; otherwise it copies.
    virtual void run_into(const Tensor& in, const Tensor& out) {
        Tensor r = run(in);
        Tensor(out).copy_from(r);
    }
    // A summary of what runs: for the compiled engine, first line "N kernels" (or
    // "1 kernel"), then per kernel its loop nest, vector and parallel axes, bytes read
    // and written and FLOPs.
    virtual std::string explain() const = 0;
    virtual PrepareStats stats() const { return {}; }
    // Waits until the code that runs is final: the full build loaded where prepare returned
    // with a quick one. Throws toroid::Error when the full build failed (the quick build
    // keeps running).
    virtual void wait_full() const {}
};

class Engine {
public:
    virtual ~Engine() = default;
    virtual std::string_view name() const = 0;
    virtual std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) = 0;
};

// One image of a batch: its input (any size, dtype and strides), where its result goes
// (caller memory of the result's dtype and shape, any non-overlapping strides; a view of a
// stacked tensor, say), and what went wrong with it, if anything.
struct BatchItem {
    Tensor input;
    Tensor output;
    bool ok = false;
    std::string error;  // one line when !ok
};

// Runs `p` on every item: inputs of different sizes share the compiled programs of their
// structure (one per structure, not per size). Items are prepared first, then run in one
// parallel loop over the items on options.threads workers, each item on one thread. A
// failing item gets its message and is skipped; the others go on.
void run_batch(const Pipeline& p, std::vector<BatchItem>& items, std::string_view engine, const EngineOptions& options);
// The same with an engine the caller keeps (made with threads = 1: each item runs on one
// thread) and `workers` threads.
void run_batch(const Pipeline& p, std::vector<BatchItem>& items, Engine& engine, int workers);
// The same with a pipeline and an engine per item (items[i] runs pipelines[i] through
// engines[i]): a random transform's draws differ per image, and pipelines of one structure
// still share compiled programs (the engines' caches find them; only values bind). Items
// with the same pipeline, engine and input spec share one prepared pipeline.
void run_batch(std::span<const Pipeline* const> pipelines, std::span<Engine* const> engines,
               std::vector<BatchItem>& items, int workers);

// An engine that keeps what `inner` prepares, by input spec, so that a front running one
// pipeline again and again (a C API pipeline handle's batches and files) finds its prepared
// pipeline by the spec's values instead of the engine building its cache key (the
// pipeline's canonical JSON) on every prepare. It serves ONE pipeline: use a new one (or
// clear()) when the pipeline changes. Thread-safe.
std::unique_ptr<Engine> cache_by_spec(std::unique_ptr<Engine> inner);

// Engines by name ("reference", "compiled"); throws toroid::Error for unknown names.
std::unique_ptr<Engine> make_engine(std::string_view name, const EngineOptions& options);
std::vector<std::string> engine_names();

}  // namespace toroid
