"""``estimate``: the search never calls an unreachable position reachable and misses few;
the estimate lands near the classes a solve counts; the slices add up to the counting bound."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.cli import main
from harness.rules import Ruleset
from harness.rules.symmetry import symmetries
from harness.solver.choice import class_bound
from harness.solver.estimate import Reacher, estimate_classes, slice_positions, slices

REINCARNATION = "pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump"
RINGOUT = "pop1-4x4-c3-ringout-continue-binempty-king-nozero-nojump"
TORUS = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"


def in_solution(keys: np.ndarray, solution) -> np.ndarray:
    at = np.minimum(np.searchsorted(solution.keys, keys), len(solution.keys) - 1)
    return solution.keys[at] == keys


@pytest.mark.parametrize("rid", [REINCARNATION, RINGOUT, TORUS])
def test_the_search_finds_only_reachable_positions(rid, compact_solution):
    rs = Ruleset.from_id(rid)
    want = compact_solution(rid)
    reacher = Reacher(rs, 64, np.random.default_rng(3))
    reachable = missed = 0
    for a, b in slices(rs):
        me, them, mb, tb = reacher.sample(a, b, 60)
        keys = reacher.eng.class_keys(me, them, mb, tb)
        found = reacher.reached(keys, 2 * (a + b) + 6)
        truth = in_solution(keys, want)
        assert not (found & ~truth).any(), f"slice {a}, {b}: an unreachable position found"
        reachable += int(truth.sum())
        missed += int((truth & ~found).sum())
    assert reachable > 30
    if rid != RINGOUT:  # where checkers leave the game the beam misses many (module doc)
        assert missed <= 0.1 * reachable


@pytest.mark.parametrize("rid", [REINCARNATION, TORUS])
def test_the_estimate_lands_near_the_solved_count(rid, compact_solution):
    est = estimate_classes(Ruleset.from_id(rid), samples=300, seed=5)
    classes = compact_solution(rid).classes
    assert abs(est.classes - classes) < 4 * est.error + 0.05 * classes, (est.classes, classes)
    assert 0 < est.error < 0.2 * classes


def test_on_ringout_the_estimate_is_a_lower_bound(compact_solution):
    est = estimate_classes(Ruleset.from_id(RINGOUT), samples=300, seed=5)
    assert est.classes < compact_solution(RINGOUT).classes + 4 * est.error


@pytest.mark.parametrize("rid", [REINCARNATION, RINGOUT, TORUS])
def test_the_slices_add_up_to_the_counting_bound(rid):
    rs = Ruleset.from_id(rid)
    total = sum(slice_positions(rs, a, b) for a, b in slices(rs))
    assert 2 * total // len(symmetries(rs)) == class_bound(rs)


def test_two_word_keys_are_searched_too():
    rs = Ruleset.from_id("pop1-6x6-c3-reincarnation-continue-binempty-king-nozero-nojump")
    est = estimate_classes(rs, samples=4, seed=0)
    assert len(est.slices) == len(slices(rs)) == 16
    assert est.slices[0].classes == 1.0 and est.classes > 1000


def test_cli_json_text_and_errors(capsys):
    assert main(["estimate", TORUS, "--samples", "20", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ruleset"] == TORUS and len(report["slices"]) == 16
    assert report["classes"] == round(sum(s["classes"] for s in report["slices"]))
    assert main(["estimate", TORUS, "--samples", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{TORUS}: about ") and "reached" in out
    assert main(["estimate", TORUS, "--samples", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--samples 1: 2 at least" in err
    with pytest.raises(SystemExit):
        main(["estimate", "pop1-4x4-c3-nowhere"])
    assert "Traceback" not in capsys.readouterr().err
