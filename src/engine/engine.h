// The engine interface shared by the fronts (CLI, bench, C API): an engine prepares a
// pipeline for one input spec (the compiled engine compiles here) and the prepared
// object runs it on any input of that spec.
#pragma once

#include "core/tensor.h"
#include "ops/ops.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace toroid {

struct EngineOptions {
    int threads = 1;
};

class PreparedPipeline {
public:
    virtual ~PreparedPipeline() = default;
    // Runs on `in` (whose spec must equal the one prepared for) and returns a new tensor.
    virtual Tensor run(const Tensor& in) = 0;
};

class Engine {
public:
    virtual ~Engine() = default;
    virtual std::string_view name() const = 0;
    virtual std::unique_ptr<PreparedPipeline> prepare(const Pipeline& p, const TensorSpec& in) = 0;
};

// Engines by name ("reference", later "compiled"); throws toroid::Error for unknown names.
std::unique_ptr<Engine> make_engine(std::string_view name, const EngineOptions& options);
std::vector<std::string> engine_names();

}  // namespace toroid
