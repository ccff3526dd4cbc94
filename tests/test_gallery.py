"""The docs gallery (``examples/plot_*.py``, run by the docs build): an example per paper
and the out-of-core one, each a titled script that runs (slow: each takes seconds)."""

import ast
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))

#: each paper (its docs page) and the word its example's file name carries
PAPERS = {"wang_vucetic": "wang_vucetic", "fine_scheinberg": "fine_scheinberg",
          "lee_tseng_chen": "lee_tseng_chen", "bagnell": "bagnell",
          "rai_daume_venkatasubramanian": "rai_", "cauwenberghs_poggio": "cauwenberghs_poggio"}


def test_an_example_per_paper_and_one_out_of_core():
    names = [p.stem for p in EXAMPLES]
    for page, word in PAPERS.items():
        assert (ROOT / "docs" / f"{page}.rst").exists(), page
        assert any(word in n for n in names), f"no gallery example for {page}"
    assert any("out_of_core" in n for n in names)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_has_a_title_and_names_its_docs_page(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    lines = doc.strip().splitlines()
    assert len(lines) > 3 and set(lines[1]) == {"="} and len(lines[1]) >= len(lines[0])
    if "out_of_core" not in path.stem:
        assert re.search(r":doc:`/(\w+)`", doc), f"{path.name}: link the docs page of its paper"
        page = re.search(r":doc:`/(\w+)`", doc).group(1)
        assert (ROOT / "docs" / f"{page}.rst").exists(), page


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_runs(path, monkeypatch, tmp_path):
    pytest.importorskip("matplotlib")
    if "dask" in path.stem:
        pytest.importorskip("dask.array")
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.chdir(tmp_path)
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    runpy.run_path(str(path), run_name="__main__")
    assert plt.get_fignums(), f"{path.name} drew no figure"
    plt.close("all")
