// The primitive graph: what decompositions produce and the scheduler consumes. Each
// tensor is an input (the pipeline's image), a constant table (resize indices and
// weights, a user grid, normalize's mean/std: data known at compile time, passed to the
// kernels at run time), or a computed tensor whose value at index (v0, ..., v{rank-1})
// is `body` (Vars 0..rank-1; reduction Vars use ids >= kFirstReductionVar).
#pragma once

#include "ir/expr.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace toroid::ir {

inline constexpr int kFirstReductionVar = 64;

enum class TensorKind : std::uint8_t { Input, Constant, Compute };

struct GraphTensor {
    int id = -1;
    std::string name;      // e.g. "resize0.h_weights"; unique in the graph
    TensorKind kind = TensorKind::Compute;
    Type type = Type::F32;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;  // Input: the caller's strides; others: filled by the scheduler
    Expr body;                          // Compute only
    std::vector<std::uint8_t> data;     // Constant only: dense C-order values of `type`
    bool realize = false;  // decomposition's request to materialize (e.g. a separable pass)
    std::string origin;    // the pipeline op that made it, e.g. "op 0 (resize)"
};

class Graph {
public:
    int add_input(std::string name, Type t, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides);
    int add_constant(std::string name, Type t, std::vector<std::int64_t> shape, std::vector<std::uint8_t> data);
    template <typename T>
    int add_constant_values(std::string name, Type t, std::vector<std::int64_t> shape, const std::vector<T>& values);
    int add_compute(std::string name, Type t, std::vector<std::int64_t> shape, Expr body, std::string origin,
                    bool realize = false);
    int new_reduction_var() { return next_reduction_var_++; }

    const GraphTensor& at(int id) const { return tensors_.at(static_cast<std::size_t>(id)); }
    GraphTensor& at(int id) { return tensors_.at(static_cast<std::size_t>(id)); }
    const std::vector<GraphTensor>& tensors() const { return tensors_; }
    std::vector<GraphTensor>& tensors() { return tensors_; }
    int output = -1;

    // Multi-line readable dump: one tensor per line with kind, type, shape and body.
    std::string to_string() const;

private:
    std::vector<GraphTensor> tensors_;
    int next_reduction_var_ = kFirstReductionVar;
};

template <typename T>
int Graph::add_constant_values(std::string name, Type t, std::vector<std::int64_t> shape,
                               const std::vector<T>& values) {
    std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return add_constant(std::move(name), t, std::move(shape), std::move(bytes));
}

}  // namespace toroid::ir
