"""Builds the C library with CMake for `pip install .` (metadata: pyproject.toml).

The library (libtoroid_c.so) and, unless turned off, the prebuilt catalogue are built in
$TOROID_BUILD_DIR (default: build-pip/ in this tree, kept between installs so a second
install only rebuilds what changed) and copied into the installed package, where the
package looks for them first. $TOROID_CMAKE_ARGS adds CMake options, e.g.
-DTOROID_PREBUILT_CATALOGUE=OFF for a quicker build without the catalogue.
$TOROID_PREBUILT_LIBRARY names a libtoroid_c.so built already (with its prebuilt/ folder
beside it, if any) to package instead of building one."""

import os
import re
import shlex
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(toroid VERSION ([0-9.]+)", f.read()).group(1)


class BuildWithLibrary(build_py):
    """The Python files, then the library and the catalogue beside them."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "toroid")
        given = os.environ.get("TOROID_PREBUILT_LIBRARY")
        if given:
            self.place(given, os.path.join(os.path.dirname(given), "prebuilt"), dest)
            return
        build = os.environ.get("TOROID_BUILD_DIR") or os.path.join(ROOT, "build-pip")
        if shutil.which("cmake") is None:
            raise SystemExit("toroid: building the library needs cmake and a C++20 compiler "
                             "(Debian: scripts/install-deps.sh)")
        configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"] if not os.path.exists(os.path.join(build, "CMakeCache.txt")) else []
        configure += shlex.split(os.environ.get("TOROID_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        targets = ["toroid_c"]
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            catalogue = re.search(r"^TOROID_PREBUILT_CATALOGUE:BOOL=ON$", f.read(), re.M) is not None
        if catalogue:
            targets.append("prebuilt")
        subprocess.check_call(["cmake", "--build", build, "--target", *targets, "-j", str(os.cpu_count() or 1)])
        self.place(os.path.join(build, "libtoroid_c.so"), os.path.join(build, "prebuilt") if catalogue else "", dest)

    @staticmethod
    def place(library, catalogue, dest):
        if not os.path.isfile(library):
            raise SystemExit("toroid: no library at %s" % library)
        shutil.copy2(library, dest)
        if catalogue and os.path.isdir(catalogue):
            shutil.rmtree(os.path.join(dest, "prebuilt"), ignore_errors=True)
            shutil.copytree(catalogue, os.path.join(dest, "prebuilt"), ignore=shutil.ignore_patterns("*.lock", ".stamp-*"))


class BinaryDistribution(Distribution):
    """A wheel for this platform: it holds a shared library."""

    def has_ext_modules(self):
        return True


setup(version=version(), cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
