"""When RKPAm's full covariance is recomputed (departure ``refresh_growth``).

The failure of the printed form (a cost, not a wrong number): the slides' matrix
COV₊ + COV₋ (+ μI) changes as a whole with every example, through the normalisers
1/(n₊ − 1), 1/(n₋ − 1) (and μ, which follows them), so every update needs a new O(m̃³)
factorisation.  With this departure the normalisers and μ are those of the last
*refresh*, made when a class count n has grown so that n − 1 > setting · (c − 1), c its
count at the refresh (O(log n) refreshes per class); in between each example changes the
matrix by a rank one, which the twin folds into its factor in O(m̃²).  Each class's
covariance then enters with a normaliser between 1 and ``setting`` times the unbiased
one.  The paper's setting 1 refreshes at every example: the printed matrix, exactly.

The stream that shows it: ``tests/linear/test_reduced_kernel_pa.py``,
``test_full_covariance_factor_after_every_example`` (the matrix between refreshes against
NumPy's, for settings 1 and 1.1); the speed is in the docs.

Docs: ``docs/lee_tseng_chen.rst``, "Departures" and "Design notes".
"""

from __future__ import annotations

__all__ = ["needs_refresh"]


def needs_refresh(n_pos, n_neg, c_pos, c_neg, growth):
    """True when the full covariance's factor is recomputed after an example: at the
    first round where each class has two examples (c = 0: no factor yet), and whenever a
    class's n − 1 exceeds ``growth`` times its c − 1 (the normaliser of the last refresh)."""
    if n_pos < 2 or n_neg < 2:
        return False
    return (c_pos == 0 or n_pos - 1 > growth * (c_pos - 1)
            or n_neg - 1 > growth * (c_neg - 1))
