"""The shape of the package (issue 8): a family is a folder; a reference holds only the
algorithm (no scikit-learn, no compiled code, nothing from another family); a twin
cimports the shared core; every family folder names its paper, docs page and
ALGORITHMS.md section."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "refsvm"
FAMILIES = sorted(p.name for p in PKG.iterdir()
                  if p.is_dir() and (p / "__init__.py").exists() and (p / "estimators.py").exists())
REFERENCES = sorted(p for fam in FAMILIES for p in (PKG / fam).glob("*.py")
                    if p.name not in ("__init__.py", "estimators.py"))
TWINS = sorted(p for fam in FAMILIES for p in (PKG / fam).glob("_*.pyx"))


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            yield base


def test_the_families_are_there():
    assert {"linear", "kernel_pa", "ramp", "idsvm", "stream_svm"} <= set(FAMILIES)


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_reference_imports_only_numpy_scipy_the_core_and_its_family(path):
    family = path.parent.name
    for name in _imports(path):
        absolute = name
        if name.startswith(".."):
            absolute = "refsvm." + name[2:]
        elif name.startswith("."):
            absolute = f"refsvm.{family}." + name[1:]
        top = absolute.split(".")[0]
        assert top not in ("sklearn", "pandas", "matplotlib"), f"{path.name} imports {name}"
        if top == "refsvm":
            parts = absolute.split(".")
            assert len(parts) > 1 and (parts[1] == "core" or parts[1] == family), (
                f"{path.name} imports {name}: a reference may use refsvm.core and its own family"
            )
            assert not (len(parts) > 2 and parts[2].startswith("_")), (
                f"{path.name} imports compiled code {name}"
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
