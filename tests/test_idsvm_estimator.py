"""IncrementalSVM as a scikit-learn estimator: API checks, SVC-style attributes, bad input,
atomic partial_fit, unlearn argument checking, one-vs-rest."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from refsvm.datasets import make_gauss
from refsvm.idsvm import IncrementalSVM

from .conftest import BACKENDS


@parametrize_with_checks([IncrementalSVM(backend=b) for b in BACKENDS])
def test_sklearn_compatible(estimator, check):
    check(estimator)
