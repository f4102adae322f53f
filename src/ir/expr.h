// Scalar expressions over symbolic indices: the one IR of toroid's compiler. A tensor
// in the primitive graph is a function from its index variables to an Expr; a kernel
// in the loop IR stores an Expr at every point of its loop nest. Exprs are immutable
// and shared (hash-consing is not needed: simplify() and the printers work on trees).
//
// Index arithmetic is typed I64 in the IR; codegen narrows it to int32 where range
// analysis (ir/simplify.h) proves the values fit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace toroid::ir {

// U16 is an integer type like the others. F16 and BF16 (float16, bfloat16) are storage
// types: a load of one is cast to F32 before anything computes on it, and a value is cast
// from F32 to one (rounded to nearest even) only to be stored or selected. Arithmetic,
// comparisons and reductions refuse them.
enum class Type : std::uint8_t { Bool, U8, I16, I32, I64, F32, F64, U16, F16, BF16 };

bool is_float(Type t);  // F32, F64, F16, BF16
bool is_int(Type t);  // U8, U16, I16, I32, I64
bool is_storage_only(Type t);  // F16, BF16
// C++ spelling: bool, uint8_t, uint16_t, int16_t, int32_t, int64_t, float, double; float16
// and bfloat16 for the storage-only types (printers spell those as 16-bit unsigned words)
std::string_view type_name(Type t);
std::size_t type_bytes(Type t);      // bytes of one element (bool: 1)
// The value range of a Bool or integer type (Bool: [0, 1]); throws toroid::Error for floats.
std::int64_t int_min(Type t);
std::int64_t int_max(Type t);

enum class Op : std::uint8_t {
    Const,      // ival (Bool and integer types) or fval (float types)
    Var,        // loop / index variable `var`
    Load,       // element of graph tensor `buffer` at args = one index Expr (I64) per dim
    Add, Sub, Mul,
    Div,        // float division only
    FloorDiv,   // integer division rounding toward -inf
    Mod,        // integer remainder with the divisor's sign (Python %), divisor > 0
    Min, Max,
    Neg,
    Fma,        // args[0] * args[1] + args[2], rounded once (std::fma) for floats
    Floor,      // float -> same float type
    RoundEven,  // float -> same float type, round half to even (nearbyint)
    Abs,
    ShiftRight, // arithmetic shift of an integer by args[1] (same type, 0 <= shift < width)
    Lt, Le, Eq, Ne,  // -> Bool
    And, Or, Not,    // Bool
    Select,     // args[0] ? args[1] : args[2]
    Cast,       // C++ static_cast (float -> int truncates toward zero); F32 <-> F16 / BF16
                // convert exactly as core/half.h does (to the narrow type: nearest, ties even)
    SatCast,    // clamp to the target type's range, then static_cast (NaN -> 0)
    Sum,        // sum of args[0] over reduction variable `var` in [0, args[1]); accumulates in `type`.
                // args[1] (I64) is the extent: a Const, or an expression of run-time parameters.
                // `ival` is its Reduce kind: a sum (Add), or the least or greatest term (Min, Max),
                // or a chain of fused multiply-adds (Fma).
    Pow,        // float args[0] to the power args[1], as PyTorch's CPU pow of a float tensor by a
                // scalar: exponent 0 gives 1, 1 the base, 0.5 sqrt, -0.5 1/sqrt, -1 1/x, 2 x*x,
                // 3 x*x*x, -2 1/(x*x); any other the double pow of both, rounded to the type.
};

// What a Sum node accumulates (Node::ival). Add starts from 0; Min and Max start from the
// type's identity (+inf / -inf for floats, the type's max / min for integers) and take a
// term that is less (greater) than the accumulator or a NaN, so that a NaN propagates as
// torch.amin / amax propagate it: acc = (v < acc || v != v) ? v : acc. Fma (float types
// only) starts from 0 and takes each term Mul(a, b) with one rounding, acc = fma(a, b, acc),
// as a convolution that accumulates with FMA instructions does; a term that is not a
// product (one that simplification rewrote) is added as Add adds it.
enum class Reduce : std::uint8_t { Add, Min, Max, Fma };

// Variable ids: 0..63 index the dims of the tensor being defined (loop variables),
// kFirstReductionVar.. are Sums' reduction variables, kFirstParamVar.. are run-time
// parameters (image sizes, strides, crop offsets, tap counts...): integers fixed for one
// run of a kernel, passed to it as arguments, each with a declared range.
inline constexpr int kFirstReductionVar = 64;
inline constexpr int kFirstParamVar = 1 << 20;
inline bool is_param_var(int id) { return id >= kFirstParamVar; }

std::string_view op_name(Op op);

struct Node;
using Expr = std::shared_ptr<const Node>;

struct Node {
    Op op;
    Type type;
    std::vector<Expr> args;
    std::int64_t ival = 0;  // Const value (integers, Bool)
    double fval = 0;        // Const value (floats)
    int var = -1;           // Var id; Sum's reduction variable id
    int buffer = -1;        // Load: tensor id
};

// ---- builders (they check types and fold constants where trivially possible) ----
// Semantics (ir/eval.h interprets them; constant folding uses the same code):
// - integer results wrap to the node's type (two's complement); F32 results are rounded
//   to float after every op; Min is `b < a ? b : a`, Max is `a < b ? b : a` (std::min/max);
// - iconst's value must lie in the type's range; a type mismatch throws toroid::Error;
// - FloorDiv/Mod by a constant 0 and casts of out-of-range or NaN float constants to an
//   integer type are not folded (they are undefined; ir::evaluate throws on them);
// - shift_right's shift is an expression of the shifted value's type whose value lies in
//   [0, width) (a Const is checked here; a run-time value is the caller's promise);
// - sat_cast to a float type is cast (every value is in range); to Bool is refused;
// - sum casts a body whose type differs from `acc` to `acc` (e.g. sum of uint8 in int32);
//   its extent is an I64 expression >= 0 (a Const, or one of run-time parameters).
Expr iconst(std::int64_t v, Type t = Type::I64);
Expr fconst(double v, Type t = Type::F32);
Expr bconst(bool v);
Expr var(int id);  // I64
Expr param(int index);  // var(kFirstParamVar + index): run-time parameter `index`
Expr load(int buffer, Type t, std::vector<Expr> indices);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr clamp(Expr x, Expr lo, Expr hi);  // min(max(x, lo), hi)
Expr neg(Expr a);
Expr fma(Expr a, Expr b, Expr c);
Expr floor(Expr a);
Expr round_even(Expr a);
Expr abs(Expr a);
Expr shift_right(Expr a, int bits);
Expr shift_right(Expr a, Expr bits);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr c, Expr a, Expr b);
Expr cast(Type t, Expr a);
Expr sat_cast(Type t, Expr a);
Expr sum(int reduction_var, std::int64_t extent, Expr body, Type acc);
Expr sum(int reduction_var, Expr extent, Expr body, Type acc);
// The least (Min) or greatest (Max) value of body over reduction_var in [0, extent), or
// the fused multiply-add chain of its products (Fma): a Sum node of that kind (see Reduce).
Expr reduce(Reduce kind, int reduction_var, Expr extent, Expr body, Type acc);
// The value a reduction of `kind` starts from (0, +inf / type max, -inf / type min).
Expr reduce_identity(Reduce kind, Type t);
Expr pow(Expr base, Expr exponent);

// ---- queries and rewrites ----
bool is_const(const Expr& e);
bool is_const(const Expr& e, std::int64_t v);
// The extent of a Sum node (args[1]), and its value when it is a constant (else nullopt).
const Expr& sum_extent(const Expr& sum_node);
std::optional<std::int64_t> const_extent(const Expr& sum_node);
// A Sum node's kind (Reduce::Add for a plain sum).
Reduce reduce_kind(const Expr& sum_node);
// The factors of an Fma Sum's term (its body, or a substituted copy of it) where the term
// is a product; nullopt for every other kind or term (which then accumulates as Add does).
std::optional<std::pair<Expr, Expr>> fma_factors(const Expr& sum_node, const Expr& term);
// Replaces Var(id) by replacements[id] where present (others unchanged).
Expr substitute(const Expr& e, const std::vector<std::pair<int, Expr>>& replacements);
// Expressions are DAGs: the walks below take each distinct node once.
// Applies `f` to every node bottom-up; f returns the node to use (possibly the same).
Expr rewrite(const Expr& e, const std::function<Expr(const Expr&)>& f);
// Distinct nodes by address, each given the next id (0, 1, ...) when first seen: the walks
// that take each node of a DAG once (insert), and encodings that name a node seen before by
// its id (id_of). Open addressing in one array: a walk of a few hundred nodes makes no
// allocation per node, as a std::unordered_set does. The nodes must outlive it.
class NodeIds {
public:
    static constexpr std::uint32_t kFresh = ~std::uint32_t{0};
    // The id `n` was given, or kFresh after giving it the next one.
    std::uint32_t id_of(const Node* n) {
        if (2 * (count_ + 1) > slots_.size()) grow();
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = hash(n) & mask;; i = (i + 1) & mask) {
            if (slots_[i].first == n) return slots_[i].second;
            if (slots_[i].first == nullptr) {
                slots_[i] = {n, count_++};
                return kFresh;
            }
        }
    }
    // Adds n; false if it was there.
    bool insert(const Node* n) { return id_of(n) == kFresh; }
    std::size_t size() const { return count_; }

private:
    static std::size_t hash(const Node* n) {
        return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(n) >> 4) * 0x9e3779b97f4a7c15ull >> 20);
    }
    void grow() {
        std::vector<std::pair<const Node*, std::uint32_t>> old(slots_.empty() ? 64 : 2 * slots_.size());
        old.swap(slots_);
        const std::size_t mask = slots_.size() - 1;
        for (const auto& [n, id] : old) {
            if (n == nullptr) continue;
            std::size_t i = hash(n) & mask;
            while (slots_[i].first != nullptr) i = (i + 1) & mask;
            slots_[i] = {n, id};
        }
    }
    std::vector<std::pair<const Node*, std::uint32_t>> slots_;
    std::uint32_t count_ = 0;
};
// Calls `f` once on every distinct node (pre-order).
void visit(const Expr& e, const std::function<void(const Expr&)>& f);
bool depends_on_var(const Expr& e, int id);
// depends_on_var(e, id) for many subexpressions of the same expressions (a walk asking at
// every node): one memo shared by the calls, so the questions together cost time linear
// in the distinct nodes instead of a walk per question. It keeps each expression it was
// asked about alive (a node's address is never reused while it is remembered).
class DependsOnVar {
public:
    explicit DependsOnVar(int id) : id_(id) {}
    bool operator()(const Expr& e);

private:
    int id_;
    std::unordered_map<const Node*, bool> memo_;
    std::vector<Expr> pinned_;
};
std::size_t node_count(const Expr& e);  // distinct nodes
bool structurally_equal(const Expr& a, const Expr& b);
// A hash of the structure (equal for structurally equal expressions; the same in every
// run, unlike node addresses), in time linear in the number of distinct nodes.
std::uint64_t structural_hash(const Expr& e);
// structural_hash for many expressions that share nodes (the simplifier hashes the terms of
// every sum it builds): one memo shared by the calls, keeping each hashed expression alive.
class StructuralHash {
public:
    std::uint64_t operator()(const Expr& e);

private:
    std::unordered_map<const Node*, std::uint64_t> memo_;
    std::vector<Expr> pinned_;
};
// e's node with its operands replaced by `args`, rebuilt through the builder of e's op, so
// that types are re-checked and constants re-folded (rewrite() and substitute() use it).
Expr with_args(const Expr& e, std::vector<Expr> args);

// One-line readable form, e.g. "load(t3, [v0, v1, clamp(v2 + 1, 0, 44), v3]) * 0.5f".
std::string to_string(const Expr& e);

}  // namespace toroid::ir
