// Engine registry and the reference engine's adapter to the Engine interface.
#include "engine/engine.h"

#include "core/error.h"
#include "engine/compiled.h"
#include "engine/cuda_engine.h"
#include "core/parallel.h"
#include "reference/reference.h"
#include "runtime/jit.h"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <tuple>

namespace toroid {
namespace {

// The counters of cache_stats(): relaxed atomics, added to once per prepare.
struct CacheCounters {
    std::atomic<std::int64_t> prepares{0}, compiles{0}, disk_hits{0}, memory_hits{0}, binds{0}, prebuilt_hits{0};
};

CacheCounters& counters() {
    static CacheCounters c;
    return c;
}

class ReferencePrepared final : public PreparedPipeline {
public:
    ReferencePrepared(Pipeline p, TensorSpec spec, int threads)
        : pipeline_(std::move(p)), spec_(spec), threads_(threads) {}
    Tensor run(const Tensor& in) override {
        if (in.dtype() != spec_.dtype || in.shape() != spec_.shape)
            fail("input does not match the spec the pipeline was prepared for");
        return reference::run(pipeline_, in, threads_);
    }
    std::string explain() const override {
        return "reference engine: each op runs on its own, no compiled kernels\n";
    }

private:
    Pipeline pipeline_;
    TensorSpec spec_;
    int threads_;
};

class ReferenceEngine final : public Engine {
public:
    explicit ReferenceEngine(EngineOptions o) : options_(o) {}
    std::string_view name() const override { return "reference"; }
    std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) override {
        infer_shape(p, ShapeInfo{in.dtype, in.shape});  // validate before any run
        return std::make_unique<ReferencePrepared>(p, in, options_.threads);
    }

private:
    EngineOptions options_;
};

}  // namespace

CacheStats cache_stats() {
    const CacheCounters& c = counters();
    CacheStats s;
    s.prepares = c.prepares.load(std::memory_order_relaxed);
    s.compiles = c.compiles.load(std::memory_order_relaxed);
    s.disk_hits = c.disk_hits.load(std::memory_order_relaxed);
    s.memory_hits = c.memory_hits.load(std::memory_order_relaxed);
    s.binds = c.binds.load(std::memory_order_relaxed);
    s.prebuilt_hits = c.prebuilt_hits.load(std::memory_order_relaxed);
    // The prepares count their own compiles; the JIT counts the background ones.
    s.background_compiles = background_compiles();
    s.compiles += s.background_compiles;
    return s;
}

void count_cache(const CacheStats& d) {
    CacheCounters& c = counters();
    c.prepares.fetch_add(d.prepares, std::memory_order_relaxed);
    c.compiles.fetch_add(d.compiles, std::memory_order_relaxed);
    c.disk_hits.fetch_add(d.disk_hits, std::memory_order_relaxed);
    c.memory_hits.fetch_add(d.memory_hits, std::memory_order_relaxed);
    c.binds.fetch_add(d.binds, std::memory_order_relaxed);
    c.prebuilt_hits.fetch_add(d.prebuilt_hits, std::memory_order_relaxed);
}

namespace {

// A prepared pipeline shared by several holders (SpecCachedEngine's answers).
class SharedPrepared final : public PreparedPipeline {
public:
    explicit SharedPrepared(std::shared_ptr<PreparedPipeline> p) : p_(std::move(p)) {}
    Tensor run(const Tensor& in) override { return p_->run(in); }
    void run_into(const Tensor& in, const Tensor& out) override { p_->run_into(in, out); }
    std::string explain() const override { return p_->explain(); }
    PrepareStats stats() const override { return p_->stats(); }

private:
    std::shared_ptr<PreparedPipeline> p_;
};

class SpecCachedEngine final : public Engine {
public:
    explicit SpecCachedEngine(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}
    std::string_view name() const override { return inner_->name(); }
    std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) override {
        const SpecKey key{in.dtype, in.shape, in.strides};
        {
            std::lock_guard lock(mutex_);
            const auto it = prepared_.find(key);
            if (it != prepared_.end()) return std::make_unique<SharedPrepared>(it->second);
        }
        std::shared_ptr<PreparedPipeline> made = inner_->prepare(p, in);
        std::lock_guard lock(mutex_);
        if (prepared_.size() >= kMaxSpecs) prepared_.clear();
        prepared_.emplace(key, made);
        return std::make_unique<SharedPrepared>(std::move(made));
    }

private:
    using SpecKey = std::tuple<DType, Dims, Dims>;
    static constexpr std::size_t kMaxSpecs = 256;
    std::unique_ptr<Engine> inner_;
    std::mutex mutex_;
    std::map<SpecKey, std::shared_ptr<PreparedPipeline>> prepared_;
};

}  // namespace

std::unique_ptr<Engine> cache_by_spec(std::unique_ptr<Engine> inner) {
    return std::make_unique<SpecCachedEngine>(std::move(inner));
}

void run_batch(const Pipeline& p, std::vector<BatchItem>& items, std::string_view engine,
               const EngineOptions& options) {
    EngineOptions one = options;
    one.threads = 1;
    auto e = make_engine(engine, one);
    run_batch(p, items, *e, options.threads);
}

void run_batch(const Pipeline& p, std::vector<BatchItem>& items, Engine& engine, int threads) {
    const std::vector<const Pipeline*> pipelines(items.size(), &p);
    const std::vector<Engine*> engines(items.size(), &engine);
    run_batch(pipelines, engines, items, threads);
}

void run_batch(std::span<const Pipeline* const> pipelines, std::span<Engine* const> engines,
               std::vector<BatchItem>& items, int threads) {
    if (pipelines.size() != items.size() || engines.size() != items.size())
        fail("internal: run_batch has {} pipelines and {} engines for {} items", pipelines.size(), engines.size(),
             items.size());
    // Prepared once per pipeline, engine and input spec (a compile only for a new
    // structure), found by the spec's values (no key text printed per image). The distinct
    // specs are prepared on the batch's threads: with a pipeline per image (each its own
    // random draws), binding is most of a small image's time. Threads that need a structure
    // another one is compiling wait for it (driver::ProgramCache::artifact).
    using SpecKey = std::tuple<const Pipeline*, Engine*, DType, Dims, Dims>;
    std::vector<std::optional<SpecKey>> keys(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        const TensorSpec s = items[i].input.spec();
        keys[i] = SpecKey{pipelines[i], engines[i], s.dtype, s.shape, s.strides};
    }
    const auto made = parallel_once_per_key(keys, threads, [&](std::size_t i) {
        return std::shared_ptr<PreparedPipeline>(engines[i]->prepare(*pipelines[i], items[i].input.spec()));
    });
    std::vector<std::shared_ptr<PreparedPipeline>> prepared(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        BatchItem& it = items[i];
        const Pipeline& p = *pipelines[i];
        try {
            if (!made[i].value) fail("{}", made[i].error);
            const TensorSpec s = it.input.spec();
            const ShapeInfo out = infer_shape(p, ShapeInfo{s.dtype, s.shape});
            if (it.output.dtype() != out.dtype || it.output.shape() != out.shape)
                fail("output is {} ({}, {}, {}, {}), the result is {} ({}, {}, {}, {})", dtype_name(it.output.dtype()),
                     it.output.shape()[0], it.output.shape()[1], it.output.shape()[2], it.output.shape()[3],
                     dtype_name(out.dtype), out.shape[0], out.shape[1], out.shape[2], out.shape[3]);
            prepared[i] = made[i].value;
        } catch (const Error& err) {
            it.error = err.what();
        }
    }
    // One loop over the items; each worker takes the next item (sizes differ).
    parallel_each(items.size(), threads, [&](std::size_t i) {
        if (!prepared[i]) return;
        try {
            prepared[i]->run_into(items[i].input, items[i].output);
            items[i].ok = true;
        } catch (const std::exception& err) {
            items[i].error = err.what();
        }
    });
}

std::vector<std::string> engine_names() { return {"reference", "compiled", "specialized", "cuda"}; }

std::unique_ptr<Engine> make_engine(std::string_view name, const EngineOptions& options) {
    if (options.threads < 1) fail("--threads must be at least 1 (got {})", options.threads);
    if (name == "reference") return std::make_unique<ReferenceEngine>(options);
    if (name == "compiled") return make_compiled_engine(options);
    if (name == "specialized") {
        EngineOptions o = options;
        o.specialize = true;
        return make_compiled_engine(o);
    }
    if (name == "cuda") return make_cuda_engine(options);
    fail("unknown engine '{}' (available: reference, compiled, specialized, cuda)", name);
}

}  // namespace toroid
