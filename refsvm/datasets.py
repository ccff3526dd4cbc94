"""Data used by the papers: generators and loaders.

Generators (the papers' synthetic sets, made on the fly):
:func:`make_gauss` (Wang & Vucetic, Sec. V.B), :func:`make_checkerboard`
(Checkerboard / NCheckerboard).  :func:`load_shared` reads the benchmark
files described in ``shared/data/README.md`` from a data folder the user
names (or the ``REFSVM_DATA`` environment variable).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state


def make_gauss(n_samples=10000, *, distance=1.0, random_state=None):
    """Two overlapping 2-D Gaussians with identity covariance, labels +-1.

    The positive class is centred at (+distance/2, 0), the negative at
    (-distance/2, 0); classes are balanced in expectation.  The Bayes rule is
    the sign of the first coordinate.
    """
    rng = check_random_state(random_state)
    y = np.where(rng.rand(n_samples) < 0.5, -1, 1)
    X = rng.randn(n_samples, 2)
    X[:, 0] += y * distance / 2.0
    return X, y


def make_checkerboard(n_samples=10000, *, board=4, noise=0.0, random_state=None):
    """Uniform points on [0, board)^2 labelled by a board x board checkerboard.

    ``noise`` flips that fraction of labels (NCheckerboard uses 0.15).  The
    features are centred to [-board/2, board/2) so that kernels with default
    widths see a unit-scaled problem.
    """
    rng = check_random_state(random_state)
    X = rng.rand(n_samples, 2) * board
    y = np.where((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0, 1, -1)
    if noise > 0:
        flip = rng.rand(n_samples) < noise
        y = np.where(flip, -y, y)
    return X - board / 2.0, y


def data_home(data_home=None):
    """The folder with the benchmark data: argument, $REFSVM_DATA, or ../shared/data."""
    if data_home is not None:
        return Path(data_home)
    if os.environ.get("REFSVM_DATA"):
        return Path(os.environ["REFSVM_DATA"])
    here = Path(__file__).resolve().parent.parent
    return here.parent / "shared" / "data"


def load_shared(name, *, data_home_=None, test=False):
    """Load one of the benchmark sets of ``shared/data`` as ``(X, y)``.

    Parameters
    ----------
    name : str
        "a9a", "w3a", "ijcnn1", "svmguide1" (LIBSVM files, CSR X),
        "usps", "banana", "waveform", "dna", "diabetes", "ionosphere" (dense X).
    test : bool
        The test split, for the sets that ship one.

    Labels are returned as given in the file; binary reductions (e.g. DNA class
    3 vs rest) are up to the caller.
    """
    home = data_home(data_home_)
    libsvm = {
        "a9a": ("a9a.gz", "a9a.t.gz", 123),
        "w3a": ("w3a.gz", "w3a.t.gz", 300),
        "ijcnn1": ("ijcnn1.trn.bz2", "ijcnn1.tst.bz2", 22),
        "svmguide1": ("svmguide1.gz", "svmguide1.t.gz", 4),
    }
    if name in libsvm:
        from sklearn.datasets import load_svmlight_file

        train, tst, d = libsvm[name]
        X, y = load_svmlight_file(str(home / name / (tst if test else train)), n_features=d)
        return X.tocsr(), y
    if name == "usps":
        arr = np.loadtxt(home / "usps" / ("zip.test.gz" if test else "zip.train.gz"))
        return arr[:, 1:], arr[:, 0].astype(int)
    tsv = {
        "banana": "banana.tsv.gz",
        "waveform": "waveform_21.tsv.gz",
        "dna": "dna.tsv.gz",
        "diabetes": "diabetes.tsv.gz",
        "ionosphere": "ionosphere.tsv.gz",
    }
    if name in tsv:
        import pandas as pd

        df = pd.read_csv(home / name / tsv[name], sep="\t")
        y = df.pop("target").to_numpy()
        return df.to_numpy(dtype=np.float64), y
    raise ValueError(f"unknown data set {name!r}")
