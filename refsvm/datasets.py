"""Data used by the papers: generators and loaders.

Generators (the papers' synthetic sets, made on the fly): :func:`make_gauss`,
:func:`make_checkerboard` (Checkerboard / NCheckerboard) and
:func:`make_train_test`, the one place that turns a generator into the train/test
pair an experiment uses.

Loaders: :func:`load_shared` reads the benchmark files described in
``shared/data/README.md`` from the data home (:func:`get_data_home`, scikit-learn's
convention: an argument, else ``$REFSVM_DATA``, else ``../shared/data`` beside a source
checkout when it exists, else ``~/refsvm_data``).  A missing file raises
``FileNotFoundError`` naming the file to provide.  Only NumPy and scikit-learn are
used (no pandas).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["SHARED_SETS", "get_data_home", "load_shared", "make_checkerboard", "make_gauss",
           "make_train_test"]


def make_gauss(n_samples=10000, *, distance=1.0, random_state=None):
    """Two overlapping 2-D Gaussians with identity covariance, labels +-1.

    The positive class is centred at (+distance/2, 0), the negative at
    (-distance/2, 0); classes are balanced in expectation.  The Bayes rule is
    the sign of the first coordinate.

    Examples
    --------
    >>> X, y = make_gauss(4, random_state=0)
    >>> X.shape, sorted(set(y.tolist()) | {-1, 1})
    ((4, 2), [-1, 1])
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


def _linear_stream(n, random_state, d=20, noise=0.5):
    rng = check_random_state(random_state)
    w = rng.randn(d)
    X = rng.randn(n, d)
    y = np.where(X @ w + noise * rng.randn(n) > 0, 1, -1)
    return X, y


def make_train_test(name, n_train, n_test=None, *, random_state=0):
    """``(X_train, y_train, X_test, y_test)`` for one of the synthetic problems.

    Parameters
    ----------
    name : {"linear", "gauss", "checkerboard", "ncheckerboard"}
        ``"linear"``: a noisy linearly structured stream in 20 dimensions;
        ``"gauss"``: :func:`make_gauss`; ``"checkerboard"``: clean
        :func:`make_checkerboard`; ``"ncheckerboard"``: 15 % of the training labels
        flipped, tested on the clean board (as Wang & Vucetic do).
    n_train, n_test : int
        Sizes (``n_test`` defaults to ``n_train``).
    random_state : int
        The training data come from this seed; the test data of the checkerboards
        from ``random_state + 1`` (independent draws).

    Examples
    --------
    >>> X, y, Xt, yt = make_train_test("ncheckerboard", 100, 50, random_state=0)
    >>> X.shape, Xt.shape
    ((100, 2), (50, 2))
    """
    n_test = n_train if n_test is None else n_test
    if name == "linear":
        X, y = _linear_stream(n_train + n_test, random_state)
    elif name == "gauss":
        X, y = make_gauss(n_train + n_test, random_state=random_state)
    elif name in ("checkerboard", "ncheckerboard"):
        noise = 0.15 if name == "ncheckerboard" else 0.0
        X, y = make_checkerboard(n_train, noise=noise, random_state=random_state)
        Xt, yt = make_checkerboard(n_test, noise=0.0, random_state=random_state + 1)
        return X, y, Xt, yt
    else:
        raise ValueError(
            f"unknown synthetic problem {name!r}; one of 'linear', 'gauss', 'checkerboard', "
            "'ncheckerboard'"
        )
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def get_data_home(data_home=None):
    """The folder that holds the benchmark data sets.

    In order: ``data_home`` if given; the environment variable ``REFSVM_DATA``;
    ``shared/data`` beside the project folder when refsvm runs from a source checkout
    that has it; otherwise ``~/refsvm_data`` (as scikit-learn's ``get_data_home`` uses
    ``~/scikit_learn_data``).  The folder is not created.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    if os.environ.get("REFSVM_DATA"):
        return Path(os.environ["REFSVM_DATA"]).expanduser()
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    if shared.is_dir():
        return shared
    return Path("~/refsvm_data").expanduser()


#: name -> (folder, training file, test file or None, format, n_features)
SHARED_SETS = {
    "a9a": ("a9a", "a9a.gz", "a9a.t.gz", "libsvm", 123),
    "w3a": ("w3a", "w3a.gz", "w3a.t.gz", "libsvm", 300),
    "ijcnn1": ("ijcnn1", "ijcnn1.trn.bz2", "ijcnn1.tst.bz2", "libsvm", 22),
    "svmguide1": ("svmguide1", "svmguide1.gz", "svmguide1.t.gz", "libsvm", 4),
    "usps": ("usps", "zip.train.gz", "zip.test.gz", "usps", 256),
    "banana": ("banana", "banana.tsv.gz", None, "tsv", 2),
    "waveform": ("waveform", "waveform_21.tsv.gz", None, "tsv", 21),
    "dna": ("dna", "dna.tsv.gz", None, "tsv", 180),
    "diabetes": ("diabetes", "diabetes.tsv.gz", None, "tsv", 8),
    "ionosphere": ("ionosphere", "ionosphere.tsv.gz", None, "tsv", 34),
}


def _read_tsv(path):
    """A gzipped TSV with a header row and a ``target`` column -> (X, y)."""
    with gzip.open(path, "rt") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        arr = np.loadtxt(fh, delimiter="\t", ndmin=2)
    target = header.index("target")
    y = arr[:, target]
    X = np.delete(arr, target, axis=1)
    if np.all(y == np.round(y)):
        y = y.astype(np.int64)
    return X, y


def load_shared(name, *, data_home=None, test=False, data_home_=None):
    """Load one of the benchmark sets of ``shared/data`` as ``(X, y)``.

    Parameters
    ----------
    name : str
        One of :data:`SHARED_SETS`: "a9a", "w3a", "ijcnn1", "svmguide1" (LIBSVM files,
        CSR X), "usps", "banana", "waveform", "dna", "diabetes", "ionosphere" (dense X).
    data_home : str or Path, optional
        The data folder (default: :func:`get_data_home`).
    test : bool
        The test file, for the sets that ship one.

    Labels are returned as given in the file; binary reductions (e.g. DNA class
    3 vs rest) are up to the caller.

    Raises
    ------
    ValueError
        For an unknown name, or ``test=True`` on a set without a test file.
    FileNotFoundError
        When the file is not in the data home (the message names it).
    """
    if name not in SHARED_SETS:
        raise ValueError(f"unknown data set {name!r}; one of {sorted(SHARED_SETS)}")
    folder, train, tst, fmt, d = SHARED_SETS[name]
    if test and tst is None:
        raise ValueError(f"{name} has no test file; split its training file instead")
    home = get_data_home(data_home if data_home is not None else data_home_)
    path = home / folder / (tst if test else train)
    if not path.is_file():
        raise FileNotFoundError(
            f"{name}: {path} is not there; put {folder}/{path.name} (see shared/data/README.md) "
            "under the data home, or pass data_home= / set REFSVM_DATA"
        )
    if fmt == "libsvm":
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(path), n_features=d)
        return X.tocsr(), y
    if fmt == "usps":
        arr = np.loadtxt(path)
        return arr[:, 1:], arr[:, 0].astype(int)
    return _read_tsv(path)
