"""A plain install (numpy, scipy, scikit-learn) imports every module it reaches.

The experiment extras (tqdm, matplotlib, pandas, dask) are optional: importing refsvm and
every module of the package must work without them; a module that needs one says which
extra to install when it is used, not when refsvm is imported.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCK = """
import importlib, pkgutil, sys
for name in ("pandas", "matplotlib", "tqdm", "dask", "distributed", "hypothesis", "pytest"):
    sys.modules[name] = None          # "not installed"
import refsvm
failed = []
for mod in pkgutil.walk_packages(refsvm.__path__, "refsvm."):
    try:
        importlib.import_module(mod.name)
    except ImportError as exc:
        failed.append(f"{mod.name}: {exc}")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_module_imports_without_the_optional_extras():
    proc = subprocess.run([sys.executable, "-c", BLOCK], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
