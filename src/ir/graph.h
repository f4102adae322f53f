// The primitive graph: what decompositions produce and the scheduler consumes. Each
// tensor is an input (the pipeline's image), a table (resize indices and weights, a user
// grid, normalize's mean/std, an affine warp's theta: data passed to the kernels at run
// time), or a computed tensor whose value at index (v0, ..., v{rank-1}) is `body` (Vars
// 0..rank-1; reduction Vars use ids >= kFirstReductionVar).
//
// Shapes are expressions: constants where the compiled code is specialized (a channel
// count of 3, say), run-time parameters (ir::param) elsewhere. A graph is made for one
// concrete input and carries that instance's parameter values and table data, but the
// compiler reads only its structure (structure_key): graphs of the same pipeline made for
// inputs of other sizes share one compiled program and differ only in those values.
#pragma once

#include "ir/expr.h"
#include "ir/simplify.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace toroid::ir {

using Shape = std::vector<Expr>;  // I64 expressions: constants and run-time parameters

// What a run-time integer parameter is; its declared range follows from the kind and the
// index width the program is compiled for (see declared_range).
enum class ParamKind : std::uint8_t {
    Size,    // an extent: >= 1 (>= 0 for region extents)
    Stride,  // elements between neighbours along a dim: >= 0
    Offset,  // a signed position (crop offsets, region origins)
    Count,   // a small count (taps of a resize filter): >= 1
    Shift,   // a fixed-point precision: 0..31
};
std::string_view param_kind_name(ParamKind k);

// Index arithmetic of a program is int32 when every buffer it touches spans less than
// 2^31 elements (checked when values are bound), else int64.
enum class IndexWidth : std::uint8_t { I32, I64 };

// Every value a parameter of this kind may take in code compiled for `width`.
Interval declared_range(ParamKind k, IndexWidth width);

struct Param {
    std::string name;  // e.g. "input.h", "op0.out_w", "op0.horizontal_taps"
    ParamKind kind = ParamKind::Size;
    std::int64_t value = 0;  // this instance's value
};

enum class TensorKind : std::uint8_t { Input, Constant, Compute };

struct GraphTensor {
    int id = -1;
    std::string name;      // e.g. "resize0.h_weights"; unique in the graph
    TensorKind kind = TensorKind::Compute;
    Type type = Type::F32;
    Shape shape;
    Shape strides;                  // Input: the caller's strides (constants and parameters)
    Expr body;                      // Compute only
    std::vector<std::uint8_t> data; // Constant only: this instance's values, dense C-order
    // Constant only, integer tables: the range every instance's values lie in (for the
    // compiler's range analysis, which must not depend on one instance's data).
    std::optional<Interval> value_range;
    bool realize = false;  // decomposition's request to materialize (e.g. a separable pass)
    std::string origin;    // the pipeline op that made it, e.g. "op 0 (resize)"
};

class Graph {
public:
    // A new run-time parameter with this instance's value; returns ir::param(index).
    Expr add_param(std::string name, ParamKind kind, std::int64_t value);
    int add_input(std::string name, Type t, Shape shape, Shape strides);
    int add_constant(std::string name, Type t, Shape shape, std::vector<std::uint8_t> data,
                     std::optional<Interval> value_range = std::nullopt);
    template <typename T>
    int add_constant_values(std::string name, Type t, Shape shape, const std::vector<T>& values,
                            std::optional<Interval> value_range = std::nullopt);
    int add_compute(std::string name, Type t, Shape shape, Expr body, std::string origin, bool realize = false);
    int new_reduction_var() { return next_reduction_var_++; }

    const GraphTensor& at(int id) const { return tensors_.at(static_cast<std::size_t>(id)); }
    GraphTensor& at(int id) { return tensors_.at(static_cast<std::size_t>(id)); }
    const std::vector<GraphTensor>& tensors() const { return tensors_; }
    std::vector<GraphTensor>& tensors() { return tensors_; }
    const std::vector<Param>& params() const { return params_; }
    int output = -1;
    // The memory order realized tensors take: the input's (channels-last input, channels-last
    // intermediates and result).
    bool channels_last = false;

    // This instance's parameter values as variable bindings (for ir::evaluate / bounds).
    std::vector<std::int64_t> param_values() const;
    // A shape expression's value for this instance.
    std::int64_t value_of(const Expr& e) const;
    std::vector<std::int64_t> concrete_shape(int tensor) const;

    // Everything the compiler reads (tensors, bodies, shapes, parameter names and kinds,
    // table types and declared ranges), without parameter values or table data: equal for
    // two graphs exactly when one compiled program serves both. A compact binary encoding
    // (not text: to_string() is the readable form), cheap enough for every prepare.
    std::string structure() const;

    // This graph with every parameter replaced by its value and every integer table's
    // declared range narrowed to its data: code compiled from it serves only this instance,
    // and range analysis sees exact sizes (the `specialized` engine, for comparison).
    Graph specialized() const;

    // By tensor id: whether the output reads it, directly or not (tensors read only earlier
    // ones, so one backward sweep). A crop that the next crop merged with is read by nobody.
    std::vector<bool> live() const;

    // Multi-line readable dump: parameters with their values, then one tensor per line.
    std::string to_string() const;

private:
    std::vector<GraphTensor> tensors_;
    std::vector<Param> params_;
    // The names taken, to refuse a duplicate without a scan (a long pipeline adds many).
    std::unordered_set<std::string> tensor_names_, param_names_;
    std::vector<std::int64_t> values_;  // params_[i].value, for eval_params
    int next_reduction_var_ = kFirstReductionVar;
};

template <typename T>
int Graph::add_constant_values(std::string name, Type t, Shape shape, const std::vector<T>& values,
                               std::optional<Interval> value_range) {
    std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return add_constant(std::move(name), t, std::move(shape), std::move(bytes), value_range);
}

// Shape helpers.
Shape const_shape(const std::vector<std::int64_t>& dims);
std::string shape_text(const Shape& s);  // "[p0, 3, p1, p2]"

}  // namespace toroid::ir
