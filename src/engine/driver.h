// What the compiling engines (CPU and CUDA) share: the cache keys, the first steps of the
// driver — decompose the pipeline for one input and name the structure the compiled code
// depends on — and the process-wide cache of programs (by structure) and of bound instances
// (by pipeline and input spec). Internal to engine/.
#pragma once

#include "core/interrupt.h"
#include "core/tensor.h"
#include "engine/engine.h"
#include "ir/graph.h"
#include "ir/loop.h"
#include "ops/ops.h"
#include "schedule/bind.h"
#include "schedule/schedule.h"

#include <filesystem>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace toroid::driver {

std::string spec_key(const TensorSpec& s);
// The pipeline (its canonical JSON, written from the structs, and a digest of the data its
// ops carry: grids) and the input spec: one bound instance.
std::string pipeline_key(const Pipeline& p, const TensorSpec& in);
void write_text(const std::filesystem::path& path, const std::string& text);

// A compile's debug dumps, as every back end writes them into debug_dir: the loop IR after
// each scheduling pass (N_loop_ir_after_PASS.txt) and each kernel's decisions
// (decisions.txt). The back end adds its source and compiler files; the engine adds
// explain.txt once the program is bound.
void write_schedule_dumps(const std::filesystem::path& debug_dir, const std::vector<schedule::PassDump>& dumps,
                          const ir::Program& program);

struct Decomposed {
    ir::Graph graph;
    ir::IndexWidth width = ir::IndexWidth::I64;
    std::string structure;  // the target, the index width and the graph's structure
};

// The limits on one prepare's work (EngineOptions::max_ops and max_graph_nodes; 0: the
// default, from $TOROID_MAX_OPS and $TOROID_MAX_GRAPH_NODES where set).
struct Limits {
    std::size_t max_ops = 0;
    std::size_t max_graph_nodes = 0;
};
inline constexpr std::size_t kDefaultMaxOps = 100000;
inline constexpr std::size_t kDefaultMaxGraphNodes = 200000;
// The limits that apply: the option where set, else the environment's, else the default.
// A malformed environment value is a toroid::Error.
Limits effective_limits(const Limits& options);

// decompose(p, in), specialized (sizes baked in) when asked, with the index width its values
// allow and the key of the code it needs on `target`. `shapes` is infer_shapes(p, in), which
// the engine's prepare computed once (checking the pipeline before anything else). Writes
// pipeline.json and the primitive graph into debug_dir when set. A pipeline of more ops than
// the limit is refused before any work, a graph of more nodes once decomposed (toroid::Error).
Decomposed decompose_for(const Pipeline& p, const TensorSpec& in, std::span<const ShapeInfo> shapes, bool specialize,
                         const std::string& target, const std::string& debug_dir, const Limits& limits = {});

// The table data of `g` (moved out: the buffers keep their addresses, so a binding's table
// pointers stay valid), for an instance that keeps its tables but not its graph.
std::vector<std::vector<std::uint8_t>> take_tables(ir::Graph& g);

// Programs by structure (few, kept) and bound instances by pipeline and input spec (many:
// the most recently used are kept).
template <typename Artifact, typename Instance>
class ProgramCache {
public:
    std::shared_ptr<const Instance> find_instance(const std::string& key) {
        std::lock_guard lock(mutex_);
        const auto it = instances_.find(key);
        if (it == instances_.end()) return nullptr;
        order_.splice(order_.begin(), order_, it->second.second);
        return it->second.first;
    }
    std::shared_ptr<const Artifact> find_artifact(const std::string& structure) {
        std::lock_guard lock(mutex_);
        const auto it = artifacts_.find(structure);
        return it == artifacts_.end() ? nullptr : it->second;
    }
    // The program of `structure`: the cached one, else make() (a compile). Threads asking
    // for a structure another thread is making wait for its result (or its error) instead
    // of making it again; `made` says whether this call made it. A failed make is not kept:
    // the next call tries again.
    template <typename Make>
    std::shared_ptr<const Artifact> artifact(const std::string& structure, Make&& make, bool& made) {
        made = false;
        std::unique_lock lock(mutex_);
        if (const auto it = artifacts_.find(structure); it != artifacts_.end()) return it->second;
        if (const auto it = making_.find(structure); it != making_.end()) {
            const auto pending = it->second;
            lock.unlock();
            return pending.get();
        }
        std::promise<std::shared_ptr<const Artifact>> promise;
        making_.emplace(structure, promise.get_future().share());
        lock.unlock();
        try {
            std::shared_ptr<const Artifact> art = make();
            lock.lock();
            artifacts_.emplace(structure, art);
            making_.erase(structure);
            lock.unlock();
            promise.set_value(art);
            made = true;
            return art;
        } catch (...) {
            lock.lock();
            making_.erase(structure);
            lock.unlock();
            promise.set_exception(std::current_exception());
            throw;
        }
    }
    void add(const std::string& key, const std::string& structure, std::shared_ptr<const Artifact> art,
             std::shared_ptr<const Instance> inst) {
        std::lock_guard lock(mutex_);
        artifacts_.emplace(structure, std::move(art));
        if (instances_.count(key)) return;
        order_.push_front(key);
        instances_[key] = {std::move(inst), order_.begin()};
        while (instances_.size() > kMaxInstances) {
            instances_.erase(order_.back());
            order_.pop_back();
        }
    }

private:
    static constexpr std::size_t kMaxInstances = 512;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const Artifact>> artifacts_;
    std::map<std::string, std::shared_future<std::shared_ptr<const Artifact>>> making_;  // being made
    std::list<std::string> order_;  // most recently used first
    std::map<std::string, std::pair<std::shared_ptr<const Instance>, std::list<std::string>::iterator>> instances_;
};

// What keeps bound instances and programs apart beyond the pipeline, the input spec and the
// graph's structure.
struct PrepareKeys {
    std::string instance;   // before the pipeline key: the tier, the device, options that change the instance
    std::string structure;  // before the graph's structure: what changes the program's code beyond the target
};

// One prepare, as every compiling back end makes it: the bound instance of (pipeline, input
// spec) from `cache`; else decompose for the input, find or compile the program of the
// graph's structure (once per structure: threads asking for one being compiled wait for
// it), bind the graph's values to it and let the back end finish the instance. Counts the
// caches (count_cache) and fills `stats`' cache fields; with EngineOptions::debug_dir writes
// the dumps (pipeline, graph, passes, decisions, explain.txt). Debug dumps and cold prepares
// look in no in-memory cache. `shapes` is infer_shapes(p, in). `Backend` gives:
//   using Artifact, Instance;
//   std::string target_name() const;
//   std::shared_ptr<const Artifact> compile(const ir::Graph&, ir::IndexWidth, PrepareStats&);
//   std::shared_ptr<const Instance> instantiate(std::shared_ptr<const Artifact>, ir::Graph&&, schedule::Binding&&);
//   std::string explain(const std::shared_ptr<const Instance>&, const PrepareStats&);
template <typename Backend>
std::shared_ptr<const typename Backend::Instance> prepare(
    ProgramCache<typename Backend::Artifact, typename Backend::Instance>& cache, Backend& backend, const Pipeline& p,
    const TensorSpec& in, std::span<const ShapeInfo> shapes, const EngineOptions& options, const PrepareKeys& keys,
    PrepareStats& stats) {
    const InterruptScope interruptible;  // toroid_interrupt() stops this prepare
    const std::string key = keys.instance + (options.specialize ? "specialized\n" : "") + pipeline_key(p, in);
    const bool debug = !options.debug_dir.empty();
    const bool fresh = debug || options.cold_prepare;
    CacheStats counted;
    counted.prepares = 1;
    if (auto inst = fresh ? nullptr : cache.find_instance(key)) {
        stats.memory_hits = 1;
        counted.memory_hits = 1;
        count_cache(counted);
        return inst;
    }
    Decomposed d = decompose_for(p, in, shapes, options.specialize, backend.target_name(), options.debug_dir,
                                 {options.max_ops, options.max_graph_nodes});
    const std::string structure = keys.structure + d.structure;
    auto compile = [&] { return backend.compile(d.graph, d.width, stats); };
    std::shared_ptr<const typename Backend::Artifact> art;
    if (fresh) {
        art = compile();
    } else {
        bool built = false;
        art = cache.artifact(structure, compile, built);
        if (!built) stats.memory_hits = 1;
    }
    schedule::Binding binding = schedule::bind(art->program, d.graph);
    std::shared_ptr<const typename Backend::Instance> inst = backend.instantiate(art, std::move(d.graph), std::move(binding));
    counted.binds = 1;
    counted.compiles = stats.compiled;
    counted.disk_hits = stats.disk_hits;
    counted.memory_hits = stats.memory_hits;
    counted.prebuilt_hits = stats.prebuilt_hits;
    cache.add(key, structure, art, inst);
    if (debug) write_text(std::filesystem::path(options.debug_dir) / "explain.txt", backend.explain(inst, stats));
    count_cache(counted);
    return inst;
}

}  // namespace toroid::driver
