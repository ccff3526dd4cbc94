"""Build script: the hand-written C once, then every ``refsvm/**/*.pyx`` module.

The hand-written C (``refsvm/_csrc/*.c``, with its headers) is compiled once into a static
library, ``refsvm_c``, that every extension links (``build_clib``); the Cython modules (the
shared core and the twins) then build two at a time (``build_ext`` ``parallel``; set
``REFSVM_JOBS`` to change it).

All Cython compile directives live here, in one place.  Set the environment
variable ``REFSVM_DEBUG=1`` before building to turn bounds checking, wrap-around and
initialisation checks back on and build at -O0 with symbols (useful when a twin misbehaves;
the model-file fuzz runs on it too, docs/reliability.rst).  None checks stay off: the
twins' ``nogil`` code takes typed objects that cannot be None-checked without the GIL.
"""
import glob
import os
import shutil
import sysconfig

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_clib import build_clib
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("REFSVM_DEBUG", "0") not in ("", "0")
# REFSVM_ONLY=_core,_online_svmr builds only those modules (faster edit-compile loops).
ONLY = [m for m in os.environ.get("REFSVM_ONLY", "").split(",") if m]
JOBS = int(os.environ.get("REFSVM_JOBS", "2"))

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "nonecheck": False,                 # a typed argument in nogil code cannot be None-checked
    "initializedcheck": DEBUG,
    "cdivision": True,
    "infer_types": True,
    "embedsignature": True,
}

CSRC = os.path.join("refsvm", "_csrc")
C_SOURCES = sorted(glob.glob(os.path.join(CSRC, "*.c")))
C_HEADERS = sorted(glob.glob(os.path.join(CSRC, "*.h")))


def _optimize_flags(compiler_type):
    """The optimisation flags for this compiler (MSVC spells them its own way).

    No product and sum is contracted into a fused multiply-add (``-ffp-contract=off``)
    unless the code asks for one: each twin must give its reference's bits, and Python's
    floats are never fused.  GCC contracts across statements by default and Clang within
    an expression, wherever the target has FMA -- on every aarch64 (Linux and macOS
    wheels), not on baseline x86-64.  MSVC has not contracted by default since Visual
    Studio 2022 (17.0), and its x64 baseline has no FMA to contract into."""
    if compiler_type == "msvc":
        return ["/Od", "/Zi"] if DEBUG else ["/O2"]
    return (["-O0", "-g"] if DEBUG else ["-O3"]) + ["-ffp-contract=off"]


class BuildCLib(build_clib):
    """``build_clib`` that rebuilds the library only when a C source or header is newer,
    with the compiler's own optimisation flags."""

    def build_libraries(self, libraries):
        flags = _optimize_flags(self.compiler.compiler_type)
        for name, info in libraries:
            info = dict(info, cflags=flags)
            target = self.compiler.library_filename(name, output_dir=self.build_clib)
            deps = list(info["sources"]) + list(info.get("depends", []))
            if not self.force and os.path.exists(target) and all(
                    os.path.getmtime(d) <= os.path.getmtime(target) for d in deps):
                continue
            super().build_libraries([(name, info)])


# The build mode of the modules found in place (written after an in-place build): a module
# built in another mode is never reused.
MODE_STAMP = os.path.join("refsvm", ".build-mode")
MODE = "debug" if DEBUG else "release"


class BuildExt(build_ext):
    """``build_ext`` that builds the C library first (also for ``build_ext --inplace``
    alone) and gives every extension the compiler's optimisation flags.

    A module already built in place (``pip install -e .`` puts it beside its source), in
    the same mode and newer than everything it is built from, is copied instead of being
    compiled again: the README's second command, which installs the test extra, then
    reuses the build the first one made instead of spending minutes on the same C."""

    def run(self):
        if self.distribution.has_c_libraries() and not all(
                self._built_in_place(ext) for ext in self.extensions):
            self.run_command("build_clib")
        super().run()
        if self.inplace or getattr(self, "editable_mode", False):
            with open(MODE_STAMP, "w") as f:
                f.write(MODE + "\n")

    def build_extensions(self):
        flags = _optimize_flags(self.compiler.compiler_type)
        for ext in self.extensions:
            ext.extra_compile_args = flags
        super().build_extensions()

    def _built_in_place(self, ext):
        """The in-place module of ``ext`` when it can be reused, else None."""
        if self.force or not os.path.exists(MODE_STAMP):
            return None
        with open(MODE_STAMP) as f:
            if f.read().strip() != MODE:
                return None
        built = self.get_ext_filename(ext.name)
        if not os.path.exists(built):
            return None
        made = os.path.getmtime(built)
        inputs = list(ext.sources) + list(ext.depends) + ["setup.py"]
        if all(os.path.exists(p) and os.path.getmtime(p) <= made for p in inputs):
            return built
        return None

    def build_extension(self, ext):
        built = self._built_in_place(ext)
        if built is None:
            return super().build_extension(ext)
        target = self.get_ext_fullpath(ext.name)
        if os.path.abspath(target) != os.path.abspath(built):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(built, target)


def _module_name(path):
    """refsvm/ramp/_online_svmr.pyx -> refsvm.ramp._online_svmr"""
    return os.path.splitext(path)[0].replace(os.sep, ".")


def _sources(path):
    """The .pyx, or the C that Cython made of it when that is newer than every Cython
    source of the package (then Cython is not run again: a second ``pip install`` in a
    fresh build environment, whose NumPy .pxd files are new, reuses it)."""
    generated = os.path.splitext(path)[0] + ".c"
    if os.path.exists(generated):
        made = os.path.getmtime(generated)
        inputs = (glob.glob(os.path.join("refsvm", "**", "*.pyx"), recursive=True)
                  + glob.glob(os.path.join("refsvm", "**", "*.pxd"), recursive=True))
        if all(os.path.getmtime(p) <= made for p in inputs):
            return [generated]
    return [path]


extensions = [
    Extension(
        _module_name(path),
        _sources(path),
        include_dirs=[np.get_include(), os.path.dirname(path), CSRC],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        depends=C_SOURCES + C_HEADERS,
    )
    for path in sorted(glob.glob(os.path.join("refsvm", "**", "*.pyx"), recursive=True))
    if not ONLY or _module_name(path).rpartition(".")[2] in ONLY
]

if any(src.endswith(".pyx") for ext in extensions for src in ext.sources):
    from Cython.Build import cythonize

    extensions = cythonize(extensions, compiler_directives=COMPILER_DIRECTIVES,
                           annotate=DEBUG, nthreads=JOBS if JOBS > 1 else 0)

setup(
    ext_modules=extensions,
    libraries=[("refsvm_c", {
        "sources": C_SOURCES,
        "depends": C_HEADERS,
        "obj_deps": {"": C_HEADERS},        # setuptools: every object depends on the headers
        "include_dirs": [CSRC, sysconfig.get_paths()["include"]],
    })],
    cmdclass={"build_clib": BuildCLib, "build_ext": BuildExt},
    options={"build_ext": {"parallel": JOBS}},
)
