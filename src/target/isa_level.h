// Instruction-set levels: the named feature sets prebuilt modules are compiled for
// (runtime/prebuilt.h), each with the compiler flags that select it. A level is a set of
// cpu_features.h plus the -march level the compiler builds it at.
#pragma once

#include "target/cpu_features.h"

#include <string>
#include <string_view>
#include <vector>

namespace toroid {

struct IsaLevel {
    std::string name;                // e.g. "x86-64-v4"
    CpuFeatures features;            // what its code may use (the preamble's defines)
    std::vector<std::string> flags;  // -march=<x86-64 level>, its further features' -m flags, -mtune=generic
};

// The levels, best first: x86-64-v4+vbmi+vnni (AVX-512 with byte permutes and VNNI: Ice Lake
// and later Xeons, Zen 4), x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), x86-64-v3 (AVX2, FMA, BMI2).
// Compiled with -mtune=generic: the code runs on every CPU of its level.
const std::vector<IsaLevel>& isa_levels();
// The level named `name`; throws toroid::Error naming the known ones when there is none.
const IsaLevel& isa_level(std::string_view name);
// The best level whose features `features` holds ("x86-64-v3" when none does).
const IsaLevel& isa_level_of(const CpuFeatures& features);
// Whether this CPU runs code of the level named `name` (false for unknown names).
bool isa_supported(std::string_view name);

}  // namespace toroid
