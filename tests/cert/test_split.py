"""The split certify builder (harness.cert.split) honours the run's time budget: its tasks use
fresh searches, which would otherwise have no deadline at all."""

from __future__ import annotations

import time

import pytest

from harness.cert import split
from harness.cert.split import split_build
from harness.rules import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch

RS = Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump")


def _searched(seconds: float | None) -> ProofSearch:
    search = ProofSearch(RS, max_seconds=seconds)
    assert search.prove(max_plies=9, attackers=(0,)).winner == "x"
    return search


def test_a_spent_time_budget_stops_a_subtree_task():
    # The whole strategy as one task: weighing the actions searches beyond the table.
    search = _searched(None)
    table, root, rank = (
        split.snapshot(search),
        search.root(),
        search.proven_budget(search.root(), 0),
    )
    spent = (time.time() - 1, 3600.0)
    with pytest.raises(BudgetExhausted, match="time budget of 3600 s spent"):
        split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, spent)
    # With time left the same task grows the subtree.
    assert split.grow_subtree(RS.id, table, 0, root, rank, True, 5, None, None)


def test_time_left_builds_what_no_budget_builds():
    unbounded = split_build(_searched(None), 0)
    bounded = split_build(_searched(3600), 0)
    assert bounded.entries == unbounded.entries and len(bounded.entries) == 1388
