#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment (Debian's pip and setuptools, no build
# isolation, no index), then `import toroid` and a pipeline run from another folder.
# Usage: tests/install/pip_install.sh SOURCE_DIR LIBRARY
#   LIBRARY: the libtoroid_c.so the build made (packaged as it is, with its prebuilt/ folder:
#   $TOROID_PREBUILT_LIBRARY); without it pip builds the library with CMake (setup.py).
# Exit status 77: no python3-venv here (skipped).
set -euo pipefail
src=$1
lib=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=$(command -v /usr/bin/python3 || command -v python3)
"$py" -c 'import venv, ensurepip' 2>/dev/null || { echo "pip_install: skipped: no python3-venv"; exit 77; }
"$py" -m venv --system-site-packages "$work/venv"
# The source tree is copied, so that the install leaves nothing in it.
mkdir "$work/src"
(cd "$src" && tar cf - --exclude='./build*' --exclude='./.git' --exclude='./.device*' .) | tar xf - -C "$work/src"
TOROID_PREBUILT_LIBRARY=$lib "$work/venv/bin/pip" install --no-build-isolation --no-index --quiet "$work/src"
rm -rf "$work/src"
cd "$work"
env -u TOROID_LIBRARY -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import os
import numpy as np
import toroid
here = os.path.dirname(toroid.__file__)
assert toroid.library_path.startswith(here), (toroid.library_path, here)
x = np.arange(2 * 3 * 5 * 7, dtype=np.uint8).reshape(2, 3, 5, 7)
y = toroid.Pipeline([{"op": "flip", "dims": [-1]}], engine="reference")(x)
assert np.array_equal(y, x[..., ::-1]), "flip"
print("pip install: import toroid from %s ok, library %s" % (os.getcwd(), toroid.library_path))
PY
