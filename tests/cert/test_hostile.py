"""Hostile input and faults for certify/check (issue 14): each case the issue lists."""

from __future__ import annotations

import pytest

from harness.cli import EXIT_BUDGET, main
from harness.rules import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch

DEFAULT = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")


def test_a_budget_spent_while_building_is_exit_3_not_no_win(tmp_path, capsys):
    # The search proves the 4x4 win in under 1,000 nodes; building the certificate needs
    # more (successors are proven on demand), so the node budget runs out while building.
    search = ProofSearch(DEFAULT)
    assert search.prove(max_plies=15).winner == "x" and search.nodes < 1000
    out, state = tmp_path / "cert", tmp_path / "state.npz"
    args = ["certify", DEFAULT.id, "--out", str(out), "--state", str(state)]
    assert main([*args, "--nodes", "1000"]) == EXIT_BUDGET
    err = capsys.readouterr().err
    assert "while building the certificate" in err and "no forced win" not in err
    assert "Traceback" not in err and state.exists() and not out.exists()
    assert main([*args, "--nodes", "1000"]) == 0  # resumes from the kept state
    assert (out / "index.yaml").exists()


@pytest.mark.parametrize("budget", [1, 10, 37])
def test_the_node_budget_is_exact(budget):
    search = ProofSearch(Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump"))
    search.max_nodes = budget
    with pytest.raises(BudgetExhausted):
        search.prove(max_plies=15)
    assert search.nodes == budget
