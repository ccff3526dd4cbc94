"""The shape of the package: a family is a folder; a reference holds only the algorithm (no
scikit-learn, no compiled code, nothing from another family) and reads as the printed
pseudocode; departures are parameters, not module knobs; hand-written C is C; a twin cimports
the shared core; every family folder names its paper, docs page and ALGORITHMS.md section."""

import ast
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "refsvm"
FAMILIES = sorted(p.name for p in PKG.iterdir()
                  if p.is_dir() and (p / "__init__.py").exists() and (p / "estimators.py").exists())
#: Every Python module of a family but its estimators: the references, their departures
#: and helpers. They are read beside the papers.
REFERENCES = sorted(p for fam in FAMILIES for p in (PKG / fam).rglob("*.py")
                    if p.name != "estimators.py" and "__pycache__" not in p.parts)
TWINS = sorted(p for fam in FAMILIES for p in (PKG / fam).glob("_*.pyx"))
#: The longest a module read beside a paper may be (docstrings included).
MAX_REFERENCE_LINES = 600
#: The longest verbatim C block a .pyx/.pxd may hold (a few macros); C belongs in .c/.h files.
MAX_VERBATIM_C_LINES = 12


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or "")


def _absolute(name, path):
    """A relative import of the module at ``path`` as an absolute dotted name."""
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    base = package[:len(package) - level + 1]
    rest = name[level:]
    return ".".join(base + ([rest] if rest else []))


def test_the_families_are_found():
    # every public estimator is defined in some family's estimators.py
    import refsvm

    homes = {type(obj).__module__ if not isinstance(obj, type) else obj.__module__
             for obj in map(lambda n: getattr(refsvm, n), refsvm.__all__)
             if isinstance(obj, type) and hasattr(obj, "fit")}
    families = {m.split(".")[1] for m in homes if m.endswith(".estimators")}
    assert families and families <= set(FAMILIES)
    assert len(FAMILIES) >= 6


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: str(p.relative_to(PKG)))
def test_a_reference_imports_only_numpy_scipy_the_core_and_its_family(path):
    family = path.relative_to(PKG).parts[0]
    for name in _imports(path):
        absolute = _absolute(name, path)
        top = absolute.split(".")[0]
        assert top not in ("sklearn", "pandas", "matplotlib"), f"{path.name} imports {name}"
        if top == "refsvm":
            parts = absolute.split(".")
            assert len(parts) > 1 and parts[1] in ("core", family), (
                f"{path.name} imports {name}: a reference may use refsvm.core and its own family"
            )
            assert not any(p.startswith("_") and p != "__init__" for p in parts[2:]), (
                f"{path.name} imports compiled code {name}"
            )


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: str(p.relative_to(PKG)))
def test_a_reference_module_fits_beside_the_paper(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_REFERENCE_LINES, (
        f"{path.relative_to(ROOT)} has {lines} lines; a module read beside the paper holds at "
        f"most {MAX_REFERENCE_LINES}: move a departure or a helper into its own module"
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_declares_its_departures(family):
    import importlib

    from refsvm.core.departures import Departure, resolve

    table = importlib.import_module(f"refsvm.{family}.departures").DEPARTURES
    assert isinstance(table, dict)
    for name, departure in table.items():
        assert isinstance(departure, Departure), name
        assert departure.answers.strip(), f"{family}: departure {name!r} says nothing it answers"
        assert departure.check(name, departure.default) == departure.default
        assert departure.check(name, departure.paper) == departure.paper
    assert set(resolve(table, "paper")) == set(table)


def test_every_estimator_takes_departures():
    import refsvm

    for name in refsvm.__all__:
        obj = getattr(refsvm, name)
        if isinstance(obj, type) and hasattr(obj, "fit") and hasattr(obj, "get_params"):
            assert "departures" in inspect.signature(obj.__init__).parameters, name


# monkeypatch.setattr(module, "CONSTANT", ...) or setattr(module, "CONSTANT", ...) in a test
_PATCHED_CONSTANT = re.compile(r"setattr\(\s*[\w.]+\s*,\s*[\"'][A-Z][A-Z0-9_]+[\"']")


@pytest.mark.parametrize("path", sorted((ROOT / "tests").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_patches_a_module_constant(path):
    text = path.read_text(encoding="utf-8")
    if path.name == "test_layout.py":
        return
    hits = _PATCHED_CONSTANT.findall(text)
    assert not hits, f"{path.name} reaches a path by patching a module constant: {hits}"


_VERBATIM = re.compile(r'cdef extern from \*:\s*\n\s*"""(.*?)"""', re.S)


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.pyx")) + sorted(PKG.rglob("*.pxd")),
                         ids=lambda p: str(p.relative_to(PKG)))
def test_c_is_c(path):
    for block in _VERBATIM.findall(path.read_text(encoding="utf-8")):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        assert len(lines) <= MAX_VERBATIM_C_LINES, (
            f"{path.relative_to(ROOT)} holds {len(lines)} lines of verbatim C: hand-written C "
            "belongs in the package's .c/.h files"
        )


@pytest.mark.parametrize("path", TWINS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_twin_cimports_the_shared_core(path):
    assert re.search(r"^from refsvm\._core cimport", path.read_text(encoding="utf-8"), re.M)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_names_its_paper_docs_page_and_algorithms_section(family):
    doc = ast.get_docstring(ast.parse((PKG / family / "__init__.py").read_text(encoding="utf-8")))
    assert doc and "docs/" in doc and "ALGORITHMS.md" in doc, family
    page = re.search(r"docs/(\w+)\.rst", doc).group(1)
    assert (ROOT / "docs" / f"{page}.rst").exists(), f"{family}: docs/{page}.rst missing"


#: The two exact active-set families: each is a driver over the core's engine
#: (``refsvm/core/active_set.py``, ``refsvm/_core``); neither imports the other.
EXACT_FAMILIES = ("idsvm", "poker")


def _family_modules(family):
    return sorted(p for p in (PKG / family).rglob("*")
                  if p.suffix in (".py", ".pyx", ".pxd") and "__pycache__" not in p.parts)


def _pyx_imports(path):
    """The dotted names a .pyx/.pxd imports or cimports (``from X (c)import``, ``(c)import X``)."""
    for m in re.finditer(r"^\s*(?:from\s+([\w.]+)\s+c?import|c?import\s+([\w.]+))",
                         path.read_text(encoding="utf-8"), re.M):
        yield m.group(1) or m.group(2)


@pytest.mark.parametrize("family", EXACT_FAMILIES)
def test_the_exact_families_do_not_import_each_other(family):
    other = [f for f in EXACT_FAMILIES if f != family][0]
    for path in _family_modules(family):
        names = _imports(path) if path.suffix == ".py" else _pyx_imports(path)
        for name in names:
            absolute = _absolute(name, path) if path.suffix == ".py" else name
            assert not absolute.startswith(f"refsvm.{other}"), (
                f"{path.relative_to(ROOT)} imports {name}: the shared active-set machinery "
                "belongs in refsvm.core / refsvm._core, the hand-over in refsvm._exact_paths")


def test_the_active_set_engine_lives_in_the_core():
    # what the engine shares (refsvm/core/active_set.py, bordered.py, exactness.py,
    # engine.py; compiled in _core.pxd) is defined there only: neither exact family defines
    # it again as a module-level function, under its name or with a leading underscore (a
    # state's method may wrap it)
    from refsvm.core import active_set, bordered, engine, exactness

    shared = {n for n in active_set.__all__ + bordered.__all__ + exactness.__all__
              + engine.__all__ if n.islower()}
    shared |= set(re.findall(r"^cdef (?:inline )?\w+\*? (\w+)\(",
                             (PKG / "_core.pxd").read_text(encoding="utf-8"), re.M))
    for family in EXACT_FAMILIES:
        for path in _family_modules(family):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".py":
                defined = {node.name for node in ast.parse(text).body
                           if isinstance(node, ast.FunctionDef)}
            else:
                defined = set(re.findall(r"^c?p?def\s+(?:inline\s+)?[\w*\s]*?\b(\w+)\(",
                                         text, re.M))
            again = {d for d in defined if d.lstrip("_") in shared}
            assert not again, (f"{path.relative_to(ROOT)} defines {sorted(again)} again: "
                               "the core's active-set engine holds them")


#: The polish's operations the core holds (``_core.pxd``; their reference in
#: ``refsvm/core/exactness.py``), and the names under which a twin once wrote its own.
POLISH_IN_CORE = ("polish_add_column", "margin_g", "polish_balance", "polish_residual",
                  "polish_step", "polish_refine", "polish_undo", "polish_newton", "snap_margin")
POLISH_ONCE_PER_TWIN = ("_exact_g", "_polish_residual", "_snap", "_worst_violation_g")
#: The correctly rounded sum's pieces the core holds (``refsvm/_csrc/refsvm_fsum.c``, declared
#: in ``_core.pxd``; a twin's method may wrap the core's ``fsum``, never sum on its own).
SUM_IN_CORE = ("two_product", "exact_sum", "g_exact_rows", "fsum_check")


def test_one_compiled_polish_for_both_twins():
    # g afresh by Dot2, the residual [h; g_S], the Newton step through the margin set's R and
    # the snap are compiled once, in the core; the twins call them (IDSVM's twin the whole
    # polish, POKER's the Newton step, and its correctly rounded residuals and g by the
    # core's compiled sum: g_exact_rows, fsum_check) and define none of them again, as a
    # function or as a method
    pxd = (PKG / "_core.pxd").read_text(encoding="utf-8")
    from refsvm.core import exactness
    for name in POLISH_IN_CORE:
        assert re.search(rf"^cdef \w+\*? {name}\(", pxd, re.M), f"_core.pxd lacks {name}"
        if name not in ("polish_add_column", "polish_balance", "polish_step", "polish_refine",
                        "polish_undo"):
            assert name in exactness.__all__, f"refsvm.core.exactness lacks {name}"
    uses = {"idsvm/_incremental_svm.pyx": ("polish_add_column", "polish_newton", "margin_g",
                                           "snap_margin", "polish_balance"),
            "poker/_poker.pyx": ("polish_step", "polish_refine", "g_exact_rows", "fsum_check")}
    for rel, names in uses.items():
        text = (PKG / rel).read_text(encoding="utf-8")
        cimported = set(re.findall(r"\w+", " ".join(re.findall(
            r"^from refsvm\._core cimport (\([^)]*\)|[^\n]*)", text, re.M))))
        for name in names:
            assert name in cimported, f"refsvm/{rel} does not cimport the core's {name}"
        again = {m for m in re.findall(r"^\s*c?p?def\s+[\w*\s]*?\b(\w+)\(", text, re.M)
                 if m in POLISH_ONCE_PER_TWIN or m.lstrip("_") in POLISH_IN_CORE + SUM_IN_CORE}
        assert not re.search(r"\bmath\.fsum\(|^\s*(?:import math\b|from math import)", text,
                             re.M), (
            f"refsvm/{rel} sums with math.fsum: the core's compiled sum holds it")
        assert not again, f"refsvm/{rel} defines {sorted(again)}: the core's polish holds them"


def _core_declarations(path=None):
    """The compiled classes and structs declared in ``path`` (the core's ``_core.pxd``)."""
    text = (PKG / "_core.pxd" if path is None else path).read_text(encoding="utf-8")
    return set(re.findall(r"^(?:cdef class|ctypedef struct)\s+(\w+)", text, re.M))


def test_the_column_cache_lives_in_the_core():
    # one column cache for both exact families: refsvm/core/column_cache.py and, compiled,
    # _core.pxd's ColumnCache.  The core's compiled classes and structs are declared there
    # only (a twin holds them), and both references keep a core ColumnCache (their
    # ``column_cache`` departure modules hand it the family's form of a column)
    from refsvm.core.column_cache import ColumnCache
    from refsvm.idsvm.incremental_svm import IncrementalSVMState
    from refsvm.poker.poker import POKERState

    core = _core_declarations()
    assert "ColumnCache" in core
    for family in EXACT_FAMILIES:
        for path in _family_modules(family):
            if path.suffix in (".pyx", ".pxd"):
                again = _core_declarations(path) & core
                assert not again, (f"{path.relative_to(ROOT)} declares {sorted(again)} "
                                   "again: the core holds them")
    assert isinstance(IncrementalSVMState(2).cache, ColumnCache)
    assert isinstance(POKERState(2).cache, ColumnCache)


def test_the_margin_set_lives_in_the_core():
    # one margin set (S, its kernel columns KS, the bordered inverse R, their growth and
    # shrinking) for both exact families: refsvm/core/margin_set.py and, compiled,
    # _core.pxd's MarginSet (no twin declares it again: the test above); each reference
    # holds one (``margin``) and reads S, KS and R through it
    from refsvm.core.margin_set import MarginSet
    from refsvm.idsvm.incremental_svm import IncrementalSVMState
    from refsvm.poker.poker import POKERState

    assert "MarginSet" in _core_declarations()
    for family in EXACT_FAMILIES:
        for path in _family_modules(family):
            if path.suffix == ".py":
                assert not re.search(r"^class MarginSet\b", path.read_text(encoding="utf-8"),
                                     re.M), f"{path.relative_to(ROOT)} defines MarginSet again"
    for st in (IncrementalSVMState(2), POKERState(2)):
        assert isinstance(st.margin, MarginSet)
        assert st.S is st.margin.S and st.KS is st.margin.KS


#: The membership changes of the margin set the core holds: the reference
#: (``refsvm/core/engine.py``) and compiled (``_core.pxd``) names.
ENGINE_OPS = {"join": "engine_join", "leave": "engine_leave"}


def test_one_membership_change_for_both_families():
    # an example joining the margin set and a member leaving it are written once, in the
    # core: both references call refsvm.core.engine's join / leave, both twins cimport
    # _core's engine_join / engine_leave, and no module of either family starts, grows or
    # shrinks the margin set itself (nor defines the operations again: the test of the
    # engine above)
    from refsvm.core import engine

    pxd = (PKG / "_core.pxd").read_text(encoding="utf-8")
    for ref_name, c_name in ENGINE_OPS.items():
        assert ref_name in engine.__all__, f"refsvm.core.engine lacks {ref_name}"
        assert re.search(rf"^cdef \w+\*? {c_name}\(", pxd, re.M), f"_core.pxd lacks {c_name}"
    for family, ref, twin in (("idsvm", "incremental_svm.py", "_incremental_svm.pyx"),
                              ("poker", "poker.py", "_poker.pyx")):
        text = (PKG / family / ref).read_text(encoding="utf-8")
        imported = set(re.findall(r"^from \.\.core\.engine import ([\w, ]+)$", text, re.M))
        assert {n.strip() for line in imported for n in line.split(",")} >= set(ENGINE_OPS), (
            f"refsvm/{family}/{ref} does not import the core's join and leave")
        text = (PKG / family / twin).read_text(encoding="utf-8")
        cimported = set(re.findall(r"\w+", " ".join(re.findall(
            r"^from refsvm\._core cimport (\([^)]*\)|[^\n]*)", text, re.M))))
        for c_name in ENGINE_OPS.values():
            assert c_name in cimported, f"refsvm/{family}/{twin} does not cimport {c_name}"
        for path in _family_modules(family):
            own = re.findall(r"\b(?:self\.ms|self\.margin|margin)\.(start|grow|remove)\(",
                             path.read_text(encoding="utf-8"))
            assert not own, (f"{path.relative_to(ROOT)} calls the margin set's {sorted(set(own))}"
                             " itself: the core's engine (join / leave) does")


#: The settings of the exactness checks' levels (both families' departures, POKER's end
#: check's level on g): a family hands them to the core's ``kkt_levels`` and computes nothing
#: from them itself (the polish's step bound, its ``max_step``, is not a level of a check)
LEVEL_SETTINGS = ("kkt_tol", "kkt_ulps", "h_ulps", "end_balance_tol", "ulps_ck", "END_G_TOL")


def test_the_exact_families_compute_no_level_themselves():
    # the levels of the KKT check and of POKER's end check, and the verdict on them, are
    # the core's (refsvm.core.exactness: kkt_levels, kkt_verdict; compiled in _core.pxd):
    # no arithmetic or comparison of either family's Python reads a level setting, the
    # twins' checks call the compiled levels (IDSVM's) or the reference's check (POKER's)
    from refsvm.core import exactness

    pxd = (PKG / "_core.pxd").read_text(encoding="utf-8")
    for name in ("kkt_levels", "kkt_verdict", "end_balance", "end_wrong_side"):
        assert name in exactness.__all__, f"refsvm.core.exactness lacks {name}"
        assert re.search(rf"^cdef \w+\*? {name}\(", pxd, re.M), f"_core.pxd lacks {name}"

    def setting(node):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and sub.value in LEVEL_SETTINGS:
                return sub.value
            if isinstance(sub, ast.Name) and sub.id in LEVEL_SETTINGS:
                return sub.id
            if isinstance(sub, ast.Attribute) and sub.attr in LEVEL_SETTINGS:
                return sub.attr
        return None

    for family in EXACT_FAMILIES:
        for path in _family_modules(family):
            if path.suffix != ".py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            bound = {id(n) for kw in ast.walk(tree)
                     if isinstance(kw, ast.keyword) and kw.arg == "max_step"
                     for n in ast.walk(kw.value)}
            for node in ast.walk(tree):
                if isinstance(node, (ast.BinOp, ast.Compare, ast.AugAssign,
                                     ast.UnaryOp)) and id(node) not in bound:
                    name = setting(node)
                    assert name is None, (
                        f"{path.relative_to(ROOT)}:{node.lineno} computes with {name}: "
                        "the core's kkt_levels gives the levels")
    # the twins: IDSVM's compiled check on the core's compiled levels and verdict, with no
    # level of its own; POKER's checks are the reference's own code
    text = (PKG / "idsvm" / "_incremental_svm.pyx").read_text(encoding="utf-8")
    cimported = set(re.findall(r"\w+", " ".join(re.findall(
        r"^from refsvm\._core cimport (\([^)]*\)|[^\n]*)", text, re.M))))
    assert {"kkt_levels", "kkt_verdict", "KKTLevels"} <= cimported
    # (the check and the h it judges, with its levels: _balance_and_levels)
    body = "".join(re.search(rf"^    cdef \w+ {name}\(.*?(?=^    \S)", text, re.M | re.S).group(0)
                   for name in ("_check_exact", "_balance_and_levels"))
    code = re.sub(r'""".*?"""|#[^\n]*', "", body, flags=re.S)
    assert "kkt_levels(" in code and "kkt_verdict(" in code
    assert not re.search(r"EPS_MACH|\b(?:kkt_tol|kkt_ulps|h_ulps)\s*[-+*/<>]|[-+*/<>]\s*"
                         r"(?:self\.dep\.)?(?:kkt_tol|kkt_ulps|h_ulps)\b", code), (
        "IDSVM's twin computes a level of its check itself")
    text = (PKG / "poker" / "_poker.pyx").read_text(encoding="utf-8")
    for name in ("_check_end", "exactness"):
        assert re.search(rf"^    {name} = EndOfChunk\.{name}$", text, re.M), (
            f"POKER's twin does not run the reference's {name}")
    cimported = set(re.findall(r"\w+", " ".join(re.findall(
        r"^from refsvm\._core cimport (\([^)]*\)|[^\n]*)", text, re.M))))
    assert {"end_balance", "end_wrong_side"} <= cimported


#: What makes kernel values: a family's column code calls none of these, the engine does.
_KERNEL_CALL = re.compile(r"\bkernel_many4?\(|\bk_rows\(|\bk_row_\w+\(|self\.(?:kernel|kern|_k)\("
                          r"|\bkernel\(")


def _pyx_bodies(text, prefix):
    """(name, body) of every def / cdef / cpdef in ``text`` whose name starts with
    ``prefix``: its lines up to the next one indented no deeper than its own."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        m = re.match(rf"^(\s*)c?p?def\s+[\w*\s]*?\b({prefix}\w*)\(", line)
        if not m:
            continue
        indent, body = len(m.group(1)), []
        for nxt in lines[k + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent \
                    and not nxt.lstrip().startswith((")", "#")):
                break
            body.append(nxt)
        yield m.group(2), "\n".join(body)


def test_one_making_of_a_column_for_both_families():
    # k(x_l, x_c) for every id l (the cached part, the values the caller has, KS, k(x_c,
    # x_c), kernel evaluations for the rest) is made once, in the core: both references'
    # ``_column`` call refsvm.core.engine's ``column``, both twins' ``_column`` /
    # ``_column_c`` the core's ``engine_column`` (POKER's ``_f_columns``, four at a time,
    # ``engine_column4``), and no family code named ``_column...`` or ``_f_column...``
    # evaluates a kernel value itself
    from refsvm.core import engine

    assert "column" in engine.__all__, "refsvm.core.engine lacks column"
    pxd = (PKG / "_core.pxd").read_text(encoding="utf-8")
    assert re.search(r"^cdef \w+\*? engine_column\(", pxd, re.M), "_core.pxd lacks engine_column"
    for family, twin in (("idsvm", "_incremental_svm.pyx"), ("poker", "_poker.pyx")):
        text = (PKG / family / "storage.py").read_text(encoding="utf-8")
        assert re.search(r"^from \.\.core\.engine import [\w, ]*\bcolumn\b", text, re.M), (
            f"refsvm/{family}/storage.py does not import the core's column")
        text = (PKG / family / twin).read_text(encoding="utf-8")
        cimported = set(re.findall(r"\w+", " ".join(re.findall(
            r"^from refsvm\._core cimport (\([^)]*\)|[^\n]*)", text, re.M))))
        assert "engine_column" in cimported, f"refsvm/{family}/{twin} does not cimport engine_column"
        bodies = dict(_pyx_bodies(text, "_column"))
        assert bodies, f"refsvm/{family}/{twin} has no _column"
        for name, body in bodies.items():
            assert "engine_column(" in body or "_column_c(" in body, (
                f"refsvm/{family}/{twin}: {name} does not go through the core's engine_column")
        for path in _family_modules(family):
            if path.suffix == ".py":
                tree = ast.parse(path.read_text(encoding="utf-8"))
                found = [(node.name, ast.get_source_segment(path.read_text(encoding="utf-8"),
                                                            node))
                         for node in ast.walk(tree)
                         if isinstance(node, ast.FunctionDef)
                         and node.name.startswith(("_column", "_f_column"))]
            else:
                text = path.read_text(encoding="utf-8")
                found = list(_pyx_bodies(text, "_column")) + list(_pyx_bodies(text, "_f_column"))
            for name, body in found:
                assert not _KERNEL_CALL.search(body), (
                    f"{path.relative_to(ROOT)}: {name} evaluates kernel values itself: "
                    "the core's column / engine_column makes a column")


#: The keys of the persistence format only one exact family has (its ``save_state``): the
#: other family never names them, it reads the exact optimum in the core's layout instead.
FAMILY_ONLY_KEYS = {
    "idsvm": ("Rinv", "kscale", "n_increments", "n_decrements", "n_pivot_refresh",
              "max_inverse_drift"),
    "poker": ("kmax", "n_chunks", "cache_len", "cache_cols", "X_data", "X_indices", "X_indptr"),
}
#: The modules that hand an exact optimum from one family to the other.
HAND_OVER = ("_exact_paths.py", "_warm_start.py", "idsvm/estimators.py", "poker/estimators.py")


def _string_constants(path):
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


@pytest.mark.parametrize("family", EXACT_FAMILIES)
def test_neither_exact_family_converts_the_others_arrays(family):
    # a family's code names no key of the other family's own persistence format (no
    # pairwise converter), and the hand-over modules neither save nor load a state's own
    # format: what passes between the families is the core's layout
    other = [f for f in EXACT_FAMILIES if f != family][0]
    for path in _family_modules(family):
        if path.suffix == ".py":
            named = _string_constants(path) & set(FAMILY_ONLY_KEYS[other])
            assert not named, (f"{path.relative_to(ROOT)} reads {sorted(named)} of "
                               f"refsvm.{other}'s persistence format: hand over the core's "
                               "layout (refsvm.core.optimum)")
    for rel in HAND_OVER:
        text = (PKG / rel).read_text(encoding="utf-8")
        assert not re.search(r"\.(save_state|load_state)\(", text), (
            f"refsvm/{rel} hands over a family's own persistence format, not the core's layout")


def test_both_exact_families_write_and_start_from_the_core_layout():
    # each family writes its optimum with the core's builder and starts from it through
    # the core's reader; the hand-over modules use the families' writers and starts
    from refsvm.core import optimum as core_optimum
    from refsvm.idsvm import state_format
    from refsvm.poker import storage

    assert {"optimum", "read_optimum", "optimum_problem"} <= set(core_optimum.__all__)
    for module in (state_format, storage):
        write = inspect.getsource(module.optimum_of)
        start = inspect.getsource(module.load_optimum)
        assert re.search(r"\boptimum\(", write), f"{module.__name__}.optimum_of"
        assert re.search(r"\b(read_optimum|optimum_problem|state_arrays_from_optimum)\(",
                         start), f"{module.__name__}.load_optimum"
    reader = inspect.getsource(state_format.state_arrays_from_optimum)
    assert re.search(r"\boptimum_problem\(", reader)
    used = " ".join((PKG / rel).read_text(encoding="utf-8") for rel in HAND_OVER)
    assert "optimum_of" in used and "load_optimum" in used


def test_both_exact_references_keep_the_core_partition_arrays():
    # the per-example arrays of the partition and their growth with the examples are the
    # core's (refsvm.core.optimum.PartitionArrays): both references' storage derive from
    # it, and neither grows a per-example array itself
    from refsvm.core.optimum import PartitionArrays
    from refsvm.idsvm.incremental_svm import IncrementalSVMState
    from refsvm.poker.poker import POKERState

    for cls in (IncrementalSVMState, POKERState):
        assert issubclass(cls, PartitionArrays), cls.__name__
    for family in EXACT_FAMILIES:
        text = (PKG / family / "storage.py").read_text(encoding="utf-8")
        assert "grow_array(" not in text, (
            f"refsvm/{family}/storage.py grows a per-example array itself: the core's "
            "PartitionArrays does")


#: the partition's per-example arrays each exact twin reads, by the names its loops use
#: (the holder's own buffers, ``part.<name>``, or a family's array, ``part.extra[k]``)
PARTITION_ARRAYS = {
    "idsvm": ("y", "alpha", "g", "kdiag", "kroot", "status"),
    "poker": ("c_y", "c_alpha", "c_g", "c_p", "c_d", "c_a0", "c_kdiag", "c_status"),
}


def test_both_exact_twins_keep_the_partition_arrays_in_the_core_holder():
    # the compiled counterpart of PartitionArrays is _core.pxd's Partition: each exact
    # twin holds one (``cdef Partition part``), takes every per-example pointer from it,
    # and neither allocates, grows, frees nor binds a per-example buffer of its own (no
    # ``grow``/``realloc``/``free`` of one, no pointer to one from anything but the
    # holder, no ``grow_array`` of the reference's arrays)
    assert "Partition" in _core_declarations()
    for family, names in PARTITION_ARRAYS.items():
        path = next(p for p in TWINS if p.parent.name == family)
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        assert re.search(r"^\s*cdef Partition part\b", text, re.M), f"{rel}: no Partition"
        assert "grow_array(" not in text, f"{rel} grows a per-example array itself"
        for name in names:
            own = re.search(r"\b(?:grow|_resize|realloc|free)\(\s*(?:<void\*\*>\s*&)?"
                            rf"self\.{name}\b", text)
            assert not own, f"{rel} allocates or frees its own {name}: {own.group(0)}"
            for value in re.findall(rf"^\s*self\.{name}\s*=\s*(.+)$", text, re.M):
                assert re.match(r"self\.part\.(\w+|extra\[\d\])\s*$", value), (
                    f"{rel}: self.{name} = {value}: a per-example pointer comes from the "
                    "holder")
