"""The C compiles beyond this machine's GCC on x86-64 Linux.

``zig cc`` (Clang with the C libraries of many targets, from the PyPI package ``ziglang``)
compiles, syntax and semantics only (``-fsyntax-only``: every declaration, type and call
checked, no code generated), for aarch64 Linux and for x86-64 Windows (MinGW):

* the hand-written C of ``refsvm/_csrc`` with ``-Wall -Wextra -Werror``: on aarch64 the
  baseline bodies (the x86 vector bodies and the CPU dispatcher's ``__builtin_cpu_*`` sit
  under their guard), on Windows the x86 bodies too; and once more with ``__GNUC__``
  undefined, as ISO C99 with ``-pedantic-errors`` (the path of a compiler without GCC's
  extensions, such as MSVC: no vector types, no attributes, no ``__builtin_*``);
* every C file Cython generated for the core and the twins (present after a build in
  place, ``pip install -e .``), errors only (Cython's own code warns).

The host's Python and NumPy headers stand in for the target's (``-isystem``, so their
warnings are not ours).  They describe x86-64 Linux, which is LP64 as aarch64 Linux is;
for Windows, copies of them are used with the POSIX headers that MinGW lacks marked
absent (``HAVE_SYS_SELECT_H``, ``HAVE_ENDIAN_H``, ``NPY_HAVE_ENDIAN_H``): what is checked
there is our code against MinGW's C library and Clang's Windows target, not Python's own
Windows configuration (its ``long`` stays 8 bytes in those headers).

``zig cc -fsyntax-only`` ends with "failed to rename" the object file it was told not to
make (a quirk of its cache); that line alone is not a failure.
"""
import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "refsvm" / "_csrc"
TARGETS = ["aarch64-linux-gnu", "x86_64-windows-gnu"]
HAND_WRITTEN = sorted(CSRC.glob("*.c"))
GENERATED = sorted(p for p in (ROOT / "refsvm").rglob("*.c")
                   if CSRC not in p.parents and p.with_suffix(".pyx").exists())

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None,
                                reason="ziglang is not installed (the test extra has it)")


# the POSIX headers the host's pyconfig.h / _numpyconfig.h promise and MinGW lacks
WINDOWS_ABSENT = {"pyconfig.h": ["HAVE_SYS_SELECT_H", "HAVE_ENDIAN_H"],
                  "_numpyconfig.h": ["NPY_HAVE_ENDIAN_H"]}


@pytest.fixture(scope="module")
def headers(tmp_path_factory):
    """target -> the Python and NumPy include directories to compile against."""
    python, numpy = Path(sysconfig.get_paths()["include"]), Path(np.get_include())
    out = {t: (python, numpy) for t in TARGETS}
    root = tmp_path_factory.mktemp("windows-headers")
    win = (root / "python", root / "numpy")
    shutil.copytree(python, win[0])
    shutil.copytree(numpy, win[1])
    for config in (win[0] / "pyconfig.h", win[1] / "numpy" / "_numpyconfig.h"):
        text = config.read_text(encoding="utf-8")
        for macro in WINDOWS_ABSENT[config.name]:
            text, n = re.subn(rf"^#define {macro} 1$", f"/* #undef {macro} */", text,
                              flags=re.M)
            assert n <= 1
        config.write_text(text, encoding="utf-8")
    out["x86_64-windows-gnu"] = win
    return out


def _zig_cc(target, include, source, *flags):
    """Run ``zig cc -fsyntax-only`` on one file for one target; the completed process."""
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", target, "-fsyntax-only",
           "-isystem", str(include[0]), "-isystem", str(include[1]),
           "-I", str(CSRC), "-I", str(source.parent), "-Wno-unused-command-line-argument",
           *flags, str(source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def _assert_compiles(proc, source, target):
    errors = [line for line in proc.stderr.splitlines()
              if "error" in line and "failed to rename" not in line]
    assert not errors and (proc.returncode == 0 or "failed to rename" in proc.stderr), (
        f"{source.relative_to(ROOT)} does not compile for {target}:\n{proc.stderr[-4000:]}")


VERBATIM = re.compile(r'^cdef extern from \*:\n    """\n(.*?)\n    """', re.M | re.S)


def test_no_c_function_is_left_in_the_pyx_and_pxd_files():
    """A verbatim C block (``cdef extern from *`` with a string) may define constants, not
    functions or compiler-specific code: those are in refsvm/_csrc."""
    assert len(HAND_WRITTEN) >= 5
    for path in sorted((ROOT / "refsvm").rglob("*.p*")):
        if path.suffix not in (".pyx", ".pxd"):
            continue
        for block in VERBATIM.findall(path.read_text(encoding="utf-8")):
            for construct in ("{", "__attribute__", "__builtin", "#if", "#include"):
                assert construct not in block, f"C code in {path.name}: {construct}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", HAND_WRITTEN, ids=lambda p: p.name)
def test_hand_written_c_compiles_without_warnings(source, target, headers):
    proc = _zig_cc(target, headers[target], source, "-Wall", "-Wextra", "-Werror")
    _assert_compiles(proc, source, target)


@pytest.mark.parametrize("source", HAND_WRITTEN, ids=lambda p: p.name)
def test_hand_written_c_is_iso_c_without_gnu_extensions(source, headers):
    # __GNUC__ undefined: every GCC/Clang extension must sit under its guard
    target = "aarch64-linux-gnu"
    # (glibc's INFINITY is 1e10000f without __GNUC__: -Wno-literal-range)
    proc = _zig_cc(target, headers[target], source, "-U__GNUC__", "-std=c99", "-pedantic-errors",
                   "-Wall", "-Werror", "-Wno-literal-range")
    _assert_compiles(proc, source, "aarch64-linux-gnu without __GNUC__")


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", GENERATED, ids=lambda p: p.stem)
def test_generated_c_compiles(source, target, headers):
    proc = _zig_cc(target, headers[target], source, "-w",
                   "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION")
    _assert_compiles(proc, source, target)


def test_every_twin_has_its_generated_c_here():
    if not GENERATED:
        pytest.skip("no generated C here (build in place first: pip install -e .)")
    pyx = sorted((ROOT / "refsvm").rglob("*.pyx"))
    assert [p.with_suffix(".c") for p in pyx] == GENERATED
