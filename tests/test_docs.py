"""The docs quote code as ``refsvm/file.py``: ``statement`` (.py, .pyx, .pxd, or the C of refsvm/_csrc); each quote must exist."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.rst"))
REF = re.compile(r"``(refsvm/[\w/]+\.(?:pyx?|pxd|c|h))``: ``(.+?)``(?!`)")


def _references():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"\n\s+", " ", text)  # join the continuation lines of table cells
        for path, code in REF.findall(text):
            yield page.name, path, code


REFERENCES = list(_references())


def test_docs_have_code_references():
    assert len(REFERENCES) >= 20


@pytest.mark.parametrize("page,path,code", REFERENCES)
def test_code_reference_exists(page, path, code):
    source = (ROOT / path).read_text(encoding="utf-8")
    assert code in source, f"{page}: {code!r} is not in {path}"
    # a quote locates its line: it occurs once in the file it quotes
    assert source.count(code) == 1, (
        f"{page}: {code!r} occurs {source.count(code)} times in {path}; quote more of the line"
    )


def _readme_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    """The README's Python blocks run, in order, in one namespace (as a reader would)."""
    blocks = _readme_blocks()
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README


def _table_of(script, result_file):
    """(the benchmark module ``benchmarks/<script>``, its result file
    ``docs/_static/<result_file>``, the table docs/defaults.rst shows between the
    module's markers)."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("_" + script[:-3],
                                                  ROOT / "benchmarks" / script)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = json.loads((ROOT / "docs" / "_static" / result_file).read_text())
    page = (ROOT / "docs" / "defaults.rst").read_text(encoding="utf-8")
    return bench, result, page[page.index(bench.BEGIN) + len(bench.BEGIN):page.index(bench.END)]


def test_noisy_streams_table_shows_the_result_file():
    """docs/defaults.rst shows the table benchmarks/bench_noisy_streams.py renders from
    its result file (docs/_static/noisy_streams.json), every stream and C measured."""
    import json

    bench, result, shown = _table_of("bench_noisy_streams.py", "noisy_streams.json")
    assert shown == bench.render_rst(result)
    assert {(c["name"], c["C"]) for c in result["cells"]} == {
        (n, C) for n in bench.STREAMS for C in (1.0, 10.0)}
    assert result["summary"] == json.loads(json.dumps(bench.summary(result["cells"])))


def test_defaults_page_shows_the_result_file():
    """docs/defaults.rst shows the table that benchmarks/bench_defaults_vs_libsvm.py
    renders from the result file it wrote (docs/_static/defaults_vs_libsvm.json): the
    page's numbers are a measurement's, not typed in."""
    import json

    bench, result, shown = _table_of("bench_defaults_vs_libsvm.py", "defaults_vs_libsvm.json")
    assert shown == bench.render_rst(result)
    # every row of the protocol is in the file, each measured at full size
    assert result["mode"] == "full"
    assert {r["name"] for r in result["rows"]} == set(bench.ROWS)
    assert result["summary"] == json.loads(json.dumps(bench.summary(result["rows"])))
