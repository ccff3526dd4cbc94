"""Saving and loading fitted estimators in a format that runs no code on load.

``est.save(path)`` writes one ``.npz`` file (a zip of ``.npy`` arrays): the arrays of every
state's ``save_state()`` and of the estimator, and one JSON document with the rest — the
format version, the refsvm version, the estimator's class and ``get_params()``, the
state classes with their ``init_params()``.  :func:`load` reads it with
``allow_pickle=False``: nothing in the file is executed, and an unknown class or format
version is refused with a clear error.  Both twins share the state format, so a model
saved from the compiled twin loads into the readable reference (``backend="python"``)
and continues from exactly that state, and the other way round.
"""

from __future__ import annotations

import json
import numbers
from pathlib import Path

import numpy as np

__all__ = ["FORMAT_VERSION", "load", "save"]

FORMAT = "refsvm-model"
FORMAT_VERSION = 1


def _plain(value, where):
    """A JSON-able copy of a scalar / list / dict value, or a ValueError naming it."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v, where) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    raise ValueError(f"cannot save {where} = {value!r} (only numbers, strings, lists, dicts)")


def _split(values, prefix, arrays, where):
    """Arrays of a dict go to ``arrays`` under ``prefix``; the rest is returned as JSON."""
    rest = {}
    for key, value in values.items():
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                try:
                    value = value.astype(str)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"cannot save the object array {where}.{key}") from exc
                rest[key] = {"__object_array__": True}
            arrays[f"{prefix}{key}"] = value
            rest.setdefault(key, {"__array__": True})
        else:
            rest[key] = _plain(value, f"{where}.{key}")
    return rest


def _join(rest, prefix, arrays):
    out = {}
    for key, value in rest.items():
        if isinstance(value, dict) and (value.get("__array__") or value.get("__object_array__")):
            arr = arrays[f"{prefix}{key}"]
            out[key] = arr.astype(object) if value.get("__object_array__") else arr
        else:
            out[key] = value
    return out


def save(estimator, path):
    """Write a fitted refsvm estimator to ``path`` (an ``.npz`` file)."""
    from . import __version__

    if not hasattr(estimator, "_states"):
        raise ValueError(f"{type(estimator).__name__} is not fitted; nothing to save")
    params = estimator.get_params(deep=False)
    skip = set(params) | {"_states", "_lock"}
    arrays = {}
    attributes = {k: v for k, v in estimator.__dict__.items() if k not in skip}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "refsvm_version": __version__,
        "estimator": type(estimator).__name__,
        "params": _plain(params, "params"),
        "attributes": _split(attributes, "estimator/", arrays, "estimator"),
        "states": [],
    }
    for i, state in enumerate(estimator._states):
        meta["states"].append({
            "class": type(state).__name__,
            "init_params": _plain(state.init_params(), f"state {i} init_params"),
            "data": _split(state.save_state(), f"state{i}/", arrays, f"state {i}"),
        })
    arrays["__meta__"] = np.array(json.dumps(meta))
    path = Path(path)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def load(path, *, backend=None):
    """Read an estimator written by :func:`save` (or ``est.save``).

    Parameters
    ----------
    path : str or Path
    backend : {"cython", "python"}, optional
        The twin to load the states into (default: the one it was saved from).

    Returns
    -------
    estimator
        Fitted, ready to predict or to continue with ``partial_fit``.
    """
    import refsvm

    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    if "__meta__" not in arrays:
        raise ValueError(f"{path} is not a refsvm model file (no metadata)")
    meta = json.loads(str(arrays["__meta__"][()]))
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not a refsvm model file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} has model format {meta.get('format_version')} (written by refsvm "
            f"{meta.get('refsvm_version')}); this refsvm {refsvm.__version__} reads format "
            f"{FORMAT_VERSION}"
        )
    name = meta["estimator"]
    cls = getattr(refsvm, name, None)
    if name not in refsvm.__all__ or not isinstance(cls, type) or not hasattr(cls, "save"):
        raise ValueError(f"{path}: unknown estimator {name!r}")
    est = cls(**meta["params"])
    if backend is not None:
        est.set_params(backend=backend)
    est._check_params()
    module = est._module()
    states = []
    for i, entry in enumerate(meta["states"]):
        state_cls = getattr(module, entry["class"], None)
        if not isinstance(state_cls, type):
            raise ValueError(f"{path}: unknown state class {entry['class']!r}")
        state = state_cls(**entry["init_params"])
        state.load_state(_join(entry["data"], f"state{i}/", arrays))
        states.append(state)
    est.__dict__.update(_join(meta["attributes"], "estimator/", arrays))
    if "_start_params" in est.__dict__ and backend is not None:
        est._start_params = {**est._start_params, "backend": backend}
    est._states = states
    return est
