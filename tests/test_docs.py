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
