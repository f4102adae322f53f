#!/usr/bin/env bash
# Checks that CUDA C++ sources written for NVRTC compile, with no CUDA SDK: clang's CUDA
# front end compiles each to PTX (device side only, no SDK headers or libdevice), with
# scripts/cuda-clang-prelude.h standing in for what NVRTC declares by itself.
# Usage: scripts/check-cuda-source.sh [--arch sm_70] FILE...   (CLANG=clang++-14 to choose)
# Exit status: 0 all compiled, 1 some did not, 2 usage, 77 skipped (no clang with CUDA).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch=sm_70
if [ "${1:-}" = "--arch" ]; then arch=${2:?--arch needs a value}; shift 2; fi
[ $# -gt 0 ] || { echo "usage: $0 [--arch sm_XY] FILE..." >&2; exit 2; }
clang=${CLANG:-clang++}
command -v "$clang" >/dev/null || { echo "check-cuda-source: skipped: $clang not found"; exit 77; }

work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
# --cuda-path names no folder so that an SDK installed here is not used by accident: the
# check must pass where none is (CI). PTX 7.0 features: the warp shuffles (__shfl_down_sync).
flags=(-x cuda --cuda-device-only -nocudainc -nocudalib --cuda-path="$work/no-cuda" --cuda-gpu-arch="$arch"
       -Xclang -target-feature -Xclang +ptx70 -std=c++17 -O2 -include "$here/cuda-clang-prelude.h" -S)

echo 'extern "C" __global__ void probe(float* p) { p[threadIdx.x] = 1.0f; }' > "$work/probe.cu"
if ! probe_out=$("$clang" "${flags[@]}" -o "$work/probe.ptx" "$work/probe.cu" 2>&1); then
  echo "check-cuda-source: skipped: $clang cannot compile CUDA for $arch: $(echo "$probe_out" | head -n 1)"
  exit 77
fi

# One clang per core at a time; each file's lines are printed in the order given.
check() {  # FILE LOG
  local out
  if out=$("$clang" "${flags[@]}" -o "$2.ptx" "$1" 2>&1) && grep -q '^\.visible \.entry' "$2.ptx"; then
    echo "ok    $1 ($(grep -c '^\.visible \.entry' "$2.ptx") kernel(s))" > "$2"
  else
    { echo "FAIL  $1"
      [ -n "$out" ] && echo "$out" | sed 's/^/      /'
      [ -z "$out" ] && echo "      no __global__ kernel in the PTX"; } > "$2"
  fi
}
at_once=$(nproc 2>/dev/null || echo 1)
i=0
for f in "$@"; do
  check "$f" "$work/check_$i.log" &
  i=$((i + 1))
  while [ "$(jobs -rp | wc -l)" -ge "$at_once" ]; do wait -n; done
done
wait
failed=0
for ((k = 0; k < i; k++)); do
  cat "$work/check_$k.log"
  grep -q '^FAIL' "$work/check_$k.log" && failed=1
done
exit $failed
