#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build toroid (Release) into build/,
# and run the main job: `toroid bench` on its default suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
build/toroid bench "$@"
