// The compiled engine. prepare() runs the compiler's layers in order — decompose,
// schedule, generate C++, compile and load — and keeps the loaded module with the
// constant tables; run() allocates the result and the intermediates and calls the
// module's entry point. A process-wide table of compiled pipelines, keyed by the
// pipeline's canonical JSON, its grid data and the input spec, makes a repeated
// prepare free.
#include "engine/compiled.h"

#include "codegen/cpp.h"
#include "core/error.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "runtime/jit.h"
#include "runtime/sha256.h"
#include "schedule/schedule.h"

#include <fmt/format.h>

#include <chrono>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

namespace toroid {
namespace {

// What a compiled pipeline is: the loop program (buffers, constants) and its code.
struct Artifact {
    ir::Program program;
    std::shared_ptr<CompiledModule> module;
    void (*entry)(void* const*, int) = nullptr;
    Layout output_layout = Layout::Contiguous;
};

JitCompiler& jit() {
    static JitCompiler compiler = [] {
        // The kernels' parallel loops run on OpenMP's thread pool, which lives in the
        // OpenMP runtime the kernel modules bring in. Pin that runtime for the life of the
        // process: unloaded with the last module (at exit, say) it would pull its code out
        // from under its idle worker threads.
        dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
        CompilerConfig c = CompilerConfig::from_environment();
        // The parallel loops are OpenMP loops.
        c.extra_flags.push_back("-fopenmp");
        // Every float operation rounds on its own, as in the reference and PyTorch's
        // scalar formulas: no fused multiply-adds the source does not ask for.
        c.extra_flags.push_back("-ffp-contract=off");
        return JitCompiler(std::move(c));
    }();
    return compiler;
}

std::string spec_key(const TensorSpec& s) {
    return fmt::format("{} [{}] [{}]", dtype_name(s.dtype), fmt::join(s.shape, ","), fmt::join(s.strides, ","));
}

std::string pipeline_key(const Pipeline& p, const TensorSpec& in) {
    std::string key = pipeline_to_json(p) + "\n" + spec_key(in);
    for (const Op& op : p.ops)
        if (const auto* g = std::get_if<GridSampleOp>(&op)) {
            const Tensor dense = g->grid.to_layout(Layout::Contiguous);
            key += "\ngrid " + sha256_hex(std::string_view(static_cast<const char*>(dense.data()), dense.nbytes()));
        }
    return key;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f) fail("cannot write debug file '{}'", path.string());
}

std::string format_loops(const ir::Kernel& k) {
    std::string s;
    for (const ir::Loop& l : k.loops) {
        if (!s.empty()) s += " > ";
        s += fmt::format("{}v{}[{}..{})", l.kind == ir::LoopKind::Parallel ? "parallel " :
                                          l.kind == ir::LoopKind::Vector   ? "vector "
                                          : l.kind == ir::LoopKind::Unrolled ? "unrolled " : "",
                         l.var, l.begin, l.begin + l.extent);
    }
    return s;
}

std::string explain_program(const ir::Program& p) {
    std::string s = p.kernels.size() == 1 ? "1 kernel\n" : fmt::format("{} kernels\n", p.kernels.size());
    for (const ir::Kernel& k : p.kernels) {
        const ir::Buffer& out = p.buffer(k.output);
        std::string vec = "none", par = "none";
        std::vector<std::string> pars;
        for (const ir::Loop& l : k.loops) {
            if (l.kind == ir::LoopKind::Vector) vec = fmt::format("v{} ({} lanes)", l.var, k.vector_width);
            if (l.kind == ir::LoopKind::Parallel) pars.push_back(fmt::format("v{}", l.var));
        }
        if (!pars.empty()) par = fmt::format("{}", fmt::join(pars, " x "));
        s += fmt::format("{}: {} -> {} {}[{}]\n", k.name, format_loops(k), out.name, ir::type_name(out.type),
                         fmt::join(out.shape, ", "));
        s += fmt::format("  vector axis: {}; parallel: {}\n", vec, par);
        s += fmt::format("  bytes read: {}, written: {}, FLOPs: {}\n", k.bytes_read, k.bytes_written, k.flops);
    }
    return s;
}

std::shared_ptr<const Artifact> compile(const Pipeline& p, const TensorSpec& in, const EngineOptions& options,
                                        PrepareStats& stats) {
    const std::filesystem::path debug = options.debug_dir;
    if (!debug.empty()) std::filesystem::create_directories(debug);
    ir::Graph graph = decomp::decompose(p, in);
    if (!debug.empty()) {
        write_text(debug / "pipeline.json", pipeline_to_json(p));
        write_text(debug / "0_primitive_graph.txt", graph.to_string());
    }
    std::vector<schedule::PassDump> dumps;
    auto art = std::make_shared<Artifact>();
    art->program = schedule::schedule(graph, {}, debug.empty() ? nullptr : &dumps);
    art->output_layout = suggested_layout(in);
    const std::string source = codegen::generate_cpp(art->program, codegen::native_lanes());
    if (!debug.empty()) {
        int i = 1;
        for (const auto& d : dumps) write_text(debug / fmt::format("{}_loop_ir_after_{}.txt", i++, d.pass), d.text);
        std::string decisions;
        for (const ir::Kernel& k : art->program.kernels) {
            decisions += k.name + ":\n";
            for (const auto& d : k.decisions) decisions += "  " + d + "\n";
        }
        write_text(debug / "decisions.txt", decisions);
        write_text(debug / "explain.txt", explain_program(art->program));
    }
    const JitStats before = jit().stats();
    LoadOptions lo;
    lo.debug_dir = debug;
    art->module = jit().load(source, codegen::kEntryPoint, lo);
    const JitStats after = jit().stats();
    stats.compiled += after.compiled - before.compiled;
    stats.disk_hits += after.disk_hits - before.disk_hits;
    stats.memory_hits += after.memory_hits - before.memory_hits;
    art->entry = art->module->lookup<void (*)(void* const*, int)>(codegen::kEntryPoint);
    return art;
}

class CompiledPrepared final : public PreparedPipeline {
public:
    CompiledPrepared(std::shared_ptr<const Artifact> a, TensorSpec spec, int threads, PrepareStats stats)
        : art_(std::move(a)), spec_(spec), threads_(threads), stats_(stats) {}

    Tensor run(const Tensor& in) override {
        Tensor out;
        execute(in, nullptr, out);
        return out;
    }

    void run_into(const Tensor& in, const Tensor& out) override {
        Tensor unused;
        if (!execute(in, &out, unused)) Tensor(out).copy_from(unused);
    }

    std::string explain() const override { return explain_program(art_->program); }
    PrepareStats stats() const override { return stats_; }

private:
    // Runs the kernels. The result goes to *into when its strides match the scheduled
    // output buffer's (returns true), else into a new tensor `out` (returns false).
    bool execute(const Tensor& in, const Tensor* into, Tensor& out) {
        if (in.spec() != spec_)
            fail("input ({} {}) does not match the spec the pipeline was compiled for ({})", dtype_name(in.dtype()),
                 spec_key(in.spec()), spec_key(spec_));
        const ir::Program& p = art_->program;
        std::vector<void*> ptrs(p.buffers.size(), nullptr);
        std::vector<Tensor> temps;
        bool direct = false;
        for (const ir::Buffer& b : p.buffers) {
            const auto i = static_cast<std::size_t>(b.id);
            switch (b.role) {
                case ir::BufferRole::Input: ptrs[i] = in.data(); break;
                case ir::BufferRole::Constant: ptrs[i] = const_cast<std::uint8_t*>(b.data.data()); break;
                case ir::BufferRole::Temp: {
                    // Intermediates are dense 4-D regions in the chosen strides.
                    std::int64_t span = b.span();
                    Tensor t = Tensor::empty(DType::UInt8, {1, 1, 1, span * static_cast<std::int64_t>(ir::type_bytes(b.type))});
                    ptrs[i] = t.data();
                    temps.push_back(std::move(t));
                    break;
                }
                case ir::BufferRole::Output: {
                    const Dims shape{b.shape[0], b.shape[1], b.shape[2], b.shape[3]};
                    auto matches = [&](const Tensor& t) {
                        for (std::size_t d = 0; d < 4; ++d)
                            if (shape[d] != 1 && t.strides()[d] != b.strides[d]) return false;
                        return t.shape() == shape;
                    };
                    if (into && matches(*into)) {
                        direct = true;
                        ptrs[i] = into->data();
                        break;
                    }
                    out = Tensor::empty(b.type == ir::Type::U8 ? DType::UInt8 : DType::Float32, shape, art_->output_layout);
                    if (!matches(out)) fail("internal: output strides differ from the scheduled layout");
                    ptrs[i] = out.data();
                    break;
                }
            }
        }
        art_->entry(ptrs.data(), threads_);
        return direct;
    }

    std::shared_ptr<const Artifact> art_;
    TensorSpec spec_;
    int threads_;
    PrepareStats stats_;
};

class CompiledEngine final : public Engine {
public:
    explicit CompiledEngine(EngineOptions o) : options_(std::move(o)) {}
    std::string_view name() const override { return "compiled"; }

    std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) override {
        const auto start = std::chrono::steady_clock::now();
        infer_shape(p, ShapeInfo{in.dtype, in.shape});  // bad pipelines fail before compiling
        PrepareStats stats;
        const std::string key = pipeline_key(p, in);
        std::shared_ptr<const Artifact> art;
        {
            std::lock_guard lock(cache_mutex());
            auto it = cache().find(key);
            if (it != cache().end() && options_.debug_dir.empty()) art = it->second;
        }
        if (art) {
            stats.memory_hits = 1;
        } else {
            art = compile(p, in, options_, stats);
            std::lock_guard lock(cache_mutex());
            cache()[key] = art;
        }
        stats.prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return std::make_unique<CompiledPrepared>(std::move(art), in, options_.threads, stats);
    }

private:
    static std::mutex& cache_mutex() {
        static std::mutex m;
        return m;
    }
    static std::map<std::string, std::shared_ptr<const Artifact>>& cache() {
        static std::map<std::string, std::shared_ptr<const Artifact>> c;
        return c;
    }
    EngineOptions options_;
};

}  // namespace

std::unique_ptr<Engine> make_compiled_engine(const EngineOptions& options) {
    return std::make_unique<CompiledEngine>(options);
}

}  // namespace toroid
