"""No input, however malformed, crashes the process (issue 15 item 1).

The fuzzing runs in a subprocess: a segmentation fault or an abort there is a negative
return code here, reported with the worker's output.  The CI profile is bounded; set
``REFSVM_FUZZ_EXAMPLES`` (e.g. 5000) for a longer local run.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")


def test_malformed_input_never_crashes_the_process():
    worker = Path(__file__).with_name("fuzz_worker.py")
    n = os.environ.get("REFSVM_FUZZ_EXAMPLES", "300")
    proc = subprocess.run([sys.executable, str(worker), n], capture_output=True, text=True,
                          timeout=900, cwd=worker.parents[1])
    assert proc.returncode >= 0, f"the worker died of signal {-proc.returncode}:\n{proc.stdout}"
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
