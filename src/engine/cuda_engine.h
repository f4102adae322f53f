// The CUDA engine: the same decompose -> schedule -> generate -> load driver as the
// compiled engine, for a GPU target (schedule/gpu_axes.cpp, codegen/cuda.h, NVRTC through
// runtime/cuda). A CudaPipeline runs on device memory on a caller's stream (C API, Python);
// the "cuda" Engine wraps it for host tensors (copies in and out: CLI, tests).
#pragma once

#include "engine/device.h"
#include "engine/engine.h"

#include <memory>
#include <string>
#include <vector>

namespace toroid {

// A function on a CUDA device (the CUDA device's DeviceFunction). run_device enqueues on
// `stream` (a CUstream; nullptr: the legacy default stream) and returns without waiting;
// the output's dense dim must be the one the program writes densely
// (output_strides_supported).
class CudaPipeline : public DeviceFunction {
public:
    virtual ShapeInfo output() const = 0;
    virtual Layout output_layout() const = 0;
    virtual int device() const = 0;
    virtual PrepareStats stats() const = 0;
};

// Prepares `p` for inputs of spec `in` on CUDA device `device` (compiles once per
// structure, binds per size). Throws toroid::Error naming what is missing (no driver, no
// GPU, no NVRTC).
std::unique_ptr<CudaPipeline> prepare_cuda(const Pipeline& p, const TensorSpec& in, const EngineOptions& options,
                                           int device = 0);

// One image of a CUDA batch: its prepared pipeline (any size), device memory of its input
// (the prepared spec) and of its result (the result's dtype and shape, these strides: the
// dense dim the program writes densely, output_strides_supported; a view of a stacked
// tensor works). `ok` and `error` (one line) say how it went.
struct CudaBatchRun {
    const CudaPipeline* pipeline = nullptr;
    const void* input = nullptr;
    void* output = nullptr;
    Dims output_strides{};
    bool ok = false;
    std::string error;
};

// Enqueues every run on `stream` (a CUstream of their device; nullptr: the legacy default
// stream) and returns without waiting. Runs whose pipelines share the compiled program and
// its launch plan (which pairs run fused) form a group: per kernel, one launch covers the
// whole group (codegen::generate_cuda_batch; the batched entries compile on a program's
// first batch). Groups run one after another in the order of their first run. A run that
// cannot go (its output strides) is marked and skipped; the others go on.
void run_device_batch(std::vector<CudaBatchRun>& runs, void* stream);

// A batch of images of any sizes on CUDA device `device`: each input's spec is prepared
// once per call (prepare_cuda), then run_device_batch. A bad image (an impossible size,
// an output of the wrong shape) gets ok = false and its message; the others run.
struct CudaBatchItem {
    const void* input = nullptr;
    TensorSpec input_spec;
    void* output = nullptr;
    TensorSpec output_spec;  // the result's dtype and shape; strides as for CudaBatchRun
    bool ok = false;
    std::string error;
};
void run_batch_cuda(const Pipeline& p, std::vector<CudaBatchItem>& items, const EngineOptions& options, int device,
                    void* stream);

// The generated CUDA source for (p, in), for architecture `arch` (e.g. "sm_90"), without a
// GPU or NVRTC: debug dumps and the SDK-free source check.
std::string cuda_source(const Pipeline& p, const TensorSpec& in, const std::string& arch);
// The same program's batched entries (codegen::generate_cuda_batch).
std::string cuda_batch_source(const Pipeline& p, const TensorSpec& in, const std::string& arch);

// The "cuda" engine for host tensors: each run copies the input to the device, runs, and
// copies the result back.
std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& options);

}  // namespace toroid
