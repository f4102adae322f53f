// What the compiling engines (CPU and CUDA) share: the cache keys, the first steps of the
// driver — decompose the pipeline for one input and name the structure the compiled code
// depends on — and the process-wide cache of programs (by structure) and of bound instances
// (by pipeline and input spec). Internal to engine/.
#pragma once

#include "core/tensor.h"
#include "ir/graph.h"
#include "ir/loop.h"
#include "ops/ops.h"
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

}  // namespace toroid::driver
