#!/usr/bin/env bash
# Builds toroid with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and runs a
# bounded set under them: the unit tests, the shape-generic and CLI tests, a subset of the
# conformance cases and the differential sweep, with the generated kernels compiled with
# the same sanitizers (they load into the sanitized process). Any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
build=build-asan
# -O1: the sanitized build compiles fast enough for CI and still runs the suites in minutes;
# -g1: line numbers in the reports. Warnings are errors in the main build only: GCC 12's
# -Wmaybe-uninitialized misfires inside <regex> and <functional> under the sanitizers.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  -DTOROID_SANITIZE=ON -DTOROID_WERROR=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target toroid toroid_tests

# The kernels the JIT writes get the same instrumentation (the usual -O2 -march=native
# otherwise), in a cache of their own so that no uninstrumented kernel is reused.
export TOROID_CXXFLAGS="-O2 -march=native -fsanitize=address,undefined -fno-omit-frame-pointer"
export TOROID_CACHE_DIR="$PWD/$build/kernel-cache"
rm -rf "$TOROID_CACHE_DIR"
# halt_on_error: the first report ends the test with a failure (UBSan's too).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# 60 sweep cases, as in the main run, but other seeds (5000..5059): more cases seen per CI run.
export TOROID_SWEEP_CASES="${TOROID_ASAN_SWEEP_CASES:-60}"
export TOROID_SWEEP_SEED="${TOROID_ASAN_SWEEP_SEED:-5000}"

# Every GoogleTest but the conformance cases (CUDA tests skip without a GPU; the Python
# tests run an uninstrumented interpreter over libtoroid_c.so, which this build does not
# make, and are left to the main run, as are the cache stress cases, whose timings assume
# uninstrumented compiles, and the checks that compile CUDA sources with clang or NVRTC,
# which check those compilers' view of the sources: the generator that prints them runs
# here in CudaCodegen.ConformancePipelinesShareFewSources), then every fifth conformance
# case of torch.nn.functional's ops and every tenth of the torchvision ops' tables on the
# compiled engine, and every tenth of the first on the reference engine. The grids of
# random images against the reference engine (the op tables, taps in lanes) build some
# hundred instrumented kernels each: every TOROID_TEST_STRIDE-th case of each runs here,
# every case in the main run.
export TOROID_TEST_STRIDE="${TOROID_ASAN_TEST_STRIDE:-6}"
ctest --test-dir "$build" --output-on-failure -j "$jobs" \
  -E '^(python_api|check_cuda_source.*|pip_install|stress_fuzz_python|stress_cache|stress_files|CudaCodegen\.NvrtcCompilesEveryConformanceSource|CudaCodegen/ClangCudaSources\..*|.*Cuda\.SourcesCompileWithClangWithoutAnSdk|.*\.CudaSourcesCompileWithoutAnSdk)$|EngineConformance'
ctest --test-dir "$build" --output-on-failure -j "$jobs" \
  -R 'EngineConformance\.MatchesPyTorch/(compiled_case0[0-9][0-9][05]|compiled_case1[0-9][0-9]0|reference_case0[0-9][0-9]0)_'

# The kernels really were instrumented (TOROID_CXXFLAGS reached the JIT): a kernel that
# loaded without ASan calls would mean the run above checked less than it claims.
so=$(find "$TOROID_CACHE_DIR" -name kernel.so -print -quit)
if [ -z "$so" ] || ! nm -D --undefined-only "$so" | grep -q '__asan_'; then
  echo "toroid: error: no ASan-instrumented kernel in $TOROID_CACHE_DIR (TOROID_CXXFLAGS not applied?)" >&2
  exit 1
fi
echo "sanitizers: no reports; kernels instrumented ($(find "$TOROID_CACHE_DIR" -name kernel.so | wc -l) built)"
