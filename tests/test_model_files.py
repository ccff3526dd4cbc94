"""A model file is input: tampered files never crash, hang or read out of bounds.

Every estimator of the registry (``tests/test_common.py``) is fitted on both backends,
on dense and on CSR data, and saved; then each array of the file (and the JSON) is
mutated — out-of-range, negative and int32-max indices, NaN, 1e308, infinities, an
array shortened by one, permuted ids, two arrays swapped, the wrong dtype, a truncated
file, a JSON naming another estimator, state class or format version, huge claimed
sizes and counts, an extra member — and the mutated file goes through load -> predict
-> partial_fit -> unlearn (where it exists) in a **forked child** with a time limit.
The test fails on any signal or time-out, and on a load that fails with anything but a
``ValueError``; a file that loads is fine (every check passed; it may hold a model
equal to the saved one, when the mutation changed nothing the model depends on).

The short form (every array, one mutation each, in turn) runs in the normal suite; the
long form (every mutation of every array) is marked slow.  Both print the counts per
estimator and backend (``-s`` shows them).
"""

from __future__ import annotations

import io
import json
import os
import signal
import time
import traceback
import zipfile
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

import refsvm

from .conftest import BACKENDS
from .test_common import REGISTRY

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

#: seconds a child may take (load, predict, partial_fit, unlearn of a 40-row model)
TIMEOUT = 20.0
#: the child's exit codes
ACCEPTED, REJECTED, OTHER_LOAD_ERROR, LATER_ERROR = 0, 3, 4, 5


def _data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    X[rng.rand(n, 4) < 0.3] = 0.0
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.randn(n) > 0, 1, -1)
    return X, y


def _saved(name, backend, sparse, path):
    X, y = _data()
    est = REGISTRY[name](backend)
    est.fit(sp.csr_matrix(X) if sparse else X, y)
    est.save(path)
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _write(arrays, path):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


# --------------------------------------------------------------------------- mutations
def _array_mutations(arrays, key):
    """(label, mutated arrays) for one array member."""
    a = arrays[key]
    out = []

    def put(label, value):
        new = dict(arrays)
        new[key] = value
        out.append((label, new))

    if a.dtype.kind in "iu":
        hi = int(a.max()) if a.size else 0
        for label, v in (("out-of-range", hi + 1000), ("negative", -1),
                         ("int32-max", 2**31 - 1), ("huge", 10**7)):
            if a.size:
                b = a.copy().astype(np.int64)
                b.flat[-1] = v
                put(label, b)
        if a.size > 1:
            put("permuted", a[::-1].copy())
        put("float-dtype", a.astype(np.float64))
    elif a.dtype.kind == "f":
        for label, v in (("nan", np.nan), ("1e308", 1e308), ("-inf", -np.inf),
                         ("negative", -1.0)):
            if a.size:
                b = a.copy()
                b.flat[a.size // 2] = v
                put(label, b)
        put("int-dtype", a.astype(np.int64))
        if a.ndim == 2 and a.shape[0] > 1:
            put("transposed", np.ascontiguousarray(a.T))
    else:
        put("float-dtype", np.zeros(a.shape))
    if a.size:
        put("shortened", a.reshape(-1)[:-1].copy() if a.ndim == 1 else a[:-1].copy())
    put("empty", a[:0].copy())
    put("2-D", a.reshape(1, -1).copy() if a.ndim == 1 else a.reshape(-1).copy())
    return out


def _swap_mutations(arrays):
    """Two arrays of the same state swapped (same dtype kind, first such pair)."""
    out = []
    keys = [k for k in arrays if k.startswith("state0/")]
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if arrays[a].dtype.kind == arrays[b].dtype.kind and arrays[a].shape != arrays[b].shape:
                new = dict(arrays)
                new[a], new[b] = arrays[b], arrays[a]
                out.append((f"swap {a}<->{b}", new))
                break
    return out[:4]


def _meta_mutations(arrays):
    meta = json.loads(str(arrays["__meta__"][()]))
    out = []

    def put(label, fn):
        m = json.loads(json.dumps(meta))
        fn(m)
        new = dict(arrays)
        new["__meta__"] = np.array(json.dumps(m))
        out.append((label, new))

    other = "POKER" if meta["estimator"] != "POKER" else "IncrementalSVM"
    put("json: another estimator", lambda m: m.__setitem__("estimator", other))
    put("json: format version 2", lambda m: m.__setitem__("format_version", 2))
    put("json: another state class",
        lambda m: m["states"][0].__setitem__("class", "KernelPA" if m["states"][0]["class"]
                                             != "KernelPA" else "POKERState"))
    for value in (-1, 0, 10**9, 2**31):
        put(f"json: n_features = {value}",
            lambda m, v=value: m["states"][0]["init_params"].__setitem__("n_features", v))
    put("json: n_features_in_ = 10**9",
        lambda m: m["attributes"].__setitem__("n_features_in_", 10**9))
    put("json: unknown init param",
        lambda m: m["states"][0]["init_params"].__setitem__("bogus", 1))
    put("json: departures accepted",
        lambda m: m["states"][0]["init_params"].__setitem__("departures", {}))
    data = meta["states"][0]["data"]
    for key, value in list(data.items()):
        put(f"json: {key} null", lambda m, k=key: m["states"][0]["data"].__setitem__(k, None))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        for label, v in (("huge", 10**12), ("negative", -1), ("nan", float("nan"))):
            put(f"json: {key} {label}",
                lambda m, k=key, v=v: m["states"][0]["data"].__setitem__(k, v))
    for key, value in list(meta["states"][0]["init_params"].items()):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key != "n_features":
            for label, v in (("nan", float("nan")), ("inf", float("inf")), ("-1", -1)):
                put(f"json: init {key} {label}",
                    lambda m, k=key, v=v: m["states"][0]["init_params"].__setitem__(k, v))
    put("json: extra attribute", lambda m: m["attributes"].__setitem__("junk_", {"__array__": True}))
    return out


def _file_mutations(raw, arrays):
    """Whole-file mutations: (label, bytes)."""
    out = [("truncated half", raw[: len(raw) // 2]), ("truncated tail", raw[:-20]),
           ("empty file", b"")]
    new = dict(arrays)
    new["estimator/junk_"] = np.zeros(8)
    buf = io.BytesIO()
    np.savez(buf, **new)
    out.append(("extra member", buf.getvalue()))
    return out


def _huge_member(arrays):
    """A compressed member declaring 256 MiB of zeros (the file is about 250 KB)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            b = io.BytesIO()
            np.save(b, value)
            zf.writestr(key + ".npy", b.getvalue())
        b = io.BytesIO()
        np.save(b, np.zeros(2**25))
        zf.writestr("state0/huge.npy", b.getvalue())
    return buf.getvalue()


# --------------------------------------------------------------------------- the child
def _exercise(path):
    """Load, predict, learn more, unlearn: the child's work.  Returns an exit code."""
    try:
        est = refsvm.load(path)
    except ValueError:
        return REJECTED
    except BaseException:  # noqa: BLE001 - reported as an unclear load error
        traceback.print_exc()
        return OTHER_LOAD_ERROR
    try:
        X, y = _data(12, seed=1)
        d = est.n_features_in_
        if d != 4:  # a tampered width that loaded: rows of that width
            X, y = (sp.csr_matrix((3, d)) if est._sparse_ or d > 10**4 else np.zeros((3, d)),
                    y[:3])
        Xf = sp.csr_matrix(X) if est._sparse_ else X
        est.decision_function(Xf)
        labels = est.classes_
        yy = np.where(y > 0, labels[-1], labels[0])
        est.partial_fit(Xf, yy)
        est.decision_function(Xf)
        if hasattr(est, "unlearn") and hasattr(est, "support_") and est.support_.size:
            est.unlearn(est.support_[:1])
    except BaseException:  # noqa: BLE001 - an error after a clean load: counted
        return LATER_ERROR
    return ACCEPTED


def _start_child(path):
    """Fork a child that exercises the file at ``path``; its pid."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = _exercise(path)
        finally:
            os._exit(code)
    return pid


def _outcome(status):
    """'accepted', 'rejected', 'load-error', 'later-error' or 'signal N'."""
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return {ACCEPTED: "accepted", REJECTED: "rejected", OTHER_LOAD_ERROR: "load-error",
            LATER_ERROR: "later-error"}.get(os.WEXITSTATUS(status), "exit "
                                             f"{os.WEXITSTATUS(status)}")


class _Children:
    """At most ``workers`` forked children at a time; ``done`` collects (label,
    outcome), 'hung' for a child killed at its time limit."""

    def __init__(self, workers):
        self.workers, self.running, self.done = workers, {}, []

    def add(self, path, label):
        while len(self.running) >= self.workers:
            self._reap()
        self.running[_start_child(str(path))] = (label, path, time.monotonic() + TIMEOUT)

    def _reap(self):
        for pid, (label, path, deadline) in list(self.running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                outcome = _outcome(status)
            elif time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                outcome = "hung"
            else:
                continue
            del self.running[pid]
            path.unlink(missing_ok=True)
            self.done.append((label, outcome))
        time.sleep(0.002)

    def wait(self):
        while self.running:
            self._reap()
        return self.done


# --------------------------------------------------------------------------- the sweep
def _cases():
    return [(name, b, sparse) for name in REGISTRY for b in BACKENDS for sparse in (False, True)]


def _mutated_files(arrays, raw, k, long):
    """(label, arrays or bytes) of case ``k``: every mutation (long form), or a quarter
    of the arrays with one mutation each, one JSON and one whole-file mutation (short
    form: the four cases of an estimator, two backends by dense and CSR, share out every
    array and turn through the mutations)."""
    c = k % 4
    members = [key for key in arrays if key != "__meta__"]
    files = []
    for j, key in enumerate(members):
        muts = _array_mutations(arrays, key)
        if not long:
            if j % 4 != c or not muts:
                continue
            muts = [muts[(j // 4 + k // 4) % len(muts)]]
        files += [(f"{key}: {label}", new) for label, new in muts]
    swaps, meta = _swap_mutations(arrays), _meta_mutations(arrays)
    blobs = _file_mutations(raw, arrays)
    if long or k == 0:
        blobs.append(("huge compressed member", _huge_member(arrays)))
    if not long:
        swaps = swaps[:1] if c == 0 else []
        meta = [meta[(k // 4 + c) % 8], meta[8 + (k * 7) % (len(meta) - 8)]]
        blobs = [blobs[(k // 4 + c) % len(blobs)]] + blobs[4:]
    return files + swaps + meta + blobs


def _sweep(tmp_path, long, workers):
    counts = {}
    failures = []
    for k, (name, backend, sparse) in enumerate(_cases()):
        src = tmp_path / f"m{k}.npz"
        arrays = _saved(name, backend, sparse, src)
        children = _Children(workers)
        for i, (label, new) in enumerate(_mutated_files(arrays, src.read_bytes(), k, long)):
            path = tmp_path / f"t{k}_{i}.npz"
            if isinstance(new, bytes):
                path.write_bytes(new)
            else:
                _write(new, path)
            children.add(path, label)
        tally = Counter()
        for label, outcome in children.wait():
            tally[outcome.split(" ")[0]] += 1
            if outcome not in ("accepted", "rejected", "later-error"):
                failures.append(f"{name}-{backend}-{'csr' if sparse else 'dense'} {label}: "
                                f"{outcome}")
        counts[(name, backend, "csr" if sparse else "dense")] = tally
        print(f"{name}-{backend}-{'csr' if sparse else 'dense'}: {dict(tally)}", flush=True)
    return counts, failures


def _report(counts):
    cols = ("accepted", "rejected", "later-error", "load-error", "signal", "hung")
    lines = [f"{'estimator':32s} {'backend':7s} {'data':5s} {'files':>5s} "
             + " ".join(f"{c:>11s}" for c in cols)]
    total = Counter()
    for (name, backend, fmt), tally in counts.items():
        total.update(tally)
        lines.append(f"{name:32s} {backend:7s} {fmt:5s} {sum(tally.values()):5d} "
                     + " ".join(f"{tally.get(c, 0):11d}" for c in cols))
    lines.append(f"{'total':46s} {sum(total.values()):5d} "
                 + " ".join(f"{total.get(c, 0):11d}" for c in cols))
    print("\n" + "\n".join(lines))


def test_tampered_model_files_never_crash_or_hang_short(tmp_path):
    """Every array of every estimator's saved model, one mutation each (in turn)."""
    counts, failures = _sweep(tmp_path, long=False, workers=2)
    _report(counts)
    assert not failures, "\n".join(failures[:40])
    assert sum(c["rejected"] for c in counts.values()) > 0


@pytest.mark.slow
def test_tampered_model_files_never_crash_or_hang_long(tmp_path):
    """Every mutation of every array of every estimator's saved model."""
    counts, failures = _sweep(tmp_path, long=True, workers=3)
    _report(counts)
    assert not failures, "\n".join(failures[:40])


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_null_member_is_rejected_by_name(name, tmp_path):
    """A member of a state's data set to null (JSON's None) is refused by a ValueError
    naming it, optional members too: a null is no absence."""
    src = tmp_path / "m.npz"
    arrays = _saved(name, "cython", False, src)
    meta = json.loads(str(arrays["__meta__"][()]))
    keys = [k for k, v in meta["states"][0]["data"].items() if v is not None]
    assert keys
    for key in keys:
        m = json.loads(json.dumps(meta))
        m["states"][0]["data"][key] = None
        path = tmp_path / "null.npz"
        _write(dict(arrays, __meta__=np.array(json.dumps(m))), path)
        with pytest.raises(ValueError, match=key):
            refsvm.load(path)


def test_the_issue_reproducer_is_rejected_by_name(tmp_path):
    """IncrementalSVM with S[0] = 10**6: a ValueError naming the file, S and the rule."""
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3)
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "m.npz"
    refsvm.IncrementalSVM(C=1.0, gamma=0.5).fit(X, y).save(path)
    z = dict(np.load(path))
    z["state0/S"] = z["state0/S"].copy()
    z["state0/S"][0] = 10**6
    bad = tmp_path / "tampered.npz"
    _write(z, bad)
    with pytest.raises(ValueError, match=r"tampered\.npz: state 0: S: ids must be in"):
        refsvm.load(bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tampered_pickle_is_rejected_before_the_state_is_built(backend):
    """Unpickling goes through the same validator (the estimators' ``__setstate__``)."""
    import pickle

    X, y = _data()
    est = REGISTRY["IncrementalSVM"](backend).fit(X, y)
    state = est.__getstate__()
    cls, params, data = state["_states"][0]
    data = dict(data)
    data["S"] = np.asarray(data["S"]).copy()
    data["S"][0] = 10**6
    state["_states"] = [type(state["_states"][0])(cls, params, data)]
    blob = pickle.dumps((type(est), state))
    klass, st = pickle.loads(blob)
    fresh = klass.__new__(klass)
    with pytest.raises(ValueError, match="unpickled IncrementalSVMState: S: ids must be in"):
        fresh.__setstate__(st)
    # and an honest pickle round-trips to the same model
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))


def test_loading_checks_sizes_before_allocating(tmp_path):
    """A compressed member that declares far more bytes than the file carries is refused
    before it is decompressed; so is an unknown member."""
    X, y = _data()
    path = tmp_path / "m.npz"
    arrays = _saved("POKER", "cython", False, path)
    path.write_bytes(_huge_member(arrays))
    with pytest.raises(ValueError, match="justifies"):
        refsvm.load(path)
    new = dict(arrays)
    new["estimator/junk_"] = np.zeros(3)
    _write(new, path)
    with pytest.raises(ValueError, match="unknown member"):
        refsvm.load(path)


@pytest.mark.parametrize("backend", ["cython", "python"])
def test_a_state_unpickled_on_its_own_is_checked(backend):
    """A state pickled without its estimator (either twin) goes through its validator when
    it is unpickled; a deep copy of a live state does not need to, and equals it."""
    import copy
    import pickle

    X, y = _data()
    est = refsvm.IncrementalSVM(C=1.0, gamma=0.5, backend=backend).fit(X, y)
    state = est._states[0]
    func, (cls, params, data) = state.__reduce__()
    data = dict(data)
    data["S"] = np.asarray(data["S"]).copy()
    data["S"][0] = 10**6
    blob = pickle.dumps((func, cls, params, data))
    func, cls, params, data = pickle.loads(blob)
    with pytest.raises(ValueError, match="S: ids must be in"):
        func(cls, params, data)
    twin = copy.deepcopy(state)
    np.testing.assert_array_equal(twin.decision_function(X), state.decision_function(X))
    again = pickle.loads(pickle.dumps(state))
    np.testing.assert_array_equal(again.decision_function(X), state.decision_function(X))


@pytest.mark.parametrize("backend", ["cython", "python"])
@pytest.mark.parametrize("family", ["POKER", "IncrementalSVM"])
def test_a_state_with_an_empty_margin_set_round_trips(family, backend):
    """A state whose margin set is empty (before any example, or after one chunk that put
    every example at a bound) pickles and unpickles, and its R must have the family's
    empty shape (POKER 0 x 0, IncrementalSVM 1 x 1): the other shape is refused."""
    import pickle

    from refsvm.idsvm import _incremental_svm, incremental_svm
    from refsvm.poker import _poker, poker

    mod = {("POKER", "python"): poker, ("POKER", "cython"): _poker,
           ("IncrementalSVM", "python"): incremental_svm,
           ("IncrementalSVM", "cython"): _incremental_svm}[family, backend]
    cls = mod.POKERState if family == "POKER" else mod.IncrementalSVMState
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [-1.0, 0.5]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    state = cls(2, C=1.0, gamma=0.5)
    for learn in (None, X[:1]):
        if learn is not None:
            if family == "POKER":
                state.add_chunk(learn, y[:1])
            else:
                state.step(learn[0], y[0])
        func, (klass, params, data) = state.__reduce__()
        data = dict(data)
        assert len(data["S"]) == 0
        again = pickle.loads(pickle.dumps(state))
        assert len(again.__reduce__()[1][2]["S"]) == 0
        key = "R" if family == "POKER" else "Rinv"
        size = 0 if family == "POKER" else 1
        assert np.shape(data[key]) == (size, size)
        data[key] = np.zeros((1 - size, 1 - size))
        with pytest.raises(ValueError, match=f"{key}: has shape"):
            func(klass, params, data)
    # both copies go on learning alike
    if family == "POKER":
        state.add_chunk(X[1:], y[1:])
        again.add_chunk(X[1:], y[1:])
    else:
        for x, t in zip(X[1:], y[1:]):
            state.step(x, t)
            again.step(x, t)
    np.testing.assert_array_equal(again.decision_function(X), state.decision_function(X))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_model_of_boolean_labels_loads(name, tmp_path):
    """Labels of dtype bool (y = x_0 > 0) are learned, saved and loaded: the file's check
    of ``classes_`` takes booleans as it takes numbers and strings."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + 0.3 * rng.normal(size=80) > 0
    model = REGISTRY[name]("cython").fit(X, y)
    path = tmp_path / "m.npz"
    model.save(path)
    loaded = refsvm.load(path)
    assert loaded.classes_.dtype == np.bool_
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.decision_function(X).tobytes() == model.decision_function(X).tobytes()
