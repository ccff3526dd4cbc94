"""Sphinx configuration: ``sphinx-build -b html docs docs/_build/html``."""

import glob
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# the checkout's package where its twins are compiled in place (pip install -e ., or
# build_ext --inplace); else the installed one (Read the Docs: pip install ".[docs]")
if glob.glob(os.path.join(ROOT, "refsvm", "_core.*.so")) + glob.glob(
        os.path.join(ROOT, "refsvm", "_core.*.pyd")):
    sys.path.insert(0, ROOT)

import refsvm  # noqa: E402  (after the path: the checkout's package)

project = "refsvm"
author = "refsvm developers"
release = refsvm.__version__
version = release
extensions = ["sphinx.ext.autodoc", "sphinx.ext.mathjax", "numpydoc"]
numpydoc_show_class_members = False
exclude_patterns = ["_build", "CONVENTIONS.md"]
html_theme = "alabaster"
autodoc_member_order = "bysource"
