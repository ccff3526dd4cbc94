"""Release hygiene: one version source, the wheel configuration covers the platforms and
runs the smoke test, and the smoke test itself passes on this build."""

import re
import tomllib
from pathlib import Path

import pytest

import refsvm
from refsvm import _smoke

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_has_one_home():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "refsvm.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?", refsvm.__version__)
    # the files that repeat it for readers who do not run Python
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r'^version: "(.+)"$', citation, re.M).group(1) == refsvm.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## (\S+)", changelog, re.M).group(1) == refsvm.__version__


def test_the_citation_names_the_five_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"].startswith("refsvm")
    titles = " | ".join(ref["title"] for ref in cff["references"])
    for words in ("Ramp Loss", "Parametric Optimization", "Online Nonlinear",
                  "efficient online SVM", "One-Pass SVMs"):
        assert words in titles, words
    for ref in cff["references"]:
        assert ref["authors"] and ref["year"], ref["title"]


def test_the_wheel_configuration_covers_every_platform_and_runs_the_smoke_test():
    cibw = PYPROJECT["tool"]["cibuildwheel"]
    assert set(cibw["linux"]["archs"]) == {"x86_64", "aarch64"}
    assert set(cibw["macos"]["archs"]) == {"arm64", "x86_64"}
    assert set(cibw["windows"]["archs"]) == {"AMD64"}
    assert cibw["test-command"] == "python -m refsvm._smoke"
    minimum = re.search(r">=3\.(\d+)", PYPROJECT["project"]["requires-python"]).group(1)
    assert f"cp3{minimum}-*" in cibw["build"].split()
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    assert "pypa/cibuildwheel@" in workflow and "pypa/gh-action-pypi-publish@" in workflow
    assert "id-token: write" in workflow  # trusted publishing, no token stored


def test_the_smoke_test_knows_every_compiled_module():
    pyx = sorted(str(p.relative_to(ROOT).with_suffix("")).replace("/", ".").replace("\\", ".")
                 for p in (ROOT / "refsvm").rglob("*.pyx"))
    assert sorted(_smoke.COMPILED) == pyx


def test_the_smoke_test_covers_every_public_estimator():
    made = {type(factory("python")) for factory in _smoke.estimators().values()}
    public = {getattr(refsvm, name) for name in refsvm.__all__}
    estimators = {cls for cls in public
                  if isinstance(cls, type) and hasattr(cls, "partial_fit") and hasattr(cls, "save")}
    assert estimators and estimators <= made


def test_the_smoke_test_passes(capsys):
    assert _smoke.main([]) == 0
    assert "estimators x 2 twins" in capsys.readouterr().out


def test_the_smoke_test_fails_when_the_twins_disagree(tmp_path):
    import numpy as np

    real = _smoke.estimators()

    def shifted(backend):
        est = real["PassiveAggressive"](backend)
        if backend == "python":
            original = est.decision_function
            est.decision_function = lambda X: original(X) + 1e-3
        return est

    with pytest.raises(AssertionError, match="disagree"):
        with np.errstate(all="ignore"):
            _smoke.check_estimator("PassiveAggressive", shifted, str(tmp_path))
