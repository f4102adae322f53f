// The device table, and the CPU device: the engines of engine.h on host memory.
#include "engine/device.h"

#include "core/parallel.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace toroid {

namespace {

// A function on the CPU: an engine's prepared pipeline, run on borrowed host memory.
class CpuFunction : public DeviceFunction {
public:
    CpuFunction(std::unique_ptr<Engine> engine, const Pipeline& p, const TensorSpec& in)
        : engine_(std::move(engine)), prepared_(engine_->prepare(p, in)), in_(in),
          out_(infer_shape(p, ShapeInfo{in.dtype, in.shape})) {}

    void run_device(const void* in, void* out, const Dims& out_strides, void*) override {
        prepared_->run_into(Tensor::borrow(const_cast<void*>(in), in_.dtype, in_.shape, in_.strides),
                            Tensor::borrow(out, out_.dtype, out_.shape, out_strides));
    }
    bool output_strides_supported(const Dims&) const override { return true; }  // copies where it must
    std::string explain() const override { return prepared_->explain(); }

private:
    std::unique_ptr<Engine> engine_;
    std::unique_ptr<PreparedPipeline> prepared_;
    TensorSpec in_;
    ShapeInfo out_;
};

// A pipeline's engines on the CPU, by (engine name, threads), each keeping what it prepared
// by input spec (cache_by_spec): a repeated batch or file of a seen size finds its prepared
// pipeline without the engine printing its cache key.
class CpuState : public DeviceState {
public:
    std::shared_ptr<Engine> engine(const char* name, int threads) {
        const std::string n = name ? name : "compiled";
        std::lock_guard lock(mutex_);
        auto& e = engines_[{n, threads}];
        if (!e) {
            EngineOptions eo;
            eo.threads = threads;
            e = cache_by_spec(make_engine(n, eo));
        }
        return e;
    }

private:
    std::mutex mutex_;
    std::map<std::pair<std::string, int>, std::shared_ptr<Engine>> engines_;
};

class CpuDevice : public Device {
public:
    DeviceKind kind() const override { return DeviceKind::Cpu; }
    std::string_view name() const override { return "cpu"; }
    bool has_streams() const override { return false; }
    void check(int, const char*) const override {}  // make_engine names unknown engines
    std::unique_ptr<DeviceFunction> prepare(const Pipeline& p, const TensorSpec& in, const char* engine,
                                            const EngineOptions& options, int) const override {
        return std::make_unique<CpuFunction>(make_engine(engine ? engine : "compiled", options), p, in);
    }
    std::unique_ptr<DeviceState> new_state() const override { return std::make_unique<CpuState>(); }

    void run_batch(std::span<const DeviceBatchPipeline> pipelines, std::span<DeviceBatchItem> items, const char* engine,
                   int threads, int, void*) const override {
        // Each item runs on one thread; each pipeline's engine is its state's (threads 1),
        // so sizes seen in its earlier batches are found by their spec, and pipelines of one
        // structure share compiled programs.
        std::vector<std::shared_ptr<Engine>> engines(pipelines.size());
        std::vector<const Pipeline*> run_pipelines;
        std::vector<Engine*> run_engines;
        std::vector<BatchItem> run_items(items.size());
        for (std::size_t k = 0; k < items.size(); ++k) {
            const DeviceBatchItem& it = items[k];
            std::shared_ptr<Engine>& e = engines[it.pipeline];
            if (!e) e = static_cast<CpuState*>(pipelines[it.pipeline].state)->engine(engine, 1);
            run_pipelines.push_back(pipelines[it.pipeline].pipeline);
            run_engines.push_back(e.get());
            const TensorSpec& is = it.input_spec;
            const TensorSpec& os = it.output_spec;
            run_items[k].input = Tensor::borrow(const_cast<void*>(it.input), is.dtype, is.shape, is.strides);
            run_items[k].output = Tensor::borrow(it.output, os.dtype, os.shape, os.strides);
        }
        toroid::run_batch(run_pipelines, run_engines, run_items, threads == 0 ? default_threads() : threads);
        for (std::size_t k = 0; k < items.size(); ++k) {
            items[k].ok = run_items[k].ok;
            items[k].error = std::move(run_items[k].error);
        }
    }
};

}  // namespace

std::shared_ptr<Engine> cpu_engine(DeviceState& cpu_state, const char* name, int threads) {
    return static_cast<CpuState&>(cpu_state).engine(name, threads);
}

const Device& device(DeviceKind kind) {
    static const CpuDevice cpu;
    static const std::array<const Device*, kDeviceKinds> table{&cpu, &cuda_device()};
    const Device* d = table[static_cast<std::size_t>(kind)];
    if (d->kind() != kind) fail("internal: the device table is out of order");
    return *d;
}

}  // namespace toroid
