#!/usr/bin/env bash
# Stress cases of the JIT cache against the built CLI: a process stopped while it holds a
# kernel's lock, a process killed during a compile (no compiler left, its work folder
# removed by a later run), a hung compiler (a timeout, an error, no process left), a cache
# folder that cannot be written, and the size cap. Bounded (each run under `timeout`);
# prints "N passed, M failed" and exits 1 when any case failed.
#
# usage: tests/stress/cache.sh path/to/toroid
set -u
CLI=${1:?usage: cache.sh path/to/toroid}
CLI=$(cd "$(dirname "$CLI")" && pwd)/$(basename "$CLI")
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../data/conformance
PIPE=$DATA/case0036/pipeline.json
IN=$DATA/case0036/input.npy
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toroid-stress-cache.XXXXXX")
export TOROID_PREBUILT=none
unset TOROID_CXX TOROID_CXXFLAGS TOROID_DEBUG TOROID_KEEP_SOURCES TOROID_CACHE_MAX_BYTES TOROID_CACHE_SIZE

passed=0
failed=0
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    chmod -R u+w "$WORK" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "PASS $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# Whether a process still runs (a zombie counts as gone).
alive() {
    local state
    state=$(awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# A compiler that records its pid and its child's, then hangs (--version is the real one's).
cat >"$WORK/hung-cxx.sh" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec c++ --version
echo \$\$ > "$WORK/driver.pid"
sleep 300 &
echo \$! > "$WORK/child.pid"
wait
EOF
chmod +x "$WORK/hung-cxx.sh"

# The reference result and the keys of the program's entries.
mkdir -p "$WORK/ref"
if ! TOROID_CACHE_DIR="$WORK/ref/cache" timeout 120 "$CLI" apply "$PIPE" "$IN" "$WORK/ref/out.npy" 2>"$WORK/ref/err"; then
    echo "FAIL setup: $(tail -1 "$WORK/ref/err")"
    echo "0 passed, 1 failed"
    exit 1
fi
keys=$(cd "$WORK/ref/cache" && ls -d [0-9a-f]* 2>/dev/null)

# ---- 1. a stopped process holds every lock of the program: the run ends, right, in bounded time
case_stopped_holder() {
    local c=$WORK/stopped/cache
    mkdir -p "$c"
    local k
    for k in $keys; do
        (flock -x 9 && kill -STOP "$BASHPID") 9>"$c/$k.lock" &
        pids+=($!)
        disown $!
    done
    sleep 0.5
    local start=$SECONDS
    TOROID_CACHE_DIR=$c TOROID_LOCK_TIMEOUT=2 timeout 60 "$CLI" apply "$PIPE" "$IN" "$WORK/stopped/out.npy" \
        2>"$WORK/stopped/err"
    local rc=$? took=$((SECONDS - start))
    if [ $rc -ne 0 ]; then bad stopped-lock-holder "exit $rc: $(tail -1 "$WORK/stopped/err")"
    elif ! cmp -s "$WORK/ref/out.npy" "$WORK/stopped/out.npy"; then bad stopped-lock-holder "result differs"
    elif [ $took -gt 30 ]; then bad stopped-lock-holder "took ${took} s"
    elif ! grep -q "held by another process" "$WORK/stopped/err"; then bad stopped-lock-holder "no warning"
    else ok "stopped-lock-holder (${took} s)"
    fi
    # The tiered path: the background build waits for the lock; exit must not.
    start=$SECONDS
    TOROID_CACHE_DIR=$c TOROID_LOCK_TIMEOUT=600 TOROID_TIERED=1 timeout 120 "$CLI" apply "$PIPE" "$IN" \
        "$WORK/stopped/out2.npy" 2>"$WORK/stopped/err2"
    rc=$?
    took=$((SECONDS - start))
    # A run that waits for its full build waits the lock timeout (600 s) and is killed by timeout.
    if [ $rc -ne 0 ]; then bad stopped-lock-holder-exit "exit $rc after ${took} s: $(tail -1 "$WORK/stopped/err2")"
    elif ! cmp -s "$WORK/ref/out.npy" "$WORK/stopped/out2.npy"; then bad stopped-lock-holder-exit "result differs"
    else ok "stopped-lock-holder-exit (${took} s)"
    fi
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    pids=()
    wait 2>/dev/null
    if ls -d "$c"/.tmp-* >/dev/null 2>&1; then bad stopped-lock-holder-leftovers "$(ls -d "$c"/.tmp-*)"
    else ok stopped-lock-holder-leftovers
    fi
}

# ---- 2. kill -9 during a compile: the compiler and its children die; a later run cleans up
case_kill_during_compile() {
    local c=$WORK/killed/cache
    mkdir -p "$c"
    rm -f "$WORK/driver.pid" "$WORK/child.pid"
    TOROID_CACHE_DIR=$c TOROID_CXX=$WORK/hung-cxx.sh timeout 120 "$CLI" apply "$PIPE" "$IN" "$WORK/killed/out.npy" \
        2>/dev/null &
    local run=$!
    local i
    for i in $(seq 100); do [ -s "$WORK/child.pid" ] && break; sleep 0.1; done
    if [ ! -s "$WORK/child.pid" ]; then bad kill-during-compile "the compiler never started"; kill -KILL $run; return; fi
    local driver child
    driver=$(cat "$WORK/driver.pid")
    child=$(cat "$WORK/child.pid")
    # timeout(1) runs the CLI as its child: kill the CLI itself.
    local cli
    cli=$(pgrep -P $run | head -1)
    kill -KILL "${cli:-$run}"
    wait $run 2>/dev/null
    for i in $(seq 50); do alive "$driver" || alive "$child" || break; sleep 0.1; done
    if alive "$driver" || alive "$child"; then bad kill-during-compile "compiler processes left: $driver $child"
    else ok kill-during-compile
    fi
    # The killed run's work folder, aged past a minute, goes at the next run's first build.
    local tmp
    tmp=$(ls -d "$c"/.tmp-* 2>/dev/null | head -1)
    if [ -z "$tmp" ]; then bad kill-during-compile-cleanup "no work folder was left to clean"; return; fi
    touch -d '2 minutes ago' "$tmp"
    mkdir -p "$c/.trash-0123456789abcdef-$driver.0-$(hostname)" && touch -d '2 minutes ago' "$c"/.trash-*
    if ! TOROID_CACHE_DIR=$c timeout 120 "$CLI" apply "$PIPE" "$IN" "$WORK/killed/out.npy" 2>"$WORK/killed/err"; then
        bad kill-during-compile-cleanup "rerun failed: $(tail -1 "$WORK/killed/err")"
    elif ! cmp -s "$WORK/ref/out.npy" "$WORK/killed/out.npy"; then bad kill-during-compile-cleanup "result differs"
    elif ls -d "$c"/.tmp-* "$c"/.trash-* >/dev/null 2>&1; then bad kill-during-compile-cleanup "left: $(ls -d "$c"/.tmp-* "$c"/.trash-* 2>/dev/null)"
    else ok kill-during-compile-cleanup
    fi
}

# ---- 3. a hung compiler: a clear error after the timeout, no process left
case_compile_timeout() {
    local c=$WORK/hung/cache
    mkdir -p "$c"
    rm -f "$WORK/driver.pid" "$WORK/child.pid"
    local start=$SECONDS
    TOROID_CACHE_DIR=$c TOROID_CXX=$WORK/hung-cxx.sh TOROID_COMPILE_TIMEOUT=2 timeout 60 "$CLI" apply "$PIPE" "$IN" \
        "$WORK/hung/out.npy" 2>"$WORK/hung/err"
    local rc=$? took=$((SECONDS - start))
    sleep 0.3
    if [ $rc -ne 2 ]; then bad compile-timeout "exit $rc (want 2): $(tail -1 "$WORK/hung/err")"
    elif ! grep -q "toroid: error: .*did not finish within 2 s" "$WORK/hung/err"; then bad compile-timeout "message: $(tail -1 "$WORK/hung/err")"
    elif [ $took -gt 20 ]; then bad compile-timeout "took ${took} s"
    elif alive "$(cat "$WORK/driver.pid")" || alive "$(cat "$WORK/child.pid")"; then bad compile-timeout "compiler processes left"
    elif [ -e "$WORK/hung/out.npy" ]; then bad compile-timeout "an output was written"
    else ok "compile-timeout (${took} s)"
    fi
}

# ---- 4. a cache folder that cannot be written: works, one warning
case_unwritable_cache() {
    mkdir -p "$WORK/ro"
    echo file >"$WORK/ro/file"
    TOROID_CACHE_DIR=$WORK/ro/file/cache timeout 120 "$CLI" apply "$PIPE" "$IN" "$WORK/ro/out.npy" 2>"$WORK/ro/err"
    local rc=$?
    local warnings
    warnings=$(grep -c "toroid: warning:" "$WORK/ro/err")
    if [ $rc -ne 0 ]; then bad unwritable-cache "exit $rc: $(tail -1 "$WORK/ro/err")"
    elif ! cmp -s "$WORK/ref/out.npy" "$WORK/ro/out.npy"; then bad unwritable-cache "result differs"
    elif [ "$warnings" -ne 1 ]; then bad unwritable-cache "$warnings warnings: $(cat "$WORK/ro/err")"
    else ok unwritable-cache
    fi
}

# ---- 5. the size cap: a cache of many programs stays under it
case_size_cap() {
    local c=$WORK/cap/cache
    mkdir -p "$WORK/cap"
    local one cap=2G i
    # Six pipelines of six structures (sizes alone would share one program).
    local programs=(
        '[{"op": "flip", "dims": [-1]}]'
        '[{"op": "flip", "dims": [-2]}]'
        '[{"op": "resize", "mode": "bilinear", "size": [11, 9]}]'
        '[{"op": "resize", "mode": "nearest", "size": [11, 9]}]'
        '[{"op": "convert", "dtype": "float32", "scale": true}]'
        '[{"op": "resize", "mode": "bicubic", "size": [11, 9]}]')
    for i in 1 2 3 4 5 6; do
        if [ $i -eq 2 ]; then
            # Room for about two and a half programs like the first.
            one=$(find "$c" -mindepth 2 -maxdepth 2 -path "$c/[0-9a-f]*" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
            cap=$((one * 5 / 2))
        fi
        TOROID_CACHE_DIR=$c TOROID_CACHE_SIZE=$cap TOROID_TIERED=0 timeout 120 "$CLI" apply \
            "${programs[$((i - 1))]}" \
            "$IN" "$WORK/cap/out$i.npy" 2>>"$WORK/cap/err" || { bad size-cap "run $i: $(tail -1 "$WORK/cap/err")"; return; }
    done
    local total
    total=$(find "$c" -mindepth 1 -maxdepth 3 -path "$c/.*" -prune -o -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    local entries
    entries=$(find "$c" -mindepth 1 -maxdepth 1 -type d -name '[0-9a-f]*' | wc -l)
    if [ "$total" -gt $cap ]; then bad size-cap "$total bytes over the cap of $cap"
    elif [ "$entries" -lt 1 ] || [ "$entries" -gt 3 ]; then bad size-cap "$entries entries (6 programs, room for 2)"
    elif [ "$(find "$c" -name kernel.cpp | wc -l)" -ne 0 ]; then bad size-cap "sources kept"
    else ok "size-cap ($entries entries, $total of $cap bytes)"
    fi
}

# ---- 6. Python: exit with a background build waiting for a stopped holder's lock
case_python_exit() {
    local py=/usr/bin/python3 lib
    lib=$(dirname "$CLI")/libtoroid_c.so
    if ! [ -x $py ] || ! [ -f "$lib" ] || ! $py -c 'import numpy' 2>/dev/null; then
        echo "SKIP python-exit (no python3 with numpy, or no $lib)"
        return
    fi
    cat >"$WORK/run.py" <<'PYEOF'
import sys
import numpy as np
import toroid
x = np.load(sys.argv[1])
y = toroid.Pipeline(open(sys.argv[2]).read())(x)
np.save(sys.argv[3], y)
if len(sys.argv) > 4:
    toroid.wait_for_background_builds()
PYEOF
    export PYTHONPATH=$HERE/../../python TOROID_LIBRARY=$lib
    local ref=$WORK/py/ref c=$WORK/py/cache
    mkdir -p "$ref" "$c"
    if ! TOROID_CACHE_DIR=$ref timeout 120 $py "$WORK/run.py" "$IN" "$PIPE" "$WORK/py/ref.npy" wait 2>"$WORK/py/err"; then
        bad python-exit "reference run: $(tail -1 "$WORK/py/err")"
        return
    fi
    # The full builds' locks (manifest "tier": "full") held by stopped processes.
    local k keys_full
    keys_full=$(cd "$ref" && grep -l '"tier": "full"' [0-9a-f]*/manifest.json | cut -d/ -f1)
    if [ -z "$keys_full" ]; then bad python-exit "the reference run made no full build"; return; fi
    for k in $keys_full; do
        (flock -x 9 && kill -STOP "$BASHPID") 9>"$c/$k.lock" &
        pids+=($!)
        disown $!
    done
    sleep 0.5
    local start=$SECONDS
    TOROID_CACHE_DIR=$c TOROID_LOCK_TIMEOUT=600 timeout 120 $py "$WORK/run.py" "$IN" "$PIPE" "$WORK/py/out.npy" \
        2>"$WORK/py/err2"
    local rc=$? took=$((SECONDS - start))
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    pids=()
    if [ $rc -ne 0 ]; then bad python-exit "exit $rc after ${took} s: $(tail -1 "$WORK/py/err2")"
    elif [ $took -gt 30 ]; then bad python-exit "took ${took} s"
    elif ! cmp -s "$WORK/py/ref.npy" "$WORK/py/out.npy"; then bad python-exit "result differs"
    elif ls -d "$c"/.tmp-* >/dev/null 2>&1; then bad python-exit "left: $(ls -d "$c"/.tmp-*)"
    else ok "python-exit (${took} s)"
    fi
}

case_stopped_holder
case_python_exit
case_kill_during_compile
case_compile_timeout
case_unwritable_cache
case_size_cap

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
