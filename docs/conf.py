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
extensions = ["sphinx.ext.autodoc", "sphinx.ext.mathjax", "numpydoc",
              "sphinx_gallery.gen_gallery"]
numpydoc_show_class_members = False
exclude_patterns = ["_build", "CONVENTIONS.md", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip"]
html_theme = "alabaster"
autodoc_member_order = "bysource"

# The gallery: every examples/plot_*.py runs during the build (seconds each) and its
# figures and printed output go on its page under auto_examples/.
sphinx_gallery_conf = {
    "examples_dirs": os.path.join(ROOT, "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "abort_on_example_error": True,
    "reset_modules": ("matplotlib",),
}
exclude_patterns.append("_generated")


def _traces(app):
    """The paper pages' traces, figures and coverage tables (``docs/trace.rst``): made
    from the references at every build (``refsvm.tracing.docs.build``), never stored."""
    from refsvm.tracing.docs import build

    build(os.path.join(app.srcdir, "_generated"))


def setup(app):
    app.connect("builder-inited", _traces)
