"""``refsvm reproduce``: the quick run of every paper, resumability, engines, names, data.

The quick runs share one output folder per session (module fixture); the slow test runs
Wang & Vucetic's default protocol on one data set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from refsvm import cli
from refsvm.datasets import DataUnavailable, _breiman_waveform, load_dataset, make_gauss
from refsvm.evaluate import checkpoint_curve, progressive_validation
from refsvm.reproduce import get_paper, paper_names, reproduce
from refsvm.reproduce._claims import FAILS, HOLDS, UNTESTABLE, VERDICTS, Evidence, evaluate
from refsvm.reproduce._runner import Store, format_summary, is_time_metric, write_atomic

from .conftest import SHARED_DATA

#: the quick runs and the data-set checks read ../shared/data (or $REFSVM_DATA)
pytestmark = pytest.mark.skipif(
    not (SHARED_DATA / "diabetes").is_dir(),
    reason=f"needs the benchmark data in {SHARED_DATA} (or $REFSVM_DATA)",
)

#: every paper module of refsvm.reproduce runs its quick protocol here: a family that adds
#: its paper's module is tested without editing this file
PAPERS = tuple(paper_names())
KNOWN = ("wang-vucetic", "lee-tseng-chen", "bagnell", "cauwenberghs-poggio")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("reproduce")
    summaries = {p: reproduce(p, mode="quick", out=out, progress=False,
                              stream=open(os.devnull, "w")) for p in PAPERS}
    return out, summaries


def test_every_paper_is_registered():
    assert set(KNOWN) <= set(PAPERS)


@pytest.mark.parametrize("paper", PAPERS)
def test_quick_run_writes_tables_results_and_figures(quick, paper):
    out, summaries = quick
    summary = summaries[paper]
    assert not summary["errors"], summary["errors"]
    folder = Path(out) / paper
    assert (folder / "results-quick.csv").read_text().count("\n") > 1
    on_disk = json.loads((folder / "summary-quick.json").read_text())
    assert on_disk["tables"] == json.loads(json.dumps(summary["tables"]))
    figs = [Path(f) for f in summary["figures"]]
    assert {f.suffix for f in figs} == {".png", ".svg"}
    assert all(f.stat().st_size > 1000 for f in figs)
    items = get_paper(paper).items
    assert len(figs) == 2 * sum(it.plot is not None for it in items)
    for table in summary["tables"]:
        ok = [r for r in table["rows"] if r["status"] == "ok"]
        assert ok
        for row in ok:
            for m in table["metrics"]:
                cell = row[m]
                if cell.get("absent"):      # e.g. the updates of a batch solver
                    assert cell["mean"] is None
                    continue
                assert cell["mean"] is not None and np.isfinite(cell["mean"])
                if cell["printed"] is not None:
                    tol = cell["printed_std"] if cell["printed_std"] is not None else 1.0
                    assert cell["diff"] == pytest.approx(cell["mean"] - cell["printed"])
                    if is_time_metric(m):   # times: compared by the claims, as ratios
                        assert cell["within"] is None
                    else:
                        assert cell["within"] == (abs(cell["diff"]) <= tol + 1e-9)


def test_missing_data_sets_are_na_rows_not_crashes(quick):
    _, summaries = quick
    wv = summaries["wang-vucetic"]
    assert any("cover" in line and "covtype" in line for line in wv["missing"])
    rows = [r for r in wv["tables"][0]["rows"] if r["dataset"] == "cover"]
    from refsvm.reproduce.wang_vucetic import _methods_of

    assert len(rows) == len(_methods_of("cover")) == 6   # IDSVM twice: stopped, to the end
    assert all(r["status"] == "n/a" for r in rows)
    assert all((r["accuracy"]["printed"] is None) == (r["method"] == "IDSVM (to the end)")
               for r in rows)


def test_quick_numbers_are_sane(quick):
    """Gauss at 300 examples: every method near the Bayes rate (81.5 %); the ramp-loss
    models sparser than LIBSVM; exact LOO = brute force."""
    _, s = quick
    rows = {r["method"]: r for r in s["wang-vucetic"]["tables"][0]["rows"]
            if r["dataset"] == "gauss"}
    for method in ("LIBSVM", "IDSVM", "OnlineSVMR", "OnlineASVMR"):
        assert 75 < rows[method]["accuracy"]["mean"] < 86
    assert rows["OnlineSVMR"]["n_sv"]["mean"] < rows["LIBSVM"]["n_sv"]["mean"]
    for row in s["cauwenberghs-poggio"]["tables"][0]["rows"]:
        assert row["loo_error"]["mean"] == pytest.approx(row["brute_loo_error"]["mean"])
        assert row["max_loo_decision_diff"]["mean"] < 1e-3


def test_rerun_skips_finished_cells(quick):
    out, summaries = quick
    again = reproduce("bagnell", mode="quick", out=out, progress=False,
                      stream=open(os.devnull, "w"), draw=False)
    assert again["ran"] == 0 and again["skipped"] > 0
    assert again["tables"] == summaries["bagnell"]["tables"]


def test_interrupted_run_continues(tmp_path, monkeypatch):
    """Cells finished before an interruption are kept; the rerun runs only the rest."""
    from refsvm.reproduce import _runner

    real = _runner.execute
    calls = {"n": 0}

    def flaky(cell, data_home=None):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(cell, data_home)

    monkeypatch.setattr(_runner, "execute", flaky)
    with pytest.raises(_runner.Interrupted):
        reproduce("lee-tseng-chen", ["table1"], mode="quick", out=tmp_path, progress=False,
                  only=["svmguide1"], stream=open(os.devnull, "w"))
    assert len(Store(tmp_path / "lee-tseng-chen").load()) == 2
    assert not list((tmp_path / "lee-tseng-chen").rglob("*.tmp"))
    monkeypatch.setattr(_runner, "execute", real)
    again = reproduce("lee-tseng-chen", ["table1"], mode="quick", out=tmp_path,
                      progress=False, only=["svmguide1"], stream=open(os.devnull, "w"))
    assert again["skipped"] == 2 and again["ran"] >= 1
    third = reproduce("lee-tseng-chen", ["table1"], mode="quick", out=tmp_path,
                      progress=False, only=["svmguide1"], stream=open(os.devnull, "w"))
    assert third["ran"] == 0 and third["skipped"] == 2 + again["ran"]


def test_atomic_write_leaves_no_half_file(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    write_atomic(target, "old")

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new" * 1000)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def _numbers(summary):
    return [(t["id"], r["dataset"], r["method"], m, r[m]["mean"], r[m]["std"])
            for t in summary["tables"] for r in t["rows"] for m in t["metrics"]]


def test_joblib_and_dask_cluster_give_the_serial_numbers(tmp_path):
    distributed = pytest.importorskip("distributed")
    kw = dict(mode="quick", progress=False, draw=False, only=["svmguide1"],
              stream=open(os.devnull, "w"))
    serial = reproduce("lee-tseng-chen", ["table1"], out=tmp_path / "serial", **kw)
    par = reproduce("lee-tseng-chen", ["table1"], out=tmp_path / "joblib", n_jobs=2, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask = reproduce("lee-tseng-chen", ["table1"], out=tmp_path / "dask",
                         scheduler=cluster.scheduler_address, **kw)
    assert serial["ran"] > 0 and serial["ran"] == par["ran"] == dask["ran"]
    assert _numbers(serial) == _numbers(par) == _numbers(dask)


def test_unknown_names_are_rejected(capsys):
    for argv, word in ((["reproduce", "no-such-paper"], "unknown paper"),
                       (["reproduce", "bagnell", "--table", "9"], "no table9"),
                       (["reproduce", "bagnell", "--only", "a9x"], "unknown name"),
                       (["compare", "--only", "PA", "Pxx"], "unknown name")):
        with pytest.raises(SystemExit):
            cli.main(argv)
        assert word in capsys.readouterr().err


def test_cli_reproduce_formats(tmp_path, capsys):
    base = ["reproduce", "cauwenberghs-poggio", "--table", "1", "--quick", "--out",
            str(tmp_path), "--no-progress", "--only", "diabetes"]
    assert cli.main(base + ["--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tables"][0]["rows"][0]["dataset"] == "diabetes"
    assert cli.main(base + ["--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("table,dataset,method") and len(lines) == 5


def test_compare_formats():
    import io

    out = io.StringIO()
    rows = cli.compare(n_samples=40, only=["PA"], out=out, fmt="json")
    assert json.loads(out.getvalue())["rows"] == json.loads(json.dumps(rows))
    assert [r["backend"] for r in rows] == ["cython", "python"]


# ---------------------------------------------------------------------------- data sets
def test_make_gauss_has_the_bayes_rate_of_the_paper():
    X, y = make_gauss(200_000, random_state=0)
    # Bayes rule: compare the two class densities (equal priors)
    lp = -0.5 * (X ** 2).sum(1) - np.log(1.0)
    ln = -0.5 * (((X - [2.0, 0.0]) / 2.0) ** 2).sum(1) - np.log(4.0)
    acc = np.mean(np.where(lp > ln, 1, -1) == y)
    assert acc == pytest.approx(0.815, abs=0.004)


def test_waveform_generator_matches_the_shared_file():
    from refsvm.datasets import load_shared

    X, y = load_shared("waveform")
    G, g = _breiman_waveform(60_000, random_state=1)
    for c in range(3):
        assert np.abs(X[y == c].mean(0) - G[g == c].mean(0)).max() < 0.15


def test_paper_preprocessing():
    X, y, Xt, yt = load_dataset("usps", n_train=500, n_test=200, random_state=0)
    assert X.shape == (500, 256) and np.allclose(X.mean(0), 0, atol=1e-9)
    X, y, Xt, yt = load_dataset("banana", random_state=3)
    assert X.shape[0] == 4300 and Xt.shape[0] == 1000
    # NCheckerboard: the Checkerboard's training points with 15 % of the labels flipped
    X, y, _, _ = load_dataset("ncheckerboard", n_train=20000, n_test=10, random_state=0)
    X0, y0, _, _ = load_dataset("checkerboard", n_train=20000, n_test=10, random_state=0)
    assert np.array_equal(X, X0) and 0.14 < np.mean(y != y0) < 0.16
    X, y, Xt, yt = load_dataset("waveform", n_train=1000, n_test=100)
    assert X.shape == (1000, 21) and set(np.unique(y)) == {-1, 1}
    assert 0.6 < np.mean(y == 1) < 0.73   # classes 0 and 2 positive


def test_missing_file_is_one_clear_line(tmp_path):
    with pytest.raises(DataUnavailable) as err:
        load_dataset("dna", data_home=tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and "dna/dna.tsv.gz" in msg
    with pytest.raises(ValueError, match="unknown data set"):
        load_dataset("dnaa")


# ---------------------------------------------------------------------------- evaluate
def test_progressive_validation_is_predict_then_learn():
    from refsvm import PassiveAggressive
    from refsvm.datasets import make_train_test

    X, y, _, _ = make_train_test("linear", 100, 10, random_state=0)
    got = progressive_validation(PassiveAggressive(), X, y, block=1)
    ref = PassiveAggressive()
    want = [True]
    ref.partial_fit(X[:1], y[:1], classes=[-1, 1])
    for t in range(1, 100):
        want.append(bool(y[t] * ref.decision_function(X[t:t + 1])[0] <= 0))
        ref.partial_fit(X[t:t + 1], y[t:t + 1])
    assert got.tolist() == want
    blocks = progressive_validation(PassiveAggressive(), X, y, block=50)
    assert blocks[:50].all()        # the first block meets the empty model


def test_checkpoint_curve_stops_at_the_time_cap():
    from refsvm import IncrementalSVM
    from refsvm.datasets import make_train_test

    X, y, Xt, yt = make_train_test("gauss", 2000, 200, random_state=0)
    c = checkpoint_curve(IncrementalSVM(C=1.0, gamma=0.5), X, y, Xt, yt, [500, 2000],
                         time_limit=1e-9, max_block=10)
    assert c.stopped_early and c.n_seen == [10]
    full = checkpoint_curve(IncrementalSVM(C=1.0, gamma=0.5), X[:300], y[:300], Xt, yt,
                            [100, 300])
    assert full.n_seen == [100, 300] and not full.stopped_early
    assert full.size[-1] == int(np.sum(IncrementalSVM(C=1.0, gamma=0.5).fit(
        X[:300], y[:300]).n_support_))


@pytest.mark.slow
def test_default_protocol_gauss_table1(tmp_path):
    """The paper's protocol on Gauss (10 repeats of 10,000 examples): LIBSVM and
    OnlineSVMR within a point of the printed accuracy."""
    s = reproduce("wang-vucetic", ["table1"], out=tmp_path, progress=False,
                  only=["gauss", "LIBSVM", "OnlineSVMR"], stream=open(os.devnull, "w"))
    for row in s["tables"][0]["rows"]:
        assert abs(row["accuracy"]["diff"]) < 1.0


def test_full_mode_selects_the_best_grid_setting_then_runs_the_repeats():
    from refsvm.reproduce import wang_vucetic as wv

    sel = [c for c in wv.plan_table1("full", []) if c.dataset == "gauss"
           and c.method == "OnlineSVMR"]
    assert len(sel) == len(wv.C_GRID) * len(wv.K_GRID) * 3
    assert all(c.setting.startswith("select:") and c.params["validate"] for c in sel)
    best = (10, 2)
    records = [{"key": c.key, "result": {"accuracy": 0.9 if (c.params["C"], c.params["k"]) == best
                                         else 0.5}} for c in sel]
    cells = [c for c in wv.plan_table1("full", records) if c.dataset == "gauss"
             and c.method == "OnlineSVMR" and not c.setting.startswith("select")]
    assert len(cells) == 10
    assert {(c.params["C"], c.params["k"]) for c in cells} == {best}
    assert not any(c.params["validate"] for c in cells)


def test_lee_tseng_chen_reduced_set_size_per_data_set():
    """ijcnn1 runs RKPA with m̃ = 350 (1 % of its rows) and its reduced-kernel cells say so
    in their setting; the other sets, the linear methods and --quick keep their keys."""
    from refsvm.reproduce import lee_tseng_chen as ltc

    assert ltc._mode("default", "ijcnn1")["n_reduced"] == 350
    assert ltc._mode("default", "w3a")["n_reduced"] == ltc.N_REDUCED == 100
    assert ltc._mode("quick", "ijcnn1")["n_reduced"] == 50
    cells = ltc.plan_table1("default", []) + ltc.plan_table2("default", [])
    for c in cells:
        reduced = c.dataset == "ijcnn1" and c.method not in ltc.LINEAR
        assert c.setting.endswith(",m=350") == reduced, c.key
    sel = [c for c in cells if c.dataset == "ijcnn1" and c.method == "RKPA-1"][0]
    hp = {"C": 1.0, "gamma": 0.5, "width": 1.0}
    runs = [c for c in ltc.plan_table1("default", [{"key": sel.key, "result": {"best": hp}}])
            if c.dataset == "ijcnn1" and c.method == "RKPA-1" and c is not sel
            and not c.setting.startswith("select")]
    assert len(runs) == 10 and {c.setting for c in runs} == {"C=1,gamma=0.5,m=350"}


def test_no_run_reports_without_running(tmp_path):
    s = reproduce("lee-tseng-chen", ["table1"], mode="quick", out=tmp_path, progress=False,
                  run=False, draw=False, only=["svmguide1"], stream=open(os.devnull, "w"))
    assert s["ran"] == 0
    assert {r["status"] for r in s["tables"][0]["rows"]} == {"not run"}
    assert not (tmp_path / "lee-tseng-chen" / "cells").exists()


# ---------------------------------------------------------------------------- claims
#: the five papers of shared/papers (Cauwenberghs & Poggio is not among them)
FIVE = ("wang-vucetic", "rai-daume-venkatasubramanian", "fine-scheinberg", "lee-tseng-chen",
        "bagnell")


@pytest.mark.parametrize("paper", FIVE)
def test_every_paper_declares_at_least_three_claims(paper):
    claims = get_paper(paper).claims
    assert len(claims) >= 3
    assert len({c.id for c in claims}) == len(claims)
    for c in claims:
        assert c.claim and c.evidence and callable(c.check)
        assert set(c.needs) <= {it.id for it in get_paper(paper).items}


@pytest.mark.parametrize("paper", PAPERS)
def test_every_quick_run_ends_with_its_claims(quick, paper):
    import csv
    import io

    out, summaries = quick
    summary = summaries[paper]
    claims = summary["claims"]
    assert [c["id"] for c in claims] == [c.id for c in get_paper(paper).claims]
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert all(c["reason"] for c in claims if c["verdict"] == UNTESTABLE)
    rows = list(csv.DictReader(io.StringIO(
        (Path(out) / paper / "claims-quick.csv").read_text())))
    assert [(r["id"], r["verdict"]) for r in rows] == [(c["id"], c["verdict"]) for c in claims]
    on_disk = json.loads((Path(out) / paper / "summary-quick.json").read_text())
    assert on_disk["claims"] == claims
    text = format_summary(summary)
    assert text.rindex("claims (quick mode)") > text.rindex("cells run now")


def _fake_table1(acc, n_sv):
    """A Wang & Vucetic summary with one data set (Gauss): method -> (accuracy, #SV)."""
    rows = [{"dataset": "gauss", "method": m, "setting": "-", "n_repeats": 2, "status": "ok",
             "accuracy": {"mean": acc[m], "std": 0.1, "printed": None},
             "n_sv": {"mean": n_sv[m], "std": 1.0, "printed": None}} for m in acc]
    return {"mode": "default", "tables": [{"id": "table1", "rows": rows}], "missing": []}


def test_verdicts_are_computed_from_our_numbers():
    """The same claim holds, fails or cannot be tested as the numbers change."""
    paper = get_paper("wang-vucetic")
    w1, w2 = (c for c in paper.claims if c.id in ("W1", "W2"))

    def run(claim, acc, n_sv):
        return evaluate([claim], Evidence(_fake_table1(acc, n_sv), {}, ["table1"]))[0]

    sv = {"LIBSVM": 4000.0, "OnlineSVMR": 400.0}
    assert run(w1, {"LIBSVM": 81.9, "OnlineSVMR": 81.5}, sv)["verdict"] == HOLDS
    assert run(w1, {"LIBSVM": 81.9, "OnlineSVMR": 79.0}, sv)["verdict"] == FAILS
    assert run(w2, {"LIBSVM": 81.9, "OnlineSVMR": 81.5}, sv)["verdict"] == HOLDS     # 10x
    assert run(w2, {"LIBSVM": 81.9, "OnlineSVMR": 81.5},
               {"LIBSVM": 4000.0, "OnlineSVMR": 1200.0})["verdict"] == FAILS         # 3.3x
    res = run(w2, {"LIBSVM": 81.9}, {"LIBSVM": 4000.0})
    assert res["verdict"] == UNTESTABLE and "OnlineSVMR" in res["reason"]
    # an item not run in this invocation
    res = evaluate([w1], Evidence(_fake_table1({"LIBSVM": 1.0}, {"LIBSVM": 1.0}), {}, []))[0]
    assert res["verdict"] == UNTESTABLE and "not run in this invocation" in res["reason"]


def test_claims_of_items_not_run_cannot_be_tested(tmp_path):
    s = reproduce("fine-scheinberg", ["figure3"], mode="quick", out=tmp_path, progress=False,
                  draw=False, stream=open(os.devnull, "w"))
    by_id = {c["id"]: c for c in s["claims"]}
    assert by_id["F5"]["verdict"] in (HOLDS, FAILS)          # figure 3 ran
    for cid in ("F1", "F2", "F3", "F4", "F6"):
        assert by_id[cid]["verdict"] == UNTESTABLE
        assert "not run in this invocation" in by_id[cid]["reason"]


def test_fitted_partition_is_never_evidence(quick):
    _, summaries = quick
    f4 = {c["id"]: c for c in summaries["fine-scheinberg"]["claims"]}["F4"]
    assert f4["verdict"] == UNTESTABLE and "fitted" in f4["reason"]


def test_time_is_a_ratio_measured_in_one_process(quick):
    """Table 2's time column is RKPAm / RKPA timed in the same cell; W&V's IDSVM cells time
    OnlineSVMR on the same stream."""
    out, summaries = quick
    t2 = {t["id"]: t for t in summaries["lee-tseng-chen"]["tables"]}["table2"]
    assert "seconds" not in t2["metrics"] and "time_ratio" in t2["metrics"]
    recs = [json.loads(p.read_text()) for p in (Path(out) / "lee-tseng-chen" / "cells").glob("*")]
    rkpam = [r["result"] for r in recs if r["method"].startswith("RKPAm")
             and "time_ratio" in r["result"]]
    assert rkpam and all(r["time_ratio"] == pytest.approx(r["seconds"] / r["seconds_rkpa"])
                         for r in rkpam)
    recs = [json.loads(p.read_text()) for p in (Path(out) / "wang-vucetic" / "cells").glob("*")]
    idsvm = [r["result"] for r in recs if r["method"].startswith("IDSVM")
             and r["item"] == "table1"]
    assert idsvm and all("time_ratio" in r for r in idsvm if not r["stopped_early"])


def test_wang_vucetic_table1_runs_the_paper_form_and_the_paper_stop():
    from refsvm.reproduce import wang_vucetic as wv

    est = wv._make("OnlineSVMR", 1.0, 0.5)
    assert est.departures == {"base": "paper", "hold_out": True}
    cells = [c for c in wv.plan_table1("default", []) if c.dataset == "gauss"]
    stop = {c.method: c.params["stop_sv"] for c in cells}
    assert stop["IDSVM"] == 2522 and stop["IDSVM (to the end)"] is None
    cells = [c for c in wv.plan_table1("default", []) if c.dataset == "banana"]
    assert {c.method for c in cells} == set(wv.METHODS)     # banana finished in the paper


def test_full_grid_tie_break_is_the_smaller_c_then_the_wider_kernel():
    from refsvm.reproduce import wang_vucetic as wv

    score = {(10, 2): [0.9], (1, 4): [0.9], (1, 2): [0.9], (100, -1): [0.8]}
    assert wv._select(score) == (1, 2)


def test_record_writes_the_docs_copy(tmp_path):
    from refsvm.reproduce._runner import report_text

    s = reproduce("lee-tseng-chen", ["table1"], mode="quick", out=tmp_path / "out",
                  progress=False, draw=False, only=["svmguide1"],
                  stream=open(os.devnull, "w"), record=tmp_path / "docs")
    folder = tmp_path / "docs" / "lee-tseng-chen"
    stored = json.loads((folder / "summary-quick.json").read_text())
    assert set(stored["meta"]) == {"commit", "date", "settings", "machine"}
    assert stored["meta"]["settings"]["only"] == ["svmguide1"]
    assert stored["tables"] == json.loads(json.dumps(s["tables"]))
    assert (folder / "report-quick.txt").read_text() == report_text(stored)
    assert (folder / "claims-quick.csv").read_text().startswith("id,claim,paper,ours")
    assert stored["figures"] == [] and not list(folder.glob("*.png"))


def test_record_keeps_a_copy_of_each_figure_drawn(tmp_path):
    """``record`` copies every figure the run drew as ``<figure>-<mode>.png`` and lists it;
    a later record of the same mode that draws fewer removes the others."""
    pytest.importorskip("matplotlib")
    docs = tmp_path / "docs"
    s = reproduce("cauwenberghs-poggio", mode="quick", out=tmp_path / "out", progress=False,
                  stream=open(os.devnull, "w"), record=docs)
    folder = docs / "cauwenberghs-poggio"
    stored = json.loads((folder / "summary-quick.json").read_text())
    drawn = [Path(f) for f in s["figures"] if f.endswith(".png")]
    assert drawn and stored["figures"] == [f"{f.stem}-quick.png" for f in drawn]
    for f, name in zip(drawn, stored["figures"]):
        assert (folder / name).read_bytes() == f.read_bytes()
    (folder / "figure9-quick.png").write_bytes(b"stale")
    (folder / "figure9-default.png").write_bytes(b"another mode")
    reproduce("cauwenberghs-poggio", ["table1"], mode="quick", out=tmp_path / "out",
              progress=False, stream=open(os.devnull, "w"), record=docs)
    assert json.loads((folder / "summary-quick.json").read_text())["figures"] == []
    assert sorted(p.name for p in folder.glob("*.png")) == ["figure9-default.png"]


def test_sample_runs_a_spread_share_of_every_stratum_and_estimates_the_rest(tmp_path):
    """``sample``: ceil(f n) cells of each (item, data set, method), spread over the grid's
    C values, the same draw on a rerun; the remaining cost of the protocol is then
    estimated from those cells."""
    from refsvm.reproduce import wang_vucetic as wv
    from refsvm.reproduce._runner import format_remaining, remaining_cost, sample_cells

    cells = [c for c in wv.plan_table1("full", []) if c.dataset in ("gauss", "banana")]
    drawn = sample_cells(cells, 0.02)
    strata = {(c.dataset, c.method) for c in cells}
    assert {(c.dataset, c.method) for c in drawn} == strata
    assert len(drawn) == len(strata) * 3          # ceil(0.02 * 126) per stratum
    for ds, method in strata:
        Cs = {c.params["C"] for c in drawn if (c.dataset, c.method) == (ds, method)}
        assert len(Cs) == 3 and min(Cs) <= 5 and max(Cs) >= 50, (ds, method, Cs)
    assert [c.key for c in sample_cells(cells, 0.02)] == [c.key for c in drawn]
    assert sample_cells(cells, 1.0) == cells
    with pytest.raises(ValueError, match="sample"):
        reproduce("bagnell", mode="quick", out=tmp_path, sample=0.0, progress=False,
                  stream=open(os.devnull, "w"))
    # stored sampled cells are the estimate's basis: the mean of their stratum
    done = {c.key: {"wall_seconds": 2.0 if c.method == "LIBSVM" else 4.0} for c in drawn}
    paper = get_paper("wang-vucetic")
    rem = remaining_cost(paper, [paper.item("table1")], "default", done,
                         keep=lambda c: c.dataset in ("gauss", "banana"))
    own, row = rem                     # the default protocol (nothing stored), then --full
    assert own["mode"] == "default" and own["stored"] == 0 and row["mode"] == "full"
    assert "this protocol" in format_remaining(rem, "default")[0]
    assert row["stored"] == len(drawn) and row["cells_without_estimate"] == 0
    n_libsvm = sum(c.method == "LIBSVM" for c in cells)
    left_libsvm = n_libsvm - sum(c.method == "LIBSVM" for c in drawn)
    left_other = (len(cells) - len(drawn)) - left_libsvm
    assert row["estimate_seconds"] == pytest.approx(2.0 * left_libsvm + 4.0 * left_other)
    assert "core-hours" in format_remaining(rem, "default")[1]


def test_kernel_cost_claim_compares_the_curves_at_the_same_n():
    """W6 reads OnlineSVMR's cumulative kernel count at the offline and naive curves' last
    n; where its own checkpoints miss that n (default mode: 1,778 and 3,162 around the
    offline 3,000) the count is log-log interpolated, not taken at the checkpoint below."""
    from refsvm.reproduce import wang_vucetic as wv
    from refsvm.reproduce._claims import FAILS, HOLDS, Evidence

    online = {"n_seen": [10, 100, 1000, 10000], "kernel_evals": [1e2, 1e4, 1e6, 1e8]}
    assert wv._curve_at(online, 1000) == 1e6
    assert wv._curve_at(online, 3162.2776601683795) == pytest.approx(1e7)
    assert wv._curve_at(online, 20000) is None

    def evidence(k_offline):
        recs = [{"dataset": "gauss", "method": m, "setting": "C=1", "result": r}
                for m, r in (("OnlineSVMR", online),
                             ("OfflineSVMR", {"n_seen": [30, 3000], "kernel_evals": [1, k_offline]}),
                             ("NaiveRetrain", {"n_seen": [300], "kernel_evals": [1e9]}))]
        return Evidence({"mode": "default", "tables": []}, {"figure4": recs}, ["figure4"])

    k_on = wv._curve_at(online, 3000)
    assert 1e6 < k_on < 1e7
    held = wv._claim_kernel_cost(evidence(k_on))      # ratio 1: holds
    assert held.verdict == HOLDS and "interpolated" in held.ours
    assert "= 1.00" in held.ours
    assert wv._claim_kernel_cost(evidence(k_on / 4)).verdict == FAILS     # 4x the offline
