// `toroid prebuild`: a pipeline's programs built ahead of time into a folder of prebuilt
// modules (runtime/prebuilt.h), for every input class asked and every program variant that
// the probe sizes reach, so that a process that later runs it on any image size of those
// classes compiles nothing.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace toroid::cli {

struct PrebuildArgs {
    std::vector<std::string> pipelines;  // JSON files or inline JSON
    std::string into;                     // the folder (created when missing)
    // dtype:channels:layout, e.g. uint8:3:channels_last; empty: uint8:3 in both layouts.
    std::vector<std::string> inputs;
    // Probe sides (every H x W pair) and batch sizes; empty: the defaults (prebuild.cpp).
    std::vector<long long> sizes, batches;
};

// Builds them for this process's CPU target ($TOROID_CPU_TARGET names another) and reports
// on `out`; throws toroid::Error on bad arguments or a failed build.
int run_prebuild(const PrebuildArgs& args, std::ostream& out);

}  // namespace toroid::cli
