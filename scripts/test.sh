#!/usr/bin/env bash
# Quick start, step 2: build with warnings as errors and run every test: the GoogleTest
# suites through CTest (conformance, unit, CLI), then a bounded set again under ASan +
# UBSan (scripts/sanitize.sh), then each fuzz target for a bounded time (FUZZ_SECONDS,
# default 60) built with clang.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time goes to the log: CI's budget is 90 minutes on 2 cores.
step() {
  local start=$SECONDS
  "$@"
  echo "test.sh: '$*' took $((SECONDS - start)) s (total $SECONDS s)"
}
step scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOROID_WERROR=ON >/dev/null
step cmake --build build-test -j "$jobs"
step ctest --test-dir build-test --output-on-failure -j "$jobs"
step scripts/sanitize.sh
step scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
