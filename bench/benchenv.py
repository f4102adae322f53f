"""What the bench scripts share to start: Debian's Python packages, the C library, C++ cases.

Debian's NumPy, PyTorch, OpenCV and Pillow live in the system interpreter; a script started
by another python3 first on PATH (a pyenv or venv) that lacks them runs again, once, under
/usr/bin/python3."""

import importlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def system_python(name, modules, packages):
    """Imports `modules`; where one is missing, runs the script again under /usr/bin/python3
    (once), or exits naming the Debian `packages` that provide them."""
    try:
        for m in modules:
            importlib.import_module(m)
        return
    except ImportError:
        pass
    flag = "TOROID_%s_REEXEC" % name.upper()
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath(
            "/usr/bin/python3") and not os.environ.get(flag):
        os.environ[flag] = "1"
        print("%s: %s missing in %s; running under /usr/bin/python3" % (name, " or ".join(modules), sys.executable),
              file=sys.stderr)
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("%s: error: %s required (apt-get install %s)" % (name, " and ".join(modules), packages))


def find_library(name, build, use_env=False):
    """libtoroid_c.so: $TOROID_LIBRARY (where `use_env` and no `build` is named), else the first
    of `build` or build/, build-test/ that holds it."""
    if use_env and os.environ.get("TOROID_LIBRARY") and not build:
        return os.environ["TOROID_LIBRARY"]
    folders = [build] if build else ["build", "build-test"]
    for f in folders:
        path = os.path.join(f if os.path.isabs(f) else os.path.join(ROOT, f), "libtoroid_c.so")
        if os.path.exists(path):
            return path
    sys.exit("%s: error: no libtoroid_c.so in %s (build the toroid_c target)" % (name, ", ".join(folders)))


def build_c_case(name, source, library):
    """Compiles bench/`source` against `library` (libtoroid_c.so or its folder); the program's
    path, or None when no C++ compiler is found or the build fails (said on stderr)."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return None
    if os.path.isdir(library):
        library = os.path.join(library, "libtoroid_c.so")
    libdir = os.path.dirname(library)
    out = os.path.join(tempfile.mkdtemp(prefix="toroid-%s-" % name.replace("_", "-")), os.path.splitext(source)[0])
    cmd = [cxx, "-O2", "-std=c++20", "-I", os.path.join(ROOT, "include"), os.path.join(ROOT, "bench", source),
           "-o", out, "-L", libdir, "-ltoroid_c", "-Wl,-rpath," + libdir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("%s: the C++ case did not build:\n%s" % (name, r.stderr), file=sys.stderr)
        return None
    return out
