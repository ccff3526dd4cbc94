"""Build script: compiles every ``refsvm/**/*.pyx`` module (the shared core and the twins).

All Cython compile directives live here, in one place.  Set the environment
variable ``REFSVM_DEBUG=1`` before building to turn bounds checking,
wrap-around and None checks back on (useful when a twin misbehaves).
"""
import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("REFSVM_DEBUG", "0") not in ("", "0")
# REFSVM_ONLY=_core,_online_svmr builds only those modules (faster edit-compile loops).
ONLY = [m for m in os.environ.get("REFSVM_ONLY", "").split(",") if m]

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "nonecheck": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "infer_types": True,
    "embedsignature": True,
}



def _module_name(path):
    """refsvm/ramp/_online_svmr.pyx -> refsvm.ramp._online_svmr"""
    return os.path.splitext(path)[0].replace(os.sep, ".")


extensions = [
    Extension(
        _module_name(path),
        [path],
        include_dirs=[np.get_include(), os.path.dirname(path)],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O0", "-g"] if DEBUG else ["-O3"],
    )
    for path in sorted(glob.glob(os.path.join("refsvm", "**", "*.pyx"), recursive=True))
    if not ONLY or _module_name(path).rpartition(".")[2] in ONLY
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=COMPILER_DIRECTIVES,
        annotate=DEBUG,
    )
)
