// The C API of include/toroid/toroid.h over the engines: handles own a Pipeline or a
// PreparedPipeline, every entry point turns exceptions into a status code and a
// thread-local message, and toroid_run copies the engine's result into caller memory.
#include "toroid/toroid.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "engine/cuda_engine.h"
#include "engine/device.h"
#include "runtime/cuda/cuda.h"
#include "runtime/cuda/jpeg_decode.h"
#include "runtime/jit.h"
#include "engine/engine.h"
#include "engine/files.h"
#include "ops/pipeline_json.h"
#include "ops/read_window.h"

#include <dlpack/dlpack.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

struct toroid_image {
    toroid::Tensor tensor;
};

struct toroid_pipeline {
    toroid::Pipeline pipeline;
    std::vector<bool> grid_missing;  // per op: a grid_sample still waiting for its grid
    std::string json;                // cache of toroid_pipeline_to_json
    // What this pipeline's batches and files keep on each device between calls (prepared
    // pipelines by input spec: a repeated size is found by its values, without a cache key
    // printed). Made on first use; dropped by set_grid.
    std::mutex states_mutex;
    std::array<std::shared_ptr<toroid::DeviceState>, toroid::kDeviceKinds> states;

    std::shared_ptr<toroid::DeviceState> state(toroid::DeviceKind kind) {
        std::lock_guard lock(states_mutex);
        auto& s = states[static_cast<std::size_t>(kind)];
        if (!s) s = toroid::device(kind).new_state();
        return s;
    }
    // The CPU engine of this pipeline's files (shared with its CPU batches).
    std::shared_ptr<toroid::Engine> engine(const char* name, int threads) {
        return toroid::cpu_engine(*state(toroid::DeviceKind::Cpu), name, threads);
    }
};

struct toroid_function {
    std::unique_ptr<toroid::DeviceFunction> function;  // on its device
    int device = TOROID_CPU;
    int device_index = 0;
    bool streams = false;  // its device runs on streams
    toroid::TensorSpec input;  // canonical 4-D spec compiled for
    int input_ndim = 4;
    toroid::ShapeInfo output;
    toroid::Dims output_strides{};
    // The --explain text, made on first request: a loader compiling a function per image size
    // never asks, and printing it cost as much as the rest of binding the size.
    mutable std::once_flag explain_once;
    mutable std::string explain;
    // The run fast path: the descs as compiled (toroid_function_input_desc and _output_desc)
    // and the bytes each spans, so that a run on exactly these skips every spec check.
    toroid_tensor_desc input_desc{};
    toroid_tensor_desc output_desc{};
    std::int64_t input_bytes = 0, output_bytes = 0;  // 0 for an empty tensor
};

namespace {

using namespace toroid;

// Valid, but not implemented yet (reserved dtypes and devices).
class Unsupported : public Error {
public:
    using Error::Error;
};

// A bad argument found by the C layer (null pointers and the like).
[[noreturn]] void bad(const std::string& message) { throw Error(message); }

thread_local std::string g_last_error;

constexpr const char* kArrayGrid = "<array>";

template <typename F>
toroid_status guard(F&& body) {
    try {
        body();
        return TOROID_OK;
    } catch (const Unsupported& e) {
        g_last_error = e.what();
        return TOROID_ERROR_UNSUPPORTED;
    } catch (const DeviceUnavailable& e) {
        g_last_error = e.what();
        return TOROID_ERROR_UNSUPPORTED;
    } catch (const Error& e) {
        g_last_error = e.what();
        return TOROID_ERROR_INVALID_ARGUMENT;
    } catch (const std::bad_alloc&) {
        g_last_error = "out of memory";
        return TOROID_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        g_last_error = fmt::format("internal error: {}", e.what());
        return TOROID_ERROR_INTERNAL;
    } catch (...) {
        g_last_error = "internal error: unknown exception";
        return TOROID_ERROR_INTERNAL;
    }
}

template <typename T>
void require(const T* p, const char* what) {
    if (p == nullptr) bad(fmt::format("{} must not be NULL", what));
}

DType to_dtype(std::int32_t d) {
    switch (d) {
        case TOROID_UINT8: return DType::UInt8;
        case TOROID_FLOAT32: return DType::Float32;
        case TOROID_UINT16: return DType::UInt16;
        case TOROID_FLOAT16: return DType::Float16;
        case TOROID_BFLOAT16: return DType::BFloat16;
        case TOROID_FLOAT64: throw Unsupported("dtype float64 is not supported yet (use float32)");
        default: bad(fmt::format("unknown dtype value {} (expected a toroid_dtype: {})", d, dtype_list()));
    }
}

std::int32_t from_dtype(DType d) {
    switch (d) {
        case DType::UInt8: return TOROID_UINT8;
        case DType::Float32: return TOROID_FLOAT32;
        case DType::UInt16: return TOROID_UINT16;
        case DType::Float16: return TOROID_FLOAT16;
        case DType::BFloat16: return TOROID_BFLOAT16;
    }
    return TOROID_UINT8;
}

void check_device(const toroid_tensor_desc& d, const char* what) {
    if (d.device != TOROID_CPU && d.device != TOROID_CUDA)
        bad(fmt::format("{} has unknown device value {} (expected TOROID_CPU or TOROID_CUDA)", what, d.device));
    if (d.device == TOROID_CUDA && d.device_index < 0)
        bad(fmt::format("{} has a negative CUDA device index {}", what, d.device_index));
}

// The device behind a desc's device value (the ABI's TOROID_CPU, TOROID_CUDA; checked by
// check_device): below this line the C layer deals with devices through engine/device.h.
const Device& device_of(const toroid_tensor_desc& d) {
    return device(d.device == TOROID_CUDA ? DeviceKind::Cuda : DeviceKind::Cpu);
}

constexpr const char* kStreamless = "a stream is only for CUDA functions";

std::string shape_text(const Dims& s) { return fmt::format("({}, {}, {}, {})", s[0], s[1], s[2], s[3]); }

// The 4-D spec of a desc of rank 2..4: leading dims of size 1 are added. Strides of
// size-1 dims are made canonical (they address nothing), so that equal tensors reached
// through different views get one spec and one compiled kernel.
TensorSpec spec_of(const toroid_tensor_desc& d, const char* what) {
    check_device(d, what);
    TensorSpec s;
    s.dtype = to_dtype(d.dtype);
    if (d.ndim < 2 || d.ndim > 4)
        bad(fmt::format("{} has {} dims; toroid takes 2 (H, W), 3 (C, H, W) or 4 (N, C, H, W)", what, d.ndim));
    const auto lead = static_cast<std::size_t>(4 - d.ndim);
    for (std::size_t i = 0; i < 4; ++i) {
        if (i < lead) {
            s.shape[i] = 1;
            s.strides[i] = 0;
            continue;
        }
        s.shape[i] = d.shape[i - lead];
        s.strides[i] = d.strides[i - lead];
        if (s.shape[i] < 0) bad(fmt::format("{} has a negative size {} in dim {}", what, s.shape[i], i - lead));
        if (s.strides[i] < 0)
            bad(fmt::format("{} has a negative stride {} in dim {}; toroid needs non-negative strides (copy it first)",
                            what, s.strides[i], i - lead));
    }
    if (is_dense(s, Layout::Contiguous)) s.strides = dense_strides(s.shape, Layout::Contiguous);
    else if (is_dense(s, Layout::ChannelsLast)) s.strides = dense_strides(s.shape, Layout::ChannelsLast);
    else
        for (std::size_t i = 0; i < 4; ++i)
            if (s.shape[i] == 1) s.strides[i] = 0;
    return s;
}

// Offset (in elements) of the last element; -1 for an empty tensor.
std::int64_t max_offset(const TensorSpec& s) {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        if (s.shape[i] == 0) return -1;
        off += (s.shape[i] - 1) * s.strides[i];
    }
    return off;
}

// True when no two elements of `s` share an address: with the dims of size > 1 sorted
// by stride, each stride is past the last offset the smaller ones reach.
bool non_overlapping(const TensorSpec& s) {
    std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size)
    for (std::size_t i = 0; i < 4; ++i)
        if (s.shape[i] > 1) dims.emplace_back(s.strides[i], s.shape[i]);
    std::sort(dims.begin(), dims.end());
    std::int64_t reach = 0;
    for (const auto& [stride, size] : dims) {
        if (stride <= reach) return false;
        reach += (size - 1) * stride;
    }
    return true;
}

void check_data(const void* data, const TensorSpec& s, const char* what) {
    if (data == nullptr && s.numel() > 0) bad(fmt::format("{} has a NULL data pointer", what));
}

toroid_tensor_desc desc_of(DType dtype, const Dims& shape, const Dims& strides, int ndim) {
    toroid_tensor_desc d{};
    d.dtype = from_dtype(dtype);
    d.device = TOROID_CPU;
    d.device_index = 0;
    d.ndim = ndim;
    const auto lead = static_cast<std::size_t>(4 - ndim);
    for (std::size_t i = 0; i < static_cast<std::size_t>(ndim); ++i) {
        d.shape[i] = shape[i + lead];
        d.strides[i] = strides[i + lead];
    }
    return d;
}

// Whether two descs name the same tensor layout (dims past ndim are ignored).
bool same_desc(const toroid_tensor_desc& a, const toroid_tensor_desc& b) {
    if (a.dtype != b.dtype || a.device != b.device || a.device_index != b.device_index || a.ndim != b.ndim ||
        a.ndim < 0 || a.ndim > TOROID_MAX_DIMS)
        return false;
    for (int i = 0; i < a.ndim; ++i)
        if (a.shape[i] != b.shape[i] || a.strides[i] != b.strides[i]) return false;
    return true;
}

std::int64_t span_bytes(const TensorSpec& s) {
    const std::int64_t end = max_offset(s);
    return end < 0 ? 0 : (end + 1) * static_cast<std::int64_t>(dtype_size(s.dtype));
}

// A run on memory laid out as compiled: no spec to build or compare, only the pointers to
// check. CUDA functions enqueue on `stream`; CPU functions take none.
void run_compiled_layout(const toroid_function* fn, const void* input, void* output, void* stream = nullptr) {
    if (!fn->streams && stream) bad(kStreamless);
    if (fn->input_bytes > 0 && input == nullptr) bad("input has a NULL data pointer");
    if (fn->output_bytes > 0 && output == nullptr) bad("output has a NULL data pointer");
    if (fn->input_bytes > 0 && fn->output_bytes > 0) {
        const auto* ib = static_cast<const char*>(input);
        const auto* ob = static_cast<const char*>(output);
        if (ib < ob + fn->output_bytes && ob < ib + fn->input_bytes) bad("output memory overlaps the input");
    }
    fn->function->run_device(input, output, fn->output_strides, stream);
}

// Parses the pipeline; grid_sample ops without "grid" are parsed as affine ops with the
// same mode, padding_mode and align_corners fields (so they get the same validation and
// messages) and turned into grid_sample ops waiting for their grid.
toroid_pipeline* parse(const std::string& text, const std::filesystem::path& base_dir, bool allow_paths) {
    auto handle = std::make_unique<toroid_pipeline>();
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    std::set<std::size_t> pending;
    if (doc.is_array()) {
        for (std::size_t i = 0; i < doc.size(); ++i) {
            nlohmann::json& op = doc[i];
            if (!op.is_object()) continue;
            auto name = op.find("op");
            if (name == op.end() || *name != "grid_sample") continue;
            auto grid = op.find("grid");
            if (grid != op.end() && !grid->is_null()) continue;
            for (const char* field : {"theta", "size", "convention", "grid_fma", "sample_fma", "fill"})
                if (op.contains(field)) fail("op {} (grid_sample): unknown field '{}'", i, field);
            op.erase("grid");
            op["op"] = "affine";
            op["theta"] = {{1, 0, 0}, {0, 1, 0}};
            pending.insert(i);
        }
    }
    try {
        // Text that is not JSON gets parse_pipeline's message; a document is read once.
        handle->pipeline = doc.is_discarded() ? parse_pipeline(text, base_dir, allow_paths)
                                              : parse_pipeline_doc(doc, base_dir, allow_paths);
    } catch (const Error& e) {
        std::string msg = e.what();
        for (std::size_t i : pending) {
            std::string prefix = fmt::format("op {} (affine)", i);
            if (msg.rfind(prefix, 0) == 0) msg = fmt::format("op {} (grid_sample)", i) + msg.substr(prefix.size());
        }
        throw Error(msg);
    }
    handle->grid_missing.assign(handle->pipeline.ops.size(), false);
    for (std::size_t i : pending) {
        const auto& a = std::get<AffineOp>(handle->pipeline.ops[i]);
        GridSampleOp g;
        g.grid_path = kArrayGrid;
        g.mode = a.mode;
        g.padding_mode = a.padding_mode;
        g.align_corners = a.align_corners;
        handle->pipeline.ops[i] = std::move(g);
        handle->grid_missing[i] = true;
    }
    return handle.release();
}

}  // namespace

extern "C" {

const char* toroid_last_error(void) { return g_last_error.c_str(); }

const char* toroid_status_name(toroid_status status) {
    switch (status) {
        case TOROID_OK: return "ok";
        case TOROID_ERROR_INVALID_ARGUMENT: return "invalid argument";
        case TOROID_ERROR_UNSUPPORTED: return "unsupported";
        case TOROID_ERROR_OUT_OF_MEMORY: return "out of memory";
        case TOROID_ERROR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char* toroid_version(void) { return TOROID_VERSION; }

int toroid_abi_version(void) { return TOROID_ABI_VERSION; }

toroid_status toroid_pipeline_from_json(const char* json, const char* base_dir, toroid_pipeline** out) {
    return guard([&] {
        require(out, "out");
        *out = nullptr;
        require(json, "json");
        std::filesystem::path dir = base_dir && *base_dir ? std::filesystem::path(base_dir) : std::filesystem::path(".");
        *out = parse(json, dir, false);
    });
}

toroid_status toroid_pipeline_from_json_flags(const char* json, const char* base_dir, uint32_t flags,
                                              toroid_pipeline** out) {
    return guard([&] {
        require(out, "out");
        *out = nullptr;
        require(json, "json");
        if (flags & ~TOROID_ALLOW_PATHS) bad(fmt::format("unknown flags {:#x}", flags & ~TOROID_ALLOW_PATHS));
        std::filesystem::path dir = base_dir && *base_dir ? std::filesystem::path(base_dir) : std::filesystem::path(".");
        *out = parse(json, dir, (flags & TOROID_ALLOW_PATHS) != 0);
    });
}

toroid_status toroid_set_max_image_pixels(int64_t pixels) {
    return guard([&] { io::set_max_image_pixels(pixels); });
}

toroid_status toroid_pipeline_set_grid(toroid_pipeline* pipeline, size_t op_index, const toroid_tensor* grid) {
    return guard([&] {
        require(pipeline, "pipeline");
        require(grid, "grid");
        std::vector<Op>& ops = pipeline->pipeline.ops;
        if (op_index >= ops.size())
            bad(fmt::format("op index {} is out of range (the pipeline has {} ops)", op_index, ops.size()));
        auto* g = std::get_if<GridSampleOp>(&ops[op_index]);
        if (!g)
            bad(fmt::format("op {} ({}) is not a grid_sample op", op_index, op_name(ops[op_index])));
        const toroid_tensor_desc& d = grid->desc;
        check_device(d, "grid");
        DType dt = to_dtype(d.dtype);
        if (dt != DType::Float32) bad(fmt::format("grid must be float32, got {}", dtype_name(dt)));
        if (d.ndim != 3 && d.ndim != 4)
            bad(fmt::format("grid must have shape (N, H, W, 2) or (H, W, 2), got {} dims", d.ndim));
        // Borrowed as a 4-D tensor whose dims are (N, H, W, 2).
        toroid_tensor_desc as_image = d;
        as_image.dtype = TOROID_FLOAT32;
        TensorSpec s = spec_of(as_image, "grid");
        if (s.shape[3] != 2) bad(fmt::format("grid must have a last dim of size 2, got {}", s.shape[3]));
        for (auto n : s.shape)
            if (n == 0) bad("grid has a zero-size dimension");
        check_data(grid->data, s, "grid");
        Tensor view = Tensor::borrow(grid->data, DType::Float32, s.shape, s.strides);
        g->grid = view.to_layout(Layout::Contiguous);
        g->grid_path = kArrayGrid;
        pipeline->grid_missing[op_index] = false;
        pipeline->json.clear();
        std::lock_guard lock(pipeline->states_mutex);
        for (auto& st : pipeline->states) st.reset();  // what they prepared was for the old grid
    });
}

toroid_status toroid_pipeline_num_ops(const toroid_pipeline* pipeline, size_t* out) {
    return guard([&] {
        require(pipeline, "pipeline");
        require(out, "out");
        *out = pipeline->pipeline.ops.size();
    });
}

toroid_status toroid_pipeline_to_json(const toroid_pipeline* pipeline, const char** out) {
    return guard([&] {
        require(pipeline, "pipeline");
        require(out, "out");
        auto* p = const_cast<toroid_pipeline*>(pipeline);
        if (p->json.empty()) p->json = pipeline_to_json(p->pipeline);
        *out = p->json.c_str();
    });
}

void toroid_pipeline_free(toroid_pipeline* pipeline) { delete pipeline; }

void toroid_options_init(toroid_options* options) {
    if (!options) return;
    *options = toroid_options{};
    options->struct_size = sizeof(toroid_options);
    options->threads = 0;
    options->engine = nullptr;
    options->debug_dir = nullptr;
}

toroid_status toroid_compile(const toroid_pipeline* pipeline, const toroid_tensor_desc* input,
                             const toroid_options* options, toroid_function** out) {
    return guard([&] {
        require(out, "out");
        *out = nullptr;
        require(pipeline, "pipeline");
        require(input, "input");
        toroid_options o;
        toroid_options_init(&o);
        if (options) {
            std::size_t size = options->struct_size == 0 ? sizeof(toroid_options) : options->struct_size;
            if (size < offsetof(toroid_options, debug_dir) + sizeof(const char*))
                bad(fmt::format("options.struct_size {} is smaller than any known toroid_options", size));
            o.threads = options->threads;
            o.engine = options->engine;
            o.debug_dir = options->debug_dir;
        }
        for (std::size_t i = 0; i < pipeline->grid_missing.size(); ++i)
            if (pipeline->grid_missing[i])
                bad(fmt::format("op {} (grid_sample): no grid given (set one with toroid_pipeline_set_grid)", i));
        if (o.threads < 0) bad(fmt::format("threads must be at least 0 (0: every core), got {}", o.threads));

        auto fn = std::make_unique<toroid_function>();
        fn->input = spec_of(*input, "input");
        fn->input_ndim = input->ndim;
        EngineOptions eo;
        eo.threads = o.threads == 0 ? default_threads() : o.threads;
        if (o.debug_dir) eo.debug_dir = o.debug_dir;
        fn->output = infer_shape(pipeline->pipeline, ShapeInfo{fn->input.dtype, fn->input.shape});
        fn->output_strides = dense_strides(fn->output.shape, suggested_layout(fn->input));
        fn->device = input->device;
        fn->device_index = input->device_index;
        const Device& dev = device_of(*input);
        fn->streams = dev.has_streams();
        dev.check(input->device_index, o.engine);
        fn->function = dev.prepare(pipeline->pipeline, fn->input, o.engine, eo, input->device_index);
        fn->input_desc = desc_of(fn->input.dtype, fn->input.shape, fn->input.strides, fn->input_ndim);
        fn->output_desc = desc_of(fn->output.dtype, fn->output.shape, fn->output_strides, fn->input_ndim);
        for (toroid_tensor_desc* d : {&fn->input_desc, &fn->output_desc}) {
            d->device = fn->device;
            d->device_index = fn->device_index;
        }
        fn->input_bytes = span_bytes(fn->input);
        fn->output_bytes = span_bytes(TensorSpec{fn->output.dtype, fn->output.shape, fn->output_strides});
        *out = fn.release();
    });
}

toroid_status toroid_function_input_desc(const toroid_function* fn, toroid_tensor_desc* out) {
    return guard([&] {
        require(fn, "fn");
        require(out, "out");
        *out = fn->input_desc;
    });
}

toroid_status toroid_function_output_desc(const toroid_function* fn, toroid_tensor_desc* out) {
    return guard([&] {
        require(fn, "fn");
        require(out, "out");
        *out = fn->output_desc;
    });
}

toroid_status toroid_function_explain(const toroid_function* fn, const char** out) {
    return guard([&] {
        require(fn, "fn");
        require(out, "out");
        std::call_once(fn->explain_once, [&] { fn->explain = fn->function->explain(); });
        *out = fn->explain.c_str();
    });
}

toroid_status toroid_tensor_from_dlpack(const DLManagedTensor* managed, toroid_tensor* out) {
    return guard([&] {
        require(managed, "managed");
        require(out, "out");
        const DLTensor& t = managed->dl_tensor;
        toroid_tensor r{};
        switch (t.device.device_type) {
            case kDLCPU:
            case kDLCUDAHost:  // pinned host memory: the CPU reads it like any other
                r.desc.device = TOROID_CPU;
                r.desc.device_index = 0;
                break;
            case kDLCUDA:
            case kDLCUDAManaged:
                r.desc.device = TOROID_CUDA;
                r.desc.device_index = t.device.device_id;
                break;
            default:
                bad(fmt::format("DLPack tensor on device type {}: toroid takes CPU ({}) and CUDA ({}) memory",
                                static_cast<int>(t.device.device_type), static_cast<int>(kDLCPU),
                                static_cast<int>(kDLCUDA)));
        }
        const DLDataType d = t.dtype;
        if (d.lanes != 1) bad(fmt::format("DLPack dtype with {} lanes: toroid takes one lane per element", d.lanes));
        if (d.code == kDLUInt && d.bits == 8) r.desc.dtype = TOROID_UINT8;
        else if (d.code == kDLUInt && d.bits == 16) r.desc.dtype = TOROID_UINT16;
        else if (d.code == kDLFloat && d.bits == 32) r.desc.dtype = TOROID_FLOAT32;
        else if (d.code == kDLFloat && d.bits == 16) r.desc.dtype = TOROID_FLOAT16;
        else if (d.code == kDLBfloat && d.bits == 16) r.desc.dtype = TOROID_BFLOAT16;
        else if (d.code == kDLFloat && d.bits == 64) r.desc.dtype = TOROID_FLOAT64;
        else
            bad(fmt::format("DLPack dtype (code {}, {} bits) is not one toroid takes (uint8, uint16, float16, "
                            "bfloat16, float32)",
                            static_cast<int>(d.code), static_cast<int>(d.bits)));
        if (t.ndim < 1 || t.ndim > TOROID_MAX_DIMS)
            bad(fmt::format("DLPack tensor has {} dims; toroid takes 1 to {}", t.ndim, TOROID_MAX_DIMS));
        if (t.shape == nullptr) bad("DLPack tensor has a NULL shape");
        r.desc.ndim = t.ndim;
        std::int64_t stride = 1;
        for (int i = t.ndim - 1; i >= 0; --i) {
            const auto k = static_cast<std::size_t>(i);
            r.desc.shape[k] = t.shape[k];
            r.desc.strides[k] = t.strides ? t.strides[k] : stride;
            stride *= t.shape[k];
        }
        if (t.data == nullptr && t.byte_offset != 0) bad("DLPack tensor has a NULL data pointer and a byte offset");
        r.data = t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
        *out = r;
    });
}

toroid_status toroid_run(const toroid_function* fn, const toroid_tensor* in, toroid_tensor* out) {
    return toroid_run_on_stream(fn, in, out, nullptr);
}

toroid_status toroid_run_on_stream(const toroid_function* fn, const toroid_tensor* in, toroid_tensor* out, void* stream) {
    // Tensors laid out exactly as compiled (the caller allocated what toroid_function_output_desc
    // says): nothing to canonicalize or compare beyond the descs themselves.
    if (fn && in && out && (fn->streams || !stream) && same_desc(in->desc, fn->input_desc) &&
        same_desc(out->desc, fn->output_desc))
        return guard([&] { run_compiled_layout(fn, in->data, out->data, stream); });
    return guard([&] {
        require(fn, "fn");
        require(in, "in");
        require(out, "out");
        for (const auto* t : {in, static_cast<const toroid_tensor*>(out)})
            if (t->desc.device != fn->device || (fn->streams && t->desc.device_index != fn->device_index))
                bad(fmt::format("{} is on {} {} but the function was compiled for {} {}", t == in ? "input" : "output",
                                device_of(t->desc).name(), t->desc.device_index, device_of(fn->input_desc).name(),
                                fn->device_index));
        if (!fn->streams && stream) bad(kStreamless);
        TensorSpec is = spec_of(in->desc, "input");
        if (is.dtype != fn->input.dtype || is.shape != fn->input.shape)
            bad(fmt::format("input is {} {} but the function was compiled for {} {}", dtype_name(is.dtype),
                            shape_text(is.shape), dtype_name(fn->input.dtype), shape_text(fn->input.shape)));
        if (is.strides != fn->input.strides)
            bad(fmt::format("input strides {} differ from the strides the function was compiled for {}",
                            shape_text(is.strides), shape_text(fn->input.strides)));
        check_data(in->data, is, "input");
        TensorSpec os = spec_of(out->desc, "output");
        if (os.dtype != fn->output.dtype || os.shape != fn->output.shape)
            bad(fmt::format("output is {} {} but the result is {} {}", dtype_name(os.dtype), shape_text(os.shape),
                            dtype_name(fn->output.dtype), shape_text(fn->output.shape)));
        check_data(out->data, os, "output");
        if (!non_overlapping(os)) bad(fmt::format("output strides {} make elements overlap", shape_text(os.strides)));
        const std::int64_t in_end = max_offset(is), out_end = max_offset(os);
        if (in_end >= 0 && out_end >= 0) {
            auto* ib = static_cast<const char*>(in->data);
            auto* ob = static_cast<const char*>(out->data);
            const char* ie = ib + (in_end + 1) * static_cast<std::int64_t>(dtype_size(is.dtype));
            const char* oe = ob + (out_end + 1) * static_cast<std::int64_t>(dtype_size(os.dtype));
            if (ib < oe && ob < ie) bad("output memory overlaps the input");
        }
        if (!fn->function->output_strides_supported(os.strides))
            bad(fmt::format("output strides {} are not supported on {}: pass memory laid out as "
                            "toroid_function_output_desc says",
                            shape_text(os.strides), device_of(fn->input_desc).name()));
        fn->function->run_device(in->data, out->data, os.strides, stream);
    });
}

toroid_status toroid_run_data(const toroid_function* fn, const void* input, void* output) {
    return toroid_run_data_on_stream(fn, input, output, nullptr);
}

toroid_status toroid_run_data_on_stream(const toroid_function* fn, const void* input, void* output, void* stream) {
    return guard([&] {
        require(fn, "fn");
        run_compiled_layout(fn, input, output, stream);
    });
}

void toroid_function_free(toroid_function* fn) { delete fn; }

toroid_status toroid_cache_stats(toroid_cache_counts* out) {
    return guard([&] {
        require(out, "out");
        const std::size_t size = out->struct_size == 0 ? sizeof(toroid_cache_counts) : out->struct_size;
        if (size < offsetof(toroid_cache_counts, binds) + sizeof(std::int64_t))
            bad(fmt::format("counts.struct_size {} is smaller than any known toroid_cache_counts", size));
        const CacheStats c = cache_stats();
        out->prepares = c.prepares;
        out->compiles = c.compiles;
        out->disk_hits = c.disk_hits;
        out->memory_hits = c.memory_hits;
        out->binds = c.binds;
        if (size >= offsetof(toroid_cache_counts, prebuilt_hits) + sizeof(std::int64_t)) out->prebuilt_hits = c.prebuilt_hits;
        if (size >= offsetof(toroid_cache_counts, background_compiles) + sizeof(std::int64_t))
            out->background_compiles = c.background_compiles;
    });
}

toroid_status toroid_wait_for_background_builds(void) {
    return guard([] { wait_for_background_builds(); });
}

void toroid_interrupt(void) { interrupt_prepares(); }

toroid_status toroid_read_window(const toroid_pipeline* pipeline, const toroid_tensor_desc* input,
                                 int64_t window[4]) {
    return guard([&] {
        require(pipeline, "pipeline");
        require(input, "input");
        require(window, "window");
        const TensorSpec in = spec_of(*input, "input");
        const auto w = read_window(pipeline->pipeline, in).value_or(std::array<std::int64_t, 4>{0, 0, in.shape[2], in.shape[3]});
        for (std::size_t i = 0; i < 4; ++i) window[i] = w[i];
    });
}

toroid_status toroid_output_desc(const toroid_pipeline* pipeline, const toroid_tensor_desc* input,
                                 toroid_tensor_desc* out) {
    return guard([&] {
        require(pipeline, "pipeline");
        require(input, "input");
        require(out, "out");
        const TensorSpec in = spec_of(*input, "input");
        const ShapeInfo o = infer_shape(pipeline->pipeline, ShapeInfo{in.dtype, in.shape});
        *out = desc_of(o.dtype, o.shape, dense_strides(o.shape, suggested_layout(in)), input->ndim);
        out->device = input->device;  // the result lives where the input does
        out->device_index = input->device_index;
    });
}

}  // extern "C"

namespace {

// toroid_run_batch and toroid_run_batch_on_stream: CPU images as one parallel loop over the
// images, CUDA images as one launch sequence per group of images sharing compiled kernels
// (run_device_batch), enqueued on `stream`.
// `pipelines` holds one pipeline for every item (toroid_run_batch) or one per item
// (toroid_run_batch_each: `each`).
toroid_status run_batch_items(const toroid_pipeline* const* pipelines, bool each, const toroid_tensor* inputs,
                              const toroid_tensor* outputs, size_t count, const toroid_options* options,
                              int32_t* item_status, char* messages, size_t message_size, void* stream) {
    std::vector<toroid_status> status(count, TOROID_OK);
    std::vector<std::string> text(count);
    const toroid_status whole = guard([&] {
        require(pipelines, each ? "pipelines" : "pipeline");
        if (!each) require(pipelines[0], "pipeline");
        if (count > 0) {
            require(inputs, "inputs");
            require(outputs, "outputs");
        }
        auto pipeline_of = [&](std::size_t i) { return each ? pipelines[i] : pipelines[0]; };
        // Every pipeline once: NULL, or a grid_sample waiting for its grid, fails the call.
        std::set<const toroid_pipeline*> seen;
        for (std::size_t i = 0; i < (each ? count : std::size_t{1}); ++i) {
            const toroid_pipeline* p = pipeline_of(i);
            if (!p) bad(fmt::format("pipelines[{}] must not be NULL", i));
            if (!seen.insert(p).second) continue;
            for (std::size_t k = 0; k < p->grid_missing.size(); ++k)
                if (p->grid_missing[k])
                    bad(fmt::format("{}op {} (grid_sample): no grid given (set one with toroid_pipeline_set_grid)",
                                    each ? fmt::format("pipelines[{}]: ", i) : "", k));
        }
        int threads = 0;
        const char* engine = nullptr;
        if (options) {
            threads = options->threads;
            engine = options->engine;
        }
        if (threads < 0) bad(fmt::format("threads must be at least 0 (0: every core), got {}", threads));
        // Each item is checked on its own: a bad one is reported and skipped. The good ones
        // go to their device's batch: each device runs its images in one call (the CPU one
        // parallel loop over them, CUDA one launch sequence per group of images sharing
        // compiled kernels), devices with streams first (enqueued, not waited for).
        std::array<std::vector<DeviceBatchItem>, kDeviceKinds> batches;
        std::array<std::vector<std::size_t>, kDeviceKinds> batch_items;  // each batch item's image
        std::array<int, kDeviceKinds> index_of;  // the device index of each device's batch
        index_of.fill(-1);
        for (std::size_t i = 0; i < count; ++i) {
            status[i] = guard([&] {
                const std::string what = fmt::format("image {}", i);
                const std::string out_what = what + " output";
                const TensorSpec is = spec_of(inputs[i].desc, what.c_str());
                check_data(inputs[i].data, is, what.c_str());
                const TensorSpec os = spec_of(outputs[i].desc, out_what.c_str());
                check_data(outputs[i].data, os, out_what.c_str());
                if (!non_overlapping(os)) bad(fmt::format("image {}: output strides make elements overlap", i));
                const toroid_tensor_desc& id = inputs[i].desc;
                const toroid_tensor_desc& od = outputs[i].desc;
                const Device& dev = device_of(id);
                if (&device_of(od) != &dev || id.device_index != od.device_index)
                    bad(fmt::format("image {}: the input is on {} {} but the output on {} {}", i, dev.name(),
                                    id.device_index, device_of(od).name(), od.device_index));
                const auto k = static_cast<std::size_t>(dev.kind());
                if (index_of[k] < 0) index_of[k] = id.device_index;
                if (dev.has_streams() && id.device_index != index_of[k])
                    bad(fmt::format("image {} is on {} {} but the batch's {} images are on {} {} (one stream, one device)",
                                    i, dev.name(), id.device_index, dev.name(), dev.name(), index_of[k]));
                const std::int64_t in_end = max_offset(is), out_end = max_offset(os);
                if (in_end >= 0 && out_end >= 0) {
                    auto* ib = static_cast<const char*>(inputs[i].data);
                    auto* ob = static_cast<const char*>(outputs[i].data);
                    const char* ie = ib + (in_end + 1) * static_cast<std::int64_t>(dtype_size(is.dtype));
                    const char* oe = ob + (out_end + 1) * static_cast<std::int64_t>(dtype_size(os.dtype));
                    if (ib < oe && ob < ie) bad(fmt::format("image {}: output memory overlaps the input", i));
                }
                batches[k].push_back(DeviceBatchItem{each ? i : 0, inputs[i].data, is, outputs[i].data, os, false, {}});
                batch_items[k].push_back(i);
            });
            if (status[i] != TOROID_OK) text[i] = g_last_error;
        }
        std::array<DeviceKind, kDeviceKinds> order{DeviceKind::Cuda, DeviceKind::Cpu};
        for (const DeviceKind kind : order) {
            const auto k = static_cast<std::size_t>(kind);
            if (batches[k].empty()) continue;
            // The device (its driver, its index, the engine asked for) is checked once per
            // call: a device that cannot run fails each of its images.
            try {
                device(kind).check(index_of[k], engine);
            } catch (const DeviceUnavailable& e) {
                for (const std::size_t i : batch_items[k]) {
                    status[i] = TOROID_ERROR_UNSUPPORTED;
                    text[i] = fmt::format("image {}: {}", i, e.what());
                }
                continue;
            }
            // Each pipeline's state on this device, alive through the call (an item's
            // `pipeline` indexes these: one per image with `each`, else one).
            std::vector<std::shared_ptr<DeviceState>> keep;
            std::vector<DeviceBatchPipeline> batch_pipelines(each ? count : 1);
            std::map<const toroid_pipeline*, DeviceState*> state_of;
            for (const DeviceBatchItem& it : batches[k]) {
                DeviceBatchPipeline& bp = batch_pipelines[it.pipeline];
                if (bp.pipeline) continue;
                auto* handle = const_cast<toroid_pipeline*>(pipeline_of(it.pipeline));
                DeviceState*& st = state_of[handle];
                if (!st) {
                    keep.push_back(handle->state(kind));
                    st = keep.back().get();
                }
                bp = DeviceBatchPipeline{&handle->pipeline, st};
            }
            device(kind).run_batch(batch_pipelines, batches[k], engine, threads, index_of[k], stream);
            for (std::size_t b = 0; b < batches[k].size(); ++b)
                if (!batches[k][b].ok) {
                    const std::size_t i = batch_items[k][b];
                    status[i] = TOROID_ERROR_INVALID_ARGUMENT;
                    text[i] = fmt::format("image {}: {}", i, batches[k][b].error);
                }
        }
    });
    if (whole != TOROID_OK) {
        for (std::size_t i = 0; i < count; ++i) {
            status[i] = whole;
            text[i] = g_last_error;
        }
    }
    toroid_status first = whole;
    std::string first_text;
    for (std::size_t i = 0; i < count; ++i) {
        if (item_status) item_status[i] = status[i];
        if (messages && message_size > 0) {
            char* m = messages + i * message_size;
            const std::size_t n = std::min(text[i].size(), message_size - 1);
            std::memcpy(m, text[i].data(), n);
            m[n] = '\0';
        }
        if (first == TOROID_OK && status[i] != TOROID_OK) {
            first = status[i];
            first_text = text[i];
        }
    }
    if (first != TOROID_OK && whole == TOROID_OK) g_last_error = first_text;
    return first;
}

}  // namespace

extern "C" {

toroid_status toroid_run_batch(const toroid_pipeline* pipeline, const toroid_tensor* inputs,
                               const toroid_tensor* outputs, size_t count, const toroid_options* options,
                               int32_t* item_status, char* messages, size_t message_size) {
    return run_batch_items(&pipeline, false, inputs, outputs, count, options, item_status, messages, message_size,
                           nullptr);
}

toroid_status toroid_run_batch_on_stream(const toroid_pipeline* pipeline, const toroid_tensor* inputs,
                                         const toroid_tensor* outputs, size_t count, const toroid_options* options,
                                         int32_t* item_status, char* messages, size_t message_size, void* stream) {
    return run_batch_items(&pipeline, false, inputs, outputs, count, options, item_status, messages, message_size,
                           stream);
}

toroid_status toroid_run_batch_each(const toroid_pipeline* const* pipelines, const toroid_tensor* inputs,
                                    const toroid_tensor* outputs, size_t count, const toroid_options* options,
                                    int32_t* item_status, char* messages, size_t message_size, void* stream) {
    return run_batch_items(pipelines, true, inputs, outputs, count, options, item_status, messages, message_size,
                           stream);
}

void toroid_file_options_init(toroid_file_options* options) {
    if (!options) return;
    *options = toroid_file_options{};
    options->struct_size = sizeof(toroid_file_options);
    options->threads = 0;
    options->jpeg_quality = 90;
    options->format = nullptr;
    options->engine = nullptr;
    options->mode = nullptr;
    options->apply_exif_orientation = 1;
    options->draft = 0;
}

toroid_status toroid_process_file(const toroid_pipeline* pipeline, const char* input_path, const char* output_path,
                                  const toroid_file_options* options) {
    return guard([&] {
        require(pipeline, "pipeline");
        require(input_path, "input_path");
        require(output_path, "output_path");
        toroid_file_options o;
        toroid_file_options_init(&o);
        if (options) {
            std::size_t size = options->struct_size == 0 ? sizeof(toroid_file_options) : options->struct_size;
            if (size < offsetof(toroid_file_options, engine) + sizeof(const char*))
                bad(fmt::format("options.struct_size {} is smaller than any known toroid_file_options", size));
            o.threads = options->threads;
            o.jpeg_quality = options->jpeg_quality;
            o.format = options->format;
            o.engine = options->engine;
            // Callers built before the decode fields keep their defaults.
            if (size >= offsetof(toroid_file_options, mode) + sizeof(const char*)) o.mode = options->mode;
            if (size >= offsetof(toroid_file_options, apply_exif_orientation) + sizeof(int32_t))
                o.apply_exif_orientation = options->apply_exif_orientation;
            if (size >= offsetof(toroid_file_options, draft) + sizeof(int32_t)) o.draft = options->draft;
        }
        for (std::size_t i = 0; i < pipeline->grid_missing.size(); ++i)
            if (pipeline->grid_missing[i])
                bad(fmt::format("op {} (grid_sample): no grid given (set one with toroid_pipeline_set_grid)", i));
        if (o.threads < 0) bad(fmt::format("threads must be at least 0 (0: every core), got {}", o.threads));
        if (*input_path == '\0') bad("input_path must not be empty");
        if (*output_path == '\0') bad("output_path must not be empty");
        FileOptions fo;
        if (o.format) fo.format = io::parse_image_format(o.format);
        fo.jpeg_quality = o.jpeg_quality;
        if (o.mode) fo.decode.mode = io::parse_image_mode(o.mode);
        fo.decode.apply_exif_orientation = o.apply_exif_orientation != 0;
        fo.draft = o.draft != 0;
        // The handle's engine for these options: a same-sized image compiles once across
        // calls and threads (the compiled engine's process-wide cache) and is found by its
        // spec on later calls.
        const std::shared_ptr<Engine> engine = const_cast<toroid_pipeline*>(pipeline)->engine(
            o.engine, o.threads == 0 ? default_threads() : o.threads);
        process_file(*engine, pipeline->pipeline, input_path, output_path, fo);
    });
}

namespace {

// The bytes, their format and the decode options of a toroid_decode_image* call.
struct DecodeCall {
    std::string bytes;
    io::ImageFormat format{};
    io::DecodeOptions options;
};

DecodeCall decode_call(const void* data, size_t size, const char* mode, int32_t apply_exif_orientation) {
    if (size > 0) require(data, "data");
    DecodeCall call;
    call.bytes.assign(static_cast<const char*>(data), size);
    const std::optional<io::ImageFormat> format = io::sniff_image_format(call.bytes);
    if (!format) bad("not a PNG, JPEG, WebP or .npy image (unknown signature)");
    call.format = *format;
    if (mode) call.options.mode = io::parse_image_mode(mode);
    call.options.apply_exif_orientation = apply_exif_orientation != 0;
    return call;
}

}  // namespace

toroid_status toroid_decode_image(const void* data, size_t size, const char* mode, int32_t apply_exif_orientation,
                                  toroid_image** out) {
    return guard([&] {
        require(out, "out");
        *out = nullptr;
        const DecodeCall call = decode_call(data, size, mode, apply_exif_orientation);
        auto image = std::make_unique<toroid_image>();
        image->tensor = io::decode_image(call.bytes, "image", call.format, call.options);
        *out = image.release();
    });
}

toroid_status toroid_decode_image_region(const void* data, size_t size, const char* mode,
                                         int32_t apply_exif_orientation, const int64_t region[4], toroid_image** out) {
    return guard([&] {
        require(out, "out");
        require(region, "region");
        *out = nullptr;
        DecodeCall call = decode_call(data, size, mode, apply_exif_orientation);
        call.options.region = std::array<std::int64_t, 4>{region[0], region[1], region[2], region[3]};
        auto image = std::make_unique<toroid_image>();
        image->tensor = io::decode_image(call.bytes, "image", call.format, call.options);
        *out = image.release();
    });
}

toroid_status toroid_decode_image_into(const void* data, size_t size, const char* mode,
                                       int32_t apply_exif_orientation, const int64_t region[4], void* out,
                                       size_t out_size) {
    return guard([&] {
        require(out, "out");
        DecodeCall call = decode_call(data, size, mode, apply_exif_orientation);
        if (call.format == io::ImageFormat::Npy) bad("toroid_decode_image_into decodes image files, not .npy arrays");
        const auto [c, h, w] = io::image_info(call.bytes, "image", call.format, call.options);
        if (out_size != static_cast<size_t>(c * h * w))
            bad(fmt::format("out holds {} bytes, the {}x{} image of {} channels {}", out_size, w, h, c, c * h * w));
        if (region) call.options.region = std::array<std::int64_t, 4>{region[0], region[1], region[2], region[3]};
        const Tensor t = Tensor::borrow(out, DType::UInt8, {1, c, h, w}, dense_strides({1, c, h, w}, Layout::ChannelsLast));
        io::decode_image_into(call.bytes, "image", call.format, call.options, t);
    });
}

toroid_status toroid_image_info(const void* data, size_t size, const char* mode, int32_t apply_exif_orientation,
                                int64_t chw[3]) {
    return guard([&] {
        require(chw, "chw");
        const DecodeCall call = decode_call(data, size, mode, apply_exif_orientation);
        const auto info = io::image_info(call.bytes, "image", call.format, call.options);
        for (int i = 0; i < 3; ++i) chw[i] = info[static_cast<std::size_t>(i)];
    });
}

toroid_status toroid_jpeg_info(const void* data, size_t size, const char* mode, int32_t apply_exif_orientation,
                               int64_t chw[3]) {
    return guard([&] {
        require(chw, "chw");
        const DecodeCall call = decode_call(data, size, mode, apply_exif_orientation);
        const auto info = cuda::jpeg_image_info(call.bytes, "image", call.options);
        for (int i = 0; i < 3; ++i) chw[i] = info[static_cast<std::size_t>(i)];
    });
}

toroid_status toroid_decode_jpegs_cuda(int32_t device_index, int64_t count, const void* const* data, const size_t* size,
                                       const int64_t* chw, const char* mode, int32_t apply_exif_orientation, void* const* out, void* stream,
                                       int32_t* failed, char* errors, size_t error_stride) {
    return guard([&] {
        if (count < 0) bad("count is negative");
        if (count == 0) return;
        require(data, "data");
        require(size, "size");
        require(chw, "chw");
        require(out, "out");
        require(failed, "failed");
        if (device_index < 0) bad("device_index is negative");
        io::DecodeOptions options;
        if (mode) options.mode = io::parse_image_mode(mode);
        options.apply_exif_orientation = apply_exif_orientation != 0;
        const cuda::Device& device = cuda::Device::get(device_index);
        std::vector<cuda::JpegJob> jobs(static_cast<std::size_t>(count));
        std::vector<std::string> messages(jobs.size());
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            cuda::JpegJob& job = jobs[i];
            const int64_t* info = chw + 3 * i;
            if (!data[i] || size[i] < 2) messages[i] = "image: not a JPEG file (no start-of-image marker)";
            else if (!out[i]) messages[i] = fmt::format("out[{}] is NULL", i);
            else if ((info[0] != 1 && info[0] != 3 && info[0] != 4) || info[1] <= 0 || info[2] <= 0)
                messages[i] = fmt::format("image: ({}, {}, {}) is not toroid_jpeg_info's answer for a JPEG", info[0],
                                          info[1], info[2]);
            if (!messages[i].empty()) continue;
            job.bytes = std::string_view(static_cast<const char*>(data[i]), size[i]);
            job.info = {info[0], info[1], info[2]};
            job.out = reinterpret_cast<cuda::CUdeviceptr>(out[i]);
        }
        // The files whose headers were read decode; the others keep their messages.
        std::vector<std::size_t> index;
        std::vector<cuda::JpegJob> ready;
        for (std::size_t i = 0; i < jobs.size(); ++i)
            if (messages[i].empty()) {
                index.push_back(i);
                ready.push_back(std::move(jobs[i]));
            }
        const std::vector<std::string> decoded =
            cuda::decode_jpegs(device, std::move(ready), options, static_cast<cuda::CUstream>(stream));
        for (std::size_t k = 0; k < index.size(); ++k) messages[index[k]] = decoded[k];
        for (std::size_t i = 0; i < messages.size(); ++i) {
            failed[i] = messages[i].empty() ? 0 : 1;
            if (errors && error_stride > 0) {
                char* at = errors + i * error_stride;
                const std::size_t n = std::min(messages[i].size(), error_stride - 1);
                std::memcpy(at, messages[i].data(), n);
                at[n] = '\0';
            }
        }
    });
}

toroid_status toroid_jpeg_decoder_cuda(int32_t device_index, char* buffer, size_t size) {
    return guard([&] {
        require(buffer, "buffer");
        if (size == 0) bad("size is 0");
        if (device_index < 0) bad("device_index is negative");
        const std::string text = cuda::describe_jpeg_decoder(cuda::Device::get(device_index));
        const std::size_t n = std::min(text.size(), size - 1);
        std::memcpy(buffer, text.data(), n);
        buffer[n] = '\0';
    });
}

toroid_status toroid_image_tensor(const toroid_image* image, toroid_tensor* out) {
    return guard([&] {
        require(image, "image");
        require(out, "out");
        const Tensor& t = image->tensor;
        *out = toroid_tensor{};
        out->data = t.data();
        out->desc.dtype = from_dtype(t.dtype());
        out->desc.device = TOROID_CPU;
        out->desc.ndim = 4;
        for (int i = 0; i < 4; ++i) {
            out->desc.shape[i] = t.shape()[static_cast<std::size_t>(i)];
            out->desc.strides[i] = t.stride(i);
        }
    });
}

void toroid_image_free(toroid_image* image) { delete image; }

}  // extern "C"
