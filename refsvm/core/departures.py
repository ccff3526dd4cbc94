"""Departures from the printed algorithms: how a family declares them, how a state picks them.

A *departure* is anything a reference state does that the paper's pseudocode does not:
a safeguard against a failure of the printed form (a cycle breaker, a repair, a
fallback), a cache or a speed-up that changes the order of the arithmetic, a stopping
rule of our own.  Each family lists its departures once, in a table ``DEPARTURES``
(name -> :class:`Departure`) beside its reference, and each departure lives in its
own named unit that says which failure of the printed form it answers.

Every reference state and every estimator takes the same parameter::

    departures=None        the family's defaults (what the estimators run)
    departures="paper"     every departure off: the printed algorithm, exactly, in both
                           twins (a guard that only raises an error, never changes a
                           number, may stay on)
    departures={...}       the defaults with the named settings changed; the key "base"
                           ("default" or "paper") says what the others start from

:func:`resolve` turns any of these into a plain dict ``{name: setting}`` (JSON-able:
the state keeps it in ``init_params`` so that a saved model resumes the same way).

Examples
--------
>>> table = {"pair_step": Departure(default=1e-3, paper=0.0, check=nonnegative,
...                                  answers="Eq. (14) zig-zags on a nearly singular pair")}
>>> resolve(table, None)
{'pair_step': 0.001}
>>> resolve(table, "paper")
{'pair_step': 0.0}
>>> resolve(table, {"base": "paper", "pair_step": 1e-2})
{'pair_step': 0.01}
>>> is_paper_form(table, resolve(table, "paper"))
True
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["DEFAULT", "PAPER", "Departure", "resolve", "is_paper_form", "flag", "integer",
           "nonnegative", "choice"]

#: The setting of ``departures`` that runs the printed algorithm exactly.
PAPER = "paper"
#: The setting of ``departures`` that runs the family's defaults (also ``None``).
DEFAULT = "default"


def flag(name, value):
    """A departure switched on or off."""
    if not isinstance(value, bool):
        raise ValueError(f"departure {name!r} must be True or False; got {value!r}")
    return value


def nonnegative(name, value):
    """A threshold >= 0 (0 is off, by convention)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0.0 \
            or value == float("inf"):
        raise ValueError(f"departure {name!r} must be a finite number >= 0; got {value!r}")
    return float(value)


def integer(minimum, maximum):
    """A check: an integer in [minimum, maximum]."""
    def check(name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                or not minimum <= value <= maximum:
            raise ValueError(f"departure {name!r} must be an integer in "
                             f"[{minimum}, {maximum}]; got {value!r}")
        return int(value)
    return check


def choice(*options):
    """A check: one of a fixed set of strings."""
    def check(name, value):
        if not isinstance(value, str) or value not in options:
            raise ValueError(f"departure {name!r} must be one of {options}; got {value!r}")
        return value
    return check


@dataclass(frozen=True)
class Departure:
    """One departure of a family from its paper's printed algorithm.

    Parameters
    ----------
    default : object
        The setting the family's estimators use.
    paper : object
        The setting that turns the departure off: the printed algorithm.
    check : callable
        ``check(name, value)`` -> the value, normalised; raises a ValueError naming
        the departure otherwise.
    answers : str
        The failure of the printed form it answers, in one line (or, for a cache or a
        speed-up, what it saves).
    """

    default: Any
    paper: Any
    check: Callable[[str, Any], Any]
    answers: str


def resolve(table, departures):
    """``departures`` (None, "default", "paper" or a dict) as ``{name: setting}``.

    Raises a ValueError naming the problem for anything else: an unknown name, a
    setting its departure's check refuses, a "base" other than "default" or "paper".
    """
    if departures is None or (isinstance(departures, str) and departures == DEFAULT):
        return {name: d.default for name, d in table.items()}
    if isinstance(departures, str) and departures == PAPER:
        return {name: d.paper for name, d in table.items()}
    if not isinstance(departures, dict):
        raise ValueError(f"departures must be None, {DEFAULT!r}, {PAPER!r} or a dict of "
                         f"{sorted(table)}; got {departures!r}")
    changes = dict(departures)
    base = changes.pop("base", DEFAULT)
    if not isinstance(base, str) or base not in (DEFAULT, PAPER):
        raise ValueError(f"departures['base'] must be {DEFAULT!r} or {PAPER!r}; got {base!r}")
    unknown = sorted(str(k) for k in changes if k not in table)
    if unknown:
        raise ValueError(f"unknown departure(s) {unknown}; this family has {sorted(table)}")
    settings = resolve(table, base)
    for name, value in changes.items():
        settings[name] = table[name].check(name, value)
    return settings


def is_paper_form(table, settings):
    """Whether resolved ``settings`` turn every departure of ``table`` off."""
    return all(settings[name] == d.paper for name, d in table.items())
