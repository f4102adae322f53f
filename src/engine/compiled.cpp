// The compiled engine. prepare() decomposes the pipeline for the input (a graph with this
// input's parameter values and tables), finds or builds the compiled program of that graph's
// structure — schedule, generate C++, compile and load, once per structure — and binds the
// instance's values to it. run() allocates intermediates, points the program at the caller's
// memory and calls the module's entry point. Programs are cached per structure (so images of
// any size share one), bound instances per (pipeline, input spec).
#include "engine/compiled.h"

#include "decomp/decompose.h"
#include "engine/driver.h"

#include "codegen/cpp.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "ops/pipeline_json.h"
#include "runtime/jit.h"
#include "runtime/prebuilt.h"
#include "runtime/sha256.h"
#include "schedule/bind.h"
#include "schedule/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

namespace toroid {
namespace {

using Entry = void (*)(void* const*, const std::int64_t*, int);

// What a compiled program is: the loop program and its code. Shared by every graph of one
// structure.
struct Artifact {
    ir::Program program;
    // The entry point swaps from the quick build to the full one when that is loaded.
    std::shared_ptr<TieredModule> module;
    Entry entry() const { return module->entry_as<Entry>(); }
    Layout output_layout = Layout::Contiguous;
};

// A graph instance bound to its program: the instance owns the table data the binding
// points into (taken from the graph, which is dropped: a loader keeps hundreds of
// instances, and memory freed after each bind is reused by the next).
struct Instance {
    std::shared_ptr<const Artifact> art;
    std::vector<std::vector<std::uint8_t>> tables;
    schedule::Binding binding;
};

const Target& host_target() {
    static const Target t = Target::host_cpu();
    return t;
}

CompilerConfig jit_config() {
    CompilerConfig c = CompilerConfig::from_environment();
    // The parallel loops are OpenMP loops.
    c.extra_flags.push_back("-fopenmp");
    // Every float operation rounds on its own, as in the reference and PyTorch's
    // scalar formulas: no fused multiply-adds the source does not ask for.
    c.extra_flags.push_back("-ffp-contract=off");
    // A CPU named by $TOROID_CPU_TARGET: its code is compiled for that CPU's level, as the
    // catalogue builds it ($TOROID_CXXFLAGS, when set, still decides): with -march=native on
    // a larger CPU the preamble would take the larger CPU's forms for the named one's lanes.
    const Target& t = host_target();
    if (t.named && std::getenv("TOROID_CXXFLAGS") == nullptr) {
        c.optimization_flags = {"-O3"};
        for (const std::string& f : isa_level(t.isa_level()).flags) c.optimization_flags.push_back(f);
    }
    // The target's features, which the generated source defines for the preamble, are the
    // compiler's too, whatever -march it was given ($TOROID_CXXFLAGS included).
    for (const std::string& f : t.features.compiler_flags()) c.optimization_flags.push_back(f);
    return c;
}

JitCompiler& jit() {
    static JitCompiler compiler = [] {
        // The kernels' parallel loops run on OpenMP's thread pool, which lives in the
        // OpenMP runtime the kernel modules bring in. Pin that runtime for the life of the
        // process: unloaded with the last module (at exit, say) it would pull its code out
        // from under its idle worker threads.
        dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
        return JitCompiler(jit_config());
    }();
    return compiler;
}

using driver::spec_key;

Tiers tiers_for(const EngineOptions& o) {
    // The dumps describe the code that runs; a prebuild makes full builds only.
    if (!o.debug_dir.empty() || !o.prebuild_into.empty()) return Tiers::FullOnly;
    // $TOROID_TIERED: 0 builds the full program only, "quick" the quick one only (to measure it).
    const char* env = std::getenv("TOROID_TIERED");
    if (o.tiers == Tiers::Tiered && env != nullptr && std::string_view(env) == "0") return Tiers::FullOnly;
    if (o.tiers == Tiers::Tiered && env != nullptr && std::string_view(env) == "quick") return Tiers::QuickOnly;
    return o.tiers;
}

// Whether one binding serves both programs: the same parameters, bound from the same
// sources, and the same buffers, stored alike (the scalar schedule differs from the full one
// in its loop kinds only; bind() works the values out from the full program).
bool same_interface(const ir::Program& a, const ir::Program& b) {
    if (a.params.size() != b.params.size() || a.buffers.size() != b.buffers.size() || a.input != b.input ||
        a.output != b.output)
        return false;
    auto same_exprs = [](const std::vector<ir::Expr>& x, const std::vector<ir::Expr>& y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), ir::structurally_equal);
    };
    for (std::size_t i = 0; i < a.params.size(); ++i) {
        const ir::ProgramParam &p = a.params[i], &q = b.params[i];
        if (p.name != q.name || p.kind != q.kind || p.source.kind != q.source.kind || p.source.index != q.source.index ||
            p.source.buffer != q.source.buffer || p.source.dim != q.source.dim)
            return false;
    }
    for (std::size_t i = 0; i < a.buffers.size(); ++i) {
        const ir::Buffer &x = a.buffers[i], &y = b.buffers[i];
        if (x.name != y.name || x.role != y.role || x.type != y.type || x.tensor != y.tensor ||
            x.lookup_table != y.lookup_table || x.memory_order != y.memory_order || !same_exprs(x.shape, y.shape) || !same_exprs(x.origin, y.origin) ||
            !same_exprs(x.strides, y.strides))
            return false;
    }
    return true;
}

std::shared_ptr<const Artifact> compile(const ir::Graph& graph, ir::IndexWidth width, const EngineOptions& options,
                                        PrepareStats& stats) {
    const std::filesystem::path debug = options.debug_dir;
    std::vector<schedule::PassDump> dumps;
    auto art = std::make_shared<Artifact>();
    schedule::Options so;
    so.target = host_target();
    so.index_width = width;
    art->program = schedule::schedule(graph, so, debug.empty() ? nullptr : &dumps);
    art->output_layout = graph.channels_last ? Layout::ChannelsLast : Layout::Contiguous;
    const std::string source = codegen::generate_cpp(art->program, so.target.kernel_lanes());
    const Tiers tiers = tiers_for(options);
    // The quick tier: the same program with scalar loops, scheduled and printed only when a
    // quick build is needed (not when the full build is found); empty where one binding
    // would not serve both programs.
    auto make_quick = [&]() -> std::string {
        schedule::Options qo = so;
        qo.target = so.target.scalar();
        const ir::Program quick = schedule::schedule(graph, qo);
        if (same_interface(quick, art->program)) return codegen::generate_cpp(quick, qo.target.kernel_lanes());
        // Tiered falls back to the full build alone; asked for the quick build, say so
        // rather than run the full one under its name (the tests compare the two).
        if (tiers == Tiers::QuickOnly)
            fail("internal: the quick program's parameters or buffers differ from the full program's");
        return {};
    };
    if (!debug.empty()) driver::write_schedule_dumps(debug, dumps, art->program);
    // A cold prepare loads through a JIT of its own, whose memory cache is empty: the
    // module comes from the disk cache or the compiler, as in a new process.
    std::optional<JitCompiler> own;
    JitCompiler& compiler = jit();  // first, so that the OpenMP runtime is pinned
    if (options.cold_prepare) own.emplace(jit_config());
    JitCompiler& j = own ? *own : compiler;
    JitStats own_work;  // this load's: background builds (any load's) are not this prepare's
    LoadOptions lo;
    lo.debug_dir = debug;
    lo.stats = &own_work;
    if (!options.prebuild_into.empty()) {
        art->module = TieredModule::of(
            j.prebuild(source, codegen::kEntryPoint, options.prebuild_into, so.target.isa_level(), lo),
            codegen::kEntryPoint);
    } else if (tiers == Tiers::FullOnly) {
        art->module = TieredModule::of(j.load(source, codegen::kEntryPoint, lo), codegen::kEntryPoint);
    } else if (tiers == Tiers::QuickOnly) {
        lo.quick = true;
        art->module = TieredModule::of(j.load(make_quick(), codegen::kEntryPoint, lo), codegen::kEntryPoint);
    } else {
        art->module = j.load_tiered(source, make_quick, codegen::kEntryPoint, lo);
    }
    stats.compiled += own_work.compiled;
    stats.disk_hits += own_work.disk_hits;
    stats.memory_hits += own_work.memory_hits;
    stats.prebuilt_hits += own_work.prebuilt_hits;
    stats.compile_seconds += own_work.compile_seconds;
    return art;
}

std::array<std::int64_t, 4> strides_of(const Tensor& t) {
    return {t.strides()[0], t.strides()[1], t.strides()[2], t.strides()[3]};
}

class CompiledPrepared final : public PreparedPipeline {
public:
    CompiledPrepared(std::shared_ptr<const Instance> inst, TensorSpec spec, int threads, PrepareStats stats)
        : inst_(std::move(inst)), spec_(spec), threads_(threads), stats_(stats) {
        // What every run into memory of the dense output strides reuses: the parameters with
        // those strides bound, and whether any buffer needs per-run memory.
        const ir::Program& p = inst_->art->program;
        shape_ = output_shape();
        dense_ = dense_out_strides(shape_);
        schedule::Binding b{inst_->binding.params, {}, {}, inst_->binding.shapes};
        if (schedule::output_strides_match(p, b, dense_)) {
            schedule::bind_output_strides(p, b, dense_);
            dense_params_ = std::move(b.params);
            dense_ok_ = true;
        }
        for (const ir::Buffer& buf : p.buffers)
            if (buf.role == ir::BufferRole::Temp && inst_->binding.temp_bytes[static_cast<std::size_t>(buf.id)] > 0)
                has_temps_ = true;
    }

    Tensor run(const Tensor& in) override {
        Tensor out;
        execute(in, nullptr, out);
        return out;
    }

    void run_into(const Tensor& in, const Tensor& out) override {
        Tensor unused;
        if (!execute(in, &out, unused)) Tensor(out).copy_from(unused);
    }

    std::string explain() const override {
        schedule::Binding b = inst_->binding;
        const Dims shape = output_shape();
        schedule::bind_output_strides(inst_->art->program, b, dense_out_strides(shape));
        return schedule::explain(inst_->art->program, b);
    }
    PrepareStats stats() const override { return stats_; }
    void wait_full() const override { inst_->art->module->wait(); }

private:
    Dims output_shape() const {
        const auto& s = inst_->binding.shapes[static_cast<std::size_t>(inst_->art->program.output)];
        return {s[0], s[1], s[2], s[3]};
    }
    std::array<std::int64_t, 4> dense_out_strides(const Dims& shape) const {
        const Dims d = dense_strides(shape, inst_->art->output_layout);
        return {d[0], d[1], d[2], d[3]};
    }

    // Runs the kernels. The result goes to *into when its strides suit the program (returns
    // true), else into a new tensor `out` (returns false).
    bool execute(const Tensor& in, const Tensor* into, Tensor& out) {
        if (!host_target().cannot_run.empty())
            fail("{}: its code is compiled (toroid apply --prepare-only) but not run here", host_target().cannot_run);
        if (into && dense_ok_ && !has_temps_ && in.spec() == spec_ && into->shape() == shape_ && strides_of(*into) == dense_) {
            run_dense(in.data(), into->data());
            return true;
        }
        if (in.spec() != spec_)
            fail("input ({} {}) does not match the spec the pipeline was compiled for ({})", dtype_name(in.dtype()),
                 spec_key(in.spec()), spec_key(spec_));
        const ir::Program& p = inst_->art->program;
        const schedule::Binding& bound = inst_->binding;
        schedule::Binding b{bound.params, {}, {}, bound.shapes};
        std::vector<void*> ptrs(p.buffers.size(), nullptr);
        std::vector<Tensor> temps;
        bool direct = false;
        const Dims shape = output_shape();
        const ir::Buffer& ob = p.buffer(p.output);
        if (into && into->shape() == shape && schedule::output_strides_match(p, bound, strides_of(*into))) {
            direct = true;
            ptrs[static_cast<std::size_t>(ob.id)] = into->data();
            schedule::bind_output_strides(p, b, strides_of(*into));
        } else {
            out = Tensor::empty(decomp::dtype_of(ob.type), shape, inst_->art->output_layout);
            ptrs[static_cast<std::size_t>(ob.id)] = out.data();
            schedule::bind_output_strides(p, b, strides_of(out));
        }
        for (const ir::Buffer& buf : p.buffers) {
            const auto i = static_cast<std::size_t>(buf.id);
            switch (buf.role) {
                case ir::BufferRole::Input: ptrs[i] = in.data(); break;
                case ir::BufferRole::Constant: ptrs[i] = const_cast<void*>(bound.tables[i]); break;
                case ir::BufferRole::Temp: {
                    const std::int64_t bytes = bound.temp_bytes[i];
                    if (bytes == 0) break;
                    Tensor t = Tensor::empty(DType::UInt8, {1, 1, 1, bytes + ir::kTempTailBytes});
                    ptrs[i] = t.data();
                    temps.push_back(std::move(t));
                    break;
                }
                case ir::BufferRole::Output: break;
            }
        }
        inst_->art->entry()(ptrs.data(), b.params.data(), threads_);
        return direct;
    }

    // The common run: input of the prepared spec, output dense in the layout the program
    // writes, no temporaries. Nothing is allocated: the buffer pointers go on the stack
    // (few buffers) and the parameters were bound once.
    void run_dense(void* input, void* output) const {
        const ir::Program& p = inst_->art->program;
        const schedule::Binding& bound = inst_->binding;
        constexpr std::size_t kStackSlots = 32;
        std::array<void*, kStackSlots> stack{};
        std::vector<void*> heap;
        void** ptrs = stack.data();
        if (p.buffers.size() > kStackSlots) {
            heap.assign(p.buffers.size(), nullptr);
            ptrs = heap.data();
        }
        for (const ir::Buffer& buf : p.buffers) {
            const auto i = static_cast<std::size_t>(buf.id);
            switch (buf.role) {
                case ir::BufferRole::Input: ptrs[i] = input; break;
                case ir::BufferRole::Constant: ptrs[i] = const_cast<void*>(bound.tables[i]); break;
                case ir::BufferRole::Output: ptrs[i] = output; break;
                case ir::BufferRole::Temp: break;
            }
        }
        inst_->art->entry()(ptrs, dense_params_.data(), threads_);
    }

    std::shared_ptr<const Instance> inst_;
    TensorSpec spec_;
    int threads_;
    PrepareStats stats_;
    Dims shape_{};
    std::array<std::int64_t, 4> dense_{};
    std::vector<std::int64_t> dense_params_;
    bool has_temps_ = false;
    bool dense_ok_ = false;
};

// The CPU back end of driver::prepare: C++ compiled by the JIT (or found in the catalogue).
struct CpuBackend {
    using Artifact = toroid::Artifact;
    using Instance = toroid::Instance;
    const EngineOptions& options;
    const TensorSpec& in;
    std::string target_name() const { return host_target().name(); }
    std::shared_ptr<const Artifact> compile(const ir::Graph& g, ir::IndexWidth width, PrepareStats& stats) {
        return toroid::compile(g, width, options, stats);
    }
    // The instance keeps the tables, not the graph.
    std::shared_ptr<const Instance> instantiate(std::shared_ptr<const Artifact> art, ir::Graph&& g,
                                                schedule::Binding&& binding) {
        auto made = std::make_shared<Instance>();
        made->art = std::move(art);
        made->binding = std::move(binding);
        made->tables = driver::take_tables(g);
        return made;
    }
    std::string explain(const std::shared_ptr<const Instance>& inst, const PrepareStats& stats) {
        return CompiledPrepared(inst, in, options.threads, stats).explain();
    }
};

class CompiledEngine final : public Engine {
public:
    explicit CompiledEngine(EngineOptions o) : options_(std::move(o)) {}
    std::string_view name() const override { return options_.specialize ? "specialized" : "compiled"; }

    std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) override {
        const auto start = std::chrono::steady_clock::now();
        const InterruptScope interruptible;  // toroid_interrupt() stops this prepare
        // Bad pipelines fail before compiling; the decomposition reuses the shapes.
        const std::vector<ShapeInfo> shapes = infer_shapes(p, ShapeInfo{in.dtype, in.shape});
        PrepareStats stats;
        // Quick-only programs, and the programs of a prebuild (built into their own folder),
        // are kept apart: nothing else may run them.
        const Tiers tiers = tiers_for(options_);
        const std::string tier = tiers == Tiers::QuickOnly             ? "quick\n"
                                 : !options_.prebuild_into.empty() ? "prebuild " + options_.prebuild_into + "\n"
                                                                   : "";
        CpuBackend backend{options_, in};
        std::shared_ptr<const Instance> inst =
            driver::prepare(cache(), backend, p, in, shapes, options_, {tier, tier}, stats);
        if (tiers == Tiers::FullOnly) inst->art->module->wait();
        stats.quick = !inst->art->module->full();
        stats.prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return std::make_unique<CompiledPrepared>(std::move(inst), in, options_.threads, stats);
    }

private:
    static driver::ProgramCache<Artifact, Instance>& cache() {
        static driver::ProgramCache<Artifact, Instance> c;
        return c;
    }
    EngineOptions options_;
};

}  // namespace

std::unique_ptr<Engine> make_compiled_engine(const EngineOptions& options) {
    return std::make_unique<CompiledEngine>(options);
}

}  // namespace toroid
