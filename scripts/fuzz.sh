#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs each one
# for SECONDS on a working copy of its seed corpus (build-fuzz/corpus-work/, so the
# checked-in seeds stay as they are). Exits non-zero if any target finds a crash.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "toroid: error: usage: scripts/fuzz.sh SECONDS (a positive whole number, got '$seconds')" >&2
  exit 2
fi
command -v clang++ >/dev/null || { echo "toroid: error: clang++ not found (run scripts/install-deps.sh)" >&2; exit 2; }

targets=(fuzz_npy fuzz_png fuzz_jpeg fuzz_webp fuzz_pipeline_json)
build=build-fuzz
CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOROID_FUZZ=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# The targets run side by side: each is single-threaded, and the total time stays
# SECONDS instead of four times that.
mkdir -p "$build/logs"
pids=()
for t in "${targets[@]}"; do
  work="$build/corpus-work/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  # Seeds join what earlier runs found; nothing is written back into fuzz/corpus.
  cp fuzz/corpus/"$t"/* "$work"/
  args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$artifacts/")
  [ -f "fuzz/$t.dict" ] && args+=(-dict="fuzz/$t.dict")
  "$build/fuzz/$t" "${args[@]}" "$work" >"$build/logs/$t.log" 2>&1 &
  pids+=($!)
done

failed=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/logs/$t.log" | grep -o '[0-9]*$' || true)
    echo "fuzz: $t: ok (${runs:-?} runs in ${seconds}s)"
  else
    failed=1
    echo "fuzz: $t: FAILED; log: $build/logs/$t.log, input in $build/artifacts/$t/" >&2
    tail -n 40 "$build/logs/$t.log" >&2
  fi
done
exit "$failed"
