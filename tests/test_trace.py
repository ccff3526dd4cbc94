"""Traces (issue 43): the traced run is the reference's own run (same model bit for bit),
every printed line of every algorithm appears in some trace of the coverage streams, the
invariants hold where a line promises one, the command and the Python API."""

import io
import json

import numpy as np
import pytest

import refsvm
from refsvm import cli, tracing
from refsvm.core.trace import Tracer

NAMES = list(tracing.algorithms())


def _same(a, b, where):
    assert set(a) == set(b), where
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            assert x.dtype == y.dtype and x.shape == y.shape, (where, key)
            assert x.tobytes() == y.tobytes(), (where, key)   # bit for bit (NaN too)
        elif isinstance(x, dict):
            _same(x, y, f"{where}.{key}")
        else:
            assert type(x) is type(y) and (x == y or (x != x and y != y)), (where, key, x, y)


def _untraced(algo, X, y):
    state = algo.make(X.shape[1], X)
    algo.drive(state, X, y, Tracer())           # the driver's own lines go nowhere
    assert getattr(state, "_tracer", None) is None
    return state


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("stream", [(40, 0, 0.1), (60, 2, 0.3)])
def test_traced_run_gives_the_same_model_bit_for_bit(name, stream):
    algo = tracing.algorithms()[name]
    X, y = tracing.builtin_stream(*stream)
    traced = tracing.run(name, X, y)
    plain = _untraced(algo, X, y)
    assert len(traced.steps) > 0
    _same(plain.get_state(), traced.state.get_state(), name)
    _same(plain.save_state(), traced.state.save_state(), name)
    # and the traced state is left as it was made: no tracer, no wrappers
    assert getattr(traced.state, "_tracer", None) is None and "_watched" not in traced.state.__dict__


def test_a_tracer_that_changes_a_number_would_be_seen():
    # the bit-for-bit comparison above can fail: a perturbed run differs from the plain one
    algo = tracing.algorithms()["pa1"]
    X, y = tracing.builtin_stream(40, 0, 0.1)
    a, b = _untraced(algo, X, y), _untraced(algo, X, y)
    b.w[0] = np.nextafter(b.w[0], np.inf)
    with pytest.raises(AssertionError):
        _same(a.get_state(), b.get_state(), "pa1")


@pytest.fixture(scope="module")
def coverage():
    return tracing.coverage()


@pytest.mark.parametrize("name", NAMES)
def test_every_printed_line_is_executed_on_some_coverage_stream(coverage, name):
    missing = [line for line, where in coverage[name].items() if where is None]
    assert not missing, f"{name}: no coverage stream executes {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_line_is_a_printed_line_and_its_invariant_holds(name):
    algo = tracing.algorithms()[name]
    for stream in tracing.COVERAGE_STREAMS[:3]:
        steps = tracing.run(name, *tracing.builtin_stream(*stream)).steps
        unknown = {s.line for s in steps} - set(algo.lines)
        assert not unknown, f"{name}: lines without a printed statement {unknown}"
        failed = [(s.index, s.line, s.check) for s in steps if s.ok is False]
        assert not failed, f"{name} on {stream}: the invariant fails after {failed[:2]}"


def test_an_invariant_that_breaks_is_reported():
    # the ramp check sees alpha != 0 off V: break it by hand after a traced run
    r = tracing.run("onlinesvmr")
    state = r.state
    p = int(np.flatnonzero(state.alpha > 0)[0])
    state.in_v[p] = False
    check = r.algorithm.check(state, "Alg. 1 steps 9/27", {"changed": False})
    assert check["ok"] is False


def test_the_hook_is_off_by_default_for_every_reference():
    for name in NAMES:
        algo = tracing.algorithms()[name]
        X, y = tracing.builtin_stream(10, 0, 0.0)
        state = algo.make(2, X)
        assert getattr(state, "_tracer", None) is None, name
        assert all(not callable(state.__dict__.get(m)) for m in algo.blocks), name


def test_paper_lines_are_cited_as_the_paper_numbers_them():
    runs = {name: tracing.run(name) for name in ("streamsvm", "onlinesvmr", "altpoker",
                                                 "idsvm-learn", "pegasos")}
    assert "Alg. 1 line 7" in {s.line for s in runs["streamsvm"].steps}
    assert "Alg. 1 steps 12-14" in {s.line for s in runs["onlinesvmr"].steps}
    assert "Fig. 1 line 3" in {s.line for s in runs["altpoker"].steps}
    assert "Eq. 8: R grows" in {s.line for s in runs["idsvm-learn"].steps}
    assert "Alg. 1 line 4" in {s.line for s in runs["pegasos"].steps}
    # StreamSVM line 8: R grows by half the excess distance, as the quantities say
    steps = runs["streamsvm"].steps
    for a, b in zip(steps, steps[1:]):
        if a.line == "Alg. 1 line 7":
            assert b.line == "Alg. 1 line 8"


# ---------------------------------------------------------------- Python API
def test_python_api_takes_an_estimator_a_state_or_a_name():
    X, y = tracing.builtin_stream(30, 3, 0.1)
    labels = np.where(y > 0, "yes", "no")
    steps = refsvm.trace(refsvm.StreamSVM(C=1.0), X, labels, frame=False)
    assert steps and isinstance(steps[0], tracing.Step)
    assert steps[0].line == "Alg. 1 line 3"
    frame = refsvm.trace(refsvm.PassiveAggressive(variant="PA"), X, y)
    pd = pytest.importorskip("pandas")
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns)[:4] == ["index", "example", "line", "text"]
    from refsvm.ramp.online_svmr import OnlineSVMR
    state = OnlineSVMR(2, C=1.0, kernel="rbf", gamma=1.0, departures="paper")
    run = refsvm.trace(state, X, y, run_only=True)
    assert run.state is state and state.n_seen == 30
    assert {s.line for s in run.steps} >= {"Alg. 1 step 2", "Alg. 1 step 3"}
    with pytest.raises(ValueError, match="two classes"):
        refsvm.trace("pa", X, np.arange(30) % 3)


def test_python_api_on_an_estimator_runs_the_paper_form():
    X, y = tracing.builtin_stream(30, 1, 0.1)
    run = refsvm.trace(refsvm.IncrementalSVM(C=1.0, kernel="rbf", gamma=0.5), X, y,
                       run_only=True)
    assert run.state.departures == refsvm.idsvm.incremental_svm.resolve(
        refsvm.idsvm.incremental_svm.DEPARTURES, "paper")


# ---------------------------------------------------------------- the command
def _cli(argv):
    out = io.StringIO()
    parser = cli.argparse.ArgumentParser()
    args = _parse(argv)
    assert cli.trace_command(args, parser, out=out) == 0
    return out.getvalue()


def _parse(argv):
    import argparse

    captured = {}

    def fake(args, parser):
        captured["args"] = args
        return 0

    saved = cli.trace_command
    cli.trace_command = fake
    try:
        cli.main(["trace", *argv])
    finally:
        cli.trace_command = saved
    assert isinstance(captured["args"], argparse.Namespace)
    return captured["args"]


def test_cli_prints_the_lines_with_changes_and_checks():
    text = _cli(["streamsvm", "--steps", "7"])
    assert "Alg. 1 line 3" in text and "Alg. 1 line 8" in text
    assert "changes: R=" in text and "check:" in text and "holds" in text
    only = _cli(["onlinesvmr", "--only", "steps 12-14", "--from", "10", "--steps", "3"])
    blocks = [ln for ln in only.splitlines() if ln.startswith("#")]
    assert len(blocks) == 3 and all("Alg. 1 steps 12-14" in b for b in blocks)
    assert all(int(b.split()[1][1:]) >= 10 for b in blocks)
    listing = _cli(["--list"])
    assert all(name in listing for name in NAMES)


def test_cli_json_is_the_same_trace_as_data():
    doc = json.loads(_cli(["idsvm-learn", "--format", "json", "--steps", "20"]))
    assert doc["algorithm"] == "idsvm-learn" and len(doc["steps"]) == 20
    steps = tracing.run("idsvm-learn").steps[:20]
    assert [s["line"] for s in doc["steps"]] == [s.line for s in steps]
    assert doc["steps"][0]["check"]["S"] == steps[0].check["S"]


def test_cli_takes_the_users_data(tmp_path):
    X, y = tracing.builtin_stream(12, 5, 0.0)
    np.savetxt(tmp_path / "s.csv", np.column_stack([X, y]), delimiter=",")
    text = _cli(["pa", "--data", str(tmp_path / "s.csv")])
    assert "12 examples" in text


@pytest.mark.parametrize("bad,expected", [
    ("nan", "NaN"), ("huge", "magnitude"), ("y-nan", "y contains NaN"),
    ("short-y", "shape"), ("no-y", "no array named y")])
def test_bad_streams_are_refused_naming_the_problem(tmp_path, capsys, bad, expected):
    """A user's stream is input: NaN, entries whose squares overflow, non-finite labels,
    mismatched lengths and a .npz without y give an error naming the problem, never a
    trace of a model fed that data (the references do not check their rows)."""
    X, y = tracing.builtin_stream(12, 5, 0.0)
    X, y = X.copy(), y.copy()
    arrays = {"X": X, "y": y}
    if bad == "nan":
        X[3, 1] = np.nan
    elif bad == "huge":
        X[3, 1] = 1e308
    elif bad == "y-nan":
        arrays["y"] = np.where(np.arange(12) == 3, np.nan, y)
    elif bad == "short-y":
        arrays["y"] = y[:-1]
    else:
        del arrays["y"]
    if "y" in arrays:
        with pytest.raises(ValueError, match=expected):
            refsvm.trace("pa", arrays["X"], arrays["y"], frame=False)
    np.savez(tmp_path / "s.npz", **arrays)
    with pytest.raises(SystemExit):
        cli.main(["trace", "pa", "--data", str(tmp_path / "s.npz")])
    assert expected in capsys.readouterr().err


def test_cli_rejects_an_unknown_algorithm(capsys):
    with pytest.raises(SystemExit):
        cli.main(["trace", "nosuch"])
    assert "unknown algorithm" in capsys.readouterr().err


# ---------------------------------------------------------------- figures
def test_figures_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from refsvm.tracing import plots

    X, y = tracing.builtin_stream(16, 0, 0.1)
    idsvm = tracing.run("idsvm-learn", X, y)
    paths = plots.plot_run(idsvm, tmp_path, animate=False)
    assert [p.rsplit("_", 1)[-1] for p in paths] == ["decision.png", "paths.png"]
    for p in paths:
        with open(p, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    gif = plots.animation(tracing.run("pa", X[:6], y[:6]), str(tmp_path / "pa.gif"))
    with open(gif, "rb") as fh:
        assert fh.read(6) == b"GIF89a"


def test_the_sets_drawn_are_the_traced_ones():
    pytest.importorskip("matplotlib")
    from refsvm.tracing import plots

    run = tracing.run("idsvm-learn")
    sets = plots.sets_after(run, 40)
    last = [s for s in run.steps if s.check][-1].check
    assert sets == {"S": last["S"], "E": last["E"], "R": last["R"]}
    # the model drawn after all the examples is the traced run's model
    state = plots.model_after(run, 40)
    grid = np.array([[0.0, 0.0], [1.0, -1.0]])
    assert np.array_equal(state.decision_function(grid), run.state.decision_function(grid))


def test_alpha_paths_follow_the_path_parameter():
    pytest.importorskip("matplotlib")
    from refsvm.tracing import plots

    c, points = plots._idsvm_paths(tracing.run("idsvm-learn"))
    t = [p[0] for p in points]
    assert t[0] == 0.0 and all(a <= b for a, b in zip(t, t[1:]))
    assert points[-1][1][c] == t[-1]          # alpha_c is the parameter itself
    chunk, path = plots._poker_paths(tracing.run("altpoker"))
    assert len(path) >= 2


def test_streamsvm_radius_stays_within_three_halves_of_the_optimum():
    # the bound the radius figure draws (Zarrabi-Zadeh and Chan; ALGORITHMS.md section 5)
    from refsvm.tracing import plots

    run = tracing.run("streamsvm")
    n_seen, R, marks, opt = plots.radius_series(run, every=3)
    at = dict(zip(n_seen, R))
    for m, r_opt in zip(marks, opt):
        assert r_opt * (1 - 1e-9) <= at[m] <= 1.5 * r_opt * (1 + 1e-9), (m, at[m], r_opt)


def test_poker_fixed_shows_the_fixed_bias_path_only():
    steps = tracing.run("poker-fixed").steps
    assert steps and steps[0].line == "Fig. 1 line 3"
    assert {s.quantities["path"] for s in steps if "path" in s.quantities} == {"fixed bias (u)"}
    full = tracing.run("altpoker").steps
    assert any(s.quantities.get("path") == "adjustable bias (b)" for s in full)
