"""The batch engine agrees with the reference engine, action by action."""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.rules import Action, Position, Ruleset, legal_actions, play_unchecked
from harness.rules.symmetry import canonical, symmetries
from harness.solver import batch
from harness.solver.batch import BatchEngine, engine
from harness.solver.sample import every_field_rulesets, random_position, random_ruleset
from harness.solver.states import States


def reference_rows(rs: Ruleset, positions: list[Position]):
    rows = []
    for i, pos in enumerate(positions):
        for action in legal_actions(rs, pos):
            out = play_unchecked(rs, pos, action)
            rows.append((i, action, out.next, out.result, out.passed))
    return rows


def batch_rows(rs: Ruleset, positions: list[Position]):
    succ = engine(rs).successors(States.from_positions(positions))
    return list(
        zip(
            succ.parent.tolist(),
            succ.actions(),
            succ.next_positions(),
            succ.results(),
            succ.passed.tolist(),
            strict=True,
        )
    )


def assert_agree(rs: Ruleset, positions: list[Position]) -> None:
    ref = reference_rows(rs, positions)
    got = batch_rows(rs, positions)
    if ref != got:
        for r, g in zip(ref, got, strict=False):
            if r != g:
                pos = positions[r[0]]
                pytest.fail(
                    f"{rs.id} in {pos.text(rs)!r}: reference {r[1].text(rs)} -> "
                    f"{r[2].text(rs)} {r[3]} passed={r[4]}; batch {g[1].text(rs)} -> "
                    f"{g[2].text(rs)} {g[3]} passed={g[4]}"
                )
        pytest.fail(f"{rs.id}: {len(ref)} reference rows, {len(got)} batch rows")


@pytest.mark.parametrize("seed", range(6))
def test_random_positions_every_field(seed):
    rng = random.Random(seed)
    for rs in every_field_rulesets(rng):
        positions = [random_position(rng, rs) for _ in range(25)]
        assert_agree(rs, positions)


def test_wins_at_once_is_a_winning_row_of_the_expansion():
    # Positions with many checkers, so that many have a winning action; every field of the
    # ruleset, ringout (wins by counting checkers) among them.
    rng = random.Random(21)
    wins = 0
    for rs in every_field_rulesets(rng):
        eng = engine(rs)
        view = States.from_positions([random_position(rng, rs) for _ in range(40)]).mover_view()
        ex = eng.expand(*view)
        want = np.bincount(ex.parent[ex.result == batch.MOVER_WINS], minlength=40) > 0
        assert eng.wins_at_once(*view).tolist() == want.tolist(), rs.id
        wins += int(want.sum())
    assert wins > 0


def test_tiny_wrapping_boards_share_targets():
    # On 4-wide wrapping boards two rays can target the same square: both pushes fail.
    rng = random.Random(7)
    for edge in ("torus", "klein"):
        rs = Ruleset.from_id(f"pop1-4x4-c8-{edge}-continue-always-queen-zero-nojump")
        assert_agree(rs, [random_position(rng, rs) for _ in range(150)])


def test_played_games_agree():
    """Positions from random play (line-free, as the solver sees them)."""
    rng = random.Random(11)
    for _ in range(12):
        rs = random_ruleset(rng, max_side=4)
        pos = Position.initial(rs)
        seen = [pos]
        for _ply in range(40):
            actions = legal_actions(rs, pos)
            if not actions:
                break
            out = play_unchecked(rs, pos, rng.choice(actions))
            if out.result is not None:
                break
            pos = out.next
            seen.append(pos)
        assert_agree(rs, seen)


def test_expansion_is_the_mover_view():
    rs = Ruleset.from_id("pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump")
    pos = Position.from_text(rs, "x.o./.x../..o./.... 1 1 o")
    eng = engine(rs)
    states = States.from_positions([pos])
    ex = eng.expand(*states.mover_view())
    succ = eng.successors(states)
    assert sorted(ex.dst.tolist()) == sorted(succ.dst.tolist())
    # o acts: "me" is o's board afterwards
    for me, nxt in zip(ex.me.tolist(), [None], strict=False):
        assert me & pos.board[0] == 0 or nxt is None


@pytest.mark.parametrize(
    "rid",
    [
        "pop1-4x4-c5-torus-continue-binempty-king-nozero-nojump",
        "pop1-3x4-c4-klein-draw-always-queen-zero-jump",
        "pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump",
        "pop1-6x6-c8-reincarnation-continue-binempty-king-nozero-nojump",
        "pop1-5x3-c6-ringout-continue-always-rook-nozero-nojump",
    ],
)
def test_keys_are_canonical(rid):
    rs = Ruleset.from_id(rid)
    rng = random.Random(3)
    eng = engine(rs)
    positions = [random_position(rng, rs) for _ in range(200)]
    keys = eng.keys(States.from_positions(positions))
    # Symmetric images share a key; the key identifies the reference canonical form.
    by_canon: dict[Position, object] = {}
    for pos, key in zip(positions, keys.tolist(), strict=True):
        canon, _ = canonical(rs, pos)
        images = [s.position(pos) for s in symmetries(rs)]
        image_keys = eng.keys(States.from_positions(images)).tolist()
        assert all(k == key for k in image_keys)
        assert by_canon.setdefault(canon, key) == key
    assert len(set(map(str, by_canon.values()))) == len(by_canon)


@pytest.mark.parametrize("edge", ["torus", "klein", "ringout", "reincarnation"])
@pytest.mark.parametrize("size", ["5x5", "6x6"])
def test_least_images_are_the_least_pair_over_every_symmetry(size, edge):
    # 5x5: both boards in one word, compared whole. 6x6: only the first board goes through
    # every symmetry; the second is looked up under the one chosen, and under every one
    # where the first board has a symmetry of its own (empty, one checker in the middle, a
    # symmetric shape): those rows are most of the batch here, so a wrong tie-break shows.
    rs = Ruleset.from_id(f"pop1-{size}-c8-{edge}-continue-binempty-king-nozero-nojump")
    rng = random.Random(11)
    eng = engine(rs)
    n = eng.n
    syms = symmetries(rs)
    firsts = [0, 1 << (n // 2)]
    for s in syms:
        firsts.append(s.bits(1 | 1 << (n - 1)))
    a, b = [], []
    for _ in range(300):
        a.append(rng.choice(firsts) if rng.random() < 0.7 else rng.getrandbits(n))
        b.append(rng.getrandbits(n) & ~a[-1])
    got_a, got_b = eng.least_images(np.array(a, np.uint64), np.array(b, np.uint64))
    for i in range(len(a)):
        pos = Position((a[i], b[i]), (0, 0), 0)
        want = min((img.board[0], img.board[1]) for img in (s.position(pos) for s in syms))
        assert (int(got_a[i]), int(got_b[i])) == want


@pytest.mark.parametrize(
    "rid",
    [
        "pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump",  # one key word
        "pop1-6x6-c8-reincarnation-continue-binempty-king-nozero-nojump",  # two words
    ],
)
def test_slices_give_what_one_pass_gives(rid, monkeypatch):
    # Keys, chosen children's keys and judging run in slices of a batch; slices of a few
    # rows (and a last, shorter one) must give what one pass over the whole batch gives.
    rs = Ruleset.from_id(rid)
    rng = random.Random(8)
    eng = engine(rs)
    st = States.from_positions([random_position(rng, rs) for _ in range(101)])
    ex = eng.expand(*st.mover_view())
    keys, judged = eng.keys(st), eng.judge(ex.me, ex.them, ex.mb, ex.tb)
    # Children in any order, with repeats, keyed from their own mover's side.
    rows = np.array([rng.randrange(len(ex)) for _ in range(200)], dtype=np.int64)
    children = eng.class_keys(*(c[rows] for c in ex.child_view()))
    monkeypatch.setattr(batch, "KEY_SLICE", 7)
    monkeypatch.setattr(batch, "JUDGE_SLICE", 13)
    assert eng.keys(st).tolist() == keys.tolist()
    assert eng.child_keys(ex, rows).tolist() == children.tolist()
    assert len(eng.child_keys(ex, rows[:0])) == 0
    for got, want in zip(eng.judge(ex.me, ex.them, ex.mb, ex.tb), judged, strict=True):
        assert got.tolist() == want.tolist()


def test_class_keys_identify_colour_swaps():
    rs = Ruleset.from_id("pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump")
    rng = random.Random(5)
    eng = engine(rs)
    positions = [random_position(rng, rs) for _ in range(300)]
    swapped = [
        Position((p.board[1], p.board[0]), (p.bins[1], p.bins[0]), 1 - p.turn) for p in positions
    ]
    a = eng.class_keys(*States.from_positions(positions).mover_view())
    b = eng.class_keys(*States.from_positions(swapped).mover_view())
    assert np.array_equal(a, b)
    # and distinct positions (up to symmetry and colour) get distinct keys
    seen = {}
    for pos, key in zip(positions, a.tolist(), strict=True):
        me = pos.board[pos.turn]
        them = pos.board[1 - pos.turn]
        forms = set()
        for s in symmetries(rs):
            forms.add((s.bits(me), s.bits(them), pos.bins[pos.turn], pos.bins[1 - pos.turn]))
        canon = min(forms)
        assert seen.setdefault(canon, key) == key
    assert len(set(seen.values())) == len(seen)
    me, them, mb, tb = eng.unpack_class(a)
    again = eng.class_keys(me, them, mb, tb)
    assert np.array_equal(again, a)


def test_orbit_sizes():
    rs = Ruleset.from_id("pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump")
    eng = engine(rs)
    rng = random.Random(9)
    positions = [random_position(rng, rs) for _ in range(100)] + [Position.initial(rs)]
    sizes = eng.orbit_sizes(*States.from_positions(positions).mover_view()[:2])
    for pos, size in zip(positions, sizes.tolist(), strict=True):
        assert size == len({s.position(pos) for s in symmetries(rs)})


@pytest.mark.parametrize(
    "rid, words",
    [
        ("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump", 2),
        ("pop1-8x8-c12-klein-continue-binempty-king-nozero-nojump", 3),
    ],
)
def test_multi_word_keys_roundtrip(rid, words):
    rs = Ruleset.from_id(rid)
    eng = BatchEngine(rs)
    assert eng.key_words == words
    rng = random.Random(1)
    positions = [random_position(rng, rs) for _ in range(100)]
    keys = eng.class_keys(*States.from_positions(positions).mover_view())
    assert np.array_equal(eng.class_keys(*eng.unpack_class(keys)), keys)


def test_transition_corpus():
    """Every corpus record with an empty history: the batch engine gives the same outcome."""
    from harness.rules.corpus import build_corpus

    records = build_corpus(seed=7)
    checked = 0
    for rec in records:
        if rec.get("history"):
            continue  # repetition is history, not part of the batch engine
        rs = Ruleset.from_id(rec["ruleset"])
        pos = Position.from_text(rs, rec["position"])
        action = Action.from_text(rs, rec["action"])
        succ = engine(rs).successors(States.from_positions([pos]))
        acts = succ.actions()
        assert [a.text(rs) for a in acts] == list(rec["actions"]), rec
        i = acts.index(action)
        assert succ.next_positions()[i].text(rs) == rec["next"], rec
        assert succ.results()[i] == rec["result"], rec
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("seed", range(4))
def test_line_tables_match_the_reference_lines(seed):
    from harness.rules import geometry

    rng = random.Random(seed)
    for _ in range(15):
        rs = random_ruleset(rng, max_side=8)
        eng = BatchEngine(rs)
        lines = [line.mask for line in geometry(rs).lines]
        boards = []
        for _ in range(300):
            k = rng.randint(0, min(rs.squares, 12))
            boards.append(sum(1 << s for s in rng.sample(range(rs.squares), k)))
        arr = np.array(boards, dtype=np.uint64)
        expected = [any(b & m == m for m in lines) for b in boards]
        assert eng.has_line(arr).tolist() == expected, rs.id
        assert eng.has_line_pulled(arr).tolist() == expected, rs.id
