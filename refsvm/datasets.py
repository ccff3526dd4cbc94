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

import functools
import gzip
import os
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["DataUnavailable", "PAPER_SETS", "SHARED_SETS", "get_data_home", "load_dataset",
           "load_shared", "make_checkerboard", "make_gauss", "make_two_gaussians",
           "make_train_test"]


def make_gauss(n_samples=10000, *, random_state=None):
    """Haykin's two-Gaussian benchmark, the Gauss set of Wang & Vucetic.

    Class +1 from N((0, 0), I), class -1 from N((2, 0), 4 I), equal priors; the Bayes
    accuracy is about 81.5 % (Wang & Vucetic's Table I: LIBSVM 81.9 %).

    Examples
    --------
    >>> X, y = make_gauss(20000, random_state=0)
    >>> float(round(X[y == -1, 0].mean())), float(round(X[y == -1].std(axis=0).mean()))
    (2.0, 2.0)
    """
    rng = check_random_state(random_state)
    y = np.where(rng.rand(n_samples) < 0.5, -1, 1)
    X = rng.randn(n_samples, 2)
    neg = y == -1
    X[neg] *= 2.0
    X[neg, 0] += 2.0
    return X, y


def make_two_gaussians(n_samples=10000, *, distance=1.0, random_state=None):
    """Two overlapping 2-D Gaussians with identity covariance, labels +-1 (a quick test
    stream, not a paper's data set: Wang & Vucetic's Gauss is :func:`make_gauss`).

    The positive class is centred at (+distance/2, 0), the negative at
    (-distance/2, 0); classes are balanced in expectation.  The Bayes rule is
    the sign of the first coordinate.

    Examples
    --------
    >>> X, y = make_two_gaussians(4, random_state=0)
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
        ``"linear"``: a noisy linearly structured stream in 20 dimensions (train and
        test split from one draw, so they share the hidden weight vector);
        ``"gauss"``: :func:`make_gauss`; ``"checkerboard"``: clean
        :func:`make_checkerboard`; ``"ncheckerboard"``: 15 % of the training labels
        flipped, tested on the clean board (as Wang & Vucetic do).
    n_train, n_test : int
        Sizes (``n_test`` defaults to ``n_train``).
    random_state : int
        The training data come from this seed; the test data of the generated problems
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
        X, y = make_gauss(n_train, random_state=random_state)
        Xt, yt = make_gauss(n_test, random_state=random_state + 1)
        return X, y, Xt, yt
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


# ---------------------------------------------------------------------------------------------
# The papers' data sets by name, with the papers' preprocessing (used by ``refsvm reproduce``)
# ---------------------------------------------------------------------------------------------
class DataUnavailable(FileNotFoundError):
    """A data set whose file is not in the data home; the message is one line naming it."""


def _breiman_waveform(n_samples, *, random_state=None):
    """Breiman's waveform generator (CART, 1984; UCI "Waveform", 21 attributes).

    Three triangular base waves h1, h2, h3 of height 6 on positions 1..21 (peaks at 11,
    15 and 7); with u ~ U(0, 1) and N(0, 1) noise on every attribute, class 0 =
    u h2 + (1 - u) h3, class 1 = u h1 + (1 - u) h3, class 2 = u h1 + (1 - u) h2; classes
    equally likely.  The labels follow the shared file (its class means match these).
    """
    rng = check_random_state(random_state)
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0)
    h2 = np.maximum(6 - np.abs(i - 15), 0)
    h3 = np.maximum(6 - np.abs(i - 7), 0)
    pairs = np.array([[h2, h3], [h1, h3], [h1, h2]], dtype=np.float64)
    y = rng.randint(0, 3, n_samples)
    u = rng.rand(n_samples, 1)
    X = u * pairs[y, 0] + (1 - u) * pairs[y, 1] + rng.randn(n_samples, 21)
    return X, y


def _standardize(X, Xt):
    """Mean 0 / std 1 per attribute with the training statistics (Wang & Vucetic, Sec. V.A);
    sparse input becomes dense (the sets that need it are small)."""
    import scipy.sparse as sp

    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    Xt = Xt.toarray() if sp.issparse(Xt) else np.asarray(Xt, dtype=np.float64)
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    sd[sd == 0] = 1.0
    return (X - mu) / sd, (Xt - mu) / sd


def _require(name, relpath, data_home):
    home = get_data_home(data_home)
    path = home / relpath
    if not path.is_file():
        raise DataUnavailable(f"{name}: provide {relpath} under the data home {home} "
                              "(or set REFSVM_DATA / --data-home)")
    return path


@functools.lru_cache(maxsize=16)
def _load_cached(name, test, home):
    X, y = load_shared(name, data_home=home, test=test)
    return X, y


def _subsample(X, y, n, rng):
    if n is None or n >= X.shape[0]:
        return X, y
    idx = np.sort(rng.choice(X.shape[0], n, replace=False))
    return X[idx], y[idx]


def _split(X, y, n_train, n_test, rng):
    perm = rng.permutation(X.shape[0])
    tr, te = perm[:n_train], perm[n_train:n_train + n_test]
    return X[tr], y[tr], X[te], y[te]


def _binary(y, positive):
    return np.where(np.isin(y, positive), 1, -1)


#: name -> (description, paper's training rows, paper's test rows or None, files needed)
PAPER_SETS = {
    # Wang & Vucetic, Sec. V.A (all scaled to mean 0 / std 1)
    "adult": ("Adult: 10,000 rows of a9a, test a9a.t", 10000, 16281, ["a9a/a9a.gz"]),
    "banana": ("Banana: 4,300 train / 1,000 test of 5,300", 4300, 1000, ["banana/banana.tsv.gz"]),
    "checkerboard": ("Checkerboard 4x4, clean", 10000, 10000, []),
    "ncheckerboard": ("NCheckerboard: 15 % labels flipped, tested on clean Checkerboard",
                      10000, 10000, []),
    "cover": ("Covertype: 10,000 rows, class 2 positive", 10000, 10000,
              ["covtype/covtype.data.gz"]),
    "dna": ("DNA: 2,000 train, class 3 positive", 2000, 1186, ["dna/dna.tsv.gz"]),
    "gauss": ("Gauss (Haykin): N((0,0), I) vs N((2,0), 4I)", 10000, 10000, []),
    "usps": ("USPS: round digits 3,6,8,9,0 positive", 7291, 2007,
             ["usps/zip.train.gz", "usps/zip.test.gz"]),
    "waveform": ("Waveform: 10,000 rows from Breiman's generator, class 1 negative; "
                 "test: the shared 5,000 rows", 10000, 5000, []),
    # Lee, Tseng, Chen (linear PA table; not rescaled unless stated)
    "svmguide1": ("svmguide1 (scaled to mean 0 / std 1)", 3089, 4000, ["svmguide1/svmguide1.gz"]),
    "w3a": ("w3a", 4912, 44837, ["w3a/w3a.gz"]),
    "a9a": ("a9a", 32561, 16281, ["a9a/a9a.gz"]),
    "ijcnn1": ("ijcnn1: the 35,000 training rows", 35000, 91701, ["ijcnn1/ijcnn1.trn.bz2"]),
    "cod-rna": ("cod-rna", 59535, 271617, ["cod-rna/cod-rna.gz"]),
    "usps01": ("usps01 (CVM papers' 266,079 x 676)", 266079, 75383, ["usps01/usps01.gz"]),
    "covertype": ("covertype (binary)", 522910, 58102, ["covtype/covtype.libsvm.binary.gz"]),
    "checkerboard-1m": ("Checkerboard 4x4: 1,000,000 train / 2,000 test", 1000000, 2000, []),
}


def load_dataset(name, *, n_train=None, n_test=None, random_state=0, data_home=None):
    """``(X_train, y_train, X_test, y_test)`` of one of the papers' data sets, by name.

    Parameters
    ----------
    name : str
        A key of :data:`PAPER_SETS`.
    n_train, n_test : int, optional
        Fewer rows than the paper's (a random subset); default the paper's sizes.
    random_state : int
        Seeds the generators, the random splits (Banana, DNA) and the subsets.
    data_home : str or Path, optional

    Labels are +-1.  Wang & Vucetic's sets are scaled to mean 0 / std 1 with the
    training statistics.

    Raises
    ------
    ValueError
        For an unknown name.
    DataUnavailable
        (a ``FileNotFoundError``) when a file is missing; the message is one line naming it.

    Examples
    --------
    >>> X, y, Xt, yt = load_dataset("gauss", n_train=200, n_test=100)
    >>> X.shape, Xt.shape, sorted(set(y.tolist()))
    ((200, 2), (100, 2), [-1, 1])
    """
    if name not in PAPER_SETS:
        raise ValueError(f"unknown data set {name!r}; one of {sorted(PAPER_SETS)}")
    _, paper_n, paper_nt, files = PAPER_SETS[name]
    for f in files:  # a clear error naming each missing file, before any work
        _require(name, f, data_home)
    n = paper_n if n_train is None else min(int(n_train), paper_n)
    nt = paper_nt if n_test is None else min(int(n_test), paper_nt)
    rng = np.random.RandomState(random_state)
    scale = True
    if name == "gauss":
        X, y = make_gauss(n, random_state=rng)
        Xt, yt = make_gauss(nt, random_state=rng)
    elif name in ("checkerboard", "ncheckerboard", "checkerboard-1m"):
        noise = 0.15 if name == "ncheckerboard" else 0.0
        X, y = make_checkerboard(n, noise=noise, random_state=rng)
        Xt, yt = make_checkerboard(nt, noise=0.0, random_state=rng)
        scale = name != "checkerboard-1m"
    elif name == "waveform":
        X, y = _breiman_waveform(n, random_state=rng)
        try:
            Xt, yt = _load_cached("waveform", False, str(get_data_home(data_home)))
            Xt, yt = _subsample(Xt, yt, nt, rng)
        except FileNotFoundError:
            Xt, yt = _breiman_waveform(nt, random_state=rng)
        y, yt = np.where(y == 1, -1, 1), np.where(yt == 1, -1, 1)
    elif name == "banana":
        Xa, ya = _load_cached("banana", False, str(get_data_home(data_home)))
        X, y, Xt, yt = _split(Xa, np.where(ya > 0, 1, -1), n, nt, rng)
    elif name == "dna":
        Xa, ya = _load_cached("dna", False, str(get_data_home(data_home)))
        X, y, Xt, yt = _split(Xa, _binary(ya, [3]), n, min(nt, Xa.shape[0] - n), rng)
    elif name == "usps":
        X, y = _load_cached("usps", False, str(get_data_home(data_home)))
        Xt, yt = _load_cached("usps", True, str(get_data_home(data_home)))
        y, yt = _binary(y, [3, 6, 8, 9, 0]), _binary(yt, [3, 6, 8, 9, 0])
        X, y = _subsample(X, y, n, rng)
        Xt, yt = _subsample(Xt, yt, nt, rng)
    elif name in ("adult", "a9a", "w3a", "svmguide1", "ijcnn1"):
        key = "a9a" if name == "adult" else name
        X, y = _load_cached(key, False, str(get_data_home(data_home)))
        Xt, yt = _load_cached(key, True, str(get_data_home(data_home)))
        if name == "ijcnn1":
            X, y = X[:35000], y[:35000]
        y, yt = np.where(y > 0, 1, -1), np.where(yt > 0, 1, -1)
        X, y = _subsample(X, y, n, rng)
        Xt, yt = _subsample(Xt, yt, nt, rng)
        scale = name in ("adult", "svmguide1")
    else:  # pragma: no cover - the files of the remaining sets are never shipped here
        raise DataUnavailable(f"{name}: no loader for {files}")
    if scale:
        X, Xt = _standardize(X, Xt)
    return X, np.asarray(y, np.int64), Xt, np.asarray(yt, np.int64)
