// Engine registry and the reference engine's adapter to the Engine interface.
#include "engine/engine.h"

#include "core/error.h"
#include "engine/compiled.h"
#include "reference/reference.h"

namespace toroid {
namespace {

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

std::vector<std::string> engine_names() { return {"reference", "compiled", "specialized"}; }

std::unique_ptr<Engine> make_engine(std::string_view name, const EngineOptions& options) {
    if (options.threads < 1) fail("--threads must be at least 1 (got {})", options.threads);
    if (name == "reference") return std::make_unique<ReferenceEngine>(options);
    if (name == "compiled") return make_compiled_engine(options);
    if (name == "specialized") {
        EngineOptions o = options;
        o.specialize = true;
        return make_compiled_engine(o);
    }
    fail("unknown engine '{}' (available: reference, compiled, specialized)", name);
}

}  // namespace toroid
