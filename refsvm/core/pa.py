"""The Passive-Aggressive step size, once (reference of ``refsvm._core.pa_step``).

Crammer et al. (JMLR 2006) and the slides of Lee, Tseng, Chen: after suffering the
loss ℓ on (x, y), PA moves w by τ y x with

- PA:     τ = ℓ / ‖x‖²
- PA-I:   τ = min{C, ℓ / ‖x‖²}
- PA-II:  τ = ℓ / (‖x‖² + 1/(2C))

Names: the canonical spellings are Crammer et al.'s ``"PA-I"``, ``"PA-II"`` (and
``"PAm-I"``, ``"PAm-II"`` for the proximal variants); the slides' ``"PA-1"``, ``"PA-2"``,
``"PAm-1"``, ``"PAm-2"`` are accepted as the same variants.
"""

from __future__ import annotations

__all__ = ["PA_VARIANTS", "PAM_VARIANTS", "pa_step", "variant_code"]

#: variant name -> code (0 PA, 1 PA-I, 2 PA-II); both spellings
PA_VARIANTS = {"PA": 0, "PA-I": 1, "PA-II": 2, "PA-1": 1, "PA-2": 2}
#: the same for the proximal (PAm) variants
PAM_VARIANTS = {"PAm": 0, "PAm-I": 1, "PAm-II": 2, "PAm-1": 1, "PAm-2": 2}


def variant_code(name, table=PA_VARIANTS):
    """The code (0, 1, 2) of a variant name; ValueError naming the choices otherwise."""
    if not isinstance(name, str) or name not in table:
        raise ValueError(f"variant must be one of {tuple(table)}; got {name!r}")
    return table[name]


def pa_step(variant, loss, sqnorm, C):
    """τ for PA (0), PA-I (1) or PA-II (2); ``loss`` is the numerator ℓ.

    A zero example (‖x‖² ≤ 0) gives τ = 0 for PA and PA-I, whose step would
    divide by zero; PA-II's denominator is positive.
    """
    if variant == 2:
        return loss / (sqnorm + 0.5 / C)
    if sqnorm <= 0.0:
        return 0.0
    tau = loss / sqnorm
    if variant == 1 and tau > C:
        tau = C
    return tau
