// The loop-level IR: a Program is a list of kernels run in order over a set of buffers.
// Each kernel is a loop nest over its output's index space (vars 0..rank-1, listed
// outer to inner in `loops`) whose body computes one value that is stored at
// output[v0, ..., v{rank-1}]. Loads in the body name buffers by id. Backends (C++ now,
// CUDA later) print kernels; they never see the ops that made them.
//
// Sizes, strides, regions and loop bounds are expressions of run-time parameters
// (ir::param): one program serves every input of its graph's structure. Each parameter is
// either given by the graph (an image size, a crop offset) or derived when values are bound
// (`ParamSource`): a realized buffer's region is what its consumers read, its strides
// follow from that region, the output's strides are the caller's.
#pragma once

#include "ir/expr.h"
#include "ir/graph.h"
#include "target/cpu_features.h"

#include <cstdint>
#include <stdexcept>
#include <variant>
#include <string>
#include <vector>

namespace toroid::ir {

enum class BufferRole : std::uint8_t { Input, Constant, Temp, Output };
// The CPU engine allocates every Temp buffer with this many readable bytes after its last
// element, so that generated code may gather bytes of a Temp buffer as 4-byte words (the
// hardware gathers words, not bytes) without reading past its allocation.
constexpr std::int64_t kTempTailBytes = 64;
std::string_view buffer_role_name(BufferRole r);

struct Buffer {
    int id = -1;      // the index in Program::buffers (Loads use it)
    int tensor = -1;  // the graph tensor it holds (tables: where bind finds the data)
    std::string name;
    BufferRole role = BufferRole::Temp;
    Type type = Type::F32;
    Shape logical;  // the graph tensor's shape
    Shape shape;    // the region stored (after bounds inference)
    Shape origin;   // logical index of element 0 of the region; Loads subtract it
    Shape strides;  // elements; chosen by the layout pass (inputs: the caller's)
    std::optional<Interval> value_range;  // integer tables: declared range of the values
    std::vector<int> memory_order;        // realized buffers: dims from the outermost in memory to the innermost
    // A table of a function of one byte (schedule/tabulate.h), [N or 1, C or 1, 1, 256], read
    // at [n, c, 0, byte]: stored dense with each plane's 256 entries in a row whatever the
    // pipeline's layout, so that code generators may look a uint8 table's entries up in
    // registers.
    bool lookup_table = false;
};

// How a parameter the scheduler introduced gets its value when a program is bound.
struct ParamSource {
    enum class Kind : std::uint8_t {
        Graph,         // the graph's own parameter `index`
        RegionOrigin,  // lowest index along dim `dim` of `buffer` that some consumer reads
        RegionExtent,  // number of indices from the origin to the highest one read
        DenseStride,   // `buffer` is dense in layout order: the product of the extents inside `dim`
        OutputStride,  // the stride along `dim` of the memory the caller gives for the output
    };
    Kind kind = Kind::Graph;
    int index = -1;   // Graph
    int buffer = -1;  // the others
    int dim = -1;
};

struct ProgramParam {
    std::string name;
    ParamKind kind = ParamKind::Size;
    ParamSource source;
};

// Serial: a plain loop. Parallel: iterations split over threads (adjacent Parallel
// loops are collapsed into one iteration space). Vector: the SIMD loop. Unrolled: a
// small static loop (e.g. 3 channels) written out, so that the loop around it
// vectorizes over interleaved elements. GridX / GridY / GridZ (GPU targets): the loop's
// iterations are the threads along that grid dimension (X: consecutive threads of a block,
// for coalesced accesses; several GridZ loops are collapsed into one dimension).
enum class LoopKind : std::uint8_t { Serial, Parallel, Vector, Unrolled, GridX, GridY, GridZ };
std::string_view loop_kind_name(LoopKind k);

struct Loop {
    int var = 0;  // output dim index (0..rank-1)
    Expr begin;   // the loop runs over [begin, begin + extent): the stored region
    Expr extent;
    LoopKind kind = LoopKind::Serial;
};

// A Sum of at most this many taps, all known, is printed unrolled (each term simplified
// with its tap); a longer one, or one over a run-time count, is a loop per output.
inline constexpr std::int64_t kMaxUnrolledTaps = 8;
// Whether a Sum node is printed as a loop (see kMaxUnrolledTaps).
inline bool tap_loop(const Expr& sum) {
    const auto n = const_extent(sum);
    return !n || *n > kMaxUnrolledTaps;
}

// How a CPU kernel's vector body reads a load (schedule/access.h decides, the C++ printer
// lowers): the forms from cheapest to dearest.
enum class LoadForm : std::uint8_t {
    Uniform,            // the same address in every lane: one load (broadcast where needed)
    Contiguous,         // consecutive addresses: one vector load
    Reversed,           // consecutive addresses backwards: a vector load and a lane reversal
    Strided,            // a constant stride (not 0, 1 or -1): a strided gather
    ByteTable,          // a 256-entry byte table looked up by a byte: permutes in registers
    Window,             // 1- or 4-byte lanes whose part that differs across lanes is fixed per
                        // vector (a tap loop's, or the output column's alone): a window of
                        // memory and a permute
    WordGather,         // bytes of a Temp buffer gathered as 4-byte words
    BoundedWordGather,  // bytes of the input gathered as 4-byte words kept inside its span
    LaneGather,         // anything else: the hardware gather (4-, 8-byte), lane by lane (1-, 2-byte)
};
std::string_view load_form_name(LoadForm f);
// One buffer's loads of one form in a kernel's vector body (`count`: distinct loads).
struct LoadAccess {
    int buffer = -1;
    LoadForm form = LoadForm::Contiguous;
    int count = 0;
    bool operator==(const LoadAccess&) const = default;
};

// A CPU kernel's plan: what the scheduler's CPU passes chose for its vector loop, which the
// C++ printer follows.
struct CpuPlan {
    int vector_width = 1;     // lanes of the Vector loop (1: none)
    // Vectors of the Vector loop computed per step (its body printed that many times, kLanes
    // apart): their tap loops run as one, sharing each tap's weight and address.
    int vector_unroll = 1;
    // C > 0 when the innermost loop (Unrolled, the C channels of a channels-last pixel) and
    // the loop around it are one run of C * pixels elements for code generation
    // (fused_channel_kernel): every access moves along both by the same stride.
    int fused_channels = 0;
    // With fused_channels: some loads run through the pixels backwards (offset
    // A + s * (c - C * w): a horizontal flip of channels-last pixels), so the fused loop's
    // f gives c := f mod C and w := floordiv(f, C) (forward offsets still simplify to
    // A + s * f) instead of c := f, w := 0.
    bool fused_mirrored = false;
    // The scheduler chose tap pairs (schedule/tap_pairs.h) for this kernel's uint8 x int16
    // tap sums; the C++ printer prints them so only then.
    bool tap_pairs = false;
    // C (3 or 4) when the scheduler chose taps in lanes (schedule/tap_pairs.h, TapLanes) for
    // this kernel's tap sum: the C++ printer adds that form beside the vector loop.
    int tap_lanes = 0;
    // With tap_lanes: output pixels a step (4 with 64-byte registers, 2 with 32-byte ones);
    // each register holds 2 * tap_lanes_pixels taps of one pixel.
    int tap_lanes_pixels = 4;
    // With tap_lanes: it runs where the taps of kLanes consecutive outputs span more bytes
    // than this (at run time), or there are fewer outputs than kLanes. With
    // tap_lanes_past_window instead where one tap of kLanes outputs spans more bytes than
    // one window of the vector loop holds (that loop would read each tap in pieces).
    int tap_lanes_span = 0;
    bool tap_lanes_past_window = false;
    // With tap_lanes: rows a step (the innermost parallel loop's, where a pixel's bytes move
    // by the same distance from each row to the next): each step's pixel offsets and weights
    // are read once for all of them. 1: a row at a time.
    int tap_lanes_rows = 1;
    // With tap_lanes (AVX-512's form): each register's pixel bytes read whole, inside the
    // page (Target::tap_lanes_whole_loads).
    bool tap_lanes_whole_loads = false;
    // Where set, the vector loop runs in three parts at the edges of the interval
    // [partition_lo, partition_hi) of its variable that the value tests (schedule/partition.h).
    Expr partition_lo, partition_hi;
    // With a vector loop: the access analysis of its body (schedule/access.h), one entry per
    // buffer and form. The C++ printer prints a gather (word, bounded word or lane) of a
    // buffer only where this lists that form for it, and fails otherwise.
    std::vector<LoadAccess> loads;
};

// A GPU kernel's plan: what the scheduler's GPU passes chose for its grid, which the CUDA
// printer follows.
struct GpuPlan {
    // Consecutive outputs along the grid x loop each thread computes (1: one). With more,
    // the thread loads each load that moves by one element along x (forwards or backwards:
    // vector_loads) as one aligned access and stores its outputs as one, where the run's
    // addresses are aligned (checked at run time; else one at a time).
    int x_outputs = 1;
    std::vector<const Node*> vector_loads;  // nodes of the kernel's `value`
    // The reduction (a Sum node of `value`) a block of threads computes together, one output
    // per block (schedule/block_reduce.h); null: one thread per output.
    const Node* block_sum = nullptr;
};

struct Kernel {
    std::string name;
    int output = -1;          // buffer id
    std::vector<Loop> loops;  // outer to inner; a permutation of the output's dims
    Expr value;               // in terms of Vars 0..rank-1: logical indices of the output element
    // A count of keys per bin (schedule/histogram.h): printed as one pass adding one to
    // each term's bin; its loops are the printers' (the bins' dim is not a loop).
    bool histogram = false;
    // Where the value is stored; empty: at the loop vars (dim d at var(d)).
    std::vector<Expr> store_index;
    std::vector<std::string> decisions;  // why each choice was made (for --explain and debug dumps)
    // The target's plan: none until a target's pass sets one (the shared passes leave it).
    std::variant<std::monostate, CpuPlan, GpuPlan> plan;

    // The CPU plan (read: defaults where the kernel has none; written: made on first use).
    // A kernel planned for the GPU has no CPU plan to write (and the reverse): that is a
    // logic error.
    const CpuPlan& cpu() const;
    CpuPlan& cpu();
    const GpuPlan& gpu() const;
    GpuPlan& gpu();
};

// GPU: a producer kernel and the one kernel that reads its Temp output, also printed as one
// kernel whose blocks compute the part of the Temp their output tile reads into shared
// memory, then the tile from there (schedule/gpu_fuse.h decides, codegen/cuda.cpp prints,
// the engine chooses at launch: the pair stays in the program for launches that do not fit).
struct GpuFusion {
    enum class DimKind : std::uint8_t {
        TiledX,    // the consumer reads this dim at indices of its grid x loop's variable
        TiledY,    // ... of its grid y loop's variable: both from per-tile tables bound on the host
        PerBlock,  // one index per block, from the consumer's grid z variables (or none)
        Whole,     // indexed by the consumer's unrolled variable: the whole (constant) extent
    };
    int producer = -1, consumer = -1;  // kernel indices
    int temp = -1;                     // the buffer the producer writes and only the consumer reads
    std::vector<DimKind> dims;         // per dim of `temp`
    int block_x = 256, block_y = 1;    // threads of a block
    int outputs_x = 4;                 // consecutive elements along the grid x loop per thread and step
};

struct Program {
    // CPU targets: the instruction-set features the program was scheduled for; the
    // generated source defines them for the preamble (target/cpu_features.h).
    CpuFeatures cpu_features;
    std::vector<Buffer> buffers;  // indexed by buffer id
    std::vector<Kernel> kernels;
    std::vector<GpuFusion> gpu_fusions;  // GPU targets (schedule/gpu_fuse.h)
    std::vector<ProgramParam> params;  // ir::param(i) is params[i]; the graph's come first, in order
    IndexWidth index_width = IndexWidth::I64;
    int input = -1, output = -1;
    const Buffer& buffer(int id) const { return buffers.at(static_cast<std::size_t>(id)); }
    // Every parameter's declared range, as variable ranges for ir::bounds / simplify.
    VarRanges param_ranges() const;
    // The declared ranges of the parameters kernel `k` can name: in its value and loops, and
    // in the shape, strides and origin of every buffer it loads or stores (a long
    // pipeline's kernels each name a few of its many parameters).
    VarRanges param_ranges(const Kernel& k) const;
    // What a load from each buffer can give (a table's declared value range), for ir::bounds
    // and simplify: the one place the scheduler and the printers take it from. The ranges are
    // copied: the function outlives changes to the program.
    LoadBounds load_bounds() const;
    // The ranges of what kernel `k`'s value can name: its parameters' declared ranges
    // (param_ranges(k)) and each loop variable's [begin, begin + extent - 1] under them; the
    // one rule the scheduler simplifies under and the printers print under. A loop that may
    // be empty still bounds its variable (its body does not run there).
    VarRanges kernel_ranges(const Kernel& k, const LoadBounds& lb) const;
    std::string to_string() const;  // readable dump of parameters, buffers and loop nests
};

// The kernel `k` (fused_channels = C) as code generators print it: the channel loop c
// (innermost, C iterations) and the loop w around it become one loop over f = C * w + c,
// from C * begin(w), C * extent(w) iterations. Every offset of k is A + s * (C * w + c),
// so substituting c := f and w := 0 leaves each offset at A + s * f (with fused_mirrored:
// c := f mod C, w := floordiv(f, C), exact for every access; simplified, forward offsets
// are A + s * f and backward ones keep the division: the code generator gathers them).
Kernel fused_channel_kernel(const Program& prog, const Kernel& k);

// A kernel of a pass that splits another (schedule/tabulate.h, schedule/rfactor.h): a new
// Temp buffer of `shape` (origin 0) appended to prog.buffers (references to buffers held
// across the call go stale), and the kernel that computes `value` over it, one serial loop a
// dim. The pass puts it before the kernel it serves and numbers the kernels again
// (number_kernels).
Kernel new_temp_kernel(Program& prog, const std::string& name, Type type, Shape shape, Expr value,
                       std::string decision);
// Names kernels by their place: kernel_0, kernel_1, ...
void number_kernels(std::vector<Kernel>& kernels);

// The element offset of `b` at logical index `idx`: the sum over dims of
// (idx - origin) * stride, unsimplified. A dim whose stored extent is the constant 1 of a
// realized buffer contributes nothing (only index `origin` exists there).
Expr offset_expr(const Buffer& b, const std::vector<Expr>& idx);

}  // namespace toroid::ir
