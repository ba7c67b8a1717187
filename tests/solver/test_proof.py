"""The proof search: its fast engine against the reference, its answers against a naive
minimax on the reference engine, budgets, and resuming from a saved state."""

from __future__ import annotations

import itertools
import random
import zlib

import numpy as np
import pytest

import harness.solver.proof as proof
from harness.rules import Position, Ruleset, legal_actions, play_unchecked
from harness.rules.position import PLAYERS
from harness.rules.ruleset import EDGES
from harness.rules.symmetry import canonical
from harness.solver.proof import (
    BudgetExhausted,
    Canon,
    FastRules,
    ProofSearch,
    ProofStateError,
    act_of,
    state_of,
)

DEFAULT = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
RESULT = {None: None, "x": 0, "o": 1, "draw": 2}


def random_positions(rs: Ruleset, seed: int, games: int, plies: int):
    """Positions of random games without history (the search's view of the game)."""
    rng = random.Random(seed)
    for _ in range(games):
        pos = Position.initial(rs)
        for _ in range(plies):
            acts = legal_actions(rs, pos)
            if not acts:
                break
            yield pos
            out = play_unchecked(rs, pos, rng.choice(acts))
            if out.result is not None:
                break
            pos = out.next


RULESETS = [
    Ruleset.from_id(f"pop1-{board}-c{c}-{edge}-{stuck}-{move}-{pattern}-{zero}-{jump}")
    for edge in EDGES
    for board, c, stuck, move, pattern, zero, jump in (
        ("4x4", 5, "continue", "binempty", "king", "nozero", "nojump"),
        ("3x5", 4, "draw", "always", "rook", "zero", "jump"),
        ("5x4", 6, "continue", "always", "anywhere", "nozero", "nojump"),
        ("6x6", 8, "continue", "binempty", "queen", "zero", "nojump"),
        ("3x3", 3, "continue", "always", "bishop", "nozero", "jump"),
    )
]


@pytest.mark.parametrize("rs", RULESETS, ids=lambda rs: rs.id)
def test_fast_rules_equal_the_reference_engine(rs):
    fast = FastRules(rs)
    canon = Canon(rs)
    checked = 0
    for pos in random_positions(rs, seed=zlib.crc32(rs.id.encode()), games=12, plies=40):
        s = state_of(pos)
        acts = legal_actions(rs, pos)
        assert fast.actions(s) == [act_of(a) for a in acts], pos.text(rs)
        for a in acts:
            out = play_unchecked(rs, pos, a)
            got = fast.play(s, act_of(a))
            assert got == (RESULT[out.result], state_of(out.next)), (pos.text(rs), a.text(rs))
            checked += 1
        assert canon.image(s)[0] == state_of(canonical(rs, pos)[0])
    assert checked > 100


def naive_win(rs: Ruleset, pos: Position, d: int, a: int) -> bool:
    """Attacker ``a`` wins within ``d`` plies, by plain minimax on the reference engine.

    Like the search (and format 1), a reply that leaves the attacker without an action,
    so the defender moves twice, counts as a refutation.
    """
    if d <= 0:
        return False
    acts = legal_actions(rs, pos)
    if pos.turn == a:
        for act in acts:
            out = play_unchecked(rs, pos, act)
            if out.result == PLAYERS[a]:
                return True
            if out.result is None and naive_win(rs, out.next, d - 1, a):
                return True
        return False
    if not acts:
        return False
    for act in acts:
        out = play_unchecked(rs, pos, act)
        if out.result == PLAYERS[a]:
            continue
        if out.result is not None or out.next.turn != a:
            return False
        if not naive_win(rs, out.next, d - 1, a):
            return False
    return True


@pytest.mark.parametrize(
    "rid",
    [
        "pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump",
        "pop1-3x4-c3-ringout-continue-binempty-king-nozero-nojump",
        "pop1-3x3-c3-blocked-continue-always-king-nozero-nojump",
    ],
)
def test_search_agrees_with_naive_minimax(rid):
    rs = Ruleset.from_id(rid)
    search = ProofSearch(rs)
    seen = {True: 0, False: 0}
    positions = list(random_positions(rs, seed=7, games=6, plies=8))
    for pos in positions[::2]:
        s = search.canon.image(state_of(pos))[0]
        for d, a in itertools.product(range(1, 5), (0, 1)):
            expected = naive_win(rs, pos, d, a)
            assert search.win(s, d, a) == expected, (pos.text(rs), d, a)
            seen[expected] += 1
    # Both answers occur, so neither a search that always says yes nor one that always
    # says no would pass.
    assert seen[True] and seen[False]


def test_proves_the_default_ruleset_and_no_shorter_win():
    search = ProofSearch(DEFAULT)
    result = search.prove(max_plies=9, attackers=(0,))
    assert (result.winner, result.plies) == ("x", 7)
    assert search.done_depth[0] == 5  # searched 5 plies completely, without a win
    assert not search.win(search.root(), 5, 0)


def test_o_wins_when_it_does():
    rs = Ruleset.from_id("pop1-3x4-c3-ringout-continue-binempty-king-nozero-nojump")
    result = ProofSearch(rs).prove(max_plies=8)
    assert (result.winner, result.plies) == ("o", 4)
    assert naive_win(rs, Position.initial(rs), 4, 1)
    assert not naive_win(rs, Position.initial(rs), 3, 1)


def test_no_win_found_within_too_few_plies():
    result = ProofSearch(DEFAULT).prove(max_plies=5)
    assert result.winner is None and result.plies is None


def test_node_budget_raises_and_state_resumes(tmp_path):
    rs = Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump")
    first = ProofSearch(rs, max_nodes=300)
    with pytest.raises(BudgetExhausted, match="node budget"):
        first.prove(max_plies=9, attackers=(0,))
    state = tmp_path / "state.npz"
    first.save(state)
    second = ProofSearch(rs)
    second.load(state)
    assert second.proven == first.proven
    assert second.failed == first.failed
    assert second.done_depth == first.done_depth
    result = second.prove(max_plies=9, attackers=(0,))
    assert (result.winner, result.plies) == ("x", 7)
    fresh = ProofSearch(rs)
    fresh.prove(max_plies=9, attackers=(0,))
    # The resumed run did not redo the saved work.
    assert second.nodes - first.nodes < fresh.nodes


def test_time_budget_raises():
    rs = Ruleset.from_id("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump")
    with pytest.raises(BudgetExhausted, match="time budget"):
        ProofSearch(rs, max_seconds=0.2).prove(max_plies=9, attackers=(0,))


def test_load_rejects_other_rulesets_and_garbage(tmp_path):
    state = tmp_path / "state.npz"
    search = ProofSearch(DEFAULT)
    search.prove(max_plies=7)
    search.save(state)
    other = ProofSearch(DEFAULT.with_(rows=5, cols=5))
    with pytest.raises(ProofStateError, match="ruleset pop1-4x4"):
        other.load(state)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not an npz")
    with pytest.raises(ProofStateError, match="not a saved proof search"):
        search.load(junk)
    bad = tmp_path / "bad.npz"
    np.savez(bad, meta=np.array([99, 0, 0, 0]), ruleset=np.array(DEFAULT.id))
    with pytest.raises(ProofStateError, match="format 99"):
        search.load(bad)


def test_save_is_atomic_and_keeps_the_old_state_on_failure(tmp_path, monkeypatch):
    state = tmp_path / "state.npz"
    search = ProofSearch(DEFAULT)
    search.prove(max_plies=7)
    search.save(state)
    before = state.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(proof.np, "savez_compressed", boom)
    with pytest.raises(OSError, match="disk full"):
        search.save(state)
    assert state.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["state.npz"]


def test_progress_off_a_terminal_is_one_line_a_minute(monkeypatch, capsys) -> None:
    import harness.solver.proof as proof

    clock = [1000.0]
    monkeypatch.setattr(proof.sys.stderr, "isatty", lambda: False, raising=False)
    monkeypatch.setattr(proof.time, "monotonic", lambda: clock[0])
    say = proof.stderr_progress()
    say("at the start")  # a short run prints nothing
    clock[0] += 61
    say("a minute in")
    say("right after")
    clock[0] += 61
    say("two minutes in")
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["a minute in", "two minutes in"]
