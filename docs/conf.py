"""Sphinx configuration: ``sphinx-build -b html docs docs/_build/html``."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "refsvm"
author = "refsvm developers"
release = "0.1.0"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.mathjax", "numpydoc"]
numpydoc_show_class_members = False
exclude_patterns = ["_build", "CONVENTIONS.md"]
html_theme = "alabaster"
autodoc_member_order = "bysource"
