// JSON front of the op catalogue: parses and validates a pipeline (a JSON list of ops,
// schema in docs/pipeline.md) into toroid::Pipeline, and prints one back.
#pragma once

#include "ops/ops.h"

#include <filesystem>
#include <string>

namespace toroid {

// `text` is the JSON; relative grid paths are resolved against `base_dir`.
Pipeline parse_pipeline(const std::string& text, const std::filesystem::path& base_dir);
// Reads the file, or parses `arg` itself when it starts with '[' (inline JSON).
Pipeline load_pipeline(const std::string& arg);
// Canonical JSON of a pipeline (stable: used in cache keys and debug dumps), written
// straight from the structs by each op's OpDef: compact, each object's keys sorted. Grid
// data is not included; grid_sample prints its path.
std::string pipeline_to_json(const Pipeline& p);

}  // namespace toroid
