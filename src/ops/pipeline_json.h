// JSON front of the op catalogue: parses and validates a pipeline (a JSON list of ops,
// schema in docs/pipeline.md) into toroid::Pipeline, and prints one back.
#pragma once

#include "ops/ops.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string>

namespace toroid {

// `text` is the JSON; grid paths are resolved against `base_dir` and may not leave it
// unless `allow_paths` (io::resolve_pipeline_path).
Pipeline parse_pipeline(const std::string& text, const std::filesystem::path& base_dir, bool allow_paths = false);
// The same of a document already parsed (valid JSON).
Pipeline parse_pipeline_doc(const nlohmann::json& doc, const std::filesystem::path& base_dir, bool allow_paths = false);
// Reads the file (at most io::kMaxPipelineBytes), or parses `arg` itself when it starts
// with '[' (inline JSON; its grid paths start from the current folder).
Pipeline load_pipeline(const std::string& arg, bool allow_paths = false);
// Canonical JSON of a pipeline (stable: used in cache keys and debug dumps), written
// straight from the structs by each op's OpDef: compact, each object's keys sorted. Grid
// data is not included; grid_sample prints its path.
std::string pipeline_to_json(const Pipeline& p);

}  // namespace toroid
