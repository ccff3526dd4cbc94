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


#: The state classes each estimator's states may have.
STATE_CLASSES = {
    "Perceptron": ("PerceptronState",), "PassiveAggressive": ("PAState",),
    "ProximalPassiveAggressive": ("PAmState",), "OnlineLinearSVM": ("PegasosState",),
    "KernelPassiveAggressive": ("KernelPA",), "OnlineRampSVM": ("OnlineSVMR",),
    "IncrementalSVM": ("IncrementalSVMState",), "POKER": ("POKERState",),
    "ReducedKernelPA": ("ReducedKernelPAState",),
    "ProximalReducedKernelPA": ("ReducedKernelPAmState",),
    "StreamSVM": ("StreamSVMLinear", "StreamSVMKernel", "MultiBallStreamSVM"),
}

#: Uncompressed bytes a file may make ``load`` read: 16 times its size, plus 64 MiB
#: (``save`` writes the arrays uncompressed: a file carries its arrays' bytes).
EXPANSION, EXPANSION_SLACK = 16, 64 * 2**20


def _read_arrays(path):
    """The members of the .npz, each array's header checked (a plain .npy array, its
    declared size within what the file carries) before anything is decompressed."""
    import zipfile

    try:
        size = Path(path).stat().st_size
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise ValueError(f"{path} is not a refsvm model file ({exc})") from None
    with zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names) or not all(n.endswith(".npy") for n in names):
            raise ValueError(f"{path}: members must be distinct .npy arrays")
        declared = 0
        for info in infos:
            try:
                with zf.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read(fh)
            except Exception as exc:  # noqa: BLE001 - any malformed header is a bad file
                raise ValueError(f"{path}: member {info.filename}: not a .npy array "
                                 f"({exc})") from None
            if dtype.hasobject:
                raise ValueError(f"{path}: member {info.filename}: object arrays are refused")
            n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if n_bytes > info.file_size:
                raise ValueError(f"{path}: member {info.filename}: declares {n_bytes} bytes "
                                 f"but holds {info.file_size}")
            declared += n_bytes
        if declared > EXPANSION * size + EXPANSION_SLACK:
            raise ValueError(f"{path}: its arrays declare {declared} bytes, more than a "
                             f"file of {size} bytes justifies")
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta_raw = npz["__meta__"] if "__meta__" in npz.files else None
            if meta_raw is None:
                raise ValueError(f"{path} is not a refsvm model file (no metadata)")
            return npz, meta_raw, {k: npz[k] for k in npz.files}
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - truncated or corrupt members
        raise ValueError(f"{path}: cannot read the model file ({type(exc).__name__}: "
                         f"{exc})") from None


def _expected_members(meta, path):
    """The array members the JSON announces ({"estimator/<name>", "state<i>/<name>"})."""
    out = {"__meta__"}

    def marked(rest, prefix, where):
        if not isinstance(rest, dict):
            raise ValueError(f"{path}: {where} must be a JSON object")
        for key, value in rest.items():
            if isinstance(value, dict) and (value.get("__array__")
                                            or value.get("__object_array__")):
                out.add(f"{prefix}{key}")

    marked(meta["attributes"], "estimator/", "attributes")
    for i, entry in enumerate(meta["states"]):
        if not isinstance(entry, dict) or set(entry) != {"class", "init_params", "data"}:
            raise ValueError(f"{path}: state {i} must have exactly class, init_params, data")
        marked(entry["data"], f"state{i}/", f"state {i} data")
    return out


def _check_attributes(est, attrs, n_states, path):
    """The estimator's fitted attributes: known names, each of the right type and size."""
    from ._state_checks import MAX_FEATURES

    def bad(name, rule):
        raise ValueError(f"{path}: attribute {name}: {rule}")

    known = {"n_features_in_", "feature_names_in_", "classes_", "_sparse_", "_start_params",
             "_gamma_", "n_epochs_", "fit_paths_", "reduced_indices_", "_max_sqnorm_"}
    for name in attrs:
        if name not in known:
            bad(name, "unknown attribute")
    for name in ("n_features_in_", "classes_", "_sparse_"):
        if name not in attrs:
            bad(name, "missing")
    d = attrs["n_features_in_"]
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_FEATURES:
        bad("n_features_in_", f"must be an integer in [1, {MAX_FEATURES}]")
    classes = attrs["classes_"]
    if not isinstance(classes, np.ndarray) or classes.ndim != 1 or classes.shape[0] < 2:
        bad("classes_", "must be a 1-D array of at least two labels")
    if classes.dtype.kind not in "biufUSO" or np.unique(classes).shape[0] != classes.shape[0]:
        bad("classes_", "labels must be distinct booleans, numbers or strings")
    if n_states != (1 if classes.shape[0] == 2 else classes.shape[0]):
        bad("classes_", f"{classes.shape[0]} classes do not match {n_states} state(s)")
    if not isinstance(attrs["_sparse_"], bool):
        bad("_sparse_", "must be a boolean")
    names = attrs.get("feature_names_in_")
    if names is not None and (not isinstance(names, np.ndarray) or names.shape != (d,)):
        bad("feature_names_in_", f"must be an array of {d} names")
    for name, lo in (("_gamma_", 0.0), ("_max_sqnorm_", 0.0)):
        v = attrs.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not np.isfinite(v) or v < lo):
            bad(name, "must be a finite non-negative number")
    epochs = attrs.get("n_epochs_")
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int)
                               or epochs < 0):
        bad("n_epochs_", "must be a non-negative integer")
    paths = attrs.get("fit_paths_")
    if paths is not None and (not isinstance(paths, list)
                              or not all(isinstance(p, str) for p in paths)):
        bad("fit_paths_", "must be a list of strings")
    red = attrs.get("reduced_indices_")
    if red is not None and (not isinstance(red, np.ndarray) or red.ndim != 1
                            or red.dtype.kind not in "iu" or (red.size and red.min() < 0)):
        bad("reduced_indices_", "must be a 1-D array of non-negative row numbers")
    start = attrs.get("_start_params")
    if start is not None and (not isinstance(start, dict)
                              or not set(start) <= set(est.get_params(deep=False))):
        bad("_start_params", "must name only the estimator's parameters")


def load(path, *, backend=None):
    """Read an estimator written by :func:`save` (or ``est.save``).

    Nothing in the file runs, and nothing in it is trusted: every member is checked
    before any state is built from it (the validator of each state class,
    :mod:`refsvm._state_checks`); a file that fails a check raises a ``ValueError`` naming
    the file, the member and the rule.

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

    from ._state_checks import check_state

    _, meta_raw, arrays = _read_arrays(path)
    try:
        meta = json.loads(str(meta_raw[()]))
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"{path}: the metadata is not JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not a refsvm model file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} has model format {meta.get('format_version')} (written by refsvm "
            f"{meta.get('refsvm_version')}); this refsvm {refsvm.__version__} reads format "
            f"{FORMAT_VERSION}"
        )
    for key, kind in (("estimator", str), ("params", dict), ("attributes", dict),
                      ("states", list)):
        if not isinstance(meta.get(key), kind):
            raise ValueError(f"{path}: metadata {key!r} missing or not a {kind.__name__}")
    name = meta["estimator"]
    cls = getattr(refsvm, name, None)
    if name not in STATE_CLASSES or not isinstance(cls, type) or not hasattr(cls, "save"):
        raise ValueError(f"{path}: unknown estimator {name!r}")
    extra = set(arrays) - _expected_members(meta, path)
    if extra:
        raise ValueError(f"{path}: unknown member {sorted(extra)[0]!r}")
    try:
        est = cls(**meta["params"])
    except TypeError as exc:
        raise ValueError(f"{path}: params: {exc}") from None
    if backend is not None:
        est.set_params(backend=backend)
    try:
        est._check_params()
    except ValueError as exc:
        raise ValueError(f"{path}: params: {exc}") from None
    module = est._module()
    try:
        attrs = _join(meta["attributes"], "estimator/", arrays)
    except KeyError as exc:
        raise ValueError(f"{path}: attribute array {exc} missing") from None
    _check_attributes(est, attrs, len(meta["states"]), path)
    states = []
    for i, entry in enumerate(meta["states"]):
        where = f"{path}: state {i}"
        if entry["class"] not in STATE_CLASSES[name]:
            raise ValueError(f"{where}: state class {entry['class']!r} is not one of "
                             f"{name}'s")
        state_cls = getattr(module, entry["class"], None)
        if not isinstance(state_cls, type):
            raise ValueError(f"{where}: unknown state class {entry['class']!r}")
        try:
            data = _join(entry["data"], f"state{i}/", arrays)
        except KeyError as exc:
            raise ValueError(f"{where}: array {exc} missing") from None
        params = entry["init_params"]
        if not isinstance(params, dict) or params.get("n_features") != attrs["n_features_in_"] \
                or params.get("sparse", False) is not attrs["_sparse_"]:
            raise ValueError(f"{where}: init_params: n_features and sparse must be the "
                             "estimator's n_features_in_ and _sparse_")
        check_state(entry["class"], params, data, where)
        try:
            state = state_cls(**params)
        except TypeError as exc:  # an argument this version's state does not take
            raise ValueError(f"{where}: init_params: {exc}") from None
        state.load_state(data)
        states.append(state)
    est.__dict__.update(attrs)
    if "_start_params" in est.__dict__ and backend is not None:
        est._start_params = {**est._start_params, "backend": backend}
    est._states = states
    return est
