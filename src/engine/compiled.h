// The compiled engine: decompose -> schedule -> C++ codegen -> JIT (runtime/jit.h).
// Prepared pipelines are cached in memory per (pipeline, input spec); compiled modules
// are cached in memory and on disk by the JIT runtime.
#pragma once

#include "engine/engine.h"

namespace toroid {

std::unique_ptr<Engine> make_compiled_engine(const EngineOptions& options);

}  // namespace toroid
