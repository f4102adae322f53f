#!/usr/bin/env bash
# Hostile and unlucky files against the built CLI: each case must end in a clean error
# (exit 2, one line "toroid: error: ..."), in bounded time and memory, with the user's files
# untouched. Usage: tests/stress/files.sh path/to/toroid. Prints "N passed, M failed" and
# exits non-zero when any case failed. Needs bash, coreutils (timeout) and python3 (its
# standard library only, to write the test files).
set -u
bin=${1:?usage: files.sh path/to/toroid}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
py=${PYTHON3:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/toroid-stress-files.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0
failed=0
limit_s=30  # no case may take longer: a hang is a failure

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# expect_error NAME NEEDLE -- ARGS...: exit 2, one stderr line with NEEDLE, within limit_s.
expect_error() {
  local name=$1 needle=$2
  shift 3
  local rc
  # 4 GiB of address space: a binary that reads /dev/zero or decodes a bomb fails instead
  # of taking the machine's memory.
  (ulimit -v 4194304 2>/dev/null; exec timeout -k 5 "$limit_s" "$bin" "$@") >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then bad "$name" "timed out after ${limit_s}s"; return; fi
  if [ "$rc" -ne 2 ]; then bad "$name" "exit $rc, expected 2: $(head -c 300 err.txt)"; return; fi
  if [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q '^toroid: error: ' err.txt; then
    bad "$name" "not one error line: $(head -c 300 err.txt)"; return
  fi
  if ! grep -qF -- "$needle" err.txt; then bad "$name" "no '$needle' in: $(cat err.txt)"; return; fi
  ok "$name"
}

# Test files: small images as .npy, a PNG decompression bomb, a JPEG with a huge frame.
"$py" - <<'PY' || { echo "cannot write the test files"; exit 1; }
import os, struct, zlib

def npy(path, shape, fill=7):
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': %s, }" % (tuple(shape),)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    n = 1
    for d in shape:
        n *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes([fill]) * n)

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

os.makedirs("in/sub")
for i in range(6):
    npy("in/img%d.npy" % i, (1, 3, 20, 30), i)
npy("in/sub/deep.npy", (1, 3, 20, 30), 9)
npy("small.npy", (1, 3, 20, 30))
# 50000 x 50000 gray: 2.5 GB of pixels in about 2.4 MB (zlib stream of zero rows; every
# block after a full flush compresses to the same bytes).
side, rows = 50000, 256
z = zlib.compressobj(9)
block = bytes((side + 1) * rows)
first = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
again = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
idat = first + again * (side // rows - 2)
with open("bomb.png", "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
# A baseline JPEG whose frame header says 65000 x 65000.
jpeg = bytes.fromhex(
    "ffd8ffdb004300" + "01" * 64 +
    "ffc0000b080000000001011100" +
    "ffc4001f0000010501010101010100000000000000000102030405060708090a0b" +
    "ffc400b5100002010303020403050504040000017d" + "01" * 162 +
    "ffda0008010100003f00" + "00" * 16 + "ffd9")
i = jpeg.index(b"\xff\xc0") + 5
jpeg = jpeg[:i] + struct.pack(">HH", 65000, 65000) + jpeg[i + 4:]
with open("bomb.jpg", "wb") as f:
    f.write(jpeg)
# A bomb .npy header: 3 x 20000 x 20000 declared, no data.
with open("small.npy", "rb") as f:
    b = f.read()
with open("bomb.npy", "wb") as f:
    f.write(b.replace(b"(1, 3, 20, 30)", b"(1, 3, 20000, 20000)")[:200])
PY

flip='[{"op": "flip", "dims": [3]}]'
snapshot() { (cd in && find . -type f -exec sha256sum {} + | sort); }
before=$(snapshot)

# ---- folder mode: OUT == IN, IN/., a symlink to IN, OUT inside IN ----
ln -s in link_to_in
for out in in in/. in/sub/.. link_to_in in/results link_to_in/new in/sub; do
  expect_error "folder OUT=$out" "output folder '$out'" -- apply "$flip" in "$out"
  expect_error "folder OUT=$out --format npy" "output folder '$out'" -- apply "$flip" in "$out" --format npy
done
if [ "$(snapshot)" = "$before" ] && [ ! -e in/results ]; then ok "inputs byte-identical"; else bad "inputs byte-identical" "the input folder changed"; fi
# IN inside OUT: in/in/x.npy would land on in/x.npy.
mkdir -p nest/in/in && cp in/img0.npy nest/in/in/img0.npy && cp in/img1.npy nest/in/img0.npy
expect_error "IN inside OUT never overwrites an input" "is one of the input files" -- apply "$flip" nest/in nest
cmp -s in/img1.npy nest/in/img0.npy && ok "IN inside OUT: input intact" || bad "IN inside OUT: input intact" "changed"
# A single file onto itself, through a symlink.
ln -s in/img2.npy alias.npy
expect_error "single file OUT=IN" "is the input file" -- apply "$flip" in/img2.npy in/img2.npy
expect_error "single file OUT=symlink to IN" "is the input file" -- apply "$flip" in/img2.npy alias.npy

# ---- only regular files: /dev/zero, a FIFO, a folder ----
ln -s /dev/zero zero.npy
ln -s /dev/zero zero.png
mkfifo fifo.npy fifo.json
mkdir -p pipes
ln -s /dev/zero pipes/grid.npy
echo '[{"op": "grid_sample", "grid": "grid.npy"}]' >pipes/zero_grid.json
mkfifo pipes/fifo_grid.npy
echo '[{"op": "grid_sample", "grid": "fifo_grid.npy"}]' >pipes/fifo_grid.json
expect_error "input /dev/zero as .npy" "character device" -- apply "$flip" zero.npy o.npy
expect_error "input /dev/zero as .png" "character device" -- apply "$flip" zero.png o.png
expect_error "input FIFO" "FIFO" -- apply "$flip" fifo.npy o.npy
expect_error "pipeline /dev/zero" "character device" -- apply /dev/zero small.npy o.npy
expect_error "pipeline FIFO" "FIFO" -- apply fifo.json small.npy o.npy
expect_error "grid /dev/zero (symlink in the pipeline's folder)" "leaves the pipeline's folder" -- apply pipes/zero_grid.json small.npy o.npy
expect_error "grid /dev/zero with --allow-paths" "character device" -- apply pipes/zero_grid.json small.npy o.npy --allow-paths
expect_error "grid FIFO" "FIFO" -- apply pipes/fifo_grid.json small.npy o.npy
head -c $((17 << 20)) /dev/zero | tr '\0' ' ' >big.json
expect_error "pipeline over 16 MiB" "more than the limit of 16777216 bytes" -- apply big.json small.npy o.npy

# ---- grid paths stay in the pipeline's folder ----
"$py" -c "
import struct
h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 5, 3), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\n'
open('secret.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + bytes(240))"
echo '[{"op": "grid_sample", "grid": "../secret.npy"}]' >pipes/up.json
echo "[{\"op\": \"grid_sample\", \"grid\": \"$work/secret.npy\"}]" >pipes/abs.json
ln -s ../secret.npy pipes/link.npy
echo '[{"op": "grid_sample", "grid": "link.npy"}]' >pipes/link.json
for p in up abs link; do
  expect_error "grid path $p refused" "a pipeline may name files in its folder only" -- apply pipes/$p.json small.npy o.npy
  if grep -q shape err.txt; then bad "grid path $p: message reveals the file" "$(cat err.txt)"; else ok "grid path $p: nothing revealed"; fi
done
expect_error "grid path with --allow-paths is read" "must have shape (N, H, W, 2)" -- apply pipes/up.json small.npy o.npy --allow-paths

# ---- decompression bombs: fast, small memory ----
for f in bomb.png bomb.jpg bomb.npy; do
  start=$(date +%s%N)
  # 1 GiB of address space is far below what decoding any of them would take.
  f0=$failed
  (ulimit -v 1048576; expect_error "bomb $f" "more than the limit of 178956970" -- apply "$flip" $f o.npy
   [ "$failed" -eq "$f0" ]) && passed=$((passed + 1)) || failed=$((failed + 1))
  ms=$((($(date +%s%N) - start) / 1000000))
  [ "$ms" -lt 5000 ] && ok "bomb $f in ${ms} ms" || bad "bomb $f" "took ${ms} ms"
done
expect_error "--max-pixels below the image" "more than the limit of 599" -- apply "$flip" small.npy o.npy --max-pixels 599
TOROID_MAX_IMAGE_PIXELS=599 expect_error "TOROID_MAX_IMAGE_PIXELS below the image" "more than the limit of 599" -- apply "$flip" small.npy o.npy
if "$bin" apply "$flip" small.npy o.npy --max-pixels 600 2>err.txt && [ -f o.npy ]; then ok "--max-pixels at the image"; else bad "--max-pixels at the image" "$(cat err.txt)"; fi

# ---- the output format is checked once, before the first file ----
"$py" -c "
import zlib, struct
def chunk(k, d): return struct.pack('>I', len(d)) + k + d + struct.pack('>I', zlib.crc32(k + d))
raw = b''.join(b'\x00' + bytes(range(30)) for _ in range(20))
for i in range(5):
    open('pngs/p%d.png' % i, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 30, 20, 8, 0, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
" 2>/dev/null || { mkdir -p pngs && "$py" -c "
import zlib, struct
def chunk(k, d): return struct.pack('>I', len(d)) + k + d + struct.pack('>I', zlib.crc32(k + d))
raw = b''.join(b'\x00' + bytes(range(30)) for _ in range(20))
for i in range(5):
    open('pngs/p%d.png' % i, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 30, 20, 8, 0, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
"; }
to_float='[{"op": "convert", "dtype": "float32", "scale": true}]'
expect_error "float result to the inputs' .png" "the pipeline's result is float32" -- apply "$to_float" pngs fout
expect_error "float result with --format jpg" "the output format (jpg) holds uint8 only" -- apply "$to_float" pngs fout --format jpg
[ ! -e fout ] && ok "format error writes nothing" || bad "format error writes nothing" "fout exists"

# ---- Ctrl-C and SIGTERM leave no partial output ----
mkdir -p many
for i in $(seq 0 399); do cp in/img0.npy "many/m$i.npy"; done
for sig in INT TERM; do
  rm -rf sigout
  # Job control on: a background job of a script would otherwise start with SIGINT ignored.
  set -m
  "$bin" apply '[{"op": "resize", "size": [600, 800], "mode": "bilinear"}]' many sigout --jobs 2 --format npy \
    >/dev/null 2>&1 &
  pid=$!
  set +m
  for _ in $(seq 1 600); do [ -d sigout ] && [ "$(ls sigout | wc -l)" -ge 3 ] && break; sleep 0.05; done
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  leftovers=$(find sigout -name '.*.tmp.*' 2>/dev/null | wc -l)
  n=$(ls sigout 2>/dev/null | wc -l)
  want=$((128 + $(kill -l "$sig")))
  if [ "$leftovers" -eq 0 ] && [ "$rc" -eq "$want" ] && [ "$n" -lt 400 ]; then ok "SIG$sig: no temp file (exit $rc, $n written)"
  else bad "SIG$sig" "exit $rc, $leftovers temp files, $n written"; fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
