// The CUDA engine (see cuda_engine.h): decompose and bind as the compiled engine does,
// schedule for a GPU target, print CUDA, compile with NVRTC (runtime/cuda), and launch one
// kernel per scheduled kernel with every buffer pointer and parameter passed by value.
// Tables are copied to the device once per bound instance; intermediates live in a
// per-device workspace that grows as needed (runs are ordered on their stream; concurrent
// runs on two streams of one device would share it, so they are serialized by a lock and
// the workspace only grows after the device is idle).
#include "engine/cuda_engine.h"

#include "codegen/cuda.h"
#include "core/error.h"
#include "engine/driver.h"
#include "runtime/cuda/cuda.h"
#include "schedule/bind.h"
#include "schedule/gpu_fuse.h"
#include "schedule/schedule.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>

namespace toroid {
namespace {

constexpr int kBlockThreads = 128;

struct CudaArtifact {
    ir::Program program;
    std::shared_ptr<cuda::Module> module;
    std::vector<cuda::Function> kernels;
    std::vector<cuda::Function> fused;  // by Program::gpu_fusions
    Layout output_layout = Layout::Contiguous;
    std::string source;
};

struct CudaInstance {
    std::shared_ptr<const CudaArtifact> art;
    ir::Graph graph;
    schedule::Binding binding;
    std::vector<cuda::DeviceBuffer> tables;           // by buffer id (empty where not a table)
    std::vector<std::size_t> temp_offsets;            // by buffer id: offset in the workspace
    std::size_t workspace_bytes = 0;
    std::vector<std::array<unsigned, 3>> grid;        // by kernel: launch dimensions (0: nothing to do)
    std::array<int, 4> output_stride_param{-1, -1, -1, -1};  // by dim: the parameter it sets, or -1
    std::vector<std::uint64_t> args;                  // toroid_args with the output's strides unset
    std::size_t buffer_slots = 0;                     // pointers before the parameters in `args`
    // Fused pairs this instance launches as one kernel (schedule/gpu_fuse.h).
    struct FusedRun {
        schedule::FusedLaunch plan;
        cuda::DeviceBuffer ranges;
        schedule::FusedTilesArg arg;
        std::array<unsigned, 3> grid{};
    };
    std::vector<FusedRun> fused;  // by Program::gpu_fusions
    // By kernel: kLaunch, kInsideFused (its values are computed in a fused kernel's shared
    // memory), or the fusion whose kernel runs in its place.
    static constexpr int kLaunch = -1, kInsideFused = -2;
    std::vector<int> action;
};

cuda::Compiler& nvrtc_compiler() {
    static cuda::Compiler c;
    return c;
}

schedule::Target target_for(const cuda::Device& d) {
    schedule::Target t = schedule::Target::cuda(d.arch());
    t.block_threads = kBlockThreads;
    return t;
}

ir::Program schedule_for_cuda(const ir::Graph& g, ir::IndexWidth width, const schedule::Target& target,
                              std::vector<schedule::PassDump>* dumps) {
    schedule::Options so;
    so.target = target;
    so.index_width = width;
    return schedule::schedule(g, so, dumps);
}

// The device's workspace for intermediates.
// Intermediates of a device's runs. The buffer belongs to the first stream that uses it:
// runs on that stream are ordered, so each may reuse it as soon as it is enqueued. A run
// on any other stream takes memory of its own for the run, allocated and freed in that
// stream's order (cuMemAllocAsync / cuMemFreeAsync: the driver's pool reuses it, and no run
// can see another stream's intermediates); on a driver without stream-ordered allocation
// it waits for the device and then shares the buffer.
struct Workspace {
    std::mutex mutex;
    cuda::DeviceBuffer buffer;
    cuda::CUstream owner = nullptr;
    bool owned = false;
};

Workspace& workspace(const cuda::Device& d) {
    static std::mutex m;
    static std::map<int, std::unique_ptr<Workspace>> all;
    std::lock_guard lock(m);
    auto& w = all[d.ordinal()];
    if (!w) w = std::make_unique<Workspace>();
    return *w;
}

class CudaPrepared final : public CudaPipeline {
public:
    CudaPrepared(std::shared_ptr<const CudaInstance> inst, TensorSpec spec, int device, PrepareStats stats)
        : inst_(std::move(inst)), spec_(spec), device_(device), stats_(stats), dev_(cuda::Device::get(device)),
          ws_(workspace(dev_)) {
        const auto& s = inst_->binding.shapes[static_cast<std::size_t>(inst_->art->program.output)];
        output_ = ShapeInfo{inst_->art->program.buffer(inst_->art->program.output).type == ir::Type::U8 ? DType::UInt8
                                                                                                      : DType::Float32,
                            Dims{s[0], s[1], s[2], s[3]}};
    }

    bool output_strides_supported(const Dims& st) const override {
        return schedule::output_strides_match(inst_->art->program, inst_->binding, {st[0], st[1], st[2], st[3]});
    }

    void run_device(const void* in, void* out, const Dims& out_strides, void* stream) override {
        // The per-call work is small: everything that does not depend on the call's pointers
        // and output strides was worked out when the instance was bound.
        const ir::Program& p = inst_->art->program;
        dev_.make_current();
        if (!output_strides_supported(out_strides))
            fail("internal: output strides do not fit the compiled program");
        const auto s = static_cast<cuda::CUstream>(stream);
        const cuda::DriverApi& api = cuda::driver();
        std::unique_lock lock(ws_.mutex, std::defer_lock);
        cuda::CUdeviceptr temps = 0;
        bool own_memory = false;  // temps allocated in this run's stream order
        if (inst_->workspace_bytes > 0) {
            lock.lock();
            if (ws_.owned && ws_.owner != s && api.cuMemAllocAsync) {
                lock.unlock();
                cuda::check(api.cuMemAllocAsync(&temps, inst_->workspace_bytes, s), "cuMemAllocAsync");
                own_memory = true;
            } else {
                if (ws_.owned && ws_.owner != s)  // no stream-ordered allocation: serialize
                    cuda::check(api.cuCtxSynchronize(), "cuCtxSynchronize");
                if (ws_.buffer.size() < inst_->workspace_bytes) {
                    // Earlier launches may still use the old buffer: wait for the device before freeing it.
                    cuda::check(api.cuCtxSynchronize(), "cuCtxSynchronize");
                    ws_.buffer =
                        cuda::DeviceBuffer(dev_, std::max<std::size_t>(inst_->workspace_bytes, ws_.buffer.size() * 2));
                }
                ws_.owner = s;
                ws_.owned = true;
                temps = ws_.buffer.pointer();
            }
        }
        // A launch that fails still gives the run's own memory back (in stream order).
        struct Release {
            const cuda::DriverApi& api;
            cuda::CUdeviceptr& pointer;
            cuda::CUstream stream;
            bool armed;
            void dismiss() { armed = false; }
            ~Release() {
                if (armed) api.cuMemFreeAsync(pointer, stream);
            }
        } release{api, temps, s, own_memory};
        std::vector<std::uint64_t> args = inst_->args;
        for (const ir::Buffer& buf : p.buffers) {
            const auto i = static_cast<std::size_t>(buf.id);
            if (buf.role == ir::BufferRole::Input) args[i] = reinterpret_cast<std::uint64_t>(in);
            else if (buf.role == ir::BufferRole::Output) args[i] = reinterpret_cast<std::uint64_t>(out);
            else if (buf.role == ir::BufferRole::Temp) args[i] = temps + inst_->temp_offsets[i];
        }
        for (std::size_t d = 0; d < 4; ++d)
            if (inst_->output_stride_param[d] >= 0)
                std::memcpy(&args[inst_->buffer_slots + static_cast<std::size_t>(inst_->output_stride_param[d])],
                            &out_strides[d], sizeof(std::int64_t));
        void* blob = args.data();
        void* kernel_args[] = {blob};
        for (std::size_t k = 0; k < p.kernels.size(); ++k) {
            const int action = inst_->action[k];
            if (action == CudaInstance::kInsideFused) continue;
            if (action >= 0) {
                const auto i = static_cast<std::size_t>(action);
                const CudaInstance::FusedRun& f = inst_->fused[i];
                const ir::GpuFusion& gf = p.gpu_fusions[i];
                void* fused_args[] = {blob, const_cast<schedule::FusedTilesArg*>(&f.arg)};
                cuda::launch(inst_->art->fused[i], cuda::Dim3{f.grid[0], f.grid[1], f.grid[2]},
                             cuda::Dim3{static_cast<unsigned>(gf.block_x), static_cast<unsigned>(gf.block_y), 1},
                             static_cast<unsigned>(f.plan.shared_bytes), s, fused_args);
                continue;
            }
            const auto& dims = inst_->grid[k];
            if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0) continue;  // nothing to compute
            cuda::launch(inst_->art->kernels[k], cuda::Dim3{dims[0], dims[1], dims[2]},
                         cuda::Dim3{static_cast<unsigned>(kBlockThreads), 1, 1}, 0, s, kernel_args);
        }
        release.dismiss();
        if (own_memory) cuda::check(api.cuMemFreeAsync(temps, s), "cuMemFreeAsync");
    }

    ShapeInfo output() const override { return output_; }
    Layout output_layout() const override { return inst_->art->output_layout; }
    int device() const override { return device_; }
    std::string explain() const override {
        schedule::Binding b = inst_->binding;
        const Dims d = dense_strides(output_.shape, inst_->art->output_layout);
        schedule::bind_output_strides(inst_->art->program, b, {d[0], d[1], d[2], d[3]});
        std::string s = schedule::explain(inst_->art->program, b);
        const ir::Program& p = inst_->art->program;
        for (std::size_t i = 0; i < p.gpu_fusions.size(); ++i)
            s += fmt::format("kernel_{} and kernel_{} {}: {}\n", p.gpu_fusions[i].producer, p.gpu_fusions[i].consumer,
                             inst_->fused[i].plan.fused ? "run as one (fused through shared memory)" : "run apart",
                             inst_->fused[i].plan.why);
        return s;
    }
    PrepareStats stats() const override { return stats_; }

private:
    std::shared_ptr<const CudaInstance> inst_;
    TensorSpec spec_;
    int device_;
    PrepareStats stats_;
    const cuda::Device& dev_;
    Workspace& ws_;
    ShapeInfo output_;
};

driver::ProgramCache<CudaArtifact, CudaInstance>& cuda_cache() {
    static driver::ProgramCache<CudaArtifact, CudaInstance> c;
    return c;
}

std::shared_ptr<const CudaArtifact> compile_cuda(const ir::Graph& g, ir::IndexWidth width, const cuda::Device& dev,
                                                 const EngineOptions& options, PrepareStats& stats) {
    auto art = std::make_shared<CudaArtifact>();
    const std::filesystem::path debug = options.debug_dir;
    std::vector<schedule::PassDump> dumps;
    const schedule::Target target = target_for(dev);
    art->program = schedule_for_cuda(g, width, target, debug.empty() ? nullptr : &dumps);
    art->output_layout = g.channels_last ? Layout::ChannelsLast : Layout::Contiguous;
    art->source = codegen::generate_cuda(art->program, target.block_threads);
    if (!debug.empty()) {
        int i = 1;
        for (const auto& d : dumps) driver::write_text(debug / fmt::format("{}_loop_ir_after_{}.txt", i++, d.pass), d.text);
        driver::write_text(debug / "kernel.cu", art->source);
    }
    const cuda::CompilerStats before = nvrtc_compiler().stats();
    art->module = nvrtc_compiler().load(dev, art->source);
    const cuda::CompilerStats after = nvrtc_compiler().stats();
    stats.compiled += after.compiled - before.compiled;
    stats.disk_hits += after.disk_hits - before.disk_hits;
    stats.memory_hits += after.memory_hits - before.memory_hits;
    for (std::size_t k = 0; k < art->program.kernels.size(); ++k)
        art->kernels.push_back(art->module->function(codegen::cuda_kernel_name(art->program, k)));
    for (std::size_t i = 0; i < art->program.gpu_fusions.size(); ++i) {
        art->fused.push_back(art->module->function(codegen::cuda_fused_kernel_name(art->program, i)));
        cuda::set_max_dynamic_shared(art->fused.back(), dev.max_shared_per_block_optin());
    }
    return art;
}

}  // namespace

std::unique_ptr<CudaPipeline> prepare_cuda(const Pipeline& p, const TensorSpec& in, const EngineOptions& options,
                                           int device) {
    const auto start = std::chrono::steady_clock::now();
    infer_shape(p, ShapeInfo{in.dtype, in.shape});
    const cuda::Device* found = nullptr;
    try {
        found = &cuda::Device::get(device);
    } catch (const Error&) {
        // The generated source is written before a GPU is needed (for a Hopper target).
        if (!options.debug_dir.empty()) {
            std::filesystem::create_directories(options.debug_dir);
            driver::write_text(std::filesystem::path(options.debug_dir) / "kernel.cu", cuda_source(p, in, "sm_90"));
        }
        throw;
    }
    const cuda::Device& dev = *found;
    PrepareStats stats;
    // TOROID_CUDA_FUSE=0 (fused pairs run as two kernels) is part of the instance: tests and
    // benchmarks compare both in one process.
    const char* fuse = std::getenv("TOROID_CUDA_FUSE");
    const bool unfused = fuse != nullptr && std::string_view(fuse) == "0";
    const std::string key = fmt::format("cuda {}\n{}{}{}", device, options.specialize ? "specialized\n" : "",
                                        unfused ? "unfused\n" : "", driver::pipeline_key(p, in));
    const bool debug = !options.debug_dir.empty();
    std::shared_ptr<const CudaInstance> inst = debug ? nullptr : cuda_cache().find_instance(key);
    CacheStats counted;
    counted.prepares = 1;
    if (inst) {
        stats.memory_hits = 1;
        counted.memory_hits = 1;
    } else {
        auto made = std::make_shared<CudaInstance>();
        const schedule::Target target = target_for(dev);
        driver::Decomposed d = driver::decompose_for(p, in, options.specialize, target.name(), options.debug_dir);
        made->graph = std::move(d.graph);
        made->art = debug ? nullptr : cuda_cache().find_artifact(d.structure);
        if (made->art) stats.memory_hits = 1;
        else made->art = compile_cuda(made->graph, d.width, dev, options, stats);
        made->binding = schedule::bind(made->art->program, made->graph);
        counted.binds = 1;
        counted.compiles = stats.compiled;
        counted.disk_hits = stats.disk_hits;
        counted.memory_hits = stats.memory_hits;
        const ir::Program& prog = made->art->program;
        // Fused pairs: the tiles of this instance, or the two kernels where a tile does not fit.
        made->action.assign(prog.kernels.size(), CudaInstance::kLaunch);
        std::vector<bool> in_shared(prog.buffers.size(), false);  // Temps no launch writes to global memory
        schedule::FusedLimits limits;
        limits.shared_limit = dev.max_shared_per_block_optin();
        limits.multiprocessors = dev.multiprocessors();
        for (std::size_t i = 0; i < prog.gpu_fusions.size(); ++i) {
            const ir::GpuFusion& gf = prog.gpu_fusions[i];
            CudaInstance::FusedRun run;
            run.plan = schedule::plan_fused_launch(prog, gf, made->binding, limits);
            if (run.plan.fused) {
                made->action[static_cast<std::size_t>(gf.producer)] = CudaInstance::kInsideFused;
                made->action[static_cast<std::size_t>(gf.consumer)] = static_cast<int>(i);
                in_shared[static_cast<std::size_t>(gf.temp)] = true;
                const std::size_t bytes = run.plan.ranges.size() * sizeof(std::int32_t);
                run.ranges = cuda::DeviceBuffer(dev, std::max<std::size_t>(bytes, 4));
                if (bytes > 0) run.ranges.copy_from_host(run.plan.ranges.data(), bytes);
                run.arg.ranges = run.ranges.pointer();
                run.arg.tile_x = run.plan.tile_x;
                run.arg.tile_y = run.plan.tile_y;
                for (int d = 0; d < schedule::kFusedMaxDims; ++d) run.arg.offset[d] = run.plan.offset[static_cast<std::size_t>(d)];
                constexpr std::int64_t cap = 65535;
                run.grid = {static_cast<unsigned>(run.plan.tiles_x), static_cast<unsigned>(std::min(run.plan.tiles_y, cap)),
                            static_cast<unsigned>(std::min(run.plan.blocks_z, cap))};
            }
            made->fused.push_back(std::move(run));
        }
        made->tables.resize(prog.buffers.size());
        made->temp_offsets.assign(prog.buffers.size(), 0);
        for (const ir::Buffer& buf : prog.buffers) {
            const auto i = static_cast<std::size_t>(buf.id);
            if (buf.role == ir::BufferRole::Constant) {
                const auto& data = made->graph.at(buf.tensor).data;
                made->tables[i] = cuda::DeviceBuffer(dev, std::max<std::size_t>(data.size(), 1));
                if (!data.empty()) made->tables[i].copy_from_host(data.data(), data.size());
            } else if (buf.role == ir::BufferRole::Temp && !in_shared[i]) {
                made->temp_offsets[i] = made->workspace_bytes;
                const auto bytes = static_cast<std::size_t>(made->binding.temp_bytes[i]);
                made->workspace_bytes += (bytes + 255) / 256 * 256;
            }
        }
        // What every run reuses: launch dimensions, the argument block with tables and
        // parameters filled in, where the output's strides go.
        for (const ir::Kernel& k : prog.kernels)
            made->grid.push_back(codegen::cuda_launch_dims(prog, k, made->binding.params, kBlockThreads));
        made->buffer_slots = std::max<std::size_t>(prog.buffers.size(), 1);
        made->args.assign(made->buffer_slots + std::max<std::size_t>(prog.params.size(), 1), 0);
        for (const ir::Buffer& buf : prog.buffers)
            if (buf.role == ir::BufferRole::Constant)
                made->args[static_cast<std::size_t>(buf.id)] = made->tables[static_cast<std::size_t>(buf.id)].pointer();
        for (std::size_t i = 0; i < prog.params.size(); ++i)
            std::memcpy(&made->args[made->buffer_slots + i], &made->binding.params[i], sizeof(std::int64_t));
        const ir::Buffer& ob = prog.buffer(prog.output);
        for (std::size_t dd = 0; dd < 4; ++dd) {
            const ir::Expr& st = ob.strides[dd];
            if (st->op == ir::Op::Var && ir::is_param_var(st->var))
                made->output_stride_param[dd] = st->var - ir::kFirstParamVar;
        }
        inst = made;
        cuda_cache().add(key, d.structure, made->art, inst);
    }
    count_cache(counted);
    stats.prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::make_unique<CudaPrepared>(std::move(inst), in, device, stats);
}

std::string cuda_source(const Pipeline& p, const TensorSpec& in, const std::string& arch) {
    infer_shape(p, ShapeInfo{in.dtype, in.shape});
    schedule::Target target = schedule::Target::cuda(arch);
    target.block_threads = kBlockThreads;
    driver::Decomposed d = driver::decompose_for(p, in, false, target.name(), {});
    return codegen::generate_cuda(schedule_for_cuda(d.graph, d.width, target, nullptr), target.block_threads);
}

namespace {

// Host tensors through a CudaPipeline: the input copied to the device (dense, as given),
// the result copied back.
class CudaHostPrepared final : public PreparedPipeline {
public:
    CudaHostPrepared(std::unique_ptr<CudaPipeline> p, TensorSpec spec) : p_(std::move(p)), spec_(spec) {}

    Tensor run(const Tensor& in) override {
        if (in.spec() != spec_) fail("input does not match the spec the pipeline was prepared for");
        const cuda::Device& dev = cuda::Device::get(p_->device());
        // The input goes over as it is laid out (its span, strides kept).
        std::int64_t span = 1;
        for (std::size_t d = 0; d < 4; ++d) span += (in.shape()[d] - 1) * in.strides()[d];
        const std::size_t in_bytes = static_cast<std::size_t>(span) * dtype_size(in.dtype());
        cuda::DeviceBuffer din(dev, std::max<std::size_t>(in_bytes, 1));
        if (in.numel() > 0) din.copy_from_host(in.data(), in_bytes);
        const ShapeInfo o = p_->output();
        Tensor out = Tensor::empty(o.dtype, o.shape, p_->output_layout());
        cuda::DeviceBuffer dout(dev, std::max<std::size_t>(out.nbytes(), 1));
        cuda::Stream stream(dev);
        p_->run_device(reinterpret_cast<const void*>(din.pointer()), reinterpret_cast<void*>(dout.pointer()),
                       out.strides(), stream.handle());
        stream.synchronize();
        if (out.nbytes() > 0) dout.copy_to_host(out.data(), out.nbytes());
        return out;
    }
    std::string explain() const override { return p_->explain(); }
    PrepareStats stats() const override { return p_->stats(); }

private:
    std::unique_ptr<CudaPipeline> p_;
    TensorSpec spec_;
};

class CudaEngine final : public Engine {
public:
    explicit CudaEngine(EngineOptions o) : options_(std::move(o)) {}
    std::string_view name() const override { return "cuda"; }
    std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) override {
        return std::make_unique<CudaHostPrepared>(prepare_cuda(p, in, options_, 0), in);
    }

private:
    EngineOptions options_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& options) { return std::make_unique<CudaEngine>(options); }

}  // namespace toroid
