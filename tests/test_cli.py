"""`refsvm compare` runs every registered algorithm with both twins."""

import io

from refsvm import cli


def test_compare_prints_a_row_per_algorithm_and_backend():
    out = io.StringIO()
    cli.compare(n_samples=60, seed=1, out=out)
    lines = out.getvalue().splitlines()
    for name, key, _ in cli._registry():
        rows = [line for line in lines if line.split()[:2] == [name, key]]
        assert len(rows) == 2, (name, key, rows)
        cy, py = rows
        assert " cython " in cy and " python " in py
        # same data, same order: the two twins reach the same test accuracy
        assert cy.split()[3] == py.split()[3]


def test_main_rejects_tiny_runs(capsys):
    import pytest

    with pytest.raises(SystemExit):
        cli.main(["compare", "--n-samples", "3"])
    assert "at least 10" in capsys.readouterr().err
