"""`refsvm compare` runs every registered algorithm with both twins."""

import io

from refsvm import cli


def _rows(lines, name, key):
    return [line for line in lines if line.split()[:2] == [name, key]]


def test_compare_prints_a_row_per_algorithm_and_backend():
    out = io.StringIO()
    rows = cli.compare(n_samples=60, seed=1, out=out, full=True)
    lines = out.getvalue().splitlines()
    for name, key, _, _ in cli._registry():
        printed = _rows(lines, name, key)
        assert len(printed) == 2, (name, key, printed)
        cy, py = printed
        assert " cython " in cy and " python " in py
        # same data, same order: the two twins reach the same test accuracy
        assert cy.split()[4] == py.split()[4]
    for row in rows:
        assert row["examples"] == 60
        if row["backend"] == "python":
            assert row["max_abs_diff"] < 1e-6, row


def test_compare_quick_form_runs_slow_references_on_a_slice():
    out = io.StringIO()
    n = cli.KERNEL_SLICE + 20
    rows = cli.compare(n_samples=n, seed=1, out=out, only=["PA", "IDSVM", "StreamSVM(rbf)"])
    by = {(r["algorithm"], r["backend"]): r for r in rows}
    assert by["PA", "python"]["examples"] == n                       # fast: every example
    assert by["IDSVM", "python"]["examples"] == cli.KERNEL_SLICE     # slow: the first ones
    assert by["StreamSVM(rbf)", "python"]["examples"] == n           # its slice is longer
    for name in ("PA", "IDSVM", "StreamSVM(rbf)"):
        assert by[name, "cython"]["examples"] == n
        assert by[name, "python"]["max_abs_diff"] < 1e-6, name   # the twins agree on the slice
        assert by[name, "python"]["speed_up"].endswith("x")
    assert "--full" in out.getvalue()


def test_main_rejects_tiny_runs(capsys):
    import pytest

    with pytest.raises(SystemExit):
        cli.main(["compare", "--n-samples", "3"])
    assert "at least 10" in capsys.readouterr().err


def test_an_output_path_that_is_a_file_is_an_error_line(tmp_path, capsys):
    """--out, --record and --plot naming an existing file: parser's error line and exit
    2, no traceback (they raised NotADirectoryError / FileExistsError)."""
    import pytest

    afile = tmp_path / "afile"
    afile.write_text("")
    for argv in (["reproduce", "bagnell", "--no-run", "--out", str(afile)],
                 ["reproduce", "bagnell", "--quick", "--no-run", "--record", str(afile),
                  "--out", str(tmp_path / "o1")],
                 ["trace", "onlinesvmr", "--n-samples", "5", "--plot", str(afile)]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2, argv
        err = capsys.readouterr().err
        assert "refsvm" in err and "error:" in err and str(afile) in err, (argv, err)
