"""The retrograde solver against a brute-force solver over the reference engine."""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.rules import Position, Ruleset, legal_actions, play_unchecked
from harness.solver.budget import BudgetExceeded
from harness.solver.classindex import KeyIndex
from harness.solver.retrograde import solve
from harness.solver.solution import Solution
from harness.solver.states import KEY2, States


def brute_force(rs: Ruleset):
    """Every reachable position with (value, plies) by plain fixpoint iteration.

    ForceWin within k plies, for k = 1, 2, ...: the least such k is the plies with the
    winner fastest and the loser slowest; positions never forced are draws.
    """
    start = Position.initial(rs)
    order = [start]
    seen = {start}
    moves: dict[Position, list[tuple[str | None, Position]]] = {}
    i = 0
    while i < len(order):
        pos = order[i]
        i += 1
        out = []
        for action in legal_actions(rs, pos):
            o = play_unchecked(rs, pos, action)
            out.append((o.result, o.next))
            if o.result is None and o.next not in seen:
                seen.add(o.next)
                order.append(o.next)
        moves[pos] = out
    plies: dict[Position, tuple[str, int]] = {}
    k = 0
    while True:
        k += 1
        new = {}
        for pos, out in moves.items():
            if pos in plies:
                continue
            for winner in ("x", "o"):
                ok = [
                    res == winner or (res is None and plies.get(nxt, ("", 0))[0] == winner)
                    for res, nxt in out
                ]
                mover = "xo"[pos.turn]
                if (any(ok) if mover == winner else (ok and all(ok))) and out:
                    new[pos] = (winner, k)
        if not new:
            break
        plies.update(new)
    return {pos: plies.get(pos, ("draw", None)) for pos in moves}


RULESETS = [
    "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-klein-draw-always-queen-zero-nojump",
    "pop1-3x3-c3-blocked-continue-always-rook-nozero-jump",
    "pop1-3x3-c4-reincarnation-continue-always-king-nozero-nojump",
    "pop1-3x3-c4-ringout-draw-always-bishop-zero-jump",
    "pop1-3x4-c3-ringout-continue-binempty-anywhere-nozero-nojump",
    "pop1-3x3-c3-torus-continue-nomove-king-nozero-nojump",
    # passes: classes reached on both sides in one step of the count
    "pop1-3x4-c3-reincarnation-continue-nomove-queen-zero-nojump",
]


@pytest.mark.parametrize("rid", RULESETS)
def test_every_position_agrees_with_brute_force(rid):
    rs = Ruleset.from_id(rid)
    expected = brute_force(rs)
    sol = solve(rs)
    assert sol.positions == len(expected)
    positions = list(expected)
    value, plies = sol.lookup(States.from_positions(positions))
    got = {
        pos: (("x", "o", "draw")[v - 1], None if v == 3 else p)
        for pos, v, p in zip(positions, value.tolist(), plies.tolist(), strict=True)
    }
    wrong = [(p.text(rs), expected[p], got[p]) for p in positions if expected[p] != got[p]]
    assert wrong == []
    root = expected[Position.initial(rs)]
    assert (sol.value, sol.plies) == root
    assert sol.value_of(Position.initial(rs)) == root


def test_canonical_count_is_positions_up_to_symmetry():
    from harness.rules.symmetry import canonical

    rs = Ruleset.from_id(RULESETS[0])
    expected = brute_force(rs)
    assert solve(rs).canonical == len({canonical(rs, p)[0] for p in expected})


def test_unreachable_positions_have_no_value():
    rs = Ruleset.from_id(RULESETS[0])
    sol = solve(rs)
    lines = Position.from_text(rs, "xxx/o.o/... 0 1 o")  # a line on the board: never reached
    assert sol.value_of(lines) == (None, None)


def test_save_and_load(tmp_path):
    rs = Ruleset.from_id(RULESETS[3])
    sol = solve(rs)
    path = sol.save(tmp_path / "v.npz")
    back = Solution.load(path)
    assert back.ruleset == rs
    assert (back.value, back.plies, back.positions) == (sol.value, sol.plies, sol.positions)
    assert np.array_equal(back.ply_table, sol.ply_table)
    rng = random.Random(2)
    probe = [Position.initial(rs)]
    for _ in range(30):
        pos = probe[-1]
        acts = legal_actions(rs, pos)
        out = play_unchecked(rs, pos, rng.choice(acts))
        if out.result is not None:
            break
        probe.append(out.next)
    for a, b in zip(
        back.lookup(States.from_positions(probe)),
        sol.lookup(States.from_positions(probe)),
        strict=True,
    ):
        assert np.array_equal(a, b)


def test_save_refuses_other_suffixes_and_keeps_old_file(tmp_path):
    rs = Ruleset.from_id(RULESETS[0])
    sol = solve(rs)
    with pytest.raises(ValueError, match="npz"):
        sol.save(tmp_path / "v.txt")
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a solution file"):
        Solution.load(bad)


def test_budget_exceeded():
    rs = Ruleset.from_id("pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump")
    with pytest.raises(BudgetExceeded) as info:
        solve(rs, max_positions=500)
    assert info.value.classes > 500


def test_key_index_matches_a_dict():
    rng = np.random.default_rng(4)
    ix = KeyIndex(words=1, capacity=16)
    ref: dict[int, int] = {}
    for _ in range(20):
        keys = rng.integers(0, 5000, size=rng.integers(1, 800)).astype(np.uint64)
        got = ix.add(keys)
        # new keys are numbered in increasing key order
        for k in sorted(set(keys.tolist()) - set(ref)):
            ref[k] = len(ref)
        assert got.tolist() == [ref[k] for k in keys.tolist()]
    probe = np.arange(6000, dtype=np.uint64)
    found = ix.find(probe)
    assert found.tolist() == [ref.get(k, -1) for k in range(6000)]
    assert len(ix) == len(ref)


def test_key_index_two_words():
    rng = np.random.default_rng(5)
    keys = np.zeros(3000, dtype=KEY2)
    keys["hi"] = rng.integers(0, 40, size=3000)
    keys["lo"] = rng.integers(0, 40, size=3000)
    ix = KeyIndex(words=2, capacity=8)
    ids = ix.add(keys)
    ref = {k: i for i, k in enumerate(sorted(set(keys.tolist())))}
    assert ids.tolist() == [ref[k] for k in keys.tolist()]
    assert ix.find(keys).tolist() == ids.tolist()
    again = KeyIndex.of_distinct(np.sort(keys[np.unique(keys, return_index=True)[1]]), words=2)
    assert again.find(keys).tolist() == ids.tolist()


@pytest.mark.parametrize("rid", [RULESETS[0], RULESETS[4]])
def test_principal_line_wins_in_the_solved_plies(rid):
    rs = Ruleset.from_id(rid)
    sol = solve(rs)
    line = sol.principal_line()
    assert len(line) == sol.plies
    pos = Position.initial(rs)
    for i, action in enumerate(line):
        out = play_unchecked(rs, pos, action)
        if i < len(line) - 1:
            assert out.result is None
            pos = out.next
    assert out.result == sol.value


def test_rated_actions_match_brute_force():
    rs = Ruleset.from_id(RULESETS[0])
    expected = brute_force(rs)
    sol = solve(rs)
    pos = Position.initial(rs)
    for action, value, plies in sol.rated_actions(pos):
        out = play_unchecked(rs, pos, action)
        v, p = expected[out.next] if out.result is None else (out.result, 0)
        assert (value, plies) == (v, None if v == "draw" else p + 1)


def test_rate_successors_in_batches_matches_one_by_one():
    rs = Ruleset.from_id(RULESETS[1])
    sol = solve(rs)
    expected = brute_force(rs)
    positions = list(expected)[:: max(1, len(expected) // 200)]
    succ, value, plies = sol.rate_successors(States.from_positions(positions))
    for i, pos in enumerate(positions):
        rows = np.flatnonzero(succ.parent == i)
        got = [
            (succ.actions()[r], ("x", "o", "draw")[value[r] - 1], int(plies[r]) or None)
            for r in rows
        ]
        assert got == sol.rated_actions(pos)
        # a winning position has an action that keeps the win one ply faster
        v, p = expected[pos]
        if v != "draw":
            best = [g for g in got if g[1] == v]
            if v == "xo"[pos.turn]:
                assert min(g[2] for g in best) == p
            else:
                assert max(g[2] for g in got) == p


def test_passes_in_small_pieces_give_the_same_solution(monkeypatch):
    import harness.solver.retrograde as retro

    rs = Ruleset.from_id("pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump")
    whole = solve(rs)
    monkeypatch.setattr(retro, "EDGE_CHUNK", 5)
    pieces = solve(rs)
    assert (pieces.value, pieces.plies, pieces.positions) == (
        whole.value,
        whole.plies,
        whole.positions,
    )
    assert np.array_equal(pieces.result, whole.result)
    assert np.array_equal(pieces.ply_table, whole.ply_table)
    assert np.array_equal(pieces.sides, whole.sides)


def test_memory_budget_refuses_a_pass_that_would_not_fit():
    rs = Ruleset.from_id("pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump")
    from harness.solver.memory import resident_bytes

    with pytest.raises(BudgetExceeded, match="memory-limit"):
        solve(rs, max_memory=resident_bytes() + 1)


def test_key_index_growth_estimate():
    ix = KeyIndex(words=1, capacity=1024)
    assert ix.growth_bytes(100) == 0
    assert ix.growth_bytes(5000) >= 16384 * 12  # table (8 bytes) and index (4) of the next size
    ix.add(np.arange(5000, dtype=np.uint64))
    assert ix.size >= 10000
