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

The build's own flags (``_optimize_flags`` in ``setup.py``) then compile the same C to
assembly, at -O3, for aarch64 and x86-64: no product and sum may come out fused into a
multiply-add unless the code asks for one (an FMA intrinsic), since every twin must give
its pure-Python reference's bits.  Clang contracts within an expression by default and
GCC across statements, wherever the target has FMA: on every aarch64 CPU.
"""
import ast
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
    out = {t: (python, numpy) for t in TARGETS + ["x86_64-linux-gnu"]}
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


def _zig_cc(target, include, source, *flags, assembly=None):
    """Run ``zig cc -fsyntax-only`` on one file for one target, or with ``assembly`` (a
    path) ``zig cc -S`` into that file; the completed process."""
    mode = ["-fsyntax-only"] if assembly is None else ["-S", "-o", str(assembly)]
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", target, *mode,
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


def _build_flags():
    """The flags ``setup.py`` gives GCC and Clang in a release build (``_optimize_flags``,
    read from ``setup.py`` itself)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    fn = next(node for node in tree.body
              if isinstance(node, ast.FunctionDef) and node.name == "_optimize_flags")
    namespace = {"DEBUG": False}
    exec(compile(ast.Module([fn], type_ignores=[]), "setup.py", "exec"), namespace)
    return namespace["_optimize_flags"]("unix")


#: a fused multiply-add or -subtract, scalar or vector: aarch64 (fmadd, fmsub, fnmadd,
#: fnmsub; fmla, fmls) and x86-64 (vfmadd231pd, vfnmsub213sd, vfmaddsub..., ...)
FUSED = {"aarch64-linux-gnu": re.compile(r"\s(f(n)?m(add|sub)|fml[as])\s"),
         "x86_64-linux-gnu": re.compile(r"\svfn?m(add|sub)\w*[ps][sd]\s")}
#: the functions that ask for fused multiply-adds (FMA intrinsics), and only on x86-64
ASKS_FOR_FMA = {"refsvm_dense_dot_bound_fma", "refsvm_exp4", "refsvm_exp8"}
LABEL = re.compile(r"^([A-Za-z_][\w.$]*):")


def _fused_by_function(target, include, source, out):
    """{function: number of fused instructions} in ``source`` compiled to assembly (the
    file ``out``) for ``target`` with the build's flags (local labels, .L..., count to
    their function)."""
    proc = _zig_cc(target, include, source, *_build_flags(), "-w", assembly=out)
    assert proc.returncode == 0 and out.exists(), (
        f"{source.relative_to(ROOT)} does not compile to assembly for {target}:\n"
        f"{proc.stderr[-4000:]}")
    counts, function = {}, None
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
        label = LABEL.match(line)
        if label and not label.group(1).startswith(".L"):
            function = label.group(1)
        elif FUSED[target].search(line + " "):
            counts[function] = counts.get(function, 0) + 1
    return counts


def test_the_build_does_not_contract_into_fma():
    assert "-ffp-contract=off" in _build_flags()


@pytest.mark.parametrize("target", sorted(FUSED))
@pytest.mark.parametrize("source", HAND_WRITTEN, ids=lambda p: p.name)
def test_hand_written_c_fuses_only_where_it_asks(source, target, headers, tmp_path):
    fused = _fused_by_function(target, headers[target], source, tmp_path / "out.s")
    asked = ASKS_FOR_FMA if target.startswith("x86_64") else set()
    assert not set(fused) - asked, (
        f"{source.name} on {target}: fused multiply-adds the code does not ask for in "
        f"{sorted(set(fused) - asked)}")


def test_the_functions_allowed_fma_ask_for_it():
    # each function of ASKS_FOR_FMA is written with FMA intrinsics
    text = "\n".join(p.read_text(encoding="utf-8") for p in HAND_WRITTEN)
    for name in ASKS_FOR_FMA:
        body = text[text.index(name + "("):]
        body = body[: body.index("\n}\n")]
        assert "_fmadd_pd(" in body, name


@pytest.mark.slow
@pytest.mark.parametrize("source", GENERATED, ids=lambda p: p.stem)
def test_generated_c_fuses_nothing_on_aarch64(source, headers, tmp_path):
    target = "aarch64-linux-gnu"
    fused = _fused_by_function(target, headers[target], source, tmp_path / "out.s")
    assert not fused, f"{source.name}: fused multiply-adds in {sorted(fused)}"


def test_every_twin_has_its_generated_c_here():
    if not GENERATED:
        pytest.skip("no generated C here (build in place first: pip install -e .)")
    pyx = sorted((ROOT / "refsvm").rglob("*.pyx"))
    assert [p.with_suffix(".c") for p in pyx] == GENERATED
