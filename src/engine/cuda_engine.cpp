// The CUDA engine (see cuda_engine.h): decompose and bind as the compiled engine does,
// schedule for a GPU target, print CUDA, compile with NVRTC (runtime/cuda), and launch one
// kernel per scheduled kernel with every buffer pointer and parameter passed by value.
// A bound instance keeps its constants (tables and fused tile ranges) in one host block: a
// batch uploads every image's block with its arguments in one copy, and a single-image run
// uploads the block once per instance, on its first run (small per-image draws on CUDA make no
// device allocation of their own). Intermediates live in a per-device workspace that grows as needed (runs are ordered on their stream; concurrent
// runs on two streams of one device would share it, so they are serialized by a lock and
// the workspace only grows after the device is idle).
#include "engine/cuda_engine.h"

#include "decomp/decompose.h"

#include "codegen/cuda.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/parallel.h"
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
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>

namespace toroid {
namespace {

constexpr int kBlockThreads = Target::kCudaBlockThreads;

std::string dims_text(const Dims& d) { return fmt::format("({}, {}, {}, {})", d[0], d[1], d[2], d[3]); }

struct CudaArtifact {
    ir::Program program;
    std::shared_ptr<cuda::Module> module;
    std::vector<cuda::Function> kernels;
    std::vector<cuda::Function> fused;  // by Program::gpu_fusions
    Layout output_layout = Layout::Contiguous;
    std::string source;
    // The batched entries (codegen::generate_cuda_batch): a module of their own, compiled
    // when the first batch of this program runs (single images never pay for it).
    mutable std::mutex batch_mutex;
    mutable std::shared_ptr<cuda::Module> batch_module;
    mutable std::vector<cuda::Function> batch_kernels, batch_fused;
};

struct CudaInstance;
// A fused pair's launch for one instance (schedule::plan_fused_launch), its tile ranges on
// the device.
// `arg.ranges` is left 0: the ranges lie in the instance's constants block at `ranges_at`,
// whose device address is known per run.
struct FusedRunData {
    schedule::FusedLaunch plan;
    std::size_t ranges_at = 0;
    schedule::FusedTilesArg arg;
    std::array<unsigned, 3> grid{};
};

// Appends `bytes` bytes at the next 256-byte boundary of `block`; returns their offset.
std::size_t append_aligned(std::vector<std::uint8_t>& block, const void* data, std::size_t bytes) {
    const std::size_t at = (block.size() + 255) / 256 * 256;
    block.resize(at + std::max<std::size_t>(bytes, 1), 0);
    if (bytes > 0) std::memcpy(block.data() + at, data, bytes);
    return at;
}

struct CudaInstance {
    std::shared_ptr<const CudaArtifact> art;
    ir::Graph graph;
    schedule::Binding binding;
    // Tables, then the fused pairs' tile ranges, each at a 256-byte boundary (append_aligned).
    std::vector<std::uint8_t> constants;
    std::vector<std::size_t> table_at;                // by buffer id: offset in `constants` (tables)
    // The block on the device for single-image runs (and batches of large blocks), made on
    // the first such run.
    mutable std::once_flag device_once;
    mutable cuda::DeviceBuffer device_constants;
    std::vector<std::size_t> temp_offsets;            // by buffer id: offset in the workspace
    std::size_t workspace_bytes = 0;
    std::vector<std::array<unsigned, 3>> grid;        // by kernel: launch dimensions (0: nothing to do)
    std::array<int, 4> output_stride_param{-1, -1, -1, -1};  // by dim: the parameter it sets, or -1
    std::vector<std::uint64_t> args;                  // toroid_args with the output's strides unset
    std::size_t buffer_slots = 0;                     // pointers before the parameters in `args`
    // Fused pairs this instance launches as one kernel (schedule/gpu_fuse.h).
    using FusedRun = FusedRunData;
    std::vector<FusedRun> fused;  // by Program::gpu_fusions
    // The same pairs' launches in a batch of many images (run_device_batch): the image alone
    // need not fill the device, so its tiles are the ones that recompute the least of the
    // intermediate (made on the instance's first batch; whether a pair runs fused is the
    // same as for `fused`: it depends only on the device's shared memory).
    mutable std::once_flag batch_once;
    mutable std::vector<FusedRun> batch_fused;
    mutable std::vector<std::uint8_t> batch_constants;  // their ranges (ranges_at: offsets here)
    // By kernel: kLaunch, kInsideFused (its values are computed in a fused kernel's shared
    // memory), or the fusion whose kernel runs in its place.
    static constexpr int kLaunch = -1, kInsideFused = -2;
    std::vector<int> action;
    // Whether a fused pair whose tiles fit runs as its fused kernel or as its two kernels is
    // measured, per instance: its first 2 * kFormTrials single-image runs alternate the two
    // forms, each timed with events on the run's stream, and once every timing has completed
    // the faster form stays (fused unless the two kernels take under kApartShare of its
    // time). Both forms give the same values: only the time differs (a small image's tiles
    // are too small to pay for the halo they recompute; a large one's intermediate costs
    // more in global memory than in shared memory).
    static constexpr int kFormTrials = 3;
    static constexpr double kApartShare = 0.95;
    struct FormChoice {
        std::mutex mutex;
        std::atomic<int> decided{0};  // 0: measuring, 1: fused, 2: apart
        std::vector<bool> trial_fused;
        std::vector<std::unique_ptr<cuda::Event>> events;  // start, end per trial
        std::size_t recorded = 0;  // trials whose two events are recorded (an event never
                                   // recorded reads as complete: only these are timed)
        double fused_us = 0, apart_us = 0;  // the fastest trial of each, once decided
    };
    mutable std::vector<std::unique_ptr<FormChoice>> choice;  // by fusion: null where not fused
    // Workspace bytes with every fused pair's intermediate in global memory too (their two
    // kernels' runs; `workspace_bytes`: the fused kernels' runs). The fused pairs'
    // intermediates lie after the others, so both share the other offsets.
    std::size_t workspace_apart = 0;
};

// How a run launches fused pair `i` of `inst` (CudaInstance::FormChoice): fused or as its two
// kernels, and the events that time it while the choice is measured (null otherwise).
struct PairForm {
    bool fused = true;
    cuda::Event* start = nullptr;
    cuda::Event* end = nullptr;
    CudaInstance::FormChoice* choice = nullptr;  // told when both events are recorded
    void recorded() const {
        if (choice == nullptr) return;
        std::lock_guard lock(choice->mutex);
        ++choice->recorded;
    }
};

PairForm pair_form(const CudaInstance& inst, std::size_t i, cuda::CUstream stream, const cuda::Device& dev) {
    CudaInstance::FormChoice& c = *inst.choice[i];
    if (const int d = c.decided.load(std::memory_order_acquire); d != 0) return {d == 1};
    std::lock_guard lock(c.mutex);
    if (const int d = c.decided.load(std::memory_order_relaxed); d != 0) return {d == 1};
    // A stream captured into a graph: no timing (its events cannot be queried), fused.
    if (cuda::capturing(stream)) return {};
    const std::size_t trials = 2 * static_cast<std::size_t>(CudaInstance::kFormTrials);
    if (c.trial_fused.size() < trials) {
        const bool fused = c.trial_fused.size() % 2 == 0;
        c.trial_fused.push_back(fused);
        c.events.push_back(std::make_unique<cuda::Event>(dev));
        c.events.push_back(std::make_unique<cuda::Event>(dev));
        return {fused, c.events[c.events.size() - 2].get(), c.events.back().get(), &c};
    }
    // Every trial recorded: decide once they have all completed (fused meanwhile).
    if (c.recorded < trials) return {};
    for (const auto& e : c.events)
        if (!e->done()) return {};
    double best[2] = {1e300, 1e300};  // fused, apart (µs)
    for (std::size_t t = 0; t < c.trial_fused.size(); ++t) {
        const double us = 1000.0 * cuda::elapsed_ms(*c.events[2 * t], *c.events[2 * t + 1]);
        double& b = best[c.trial_fused[t] ? 0 : 1];
        b = std::min(b, us);
    }
    c.fused_us = best[0];
    c.apart_us = best[1];
    c.events.clear();
    const bool fused = !(best[1] < CudaInstance::kApartShare * best[0]);
    c.decided.store(fused ? 1 : 2, std::memory_order_release);
    return {fused};
}

cuda::Compiler& nvrtc_compiler() {
    static cuda::Compiler c;
    return c;
}

Target target_for(const cuda::Device& d) {
    Target t = Target::cuda(d.arch());
    t.block_threads = kBlockThreads;
    return t;
}

ir::Program schedule_for_cuda(const ir::Graph& g, ir::IndexWidth width, const Target& target,
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

// The launch of a fused pair for one instance; its tile ranges appended to `constants`.
FusedRunData fused_run(const ir::Program& prog, const ir::GpuFusion& gf, const schedule::Binding& b,
                       const schedule::FusedLimits& limits, std::vector<std::uint8_t>& constants) {
    FusedRunData run;
    run.plan = schedule::plan_fused_launch(prog, gf, b, limits);
    if (!run.plan.fused) return run;
    run.ranges_at =
        append_aligned(constants, run.plan.ranges.data(), run.plan.ranges.size() * sizeof(std::int32_t));
    run.arg.tile_x = run.plan.tile_x;
    run.arg.tile_y = run.plan.tile_y;
    for (int d = 0; d < schedule::kFusedMaxDims; ++d) run.arg.offset[d] = run.plan.offset[static_cast<std::size_t>(d)];
    constexpr std::int64_t cap = 65535;
    run.grid = {static_cast<unsigned>(run.plan.tiles_x), static_cast<unsigned>(std::min(run.plan.tiles_y, cap)),
                static_cast<unsigned>(std::min(run.plan.blocks_z, cap))};
    return run;
}

// The device limits a fused launch is planned for (`batch`: as one image of many).
schedule::FusedLimits fused_limits(const cuda::Device& dev, bool batch, bool fuse = true) {
    schedule::FusedLimits limits;
    limits.fuse = fuse;
    limits.shared_limit = dev.max_shared_per_block_optin();
    limits.multiprocessors = batch ? 1 : dev.multiprocessors();
    return limits;
}

// Device memory for one run's intermediates (and a batch's argument arrays), `bytes` at
// `base`: the device's workspace where this stream owns it (held under its lock until the
// run is enqueued), else memory of the run's own in the stream's order (freed in that order
// when the run is enqueued, or when a launch fails).
class RunMemory {
public:
    RunMemory(Workspace& ws, const cuda::Device& dev, std::size_t bytes, cuda::CUstream s)
        : api_(cuda::driver()), lock_(ws.mutex, std::defer_lock), stream_(s) {
        if (bytes == 0) return;
        lock_.lock();
        if (ws.owned && ws.owner != s && api_.cuMemAllocAsync) {
            lock_.unlock();
            cuda::check(api_.cuMemAllocAsync(&base, bytes, s), "cuMemAllocAsync");
            own_ = true;
            return;
        }
        if (ws.owned && ws.owner != s)  // no stream-ordered allocation: serialize
            cuda::check(api_.cuCtxSynchronize(), "cuCtxSynchronize");
        if (ws.buffer.size() < bytes) {
            // Earlier launches may still use the old buffer: wait for the device before freeing it.
            cuda::check(api_.cuCtxSynchronize(), "cuCtxSynchronize");
            ws.buffer = cuda::DeviceBuffer(dev, std::max<std::size_t>(bytes, ws.buffer.size() * 2));
        }
        ws.owner = s;
        ws.owned = true;
        base = ws.buffer.pointer();
    }
    // After the last launch: gives the run's own memory back in stream order.
    void release() {
        if (!own_) return;
        own_ = false;
        cuda::check(api_.cuMemFreeAsync(base, stream_), "cuMemFreeAsync");
    }
    ~RunMemory() {
        if (own_) api_.cuMemFreeAsync(base, stream_);  // a launch failed: nothing to report beyond it
    }
    RunMemory(const RunMemory&) = delete;
    RunMemory& operator=(const RunMemory&) = delete;

    cuda::CUdeviceptr base = 0;

private:
    const cuda::DriverApi& api_;
    std::unique_lock<std::mutex> lock_;
    cuda::CUstream stream_;
    bool own_ = false;
};

class CudaPrepared final : public CudaPipeline {
public:
    CudaPrepared(std::shared_ptr<const CudaInstance> inst, TensorSpec spec, int device, PrepareStats stats)
        : inst_(std::move(inst)), spec_(spec), device_(device), stats_(stats), dev_(cuda::Device::get(device)),
          ws_(workspace(dev_)) {
        const auto& s = inst_->binding.shapes[static_cast<std::size_t>(inst_->art->program.output)];
        output_ = ShapeInfo{decomp::dtype_of(inst_->art->program.buffer(inst_->art->program.output).type),
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
        const cuda::CUdeviceptr constants = device_constants();
        std::vector<PairForm> forms(p.gpu_fusions.size());
        bool apart = false;
        for (std::size_t i = 0; i < forms.size(); ++i)
            if (inst_->choice[i]) {
                forms[i] = pair_form(*inst_, i, s, dev_);
                apart = apart || !forms[i].fused;
            }
        RunMemory memory(ws_, dev_, apart ? inst_->workspace_apart : inst_->workspace_bytes, s);
        std::vector<std::uint64_t> args(inst_->args.size());  // fill_args copies the bound block in
        fill_args(args.data(), in, out, out_strides, memory.base, constants);
        void* blob = args.data();
        void* kernel_args[] = {blob};
        const auto launch_kernel = [&](std::size_t k) {
            const auto& dims = inst_->grid[k];
            if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0) return;  // nothing to compute
            cuda::launch(inst_->art->kernels[k], cuda::Dim3{dims[0], dims[1], dims[2]},
                         cuda::Dim3{static_cast<unsigned>(kBlockThreads), 1, 1}, 0, s, kernel_args);
        };
        for (std::size_t k = 0; k < p.kernels.size(); ++k) {
            const int action = inst_->action[k];
            if (action == CudaInstance::kInsideFused) continue;
            if (action < 0) {
                launch_kernel(k);
                continue;
            }
            // A fused pair, at its consumer's place (its producer's inputs are all written
            // by then, and only the consumer reads what the producer writes).
            const auto i = static_cast<std::size_t>(action);
            const CudaInstance::FusedRun& f = inst_->fused[i];
            const ir::GpuFusion& gf = p.gpu_fusions[i];
            const PairForm& form = forms[i];
            if (form.start) form.start->record(s);
            if (form.fused) {
                schedule::FusedTilesArg tiles = f.arg;
                tiles.ranges = constants + f.ranges_at;
                void* fused_args[] = {blob, &tiles};
                cuda::launch(inst_->art->fused[i], cuda::Dim3{f.grid[0], f.grid[1], f.grid[2]},
                             cuda::Dim3{static_cast<unsigned>(gf.block_x), static_cast<unsigned>(gf.block_y), 1},
                             static_cast<unsigned>(f.plan.shared_bytes), s, fused_args);
            } else {
                launch_kernel(static_cast<std::size_t>(gf.producer));
                launch_kernel(k);
            }
            if (form.end) {
                form.end->record(s);
                form.recorded();
            }
        }
        memory.release();
    }

    // The instance's constants block on the device (uploaded on the first call).
    cuda::CUdeviceptr device_constants() const {
        std::call_once(inst_->device_once, [&] {
            dev_.make_current();
            cuda::DeviceBuffer b(dev_, std::max<std::size_t>(inst_->constants.size(), 1));
            if (!inst_->constants.empty()) b.copy_from_host(inst_->constants.data(), inst_->constants.size());
            inst_->device_constants = std::move(b);
        });
        return inst_->device_constants.pointer();
    }

    // One run's toroid_args: the bound instance's, with this run's input, output,
    // intermediates (at `temps`, the run's workspace), tables (in the constants block at
    // `constants`) and the output's strides.
    void fill_args(std::uint64_t* args, const void* in, void* out, const Dims& out_strides, cuda::CUdeviceptr temps,
                   cuda::CUdeviceptr constants) const {
        std::memcpy(args, inst_->args.data(), inst_->args.size() * sizeof(std::uint64_t));
        for (const ir::Buffer& buf : inst_->art->program.buffers) {
            const auto i = static_cast<std::size_t>(buf.id);
            if (buf.role == ir::BufferRole::Input) args[i] = reinterpret_cast<std::uint64_t>(in);
            else if (buf.role == ir::BufferRole::Output) args[i] = reinterpret_cast<std::uint64_t>(out);
            else if (buf.role == ir::BufferRole::Temp) args[i] = temps + inst_->temp_offsets[i];
            else if (buf.role == ir::BufferRole::Constant) args[i] = constants + inst_->table_at[i];
        }
        for (std::size_t d = 0; d < 4; ++d)
            if (inst_->output_stride_param[d] >= 0)
                std::memcpy(&args[inst_->buffer_slots + static_cast<std::size_t>(inst_->output_stride_param[d])],
                            &out_strides[d], sizeof(std::int64_t));
    }

    const CudaInstance& instance() const { return *inst_; }
    const cuda::Device& device_object() const { return dev_; }
    Workspace& workspace_of_device() const { return ws_; }

    ShapeInfo output() const override { return output_; }
    Layout output_layout() const override { return inst_->art->output_layout; }
    int device() const override { return device_; }
    std::string explain() const override {
        schedule::Binding b = inst_->binding;
        const Dims d = dense_strides(output_.shape, inst_->art->output_layout);
        schedule::bind_output_strides(inst_->art->program, b, {d[0], d[1], d[2], d[3]});
        std::string s = schedule::explain(inst_->art->program, b);
        const ir::Program& p = inst_->art->program;
        for (std::size_t i = 0; i < p.gpu_fusions.size(); ++i) {
            s += fmt::format("kernel_{} and kernel_{} {}: {}", p.gpu_fusions[i].producer, p.gpu_fusions[i].consumer,
                             inst_->fused[i].plan.fused ? "run as one (fused through shared memory)" : "run apart",
                             inst_->fused[i].plan.why);
            if (const auto& c = inst_->choice[i]) {
                std::lock_guard lock(c->mutex);
                const int d = c->decided.load();
                s += d == 0 ? "; where that is faster (being measured on its first runs)"
                            : fmt::format("; measured on its first runs: fused {:.1f} µs, as two kernels {:.1f} µs: {}",
                                          c->fused_us, c->apart_us, d == 1 ? "fused" : "as two kernels");
            }
            s += "\n";
        }
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
    const Target target = target_for(dev);
    art->program = schedule_for_cuda(g, width, target, debug.empty() ? nullptr : &dumps);
    art->output_layout = g.channels_last ? Layout::ChannelsLast : Layout::Contiguous;
    art->source = codegen::generate_cuda(art->program, target.block_threads);
    if (!debug.empty()) {
        driver::write_schedule_dumps(debug, dumps, art->program);
        driver::write_text(debug / "kernel.cu", art->source);
    }
    // A cold prepare loads through a compiler of its own, whose memory cache is empty: the
    // module comes from the disk cache or NVRTC, as in a new process.
    std::optional<cuda::Compiler> own;
    if (options.cold_prepare) own.emplace();
    cuda::Compiler& compiler = own ? *own : nvrtc_compiler();
    cuda::CompilerStats loaded;  // this load's (other threads load at the same time)
    art->module = compiler.load(dev, art->source, &loaded);
    stats.compiled += loaded.compiled;
    stats.disk_hits += loaded.disk_hits;
    stats.memory_hits += loaded.memory_hits;
    for (std::size_t k = 0; k < art->program.kernels.size(); ++k)
        art->kernels.push_back(art->module->function(codegen::cuda_kernel_name(art->program, k)));
    for (std::size_t i = 0; i < art->program.gpu_fusions.size(); ++i) {
        art->fused.push_back(art->module->function(codegen::cuda_fused_kernel_name(art->program, i)));
        cuda::set_max_dynamic_shared(art->fused.back(), dev.max_shared_per_block_optin());
    }
    return art;
}

// The batched entries of `art` (codegen::generate_cuda_batch), compiled or loaded from the
// disk cache on the first batch of its program.
void load_batch_entries(const CudaArtifact& art) {
    std::lock_guard lock(art.batch_mutex);
    if (art.batch_module) return;
    const cuda::Device& dev = art.module->device();
    cuda::CompilerStats own;
    std::shared_ptr<cuda::Module> module =
        nvrtc_compiler().load(dev, codegen::generate_cuda_batch(art.program, kBlockThreads), &own);
    CacheStats counted;
    counted.compiles = own.compiled;
    counted.disk_hits = own.disk_hits;
    count_cache(counted);
    std::vector<cuda::Function> kernels, fused;
    for (std::size_t k = 0; k < art.program.kernels.size(); ++k)
        kernels.push_back(module->function(codegen::cuda_batch_kernel_name(art.program, k)));
    for (std::size_t i = 0; i < art.program.gpu_fusions.size(); ++i) {
        fused.push_back(module->function(codegen::cuda_batch_fused_kernel_name(art.program, i)));
        cuda::set_max_dynamic_shared(fused.back(), dev.max_shared_per_block_optin());
    }
    art.batch_kernels = std::move(kernels);
    art.batch_fused = std::move(fused);
    art.batch_module = std::move(module);
}

// Images of one launch at most: each has at least one block along grid z (65535 at most).
constexpr std::size_t kMaxBatchImages = 65535;
// Groups of at least this many images run fused pairs with each image's batch tiles
// (CudaInstance::batch_fused).
constexpr std::size_t kBatchTilesImages = 8;
// An instance's constants up to this size travel with each batch's arguments; larger ones
// (a user's grid) are uploaded once, to the instance's device copy.
constexpr std::size_t kUploadedConstants = 64 * 1024;

// One launch sequence for images whose instances share the program and what runs where
// (CudaInstance::action): per kernel one launch over every image, sized by the largest.
// The images' toroid_args, then their fused kernels' toroid_tiles, then their
// intermediates go to one piece of device memory (one copy from the host per batch).
void run_group(const std::vector<const CudaPrepared*>& pipes, const std::vector<CudaBatchRun*>& runs,
               cuda::CUstream s) {
    const CudaInstance& first = pipes[0]->instance();
    const CudaArtifact& art = *first.art;
    const ir::Program& p = art.program;
    load_batch_entries(art);
    const std::size_t n = pipes.size();
    // Many images fill the device together: each takes its batch tiles (less of the
    // intermediate computed twice); a few take the tiles that fill the device alone.
    const bool batch_tiles = n >= kBatchTilesImages;
    std::vector<const std::vector<CudaInstance::FusedRun>*> fused(n);
    for (std::size_t i = 0; i < n; ++i) {
        const CudaInstance& inst = pipes[i]->instance();
        fused[i] = &inst.fused;
        if (!batch_tiles || p.gpu_fusions.empty()) continue;
        std::call_once(inst.batch_once, [&] {
            const schedule::FusedLimits limits = fused_limits(pipes[i]->device_object(), true);
            std::vector<CudaInstance::FusedRun> runs;
            std::vector<std::uint8_t> ranges;
            for (std::size_t f = 0; f < p.gpu_fusions.size(); ++f)
                runs.push_back(inst.fused[f].plan.fused
                                   ? fused_run(p, p.gpu_fusions[f], inst.binding, limits, ranges)
                                   : CudaInstance::FusedRun{});
            inst.batch_fused = std::move(runs);
            inst.batch_constants = std::move(ranges);
        });
        bool same = inst.batch_fused.size() == inst.fused.size();
        for (std::size_t f = 0; same && f < inst.fused.size(); ++f)
            same = inst.batch_fused[f].plan.fused == inst.fused[f].plan.fused;
        if (same) fused[i] = &inst.batch_fused;
    }
    const std::size_t slots = first.args.size(), fusions = p.gpu_fusions.size();
    constexpr std::size_t tile_words = sizeof(schedule::FusedTilesArg) / sizeof(std::uint64_t);
    static_assert(sizeof(schedule::FusedTilesArg) % sizeof(std::uint64_t) == 0);
    const auto round = [](std::size_t b) { return (b + 255) / 256 * 256; };
    const std::size_t tiles_at = round(n * slots * sizeof(std::uint64_t));
    // Each image's constants travel with the arguments (its block, then its batch tiles'
    // ranges), unless the block is large: then the instance's device copy serves every batch.
    // Where each image's pieces go in the run's memory (offsets), or its device copy.
    struct Place {
        bool uploaded = false;         // its constants travel with the arguments (at const_at)
        std::size_t const_at = 0, batch_at = 0, temps = 0;
        cuda::CUdeviceptr constants = 0;
    };
    std::vector<Place> place(n);
    std::size_t bytes = round(tiles_at + fusions * n * sizeof(schedule::FusedTilesArg));
    for (std::size_t i = 0; i < n; ++i) {
        const CudaInstance& inst = pipes[i]->instance();
        if (inst.constants.size() <= kUploadedConstants) {
            place[i].uploaded = true;
            place[i].const_at = bytes;
            bytes += round(std::max<std::size_t>(inst.constants.size(), 1));
        }
        if (fused[i] == &inst.batch_fused && !inst.batch_constants.empty()) {
            place[i].batch_at = bytes;
            bytes += round(inst.batch_constants.size());
        }
    }
    const std::size_t temps_at = bytes;
    for (std::size_t i = 0; i < n; ++i) {
        place[i].temps = bytes;
        bytes += pipes[i]->instance().workspace_bytes;  // a multiple of 256
    }
    const cuda::Device& dev = pipes[0]->device_object();
    dev.make_current();
    for (std::size_t i = 0; i < n; ++i)  // large blocks: on the device before the run's memory is taken
        if (!place[i].uploaded) place[i].constants = pipes[i]->device_constants();
    RunMemory memory(pipes[0]->workspace_of_device(), dev, bytes, s);
    std::vector<std::uint64_t> host(temps_at / sizeof(std::uint64_t), 0);
    for (std::size_t i = 0; i < n; ++i) {
        const CudaInstance& inst = pipes[i]->instance();
        Place& at = place[i];
        if (at.uploaded) {
            if (!inst.constants.empty())
                std::memcpy(host.data() + at.const_at / sizeof(std::uint64_t), inst.constants.data(),
                            inst.constants.size());
            at.constants = memory.base + at.const_at;
        }
        if (fused[i] == &inst.batch_fused && !inst.batch_constants.empty())
            std::memcpy(host.data() + at.batch_at / sizeof(std::uint64_t), inst.batch_constants.data(),
                        inst.batch_constants.size());
        pipes[i]->fill_args(host.data() + i * slots, runs[i]->input, runs[i]->output, runs[i]->output_strides,
                            memory.base + at.temps, at.constants);
        const cuda::CUdeviceptr ranges = fused[i] == &inst.batch_fused ? memory.base + at.batch_at : at.constants;
        for (std::size_t f = 0; f < fusions; ++f)
            if (inst.fused[f].plan.fused) {
                schedule::FusedTilesArg tiles = (*fused[i])[f].arg;
                tiles.ranges = ranges + (*fused[i])[f].ranges_at;
                std::memcpy(host.data() + tiles_at / sizeof(std::uint64_t) + (f * n + i) * tile_words, &tiles,
                            sizeof(schedule::FusedTilesArg));
            }
    }
    const cuda::DriverApi& api = cuda::driver();
    cuda::check(api.cuMemcpyHtoDAsync(memory.base, host.data(), temps_at, s), "cuMemcpyHtoDAsync");
    cuda::CUdeviceptr args_at = memory.base;
    for (std::size_t k = 0; k < p.kernels.size(); ++k) {
        const int action = first.action[k];
        if (action == CudaInstance::kInsideFused) continue;
        std::array<unsigned, 3> grid{0, 0, 0};
        unsigned shared = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const CudaInstance& inst = pipes[i]->instance();
            const auto& g = action >= 0 ? (*fused[i])[static_cast<std::size_t>(action)].grid : inst.grid[k];
            for (std::size_t d = 0; d < 3; ++d) grid[d] = std::max(grid[d], g[d]);
            if (action >= 0)
                shared = std::max(
                    shared, static_cast<unsigned>((*fused[i])[static_cast<std::size_t>(action)].plan.shared_bytes));
        }
        if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) continue;  // no image has anything to compute
        std::int32_t z_blocks = static_cast<std::int32_t>(std::max<std::size_t>(
            1, std::min<std::size_t>(grid[2], kMaxBatchImages / n)));
        const cuda::Dim3 blocks{grid[0], grid[1], static_cast<unsigned>(z_blocks) * static_cast<unsigned>(n)};
        if (action >= 0) {
            const auto i = static_cast<std::size_t>(action);
            const ir::GpuFusion& gf = p.gpu_fusions[i];
            cuda::CUdeviceptr tiles = memory.base + tiles_at + i * n * sizeof(schedule::FusedTilesArg);
            void* params[] = {&args_at, &tiles, &z_blocks};
            cuda::launch(art.batch_fused[i], blocks,
                         cuda::Dim3{static_cast<unsigned>(gf.block_x), static_cast<unsigned>(gf.block_y), 1}, shared, s,
                         params);
        } else {
            void* params[] = {&args_at, &z_blocks};
            cuda::launch(art.batch_kernels[k], blocks, cuda::Dim3{static_cast<unsigned>(kBlockThreads), 1, 1}, 0, s,
                         params);
        }
    }
    memory.release();
}

}  // namespace

void run_device_batch(std::vector<CudaBatchRun>& runs, void* stream) {
    // Groups: images whose instances share the program (its structure) and the same
    // kernels run (fused or apart), in the order of their first image.
    std::map<std::pair<const CudaArtifact*, std::vector<int>>, std::size_t> group_of;
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        CudaBatchRun& r = runs[i];
        r.ok = false;
        r.error.clear();
        const auto* q = dynamic_cast<const CudaPrepared*>(r.pipeline);
        if (q == nullptr) {
            r.error = "internal: not a pipeline prepared by prepare_cuda";
            continue;
        }
        if (!q->output_strides_supported(r.output_strides)) {
            r.error = fmt::format("output strides {} are not supported on CUDA: pass memory laid out as the output "
                                  "desc says (views of a stacked tensor work)",
                                  dims_text(r.output_strides));
            continue;
        }
        const auto key = std::make_pair(q->instance().art.get(), q->instance().action);
        const auto [it, added] = group_of.emplace(key, groups.size());
        if (added) groups.emplace_back();
        groups[it->second].push_back(i);
    }
    for (const auto& g : groups) {
        for (std::size_t from = 0; from < g.size(); from += kMaxBatchImages) {
            const std::size_t to = std::min(g.size(), from + kMaxBatchImages);
            std::vector<const CudaPrepared*> pipes;
            std::vector<CudaBatchRun*> part;
            for (std::size_t j = from; j < to; ++j) {
                part.push_back(&runs[g[j]]);
                pipes.push_back(dynamic_cast<const CudaPrepared*>(runs[g[j]].pipeline));
            }
            try {
                run_group(pipes, part, static_cast<cuda::CUstream>(stream));
                for (CudaBatchRun* r : part) r->ok = true;
            } catch (const std::exception& e) {
                for (CudaBatchRun* r : part) r->error = e.what();
            }
        }
    }
}

void run_batch_cuda(const Pipeline& p, std::vector<CudaBatchItem>& items, const EngineOptions& options, int device,
                    void* stream) {
    // Inputs of one spec share their prepared pipeline.
    std::map<std::pair<DType, std::pair<Dims, Dims>>, std::shared_ptr<CudaPipeline>> prepared;
    std::vector<CudaBatchRun> runs;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < items.size(); ++i) {
        CudaBatchItem& it = items[i];
        it.ok = false;
        it.error.clear();
        try {
            auto& q = prepared[{it.input_spec.dtype, {it.input_spec.shape, it.input_spec.strides}}];
            if (!q) q = prepare_cuda(p, it.input_spec, options, device);
            const ShapeInfo o = q->output();
            if (it.output_spec.dtype != o.dtype || it.output_spec.shape != o.shape)
                fail("output is {} {} but the result is {} {}", dtype_name(it.output_spec.dtype),
                     dims_text(it.output_spec.shape), dtype_name(o.dtype), dims_text(o.shape));
            runs.push_back(CudaBatchRun{q.get(), it.input, it.output, it.output_spec.strides, false, {}});
            which.push_back(i);
        } catch (const std::exception& e) {
            it.error = e.what();
        }
    }
    run_device_batch(runs, stream);
    for (std::size_t k = 0; k < runs.size(); ++k) {
        items[which[k]].ok = runs[k].ok;
        items[which[k]].error = runs[k].error;
    }
}

namespace {

// The CUDA back end of driver::prepare: CUDA C++ compiled by NVRTC for one device.
struct CudaBackend {
    using Artifact = CudaArtifact;
    using Instance = CudaInstance;
    const cuda::Device& dev;
    const EngineOptions& options;
    const TensorSpec& in;
    int device = 0;
    bool fuse = true;     // false: fused pairs run as two kernels
    bool measure = true;  // false: fused pairs whose tiles fit run fused, unmeasured
    std::string target_name() const { return target_for(dev).name(); }
    std::shared_ptr<const Artifact> compile(const ir::Graph& g, ir::IndexWidth width, PrepareStats& stats) {
        return compile_cuda(g, width, dev, options, stats);
    }
    // The instance keeps its graph (the tables) and what every run reuses.
    std::shared_ptr<const Instance> instantiate(std::shared_ptr<const Artifact> art, ir::Graph&& g,
                                                schedule::Binding&& binding) {
        auto made = std::make_shared<CudaInstance>();
        made->art = std::move(art);
        made->graph = std::move(g);
        made->binding = std::move(binding);
        const ir::Program& prog = made->art->program;
        // Fused pairs: the tiles of this instance, or the two kernels where a tile does not fit.
        made->action.assign(prog.kernels.size(), CudaInstance::kLaunch);
        std::vector<bool> in_shared(prog.buffers.size(), false);  // Temps no launch writes to global memory
        const schedule::FusedLimits limits = fused_limits(dev, false, fuse);
        // The constants block: the tables, then the fused pairs' tile ranges.
        made->table_at.assign(prog.buffers.size(), 0);
        for (const ir::Buffer& buf : prog.buffers)
            if (buf.role == ir::BufferRole::Constant) {
                const auto& data = made->graph.at(buf.tensor).data;
                made->table_at[static_cast<std::size_t>(buf.id)] =
                    append_aligned(made->constants, data.data(), data.size());
            }
        for (std::size_t i = 0; i < prog.gpu_fusions.size(); ++i) {
            const ir::GpuFusion& gf = prog.gpu_fusions[i];
            CudaInstance::FusedRun run = fused_run(prog, gf, made->binding, limits, made->constants);
            made->choice.emplace_back();
            if (run.plan.fused) {
                made->action[static_cast<std::size_t>(gf.producer)] = CudaInstance::kInsideFused;
                made->action[static_cast<std::size_t>(gf.consumer)] = static_cast<int>(i);
                in_shared[static_cast<std::size_t>(gf.temp)] = true;
                if (measure) made->choice.back() = std::make_unique<CudaInstance::FormChoice>();
            }
            made->fused.push_back(std::move(run));
        }
        // The intermediates in global memory, then those of the fused pairs (their two
        // kernels' runs only).
        made->temp_offsets.assign(prog.buffers.size(), 0);
        for (const bool shared : {false, true}) {
            for (const ir::Buffer& buf : prog.buffers) {
                const auto i = static_cast<std::size_t>(buf.id);
                if (buf.role != ir::BufferRole::Temp || in_shared[i] != shared) continue;
                made->temp_offsets[i] = made->workspace_apart;
                const auto bytes = static_cast<std::size_t>(made->binding.temp_bytes[i]);
                made->workspace_apart += (bytes + 255) / 256 * 256;
            }
            if (!shared) made->workspace_bytes = made->workspace_apart;
        }
        // What every run reuses: launch dimensions, the argument block with the parameters
        // filled in (the tables' addresses are set per run), where the output's strides go.
        for (const ir::Kernel& k : prog.kernels)
            made->grid.push_back(codegen::cuda_launch_dims(prog, k, made->binding.params, kBlockThreads));
        made->buffer_slots = std::max<std::size_t>(prog.buffers.size(), 1);
        made->args.assign(made->buffer_slots + std::max<std::size_t>(prog.params.size(), 1), 0);
        for (std::size_t i = 0; i < prog.params.size(); ++i)
            std::memcpy(&made->args[made->buffer_slots + i], &made->binding.params[i], sizeof(std::int64_t));
        const ir::Buffer& ob = prog.buffer(prog.output);
        for (std::size_t dd = 0; dd < 4; ++dd) {
            const ir::Expr& st = ob.strides[dd];
            if (st->op == ir::Op::Var && ir::is_param_var(st->var))
                made->output_stride_param[dd] = st->var - ir::kFirstParamVar;
        }
        return made;
    }
    std::string explain(const std::shared_ptr<const Instance>& inst, const PrepareStats& stats) {
        return CudaPrepared(inst, in, device, stats).explain();
    }
};

}  // namespace

std::unique_ptr<CudaPipeline> prepare_cuda(const Pipeline& p, const TensorSpec& in, const EngineOptions& options,
                                           int device) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<ShapeInfo> shapes = infer_shapes(p, ShapeInfo{in.dtype, in.shape});
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
    // TOROID_CUDA_FUSE=0 (fused pairs run as two kernels) or 1 (fused wherever the tiles
    // fit, not measured) is part of the instance: tests and benchmarks compare them in one
    // process. Unset: the faster form, measured per instance.
    const char* fuse = std::getenv("TOROID_CUDA_FUSE");
    const bool unfused = fuse != nullptr && std::string_view(fuse) == "0";
    const bool always = fuse != nullptr && std::string_view(fuse) == "1";
    CudaBackend backend{dev, options, in, device, !unfused, !unfused && !always};
    std::shared_ptr<const CudaInstance> inst = driver::prepare(
        cuda_cache(), backend, p, in, shapes, options,
        {fmt::format("cuda {}\n{}", device, unfused ? "unfused\n" : always ? "fused\n" : ""), ""}, stats);
    stats.prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::make_unique<CudaPrepared>(std::move(inst), in, device, stats);
}

namespace {

std::string source_for(const Pipeline& p, const TensorSpec& in, const std::string& arch, bool batched) {
    const std::vector<ShapeInfo> shapes = infer_shapes(p, ShapeInfo{in.dtype, in.shape});
    Target target = Target::cuda(arch);
    target.block_threads = kBlockThreads;
    driver::Decomposed d = driver::decompose_for(p, in, shapes, false, target.name(), {});
    const ir::Program prog = schedule_for_cuda(d.graph, d.width, target, nullptr);
    return batched ? codegen::generate_cuda_batch(prog, target.block_threads)
                   : codegen::generate_cuda(prog, target.block_threads);
}

}  // namespace

std::string cuda_source(const Pipeline& p, const TensorSpec& in, const std::string& arch) {
    return source_for(p, in, arch, false);
}

std::string cuda_batch_source(const Pipeline& p, const TensorSpec& in, const std::string& arch) {
    return source_for(p, in, arch, true);
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
        const std::size_t in_bytes = static_cast<std::size_t>(span_elements(in.shape(), in.strides())) * dtype_size(in.dtype());
        // Every copy is ordered on the run's stream with the kernels that read and write the
        // buffers: the upload before the first launch, the download after the last.
        cuda::Stream stream(dev);
        cuda::DeviceBuffer din(dev, std::max<std::size_t>(in_bytes, 1));
        if (in.numel() > 0) din.copy_from_host_async(in.data(), in_bytes, stream);
        const ShapeInfo o = p_->output();
        Tensor out = Tensor::empty(o.dtype, o.shape, p_->output_layout());
        cuda::DeviceBuffer dout(dev, std::max<std::size_t>(out.nbytes(), 1));
        p_->run_device(reinterpret_cast<const void*>(din.pointer()), reinterpret_cast<void*>(dout.pointer()),
                       out.strides(), stream.handle());
        if (out.nbytes() > 0) dout.copy_to_host_async(out.data(), out.nbytes(), stream);
        stream.synchronize();
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

namespace {

// What a pipeline keeps on CUDA between batches: its prepared pipelines by (device, dtype,
// shape, strides), so that a repeated size finds its instance without the driver printing
// its cache key; cleared when it grows past kMax.
class CudaState : public DeviceState {
public:
    using Key = std::tuple<int, int, Dims, Dims>;
    static constexpr std::size_t kMax = 4096;
    std::mutex mutex;
    std::map<Key, std::shared_ptr<CudaPipeline>> prepared;
};

class CudaDevice : public Device {
public:
    DeviceKind kind() const override { return DeviceKind::Cuda; }
    std::string_view name() const override { return "cuda"; }
    bool has_streams() const override { return true; }
    void check(int index, const char* engine) const override {
        if (engine && std::string_view(engine) != "compiled" && std::string_view(engine) != "cuda")
            throw DeviceUnavailable(
                fmt::format("engine '{}' runs on the CPU only; CUDA inputs use the compiled engine", engine));
        try {
            cuda::Device::get(index);
        } catch (const Error& e) {
            throw DeviceUnavailable(e.what());  // no driver, no device
        }
    }
    std::unique_ptr<DeviceFunction> prepare(const Pipeline& p, const TensorSpec& in, const char*,
                                            const EngineOptions& options, int index) const override {
        return prepare_cuda(p, in, options, index);
    }
    std::unique_ptr<DeviceState> new_state() const override { return std::make_unique<CudaState>(); }

    // One launch sequence per group of images sharing compiled kernels (run_device_batch).
    void run_batch(std::span<const DeviceBatchPipeline> pipelines, std::span<DeviceBatchItem> items, const char*,
                   int threads, int index, void* stream) const override {
        // Each item's prepared pipeline: its pipeline state's, else made below.
        std::vector<std::shared_ptr<CudaPipeline>> prepared(items.size());
        std::vector<CudaState::Key> keys(items.size());
        for (std::size_t k = 0; k < items.size(); ++k) {
            const TensorSpec& is = items[k].input_spec;
            keys[k] = CudaState::Key{index, static_cast<int>(is.dtype), is.shape, is.strides};
            auto* state = static_cast<CudaState*>(pipelines[items[k].pipeline].state);
            std::lock_guard lock(state->mutex);
            if (const auto it = state->prepared.find(keys[k]); it != state->prepared.end()) prepared[k] = it->second;
        }
        // One prepare per (pipeline, spec) the states lack, on the call's threads (outside
        // the states' locks: a prepare may compile; threads needing a structure another is
        // compiling wait for it). With a pipeline per image (each its own random draws),
        // binding is most of a small image's time.
        // Keyed by the state: one per pipeline, however many images name it.
        std::vector<std::optional<std::pair<const DeviceState*, CudaState::Key>>> missing(items.size());
        for (std::size_t k = 0; k < items.size(); ++k)
            if (!prepared[k]) missing[k] = std::make_pair(pipelines[items[k].pipeline].state, keys[k]);
        const auto made = parallel_once_per_key(missing, threads == 0 ? default_threads() : threads, [&](std::size_t k) {
            return std::shared_ptr<CudaPipeline>(
                prepare_cuda(*pipelines[items[k].pipeline].pipeline, items[k].input_spec, EngineOptions{}, index));
        });
        std::vector<CudaBatchRun> runs;
        std::vector<std::size_t> run_items;
        for (std::size_t k = 0; k < items.size(); ++k) {
            DeviceBatchItem& it = items[k];
            try {
                if (missing[k]) {
                    if (!made[k].value) fail("{}", made[k].error);
                    prepared[k] = made[k].value;
                    auto* state = static_cast<CudaState*>(pipelines[it.pipeline].state);
                    std::lock_guard lock(state->mutex);
                    if (!state->prepared.count(keys[k])) {
                        if (state->prepared.size() >= CudaState::kMax) state->prepared.clear();
                        state->prepared.emplace(keys[k], prepared[k]);
                    }
                }
                const ShapeInfo o = prepared[k]->output();
                if (it.output_spec.dtype != o.dtype || it.output_spec.shape != o.shape)
                    fail("output is {} {} but the result is {} {}", dtype_name(it.output_spec.dtype),
                         dims_text(it.output_spec.shape), dtype_name(o.dtype), dims_text(o.shape));
                runs.push_back(CudaBatchRun{prepared[k].get(), it.input, it.output, it.output_spec.strides, false, {}});
                run_items.push_back(k);
            } catch (const std::exception& e) {
                it.error = e.what();
            }
        }
        if (runs.empty()) return;
        run_device_batch(runs, stream);
        for (std::size_t r = 0; r < runs.size(); ++r) {
            items[run_items[r]].ok = runs[r].ok;
            items[run_items[r]].error = std::move(runs[r].error);
        }
    }
};

}  // namespace

const Device& cuda_device() {
    static const CudaDevice d;
    return d;
}

}  // namespace toroid
