// The scheduler's target-neutral passes (see schedule.h for the list and their order). It
// knows primitives only: a tensor is cheap or expensive, read once or many times, stored
// in some layout; never which op made it. Sizes are expressions of run-time parameters.
#include "schedule/schedule.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "ir/simplify.h"
#include "schedule/block_reduce.h"
#include "schedule/gpu_fuse.h"
#include "schedule/histogram.h"
#include "schedule/rfactor.h"
#include "schedule/tabulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

namespace toroid::schedule {

using namespace ir;

namespace {

// What a Sum of unknown extent counts as when estimating how often a tensor is read.
constexpr std::int64_t kDynamicExtent = 16;

// The most distinct nodes an inlined tensor's body may have: beyond it the tensor is
// realized (a buffer) rather than substituted into its readers. The largest fused kernels
// of single ops and of the usual pipelines have a few hundred nodes.
constexpr std::size_t kMaxInlinedNodes = 1024;

// Loads of `tensor` in `e`, each weighted by the extents of the Sums around it: how
// many times one evaluation of `e` reads the tensor (saturating; memoized, as
// expressions are DAGs).
std::int64_t read_count_rec(const Expr& e, int tensor, std::unordered_map<const Node*, std::int64_t>& memo) {
    if (const auto it = memo.find(e.get()); it != memo.end()) return it->second;
    constexpr std::int64_t cap = std::int64_t{1} << 40;
    std::int64_t n = e->op == Op::Load && e->buffer == tensor ? 1 : 0;
    for (const auto& a : e->args) n = std::min(cap, n + read_count_rec(a, tensor, memo));
    if (e->op == Op::Sum) n = std::min(cap, n * std::max<std::int64_t>(const_extent(e).value_or(kDynamicExtent), 1));
    memo[e.get()] = n;
    return n;
}

std::int64_t read_count(const Expr& e, int tensor) {
    std::unordered_map<const Node*, std::int64_t> memo;
    return read_count_rec(e, tensor, memo);
}

bool contains_sum(const Expr& e) {
    bool found = false;
    visit(e, [&](const Expr& x) { found = found || x->op == Op::Sum; });
    return found;
}

// Dense C-order strides of a table of `shape`, as expressions.
Shape dense_c_strides(const Shape& shape) {
    Shape s(shape.size(), iconst(1));
    for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = simplify(mul(s[i], shape[i]));
    return s;
}

// Operations of `e` (distinct nodes, leaves excluded) that do not depend on the
// channel index v1, and those that do.
std::pair<std::int64_t, std::int64_t> channel_work(const Expr& e) {
    std::map<const Node*, bool> depends;  // memo: node depends on v1
    std::int64_t shared = 0, per_channel = 0;
    std::function<bool(const Expr&)> walk = [&](const Expr& x) -> bool {
        auto it = depends.find(x.get());
        if (it != depends.end()) return it->second;
        bool d = x->op == Op::Var && x->var == 1;
        for (const auto& a : x->args) d = walk(a) || d;
        depends[x.get()] = d;
        // A load counts as several operations: a table read shared by the channels (a
        // resize's tap start and weight, a warp's coordinates) is what moving the channel
        // loop innermost saves.
        if (x->op != Op::Const && x->op != Op::Var) (d ? per_channel : shared) += x->op == Op::Load ? 4 : 1;
        return d;
    };
    walk(e);
    return {shared, per_channel};
}

struct Scheduler {
    const Graph& g;
    Options options;
    std::vector<PassDump>* dumps;

    std::vector<bool> live;                // by graph id: read by the output, directly or not
    std::vector<bool> realized;            // by graph id
    std::vector<Expr> body;                // inlined bodies, by graph id
    std::vector<std::string> log;          // program-level decisions
    std::map<int, std::vector<std::string>> notes;  // per realized tensor

    ir::Program run() {
        check_interrupt();
        choose_realized();
        inline_tensors();
        Program prog = lower();
        dump("inline", prog);
        simplify_kernels(prog);
        drop_unread(prog);
        dump("simplify", prog);
        split_image_reductions(prog, options.target);  // CUDA only
        dump("split_reductions", prog);
        choose_histograms(prog, options.target);
        dump("histogram", prog);
        if (options.target.kind == TargetKind::Cpu) {
            tabulate_byte_functions(prog, options.target);
            dump("tabulate", prog);
            rfactor_row_reductions(prog, options.target);
            dump("rfactor", prog);
        }
        infer_bounds(prog);
        simplify_kernels(prog);  // the region parameters' ranges may prove more clamps idle
        dump("infer_bounds", prog);
        choose_layouts(prog);
        dump("choose_layouts", prog);
        order_loops(prog);
        dump("order_loops", prog);
        if (options.target.kind == TargetKind::Cpu) choose_cpu_axes(prog, options.target);
        else {
            choose_block_reductions(prog, options.target);
            choose_gpu_axes(prog, options.target);
        }
        dump("choose_axes", prog);
        if (options.target.kind == TargetKind::Cuda) {
            fuse_gpu_pairs(prog, options.target);
            dump("fuse_gpu_pairs", prog);
        }
        return prog;
    }

    // After every pass: the dump asked for, and a check for an interrupted prepare.
    void dump(const char* pass, const Program& prog) {
        check_interrupt();
        if (dumps) dumps->push_back(PassDump{pass, prog.to_string()});
    }

    // Pass 1: a computed tensor is realized when it is the output, when its
    // decomposition asks for it (a separable pass), or when it is expensive (it sums,
    // or is large) and would be evaluated more than once per consumer element.
    void choose_realized() {
        const auto n = g.tensors().size();
        realized.assign(n, false);
        std::vector<std::int64_t> uses(n, 0);
        // The computed tensors that read each tensor (in graph order): a tensor's readers
        // are looked at, not every later tensor (a long chain of ops would take time
        // quadratic in its length).
        std::vector<std::vector<int>> readers(n);
        for (std::size_t j = 0; j < n; ++j) {
            const GraphTensor& c = g.tensors()[j];
            if (c.kind != TensorKind::Compute) continue;
            std::vector<int> read;
            visit(c.body, [&](const Expr& e) {
                if (e->op == Op::Load && e->buffer >= 0 && static_cast<std::size_t>(e->buffer) < n)
                    read.push_back(e->buffer);
            });
            std::sort(read.begin(), read.end());
            read.erase(std::unique(read.begin(), read.end()), read.end());
            for (int r : read) readers[static_cast<std::size_t>(r)].push_back(static_cast<int>(j));
        }
        // Only the tensors the output reads are computed.
        live = g.live();
        for (std::size_t i = n; i-- > 0;) {
            const GraphTensor& t = g.tensors()[i];
            if (t.kind != TensorKind::Compute || !live[i]) continue;
            const int id = static_cast<int>(i);
            bool realize = id == g.output || t.realize;
            std::string why = id == g.output ? "the pipeline's result" : "requested by its decomposition";
            if (!realize) {
                // How often one element of each consumer kernel reads this tensor.
                std::int64_t count = 0;
                for (const int r : readers[i]) {
                    const auto j = static_cast<std::size_t>(r);
                    const GraphTensor& c = g.tensors()[j];
                    if (j <= i) continue;
                    const std::int64_t k = read_count(c.body, id);
                    count += k * (realized[j] ? 1 : std::max<std::int64_t>(uses[j], 1));
                }
                uses[i] = count;
                const bool expensive = contains_sum(t.body) || node_count(t.body) > 48;
                if (expensive && count > 1) {
                    realize = true;
                    why = fmt::format("expensive ({} nodes{}) and read {} times per consumer element",
                                      node_count(t.body), contains_sum(t.body) ? ", sums" : "", count);
                } else if (contains_sum(t.body) && reversed_along_w_on_cpu(readers, id)) {
                    // Inlined, each of its taps would read channels-last pixels backwards
                    // through windows (a permute per tap and no several vectors a step);
                    // realized, its taps read forwards and the reversal is one byte permute
                    // a vector (a flip after a resize: 171 -> 126 us on the Intel host).
                    realize = true;
                    why = "sums, read backwards along W by a channels-last consumer: the taps read forwards";
                } else {
                    log.push_back(fmt::format("inline {} ({}): read {} time(s) per consumer element", t.name, t.origin,
                                              count));
                }
            }
            if (realize) {
                realized[i] = true;
                notes[id].push_back("realize: " + why);
                log.push_back(fmt::format("realize {} ({}): {}", t.name, t.origin, why));
            }
        }
    }

    // Whether tensor `id` is read backwards along W by a kernel that stores bytes (CPU target,
    // channels-last program): a reader's last index moves by -1 with the reader's W, or by +1
    // in a reader that will be inlined and computes no sum (a crop) whose own readers read it
    // backwards (resize, crop, flip); and every kernel the reversed read lands in (the
    // reader where realized, else its readers', followed through inlined ones) stores 1-byte
    // elements. A kernel that converts to float reads the taps backwards at little cost
    // (its sums are 4-byte lanes already) and a realized pass would cost it a kernel more:
    // the train pipeline's crop, resize, flip, float, normalize ran 1.4x slower realized
    // (the AMD development host). Readers come later in graph order: their realize
    // decisions are made.
    bool reversed_along_w_on_cpu(const std::vector<std::vector<int>>& readers, int id, int depth = 0) const {
        if (options.target.kind != TargetKind::Cpu || !g.channels_last) return false;
        for (const int r : readers[static_cast<std::size_t>(id)]) {
            if (!live[static_cast<std::size_t>(r)]) continue;
            const GraphTensor& c = g.tensors()[static_cast<std::size_t>(r)];
            bool backwards = false, forwards = false;
            visit(c.body, [&](const Expr& e) {
                if (e->op != Op::Load || e->buffer != id || e->args.size() != 4) return;
                const std::optional<std::int64_t> s = linear_stride(e->args[3], 3);
                backwards = backwards || s == std::optional<std::int64_t>(-1);
                forwards = forwards || s == std::optional<std::int64_t>(1);
            });
            if (backwards && lands_in_byte_kernels(readers, r, depth)) return true;
            if (forwards && !backwards && depth < kMaxPassedReaders && !realized[static_cast<std::size_t>(r)] &&
                !contains_sum(c.body) && reversed_along_w_on_cpu(readers, r, depth + 1))
                return true;
        }
        return false;
    }
    static constexpr int kMaxPassedReaders = 8;  // inlined readers followed (a chain of crops)

    // Whether every kernel tensor `r`'s value lands in stores 1-byte elements: r's own where
    // it is realized, else those of its readers (followed through inlined ones).
    bool lands_in_byte_kernels(const std::vector<std::vector<int>>& readers, int r, int depth) const {
        const GraphTensor& t = g.tensors()[static_cast<std::size_t>(r)];
        if (realized[static_cast<std::size_t>(r)]) return type_bytes(t.type) == 1;
        if (depth >= kMaxPassedReaders) return false;
        bool any = false;
        for (const int q : readers[static_cast<std::size_t>(r)]) {
            if (!live[static_cast<std::size_t>(q)]) continue;
            any = true;
            if (!lands_in_byte_kernels(readers, q, depth + 1)) return false;
        }
        return any;
    }

    // Pass 2: substitute the bodies of inlined tensors into their readers. A tensor whose
    // body, with its inlined sources substituted, grows past kMaxInlinedNodes is realized
    // instead: a long chain of ops that each read their input once (nearest warps, flips
    // that do not cancel) fuses into kernels of bounded size, so that every later pass and
    // the C++ compiler see work linear in the pipeline's length.
    void inline_tensors() {
        body.assign(g.tensors().size(), nullptr);
        for (const GraphTensor& t : g.tensors()) {
            if (t.kind != TensorKind::Compute || !live[static_cast<std::size_t>(t.id)]) continue;
            check_interrupt();
            const auto id = static_cast<std::size_t>(t.id);
            body[id] = rewrite(t.body, [&](const Expr& e) -> Expr {
                if (e->op != Op::Load) return e;
                const GraphTensor& src = g.at(e->buffer);
                if (src.kind != TensorKind::Compute || realized[static_cast<std::size_t>(src.id)]) return e;
                std::vector<std::pair<int, Expr>> sub;
                for (std::size_t k = 0; k < e->args.size(); ++k) sub.emplace_back(static_cast<int>(k), e->args[k]);
                return substitute(body[static_cast<std::size_t>(src.id)], sub);
            });
            if (realized[id]) continue;
            // Simplified without ranges (true for every index: the value is unchanged), a
            // chain's index arithmetic folds (flips of flips, crops of crops) before it counts.
            // Realized when still over half the bound, so that a body is simplified once per
            // kMaxInlinedNodes / 2 nodes it grows at most (time linear in the chain's length).
            if (node_count(body[id]) <= kMaxInlinedNodes) continue;
            body[id] = simplify(body[id]);
            if (const std::size_t nodes = node_count(body[id]); nodes > kMaxInlinedNodes / 2) {
                realized[id] = true;
                const std::string why =
                    fmt::format("{} nodes with its inlined sources (simplified), over {} (a kernel of bounded size)",
                                nodes, kMaxInlinedNodes / 2);
                notes[t.id].push_back("realize: " + why);
                log.push_back(fmt::format("realize {} ({}): {}", t.name, t.origin, why));
            }
        }
    }

    // Pass 3: buffers (the input, the tables still read, the realized tensors) and one
    // kernel per realized tensor, in graph order (producers before consumers).
    Program lower() {
        Program prog;
        prog.index_width = options.index_width;
        prog.cpu_features = options.target.features;
        for (std::size_t i = 0; i < g.params().size(); ++i)
            prog.params.push_back(ProgramParam{g.params()[i].name, g.params()[i].kind,
                                               ParamSource{ParamSource::Kind::Graph, static_cast<int>(i), -1, -1}});
        std::map<int, int> buffer_of;  // graph id -> buffer id
        // The tensors some kernel reads (one walk of each kernel's value).
        std::vector<bool> read(g.tensors().size(), false);
        for (const GraphTensor& t : g.tensors())
            if (t.kind == TensorKind::Compute && realized[static_cast<std::size_t>(t.id)])
                visit(body[static_cast<std::size_t>(t.id)], [&](const Expr& e) {
                    if (e->op == Op::Load && e->buffer >= 0 && static_cast<std::size_t>(e->buffer) < read.size())
                        read[static_cast<std::size_t>(e->buffer)] = true;
                });
        auto reads = [&](int id) { return read[static_cast<std::size_t>(id)]; };
        for (const GraphTensor& t : g.tensors()) {
            const bool keep = t.id == 0 || (t.kind == TensorKind::Constant && reads(t.id)) ||
                              (t.kind == TensorKind::Compute && realized[static_cast<std::size_t>(t.id)]);
            if (!keep) continue;
            Buffer b;
            b.id = static_cast<int>(prog.buffers.size());
            b.tensor = t.id;
            b.name = t.name;
            b.type = t.type;
            b.logical = t.shape;
            b.shape = t.shape;
            b.origin.assign(t.shape.size(), iconst(0));
            if (t.kind == TensorKind::Input) {
                b.role = BufferRole::Input;
                b.strides = t.strides;
            } else if (t.kind == TensorKind::Constant) {
                b.role = BufferRole::Constant;
                b.strides = dense_c_strides(t.shape);
                b.value_range = t.value_range;
            } else {
                b.role = t.id == g.output ? BufferRole::Output : BufferRole::Temp;
            }
            buffer_of[t.id] = b.id;
            prog.buffers.push_back(std::move(b));
        }
        prog.input = buffer_of.at(0);
        prog.output = buffer_of.at(g.output);

        for (const GraphTensor& t : g.tensors()) {
            if (t.kind != TensorKind::Compute || !realized[static_cast<std::size_t>(t.id)]) continue;
            Kernel k;
            k.name = fmt::format("kernel_{}", prog.kernels.size());
            k.output = buffer_of.at(t.id);
            k.value = rewrite(body[static_cast<std::size_t>(t.id)], [&](const Expr& e) -> Expr {
                if (e->op != Op::Load) return e;
                return load(buffer_of.at(e->buffer), e->type, e->args);
            });
            k.decisions = notes[t.id];
            k.decisions.insert(k.decisions.begin(), fmt::format("computes {} ({})", t.name, t.origin));
            for (std::size_t d = 0; d < t.shape.size(); ++d)
                k.loops.push_back(Loop{static_cast<int>(d), iconst(0), t.shape[d], LoopKind::Serial});
            prog.kernels.push_back(std::move(k));
        }
        return prog;
    }

    // Pass 4: simplify every kernel's value under its ranges.
    void simplify_kernels(Program& prog) {
        const LoadBounds lb = prog.load_bounds();
        for (Kernel& k : prog.kernels) {
            check_interrupt();
            k.value = simplify(k.value, prog.kernel_ranges(k, lb), lb);
        }
    }

    // With pass 4: a kernel whose result no later kernel reads any more (simplified away:
    // the equalization of an image of zeros is zeros, whatever its histogram) is dropped,
    // with its buffer and the tables only it read; buffer ids are renumbered.
    void drop_unread(Program& prog) {
        const std::size_t nb = prog.buffers.size();
        std::vector<bool> read(nb, false), keep_kernel(prog.kernels.size(), false);
        auto reads_of = [&](const Expr& e) {
            visit(e, [&](const Expr& x) {
                if (x->op == Op::Load && x->buffer >= 0 && static_cast<std::size_t>(x->buffer) < nb)
                    read[static_cast<std::size_t>(x->buffer)] = true;
            });
        };
        for (std::size_t k = prog.kernels.size(); k-- > 0;) {
            const Kernel& kernel = prog.kernels[k];
            const auto out = static_cast<std::size_t>(kernel.output);
            if (prog.buffers[out].role != BufferRole::Output && !read[out]) continue;
            keep_kernel[k] = true;
            reads_of(kernel.value);
            for (const Loop& l : kernel.loops) {
                reads_of(l.begin);
                reads_of(l.extent);
            }
        }
        std::vector<bool> keep(nb, false);
        for (std::size_t i = 0; i < nb; ++i) {
            const Buffer& b = prog.buffers[i];
            keep[i] = b.role == BufferRole::Input || b.role == BufferRole::Output || read[i];
        }
        if (std::all_of(keep.begin(), keep.end(), [](bool k) { return k; })) return;
        std::vector<int> id_of(nb, -1);
        std::vector<Buffer> buffers;
        for (std::size_t i = 0; i < nb; ++i) {
            if (!keep[i]) continue;
            id_of[i] = static_cast<int>(buffers.size());
            buffers.push_back(std::move(prog.buffers[i]));
            buffers.back().id = id_of[i];
        }
        auto renumber = [&](const Expr& e) {
            return rewrite(e, [&](const Expr& x) -> Expr {
                if (x->op != Op::Load) return x;
                return load(id_of[static_cast<std::size_t>(x->buffer)], x->type, x->args);
            });
        };
        std::vector<Kernel> kernels;
        for (std::size_t k = 0; k < prog.kernels.size(); ++k) {
            if (!keep_kernel[k]) {
                log.push_back(fmt::format("drop {}: its result is read by no kernel", prog.kernels[k].name));
                continue;
            }
            Kernel kernel = std::move(prog.kernels[k]);
            kernel.output = id_of[static_cast<std::size_t>(kernel.output)];
            kernel.value = renumber(kernel.value);
            for (Loop& l : kernel.loops) {
                l.begin = renumber(l.begin);
                l.extent = renumber(l.extent);
            }
            kernels.push_back(std::move(kernel));
        }
        for (Buffer& b : buffers)
            for (auto* shape : {&b.logical, &b.shape, &b.origin, &b.strides})
                for (Expr& e : *shape) e = renumber(e);
        prog.input = id_of[static_cast<std::size_t>(prog.input)];
        prog.output = id_of[static_cast<std::size_t>(prog.output)];
        prog.buffers = std::move(buffers);
        prog.kernels = std::move(kernels);
    }

    // Pass 5: each realized intermediate is computed only over the region its consumers
    // read (a crop after a resize computes the cropped columns only). The region depends on
    // sizes and tables, so it becomes parameters whose values are worked out from the
    // consumers' index expressions when a graph's values are bound (schedule/bind.h). Dims
    // of a constant extent (a channel count) keep their whole extent.
    void infer_bounds(Program& prog) {
        for (Kernel& producer : prog.kernels) {
            Buffer& b = prog.buffers[static_cast<std::size_t>(producer.output)];
            if (b.role != BufferRole::Temp) continue;
            std::vector<std::string> shrunk;
            for (std::size_t d = 0; d < b.shape.size(); ++d) {
                if (is_const(b.logical[d])) continue;
                const int dim = static_cast<int>(d);
                auto add = [&](ParamSource::Kind kind, ParamKind pk, const char* what) {
                    prog.params.push_back(ProgramParam{fmt::format("{}.region_{}{}", b.name, what, d), pk,
                                                       ParamSource{kind, -1, b.id, dim}});
                    return param(static_cast<int>(prog.params.size()) - 1);
                };
                b.origin[d] = add(ParamSource::Kind::RegionOrigin, ParamKind::Offset, "origin");
                b.shape[d] = add(ParamSource::Kind::RegionExtent, ParamKind::Size, "extent");
                shrunk.push_back(fmt::format("v{}", d));
            }
            for (Loop& l : producer.loops) {
                l.begin = b.origin[static_cast<std::size_t>(l.var)];
                l.extent = b.shape[static_cast<std::size_t>(l.var)];
            }
            if (!shrunk.empty())
                producer.decisions.push_back(fmt::format("bounds: computes only the region of {} its consumers read",
                                                         fmt::join(shrunk, ", ")));
        }
    }

    // Pass 6: realized 4-D buffers take the input's layout; channels-last input keeps
    // every intermediate and the result channels-last. Intermediates are dense over their
    // region; the result is written into the caller's memory, whose strides are parameters
    // (only the dense dim's stride is fixed).
    void choose_layouts(Program& prog) {
        const bool cl = g.channels_last;
        log.push_back(fmt::format("layout: {} (the input's)", cl ? "channels_last" : "contiguous"));
        // Dims from the outermost to the innermost in memory.
        const std::vector<int> order = cl ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 1, 2, 3};
        for (Buffer& b : prog.buffers) {
            if (b.role != BufferRole::Temp && b.role != BufferRole::Output) continue;
            if (b.shape.size() != 4) fail("internal: realized tensor '{}' is not 4-D", b.name);
            b.strides.assign(4, iconst(1));
            // A byte function's table keeps each plane's 256 entries in a row.
            if (b.lookup_table) b.memory_order = {0, 1, 2, 3};
            else b.memory_order.assign(order.begin(), order.end());
            // The product of the extents inside the current dim, while it is a constant.
            std::optional<std::int64_t> inner = 1;
            for (std::size_t k = 4; k-- > 0;) {
                const auto d = static_cast<std::size_t>(b.memory_order[k]);
                if (inner) {
                    b.strides[d] = iconst(*inner);
                } else {
                    const auto kind = b.role == BufferRole::Output ? ParamSource::Kind::OutputStride
                                                                   : ParamSource::Kind::DenseStride;
                    prog.params.push_back(ProgramParam{fmt::format("{}.stride{}", b.name, d), ParamKind::Stride,
                                                       ParamSource{kind, -1, b.id, static_cast<int>(d)}});
                    b.strides[d] = param(static_cast<int>(prog.params.size()) - 1);
                }
                if (inner && is_const(b.shape[d])) *inner *= b.shape[d]->ival;
                else inner.reset();
            }
        }
        for (Kernel& k : prog.kernels) k.decisions.push_back(fmt::format("layout: {}", cl ? "channels_last" : "contiguous"));
    }

    // Pass 7: loops follow the stored buffer's memory order, so the innermost loop writes
    // consecutive elements. When a few channels share most of their work (a warp's sample
    // coordinates), the channel loop moves innermost, to be unrolled.
    void order_loops(Program& prog) {
        const std::vector<int> planar{0, 1, 2, 3};
        const std::vector<int> channels_order = g.channels_last ? std::vector<int>{0, 2, 3, 1} : planar;
        for (Kernel& k : prog.kernels) {
            // One channel (a grey image, a row's sums): channels-last memory is planar, and
            // the loop over W goes innermost, to be the vector loop.
            auto one = std::find_if(k.loops.begin(), k.loops.end(),
                                    [](const Loop& l) { return l.var == 1 && is_const(l.extent, 1); });
            const std::vector<int>& order = one != k.loops.end() ? planar : channels_order;
            std::vector<Loop> loops;
            for (int v : order)
                for (const Loop& l : k.loops)
                    if (l.var == v) loops.push_back(l);
            k.loops = loops;
            std::string why = "memory order of the output";
            auto c = std::find_if(k.loops.begin(), k.loops.end(), [](const Loop& l) { return l.var == 1; });
            if (c != k.loops.end() && c + 1 != k.loops.end() && is_const(c->extent) && c->extent->ival > 1 &&
                c->extent->ival <= 4) {
                const auto [shared, per_channel] = channel_work(k.value);
                if (shared > per_channel) {
                    const Loop moved = *c;
                    k.loops.erase(c);
                    k.loops.push_back(moved);
                    why = fmt::format("channels innermost: {} of {} operations are the same for every channel",
                                      shared, shared + per_channel);
                }
            }
            std::vector<std::string> names;
            for (const Loop& l : k.loops) names.push_back(fmt::format("v{}", l.var));
            k.decisions.push_back(fmt::format("loop order: {} ({})", fmt::join(names, ", "), why));
        }
    }
};

}  // namespace

Program schedule(const Graph& g, const Options& options, std::vector<PassDump>* dumps) {
    if (g.output < 0) fail("internal: graph has no output");
    Scheduler s{g, options, dumps, {}, {}, {}, {}, {}};
    return s.run();
}

}  // namespace toroid::schedule
