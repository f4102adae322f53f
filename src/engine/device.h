// The devices prepared pipelines run on, behind one interface. The C API (and through it
// Python) prepares a function, runs it, and runs batches on any device without knowing
// which: a back end for a new kind of device implements Device (prepare, run a batch, the
// state a pipeline keeps between batches) and adds itself to devices() in device.cpp; the
// fronts do not change. The CPU device runs the engines of engine.h; the CUDA one lives in
// cuda_engine.cpp.
#pragma once

#include "core/error.h"
#include "core/tensor.h"
#include "engine/engine.h"
#include "ops/ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace toroid {

enum class DeviceKind : std::uint8_t { Cpu, Cuda };
inline constexpr std::size_t kDeviceKinds = 2;

// A device that cannot serve the call (no driver, no such device, an engine it does not
// have): nothing in the caller's data can fix it (the C API answers "unsupported").
class DeviceUnavailable : public Error {
public:
    using Error::Error;
};

// A pipeline prepared for one input spec on one device; it runs on that device's memory.
class DeviceFunction {
public:
    virtual ~DeviceFunction() = default;
    // `in` holds an input of the prepared spec; `out` receives the result (its dtype and
    // shape, these strides in elements, non-overlapping, output_strides_supported). A device
    // with streams enqueues on `stream` (its queue; nullptr: its default one) and returns
    // without waiting; the CPU runs before returning (its stream is nullptr).
    virtual void run_device(const void* in, void* out, const Dims& out_strides, void* stream) = 0;
    virtual bool output_strides_supported(const Dims& out_strides) const = 0;
    // As PreparedPipeline::explain.
    virtual std::string explain() const = 0;
};

// What a pipeline keeps on one device between calls (its prepared instances by input spec,
// so that a repeated size is found by its values). Dropped when the pipeline changes.
class DeviceState {
public:
    virtual ~DeviceState() = default;
};

// One pipeline of a batch call and its state on the batch's device.
struct DeviceBatchPipeline {
    const Pipeline* pipeline = nullptr;
    DeviceState* state = nullptr;
};

// One image of a batch on a device: device memory of its input (any spec) and of its result
// (the result's dtype and shape, any strides the device supports; a view of a stacked
// tensor works), checked by the caller to be valid, non-overlapping memory. `ok` and
// `error` (one line) say how it went.
struct DeviceBatchItem {
    std::size_t pipeline = 0;  // index into the call's pipelines
    const void* input = nullptr;
    TensorSpec input_spec;
    void* output = nullptr;
    TensorSpec output_spec;
    bool ok = false;
    std::string error;
};

class Device {
public:
    virtual ~Device() = default;
    virtual DeviceKind kind() const = 0;
    virtual std::string_view name() const = 0;  // "cpu", "cuda": messages
    // Runs are enqueued on streams of the device (batches of one call: one device index).
    virtual bool has_streams() const = 0;
    // Throws DeviceUnavailable when device `index` cannot run (no driver, no such device) or
    // `engine` (an engine name; nullptr: the default) is not one it runs.
    virtual void check(int index, const char* engine) const = 0;
    // `p` prepared for inputs of `in` on device `index` (compiled once per structure, bound
    // per size).
    virtual std::unique_ptr<DeviceFunction> prepare(const Pipeline& p, const TensorSpec& in, const char* engine,
                                                    const EngineOptions& options, int index) const = 0;
    virtual std::unique_ptr<DeviceState> new_state() const = 0;
    // Runs every item (each prepared once per pipeline and spec, found in the pipelines'
    // states when seen before) on device `index` with `threads` host threads (0: every
    // core); enqueued on `stream` where the device has streams. A failing item gets its
    // message; the others go on.
    virtual void run_batch(std::span<const DeviceBatchPipeline> pipelines, std::span<DeviceBatchItem> items,
                           const char* engine, int threads, int index, void* stream) const = 0;
};

const Device& device(DeviceKind kind);

// The engine `name` (nullptr: compiled) at `threads` of a pipeline's CPU state (made by the
// CPU device's new_state): files of a pipeline share it with its CPU batches.
std::shared_ptr<Engine> cpu_engine(DeviceState& cpu_state, const char* name, int threads);

// The CUDA device (cuda_engine.cpp).
const Device& cuda_device();

}  // namespace toroid
