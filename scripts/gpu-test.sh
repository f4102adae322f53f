#!/usr/bin/env bash
# Runs toroid's CUDA runtime tests on a machine with an NVIDIA GPU and prints a summary.
# There a skipped GPU test is a failure: it means the driver, the device or NVRTC was not
# found. Usage: scripts/gpu-test.sh [BUILD_DIR]; toroid_tests is taken from
# BUILD_DIR/tests/ when given, else from PATH (a folder packed by device-pack, after
# `source .device/env.sh`).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TOROID_SOURCE_DIR=${TOROID_SOURCE_DIR:-$root}
export TOROID_TEST_DATA=${TOROID_TEST_DATA:-$root/tests/data}
if [ $# -gt 0 ]; then tests=$1/tests/toroid_tests; else tests=$(command -v toroid_tests || true); fi
[ -n "$tests" ] && [ -x "$tests" ] || { echo "gpu-test: no toroid_tests (build it, or source .device/env.sh)" >&2; exit 2; }
export TOROID_CACHE_DIR=${TOROID_CACHE_DIR:-$(mktemp -d)}

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
log=$(mktemp)
# The runtime tests, the CUDA code generator's NVRTC test and every conformance case on the
# cuda engine (clang's SDK-free check is CI's, not this machine's).
# They run as $GPU_TEST_SHARDS gtest shards at once (4 by default), so that they also run with
# other processes using the GPU and the shared disk cache.
filter='Cuda*:DiskCache*:*cuda_*:-CudaLoaderChild.*:CudaCodegen.Clang*:CudaCodegen/ClangCudaSources.*'
shards=${GPU_TEST_SHARDS:-4}
pids=()
for ((k = 0; k < shards; k++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k "$tests" --gtest_filter="$filter" >"$log.$k" 2>&1 &
  pids+=($!)
done
status=0
passed=0
for ((k = 0; k < shards; k++)); do
  wait "${pids[$k]}" || status=1
  # A shard's last PASSED line is its own count (a test runs a child test binary too, whose
  # closing lines come earlier).
  n=$(grep -E '^\[  PASSED  \] [0-9]+ tests?\.' "$log.$k" | tail -n 1 | sed -E 's/^\[  PASSED  \] ([0-9]+).*/\1/')
  passed=$((passed + ${n:-0}))
  cat "$log.$k" >>"$log"; rm -f "$log.$k"
done
# The launch tests again with a synchronize after each launch (faults surface at the launch).
TOROID_CUDA_SYNC=1 "$tests" --gtest_filter='CudaTest.FillAndVectorAddEveryElement:CudaTest.MissingKernelAndBadLaunchAreErrors' \
  >"$log.sync" 2>&1
sync_status=$?

failed=$(grep '^\[  FAILED  \] [A-Za-z]' "$log" | grep -v ' ms)$' | sort -u)
skipped=$(grep '^\[  SKIPPED \] [A-Za-z]' "$log" | grep -v ' ms)$' | sort -u)
echo
echo "==== gpu-test summary ===="
grep -E '^(device|NVRTC): ' "$log" | sort -u
echo "passed: $passed tests ($shards shards at once)"
[ -n "$skipped" ] && { echo "skipped (a failure on a GPU machine):"; echo "$skipped" | sed 's/^\[  SKIPPED \] /  /'; }
[ -n "$failed" ] && { echo "failed:"; echo "$failed" | sed 's/^\[  FAILED  \] /  /'; }
if [ "$sync_status" -eq 0 ]; then echo "with TOROID_CUDA_SYNC=1: ok"; else echo "with TOROID_CUDA_SYNC=1: FAILED"; tail -n 20 "$log.sync"; fi
# The Python package on CUDA tensors (PyTorch's CUDA build, when this machine has one).
py_status=0
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  PYTHONPATH=${PYTHONPATH:-$root/python} python3 -m unittest "$root/tests/python/test_shapes.py" >"$log.py" 2>&1
  py_status=$?
  if [ "$py_status" -eq 0 ] && grep -q "skipped" "$log.py"; then py_status=1; fi
  if [ "$py_status" -eq 0 ]; then echo "python (CUDA tensors): ok"; else echo "python (CUDA tensors): FAILED"; tail -n 30 "$log.py"; fi
else
  echo "python (CUDA tensors): not run (no PyTorch with CUDA here)"
fi
# The whole Python suite against the PyTorch and torchvision.transforms.v2 this machine has
# (CI's Debian torchvision has no v2, so there the tests that compare with it skip).
if python3 -c 'import torchvision.transforms.v2' 2>/dev/null; then
  PYTHONPATH=${PYTHONPATH:-$root/python} python3 -m unittest discover -s "$root/tests/python" -t "$root/tests/python" >"$log.tv" 2>&1
  tv_status=$?
  if [ "$tv_status" -eq 0 ]; then echo "python (torchvision.transforms.v2 $(python3 -c 'import torchvision; print(torchvision.__version__)')): $(tail -n 1 "$log.tv")"
  else echo "python (torchvision.transforms.v2): FAILED"; grep -E '^(FAIL|ERROR):' "$log.tv" | head -n 40; tail -n 40 "$log.tv"; py_status=1; fi
  rm -f "$log.tv"
fi
# Under load: the conformance cases and 48 large generated ones (checked against the CPU
# engine) through the CLI, 8 processes at a time on this GPU, three
# rounds (each run uploads, launches and copies back while the others do, and two processes
# keep the copy engines busy with large uploads); then the Python API
# on CUDA tensors from several processes and threads, checked against the CPU.
# GPU_TEST_CLI_ROUNDS (default 3) sets the rounds; 0 skips the CLI stress, for a machine whose
# session cannot hold its 3 rounds in one command (tests/stress/cuda_cli.py runs them alone).
stress_status=0
toroid_cli=$(command -v toroid || echo "$root/build/toroid")
rounds=${GPU_TEST_CLI_ROUNDS:-3}
if [ "$rounds" -eq 0 ]; then
  echo "under load, CLI: skipped (GPU_TEST_CLI_ROUNDS=0)"
elif python3 "$root/tests/stress/cuda_cli.py" --toroid "$toroid_cli" --procs 8 --rounds "$rounds" --copy-load 2 --generated 48 >"$log.cli" 2>&1; then
  echo "under load, CLI (conformance + 48 large cases, 8 processes x $rounds rounds, copy load): $(tail -n 1 "$log.cli")"
else
  stress_status=1; echo "under load, CLI: FAILED"; tail -n 30 "$log.cli"
fi
# Folder mode (batches, GPU decode) from 4 + 4 processes at once, against the CPU run;
# GPU_TEST_FOLDER (default: the decoder test images) is the folder.
if python3 "$root/tests/stress/cuda_folder.py" --toroid "$toroid_cli" --folder "${GPU_TEST_FOLDER:-$TOROID_TEST_DATA/decode}" \
    --procs 4 >"$log.fold" 2>&1; then
  echo "under load, folder mode (4 exact + 4 fast processes): $(tail -n 1 "$log.fold")"
else
  stress_status=1; echo "under load, folder mode: FAILED"; tail -n 20 "$log.fold"
fi
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  if PYTHONPATH=${PYTHONPATH:-$root/python} python3 "$root/tests/stress/cuda_python.py" --procs 4 --threads 3 --iters 40 >"$log.pys" 2>&1; then
    echo "under load, Python (CUDA vs CPU): $(tail -n 2 "$log.pys" | tr '\n' ' ')"
  else
    stress_status=1; echo "under load, Python: FAILED"; tail -n 30 "$log.pys"
  fi
fi
rm -f "$log" "$log.sync" "$log.py" "$log.cli" "$log.pys" "$log.fold"
if [ "$status" -ne 0 ] || [ -n "$skipped" ] || [ "$sync_status" -ne 0 ] || [ "$py_status" -ne 0 ] || [ "$stress_status" -ne 0 ]; then
  echo "RESULT: FAIL"
  exit 1
fi
echo "RESULT: PASS"
